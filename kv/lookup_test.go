package kv

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
)

// find is a lookup as a function, for tables.
type find func(s *Store) ([]string, error)

// mustGTIN is the GTIN-14 of a valid code.
func mustGTIN(tb testing.TB, code string) rappel.GTIN {
	tb.Helper()
	g, err := rappel.ParseGTIN(code)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

func byGTIN(tb testing.TB, code string) find {
	g := mustGTIN(tb, code)
	return func(s *Store) ([]string, error) { return s.RecordIDsByGTIN(context.Background(), g) }
}

func byVehicle(make, model string, year int) find {
	return func(s *Store) ([]string, error) {
		return s.RecordIDsByVehicle(context.Background(), make, model, year)
	}
}

func byRecallID(id string) find {
	return func(s *Store) ([]string, error) { return s.RecordIDsByRecallID(context.Background(), id) }
}

// fixtureFinds are lookups that each find the fixture.
func fixtureFinds(tb testing.TB) map[string]find {
	return map[string]find{
		"recall_id":    byRecallID("RA-73512"),
		"upc_product1": byGTIN(tb, "0 41798 00145 9"),
		"upc_product2": byGTIN(tb, "059749876544"),
		"upc_record":   byGTIN(tb, "062000123455"),
		"upc_prefix":   byGTINPrefix(tb, full("23527800995")),
		"vehicle":      byVehicle("Ford", "F-150", 2018),
		"vehicle_norm": byVehicle(" ford ", "transit connect", 2019),
		"vehicle_any":  byVehicle("FORD", "", 2019),
	}
}

func mustFind(tb testing.TB, s *Store, f find) []string {
	tb.Helper()
	ids, err := f(s)
	if err != nil {
		tb.Fatal(err)
	}
	return ids
}

func TestStore_RecordIDsBy(t *testing.T) {
	s := MustOpenStore(t)
	r := fixture(t)
	others := makeRecords(30)
	MustPut(t, s, append(others, r)...)

	t.Run("OK", func(t *testing.T) {
		for name, f := range fixtureFinds(t) {
			if ids := mustFind(t, s, f); !slices.Contains(ids, r.RecordID) {
				t.Errorf("%s: lookup found %q, not %s", name, ids, r.RecordID)
			}
		}
	})

	t.Run("NotFound", func(t *testing.T) {
		for name, f := range map[string]find{
			"other_value":     byRecallID("RA-00000"),
			"value_prefix":    byRecallID("RA-735"),
			"other_upc":       byGTIN(t, "12345670"), // an EAN-8 in no record
			"other_year":      byVehicle("FORD", "F-150", 2019),
			"other_make":      byVehicle("FORDX", "", 2018),
			"model_prefix":    byVehicle("FORD", "F", 2018),
			"recall_id_upper": byRecallID("ra-73512"),
		} {
			if ids := mustFind(t, s, f); slices.Contains(ids, r.RecordID) {
				t.Errorf("%s: lookup found %q", name, ids)
			}
		}
	})

	t.Run("SortedAndComplete", func(t *testing.T) {
		// Records put in reverse order with one barcode are found in
		// record_id order, each once.
		var shared []*rappel.Record
		var want []string
		for i := 9; i >= 0; i-- {
			o := makeRecord(200 + i)
			o.UPC = "12345670"
			shared = append(shared, o)
			want = append(want, o.RecordID)
		}
		MustPut(t, s, shared...)
		slices.Sort(want)
		if got := mustFind(t, s, byGTIN(t, "12345670")); !slices.Equal(got, want) {
			t.Errorf("upc 12345670 found %q, want %q", got, want)
		}
	})

	t.Run("VehicleAnyModelOnce", func(t *testing.T) {
		// makeRecord(1) covers two models of FORD 2016; it is found once.
		got := mustFind(t, s, byVehicle("FORD", "", 2016))
		if !slices.Equal(got, []string{"hc-000001"}) {
			t.Errorf("FORD 2016 any model found %q, want [hc-000001]", got)
		}
	})

	t.Run("SharedRecallID", func(t *testing.T) {
		got := mustFind(t, s, byRecallID(others[4].RecallID))
		if !slices.Equal(got, []string{others[4].RecordID, others[5].RecordID}) {
			t.Errorf("recall_id %s found %q", others[4].RecallID, got)
		}
	})

}

// TestStore_RecordIDsByGTIN checks that every printing of one code finds
// the product.
func TestStore_RecordIDsByGTIN(t *testing.T) {
	s := MustOpenStoreAt(t, "db", vfs.NewMem())
	r := fixture(t)
	MustPut(t, s, r)
	for _, code := range []string{
		"0 41798 00145 9", // as printed, UPC-A
		"041798001459",    // UPC-A digits
		"0041798001459",   // EAN-13
		"00041798001459",  // GTIN-14
		"0-41798-00145-9",
	} {
		if ids := mustFind(t, s, byGTIN(t, code)); !slices.Equal(ids, []string{r.RecordID}) {
			t.Errorf("RecordIDsByGTIN(ParseGTIN(%q)) = %q", code, ids)
		}
	}
	// UPC-E 0123455 abbreviates UPC-A 012000003455.
	r2 := makeRecord(100)
	r2.ProductList = []rappel.Product{{Name: "Soda", UPC: "01234505"}}
	MustPut(t, s, r2)
	for _, code := range []string{"01234505", "012000003455", "0012000003455"} {
		if ids := mustFind(t, s, byGTIN(t, code)); !slices.Equal(ids, []string{r2.RecordID}) {
			t.Errorf("RecordIDsByGTIN(ParseGTIN(%q)) = %q", code, ids)
		}
	}
}

// TestStore_PutRecords_Update checks that replacing a record removes the
// index keys of its old version.
func TestStore_PutRecords_Update(t *testing.T) {
	s := MustOpenStore(t)
	old := fixture(t)
	MustPut(t, s, old, makeRecord(1))

	upd := fixture(t)
	upd.RecallID = "RA-99999"
	upd.ProductList = upd.ProductList[1:]
	upd.UPC = ""
	upd.AffectedModels = []rappel.VehicleModel{{Make: "Toyota", Model: "Corolla", Year: 2020}}
	MustPut(t, s, upd)

	for name, f := range map[string]find{
		"old_recall_id": byRecallID("RA-73512"),
		"old_upc":       byGTIN(t, "041798001459"),
		"old_rec_upc":   byGTIN(t, "062000123455"),
		"old_vehicle":   byVehicle("FORD", "F-150", 2018),
		"old_make":      byVehicle("FORD", "", 2019),
	} {
		if ids := mustFind(t, s, f); slices.Contains(ids, old.RecordID) {
			t.Errorf("%s: stale index key still finds %q", name, ids)
		}
	}
	for name, f := range map[string]find{
		"new_recall_id": byRecallID("RA-99999"),
		"kept_upc":      byGTIN(t, "059749876544"),
		"new_vehicle":   byVehicle("TOYOTA", "COROLLA", 2020),
		"new_any_make":  byVehicle("toyota", "", 2020),
	} {
		if ids := mustFind(t, s, f); !slices.Equal(ids, []string{old.RecordID}) {
			t.Errorf("%s: lookup found %q", name, ids)
		}
	}
	checkIndex(t, s)

	if err := s.DeleteRecords(context.Background(), []string{old.RecordID}); err != nil {
		t.Fatal(err)
	}
	for name, f := range fixtureFinds(t) {
		if ids := mustFind(t, s, f); slices.Contains(ids, old.RecordID) {
			t.Errorf("%s: deleted record still found", name)
		}
	}
	checkIndex(t, s)
}

// TestStore_SeparatorInValue checks that values holding the separator or
// its escape find only their own records.
func TestStore_SeparatorInValue(t *testing.T) {
	s := MustOpenStoreAt(t, "db", vfs.NewMem())
	values := []string{"a", "a\x00", "a\x00b", "a\x00\x01b", "a\x00\xff", "a\x01", "ab", "", "\x00", "a/b"}
	var recs []*rappel.Record
	for i, v := range values {
		r := makeRecord(i)
		r.RecallID = v
		r.AffectedModels = []rappel.VehicleModel{{Make: "M\x00" + v, Model: v, Year: 2000}}
		recs = append(recs, r)
	}
	MustPut(t, s, recs...)
	checkIndex(t, s)
	for i, v := range values {
		want := []string{recs[i].RecordID}
		if v == "" {
			want = nil // empty values are not indexed
		}
		if ids := mustFind(t, s, byRecallID(v)); !slices.Equal(ids, want) {
			t.Errorf("recall_id %q found %q, want %q", v, ids, want)
		}
		if v == "" {
			continue
		}
		if ids := mustFind(t, s, byVehicle("M\x00"+v, v, 2000)); !slices.Equal(ids, want) {
			t.Errorf("vehicle %q found %q, want %q", v, ids, want)
		}
	}
}

func byGTINPrefix(tb testing.TB, code string) find {
	g := mustGTIN(tb, code)
	return func(s *Store) ([]string, error) { return s.RecordIDsByGTINPrefix(context.Background(), g) }
}

// full returns the code of an item sold by weight: body and its check digit.
func full(body string) string { return body + strconv.Itoa(rappel.CheckDigit(body)) }

// TestStore_RecordIDsByGTINPrefix checks that a full code finds the
// products whose upc_prefix it starts with, in either printed form, and
// only those: a prefix is not a prefix of the next item's codes, the exact
// keyspace never holds a prefix, and replacing or deleting a record drops
// its prefix keys.
func TestStore_RecordIDsByGTINPrefix(t *testing.T) {
	s := MustOpenStoreAt(t, "db", vfs.NewMem())
	ham := makeRecord(0)
	ham.ProductList = []rappel.Product{
		{Name: "Smoked ham, sold by weight", UPCPrefix: "0235278"},
		{Name: "Ham, sliced", UPCPrefix: "0235278"}, // the same prefix twice: one key
		{Name: "Ham steak", UPCPrefix: "02352"},     // too short: not indexed
	}
	pate := makeRecord(4)
	pate.ProductList = []rappel.Product{{Name: "Pâté", UPCPrefix: "235290"}} // printed without the EAN-13's 0
	longer := makeRecord(8)
	longer.ProductList = []rappel.Product{{Name: "Ham, 1 kg", UPCPrefix: "02352781"}} // within 0235278
	MustPut(t, s, append(makeRecords(20), ham, pate, longer)...)
	checkIndex(t, s)

	hamCode := full("23527812345") // UPC-A: number system 2, item 35278, price
	for name, tc := range map[string]struct {
		code string
		want []string
	}{
		"upc_a":           {hamCode, []string{ham.RecordID, longer.RecordID}},
		"ean_13":          {"0" + hamCode, []string{ham.RecordID, longer.RecordID}},
		"gtin_14":         {"00" + hamCode, []string{ham.RecordID, longer.RecordID}},
		"shorter_only":    {full("23527802345"), []string{ham.RecordID}},
		"next_item":       {full("23527912345"), nil},
		"under_short":     {full("23520012345"), nil},
		"upc_a_reading":   {full("23529000995"), []string{pate.RecordID}},
		"ean_13_reading":  {full("235290009950"), []string{pate.RecordID}},
		"manufacturer_0":  {full("02352781234"), nil}, // UPC-A number system 0: not an in-store code
		"short_ean_8":     {"96385074", nil},
		"makeRecord_upcs": {full("00000000000"), nil},
	} {
		if got := mustFind(t, s, byGTINPrefix(t, tc.code)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: RecordIDsByGTINPrefix(%q) = %q, want %q", name, tc.code, got, tc.want)
		}
	}
	// The exact keyspace holds no prefix: the prefix padded into a code
	// is not an exact match.
	if got := mustFind(t, s, byGTIN(t, full("023527800000"))); slices.Contains(got, ham.RecordID) {
		t.Errorf("exact lookup found the prefix: %q", got)
	}

	upd := makeRecord(0)
	upd.ProductList = []rappel.Product{{Name: "Smoked ham, sold by weight", UPCPrefix: "0235279"}}
	MustPut(t, s, upd)
	if got := mustFind(t, s, byGTINPrefix(t, hamCode)); !slices.Equal(got, []string{longer.RecordID}) {
		t.Errorf("after the update the old prefix finds %q", got)
	}
	if got := mustFind(t, s, byGTINPrefix(t, full("23527912345"))); !slices.Equal(got, []string{upd.RecordID}) {
		t.Errorf("after the update the new prefix finds %q", got)
	}
	checkIndex(t, s)

	if err := s.DeleteRecords(context.Background(), []string{upd.RecordID, pate.RecordID}); err != nil {
		t.Fatal(err)
	}
	for _, code := range []string{full("23527912345"), full("23529000995")} {
		if got := mustFind(t, s, byGTINPrefix(t, code)); got != nil {
			t.Errorf("deleted records still found by %q: %q", code, got)
		}
	}
	checkIndex(t, s)
}
