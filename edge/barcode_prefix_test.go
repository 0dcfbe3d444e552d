package edge

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

// The codes of the items sold by weight in prefixRecords: UPC-A, number
// system 2, five digits naming the item, five the price, a check digit.
var (
	hamCode      = withCheck("23527812345") // item 35278, under prefix 0235278
	nextCode     = withCheck("23527912345") // item 35279, under prefix 235279 only
	unlistedCode = withCheck("23528012345") // item 35280, under no prefix
)

// prefixRecords are lookupRecords plus records of items sold by weight:
//
//   - hc-990201 (2026-11-15) lists the ham by prefix only, "0235278", as
//     notices print it (the EAN-13's leading 0, then the UPC-A);
//   - hc-990202 (2026-10-01), older, names hamCode itself and also lists the
//     ham's prefix: it is found exactly, and once;
//   - hc-990203 (2026-09-01) lists the next item by prefix, printed without
//     the leading 0 ("235279");
//   - hc-990204 (2026-08-01) printed hamCode without its check digit, which
//     is therefore a lot code, not a upc.
func prefixRecords() []*rappel.Record {
	recs := lookupRecords()
	tmpl := recs[1] // a food record; lookupRecords makes new ones each call
	add := func(id, date string, products ...rappel.Product) *rappel.Record {
		r := *tmpl
		r.RecordID, r.RecallID, r.EventDate, r.RecallDate = "hc-"+id, id, date, date
		r.URLEn = "https://recalls-rappels.canada.ca/en/alert-recall/" + id
		r.IdentificationNumber = "RA-" + id
		r.ProductList = products
		r.Translations = rappel.Translations{
			EN: &rappel.Translation{Title: "Deli meats sold by weight recalled (" + id + ")", Category: "Dairy"},
			FR: &rappel.Translation{Title: "Rappel de charcuteries vendues au poids (" + id + ")", Category: "Produits laitiers"},
		}
		recs = append(recs, &r)
		return &r
	}
	add("990201", "2026-11-15", rappel.Product{Name: "Smoked ham, sold by weight", UPC: "", UPCPrefix: "0235278"})
	add("990202", "2026-10-01",
		rappel.Product{Name: "Smoked ham, 1.23 kg", UPC: hamCode[:1] + " " + hamCode[1:6] + " " + hamCode[6:11] + " " + hamCode[11:]},
		rappel.Product{Name: "Smoked ham, sold by weight", UPC: "", UPCPrefix: "0235278"})
	add("990203", "2026-09-01", rappel.Product{Name: "Ham steak, sold by weight", UPC: "", UPCPrefix: "235279"})
	add("990204", "2026-08-01", rappel.Product{Name: "Ham, sliced", UPC: "", LotCodes: []string{hamCode[:11]}})
	return recs
}

// matches returns the record_id and match of each result, "id/match".
func (b foundBody) matches() []string {
	var out []string
	for _, r := range b.Results {
		out = append(out, r.RecordID+"/"+r.Match)
	}
	return out
}

