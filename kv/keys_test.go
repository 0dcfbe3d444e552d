package kv

import (
	"bytes"
	"slices"
	"testing"

	"github.com/rappel-ca/rappel"
)

func TestIndexKey(t *testing.T) {
	for _, tt := range []struct {
		field  string
		values []string
		id     string
		want   string
	}{
		{fieldRecallID, []string{"food"}, "hc-1", "i/recall_id/food\x00\x01hc-1"},
		{fieldRecallID, []string{"a\x00b"}, "hc-1", "i/recall_id/a\x00\xffb\x00\x01hc-1"},
		{fieldRecallID, []string{""}, "hc-1", "i/recall_id/\x00\x01hc-1"},
		{fieldVehicle, []string{"FORD", "2018", "F-150"}, "tc-2", "i/vehicle/FORD\x00\x012018\x00\x01F-150\x00\x01tc-2"},
	} {
		got := indexKey(tt.field, tt.values, tt.id)
		if string(got) != tt.want {
			t.Errorf("indexKey(%q, %q, %q) = %q, want %q", tt.field, tt.values, tt.id, got, tt.want)
		}
		field, values, id, err := decodeIndexKey(got, len(tt.values))
		if err != nil || field != tt.field || !slices.Equal(values, tt.values) || id != tt.id {
			t.Errorf("decodeIndexKey(%q) = %q, %q, %q, %v", got, field, values, id, err)
		}
	}
}

func TestDecodeIndexKey_Malformed(t *testing.T) {
	for _, k := range []string{"", "r/x", "i/type", "i/type/food", "i/type/food\x00", "i/type/food\x00\x02hc-1"} {
		if _, _, _, err := decodeIndexKey([]byte(k), 1); err == nil {
			t.Errorf("decodeIndexKey(%q) succeeded", k)
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	for in, want := range map[string]string{"i/": "i0", "a\xff": "b", "\xff\xff": "", "r/x\xff\xff": "r/y"} {
		if got := prefixEnd([]byte(in)); string(got) != want {
			t.Errorf("prefixEnd(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzIndexKey checks that index keys decode to what was encoded, that two
// different (values, record_id) never share a key, and that the lookup
// prefix of one value never covers the keys of another; the order of
// values is kept too.
func FuzzIndexKey(f *testing.F) {
	f.Add("food", "hc-1", "food\x00", "hc-1", false)
	f.Add("a", "\x00\x01b", "a\x00\x01", "b", false)
	f.Add("a\x00", "\xffx", "a", "\x00\xffx", true)
	f.Add("FORD", "hc-1", "FORD", "hc-2", true)
	f.Fuzz(func(t *testing.T, v1, id1, v2, id2 string, vehicle bool) {
		field, vals1, vals2 := fieldRecallID, []string{v1}, []string{v2}
		if vehicle {
			// Split each value in three to exercise multi-value keys.
			field, vals1, vals2 = fieldVehicle, split3(v1), split3(v2)
		}
		k1, k2 := indexKey(field, vals1, id1), indexKey(field, vals2, id2)
		for _, c := range []struct {
			key  []byte
			vals []string
			id   string
		}{{k1, vals1, id1}, {k2, vals2, id2}} {
			gf, gv, gid, err := decodeIndexKey(c.key, len(c.vals))
			if err != nil || gf != field || !slices.Equal(gv, c.vals) || gid != c.id {
				t.Fatalf("decodeIndexKey(%q) = %q, %q, %q, %v; want %q, %q", c.key, gf, gv, gid, err, c.vals, c.id)
			}
		}
		same := slices.Equal(vals1, vals2)
		if bytes.Equal(k1, k2) != (same && id1 == id2) {
			t.Fatalf("keys %q and %q: equal %v, but values equal %v and ids equal %v", k1, k2, bytes.Equal(k1, k2), same, id1 == id2)
		}
		if covers := bytes.HasPrefix(k2, indexKeyPrefix(field, vals1...)); covers != same {
			t.Fatalf("prefix of %q covers key of %q: %v", vals1, vals2, covers)
		}
		if !same && (bytes.Compare(k1, k2) < 0) != (slices.Compare(vals1, vals2) < 0) {
			t.Fatalf("keys of %q and %q are not in value order", vals1, vals2)
		}
		if vehicle && vals1[0] == vals2[0] && vals1[1] == vals2[1] && !bytes.HasPrefix(k2, indexKeyPrefix(field, vals1[:2]...)) {
			t.Fatalf("make-year prefix of %q does not cover key of %q", vals1, vals2)
		}
	})
}

// split3 cuts s into three parts at a third and two thirds of its length.
func split3(s string) []string {
	n := len(s)
	return []string{s[:n/3], s[n/3 : 2*n/3], s[2*n/3:]}
}

// FuzzIndexKeys_StoredForm checks that a record's index keys are the same
// before and after a trip through its stored encoding, whatever bytes its
// fields hold: PutRecords derives the keys it writes from the record it is
// given, and the keys it deletes from the stored version.
func FuzzIndexKeys_StoredForm(f *testing.F) {
	f.Add("Allergen - Milk", "milk", "0 41798 00145 9", "Ford", "F-150", "RA-1")
	f.Add("a\x00\xff", "\xff\xfe", "062000123455;\xff", " mercedes\xc3 ", "\xed\xa0\x80", "\x00")
	f.Fuzz(func(t *testing.T, category, allergen, upc, make, model, recallID string) {
		r := makeRecord(0)
		r.Category, r.Allergens, r.UPC, r.RecallID = category, []string{allergen}, upc, recallID
		r.ProductList = []rappel.Product{{Name: "x", UPC: upc}}
		r.AffectedModels = []rappel.VehicleModel{{Make: make, Model: model, Year: 2001}}
		val, err := encodeValue(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		stored := &rappel.Record{}
		if err := decodeValue(val, stored); err != nil {
			t.Fatal(err)
		}
		if got, want := indexKeys(r), indexKeys(stored); !slices.EqualFunc(got, want, bytes.Equal) {
			t.Fatalf("index keys differ after a trip through storage:\n got %q\nwant %q", got, want)
		}
	})
}