func TestBarcode_Prefix(t *testing.T) {
	e := mustLookupEnv(t, prefixRecords())

	t.Run("EveryForm", func(t *testing.T) {
		// Exact first although older; hc-990202 once, as exact.
		want := []string{"hc-990202/exact", "hc-990201/prefix"}
		for _, form := range []string{
			hamCode,       // UPC-A, as a scanner reads it
			"0" + hamCode, // EAN-13, as another reads it
			"00" + hamCode,
			"0 " + hamCode[:1] + " " + hamCode[1:6] + " " + hamCode[6:11] + " " + hamCode[11:],
		} {
			b := e.barcode(t, form)
			if got := b.matches(); !slices.Equal(got, want) {
				t.Errorf("upc %q found %v, want %v", form, got, want)
			}
			if b.GTIN != "00"+hamCode {
				t.Errorf("upc %q: gtin %q", form, b.GTIN)
			}
		}
	})
	t.Run("OtherPrice", func(t *testing.T) {
		// The same ham at another price: only the prefix matches.
		code := withCheck("23527800995")
		for _, form := range []string{code, "0" + code} {
			if got := e.barcode(t, form, "lang", "fr").matches(); !slices.Equal(got, []string{"hc-990201/prefix", "hc-990202/prefix"}) {
				t.Errorf("upc %q found %v", form, got)
			}
		}
	})
	t.Run("NotOverMatched", func(t *testing.T) {
		// 0235278 is no prefix of item 35279's codes; 235279, printed
		// without the leading 0, is, in both forms.
		for _, form := range []string{nextCode, "0" + nextCode} {
			if got := e.barcode(t, form).matches(); !slices.Equal(got, []string{"hc-990203/prefix"}) {
				t.Errorf("upc %q found %v, want only the next item's recall", form, got)
			}
		}
	})
	t.Run("UnderNoPrefix", func(t *testing.T) {
		for _, form := range []string{unlistedCode, "0" + unlistedCode} {
			if b := e.barcode(t, form); b.Count != 0 || b.Results == nil {
				t.Errorf("upc %q under no prefix: %+v", form, b)
			}
		}
	})
	t.Run("NoCheckDigit", func(t *testing.T) {
		// hc-990204 printed hamCode without its check digit: the code is
		// no upc of it, so a scan does not find it, and the digits as
		// printed are refused as a barcode; they are found as words.
		if ids := e.barcode(t, hamCode).ids(); slices.Contains(ids, "hc-990204") {
			t.Errorf("upc %q found the record that printed it without check digit: %v", hamCode, ids)
		}
		// Its 11 digits also read as a UPC-A printed without its leading
		// 0, as CFIA prints them, and 0 + them happens to check: that
		// other code is what they find, never the ham's record.
		if b := e.barcode(t, hamCode[:11]); b.GTIN != "000"+hamCode[:11] || slices.Contains(b.ids(), "hc-990204") {
			t.Errorf("upc %q: gtin %q found %v; want it read as UPC-A 0%s, finding no ham", hamCode[:11], b.GTIN, b.ids(), hamCode[:11])
		}
		if items := e.invalid(t, "/recall/upc?upc="+nextCode[:11]); !strings.Contains(items[0].Msg, "has 11 digits") {
			t.Errorf("upc %q: %+v", nextCode[:11], items)
		}
		var s struct {
			Results []struct {
				RecordID string `json:"record_id"`
			} `json:"results"`
		}
		e.ok(t, "/recall?"+url.Values{"q": {hamCode[:11]}}.Encode(), &s)
		if len(s.Results) != 1 || s.Results[0].RecordID != "hc-990204" {
			t.Errorf("q=%s found %+v, want hc-990204", hamCode[:11], s.Results)
		}
	})
	t.Run("RecordUpdate", func(t *testing.T) {
		// The ham's notice is corrected to the next item: the old prefix
		// key goes with the old version.
		recs := prefixRecords()
		upd := recs[slices.IndexFunc(recs, func(r *rappel.Record) bool { return r.RecordID == "hc-990201" })]
		upd.ProductList = []rappel.Product{{Name: "Smoked ham, sold by weight", UPC: "", UPCPrefix: "0235279"}}
		if err := e.store.PutRecords(t.Context(), []*rappel.Record{upd}); err != nil {
			t.Fatal(err)
		}
		if got := e.barcode(t, hamCode).matches(); !slices.Equal(got, []string{"hc-990202/exact"}) {
			t.Errorf("after the update upc %q found %v", hamCode, got)
		}
		if got := e.barcode(t, nextCode).matches(); !slices.Equal(got, []string{"hc-990201/prefix", "hc-990203/prefix"}) {
			t.Errorf("after the update upc %q found %v", nextCode, got)
		}
	})
}

// TestBarcode_PrefixBundle picks, from the real data, products listed by a
// prefix only, builds a full valid code under each prefix, and checks that
// both its UPC-A and EAN-13 forms find the product's recall by prefix.
func TestBarcode_PrefixBundle(t *testing.T) {
	recs := bundleRecords(t)
	type item struct{ id, prefix string }
	var items []item
	for _, r := range recs {
		for _, p := range r.ProductList {
			if p.UPCPrefix != "" {
				items = append(items, item{r.RecordID, p.UPCPrefix})
			}
		}
	}
	if len(items) < 100 {
		t.Fatalf("only %d products with a upc_prefix in the bundle", len(items))
	}
	e := mustLookupEnv(t, recs)
	for i := 0; i < len(items); i += len(items) / 20 {
		it := items[i]
		if len(it.prefix) < rappel.MinUPCPrefix || len(it.prefix) > 12 || it.prefix[0] != '0' {
			t.Fatalf("%s: upc_prefix %q is not a leading-0 EAN-13 prefix of 6 to 12 digits", it.id, it.prefix)
		}
		body := it.prefix + strings.Repeat("4", 12-len(it.prefix))
		ean := body + strconv.Itoa(rappel.CheckDigit(body))
		for _, form := range []string{ean, ean[1:]} { // EAN-13, UPC-A
			b := e.barcode(t, form)
			k := slices.IndexFunc(b.Results, func(r foundResult) bool { return r.RecordID == it.id })
			if k < 0 || b.Results[k].Match != "prefix" {
				t.Errorf("%s, upc_prefix %q: upc %q found %v", it.id, it.prefix, form, b.matches())
			}
		}
	}
}
