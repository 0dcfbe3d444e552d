package edge

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

// foundBody is a GET /recall/upc or GET /recall/vin body, loosely decoded.
type foundBody struct {
	UPC     string `json:"upc"`
	Digits  string `json:"digits"`
	GTIN    string `json:"gtin"`
	VIN     string `json:"vin"`
	Decoded struct {
		Make  *string `json:"make"`
		Model *string `json:"model"`
		Year  *int    `json:"year"`
	} `json:"decoded"`
	Count   int           `json:"count"`
	Results []foundResult `json:"results"`
}

// foundResult is one result of a foundBody.
type foundResult struct {
	RecallID   string  `json:"recall_id"`
	RecordID   string  `json:"record_id"`
	RecallType string  `json:"recall_type"`
	TitleEN    string  `json:"title_en"`
	Title      *string `json:"title"`
	Match      string  `json:"match"`
}

func (b foundBody) ids() []string {
	var ids []string
	for _, r := range b.Results {
		ids = append(ids, r.RecordID)
	}
	return ids
}

func (e *lookupEnv) barcode(tb testing.TB, upc string, more ...string) foundBody {
	tb.Helper()
	v := url.Values{"upc": {upc}}
	for i := 0; i+1 < len(more); i += 2 {
		v.Set(more[i], more[i+1])
	}
	var b foundBody
	e.ok(tb, "/recall/upc?"+v.Encode(), &b)
	if b.Count != len(b.Results) {
		tb.Errorf("upc %q: count %d, %d results", upc, b.Count, len(b.Results))
	}
	return b
}

func TestBarcode(t *testing.T) {
	e := mustLookupEnv(t, append(lookupRecords(), statsRecords(50, 2)...))

	t.Run("EveryForm", func(t *testing.T) {
		c := cheddarUPC // 12 digits: 062639312855
		// Newest first: hc-990101 (2026-11-10, spaced UPC-A), hc-990102
		// (2026-11-03, EAN-13), hc-990103 (2025-05-05, GTIN-14).
		want := []string{"hc-990101", "hc-990102", "hc-990103"}
		for _, form := range []string{
			c,        // UPC-A
			"0" + c,  // EAN-13
			"00" + c, // GTIN-14
			c[:1] + " " + c[1:6] + " " + c[6:11] + " " + c[11:], // as printed under the bars
			c[:1] + "-" + c[1:6] + "-" + c[6:11] + "-" + c[11:],
			" 0 " + c + " ",
			"0-0-" + c,
			c[1:],       // as CFIA prints a UPC-A: 11 digits, its leading 0 dropped
			c[1:] + "*", // a correction notice's mark
			c + " *",
			c[1:6] + " " + c[6:11] + " " + c[11:],
		} {
			b := e.barcode(t, form)
			if !slices.Equal(b.ids(), want) {
				t.Errorf("upc %q found %v, want %v", form, b.ids(), want)
			}
			if b.UPC != form || b.Digits != rappel.StripBarcode(form) || b.GTIN != "00"+c {
				t.Errorf("upc %q: echoed upc %q digits %q gtin %q", form, b.UPC, b.Digits, b.GTIN)
			}
			r := b.Results[0]
			if r.RecallID != "990101" || r.RecallType != "food" || !strings.HasPrefix(r.TitleEN, "Laiterie Charlevoix brand") || r.Title != nil || r.Match != "exact" {
				t.Errorf("upc %q: first result %+v", form, r)
			}
		}
	})
	t.Run("UPCE", func(t *testing.T) {
		// 04252614 abbreviates 042100005264; 425261 is it without its
		// number system and check digit.
		want := []string{"hc-990104", "hc-990105"}
		for _, form := range []string{datesUPCE, "425261", "0 425261 4", datesUPCA, "0" + datesUPCA, "0-42100-00526-4"} {
			if got := e.barcode(t, form).ids(); !slices.Equal(got, want) {
				t.Errorf("upc %q found %v, want %v", form, got, want)
			}
		}
	})
	t.Run("EAN8", func(t *testing.T) {
		for _, form := range []string{toyEAN8, "9638 5074", "00000096385074"} {
			if got := e.barcode(t, form).ids(); !slices.Equal(got, []string{"hc-990106"}) {
				t.Errorf("upc %q found %v, want the record's own upc field", form, got)
			}
		}
	})
	t.Run("Lang", func(t *testing.T) {
		b := e.barcode(t, cheddarUPC, "lang", "fr")
		if r := b.Results[0]; r.Title == nil || !strings.HasPrefix(*r.Title, "Rappel de cheddar") || !strings.HasPrefix(r.TitleEN, "Laiterie") {
			t.Errorf("lang=fr: %+v", r)
		}
		toy := e.barcode(t, toyEAN8, "lang", "fr").Results[0] // English only
		if toy.Title == nil || *toy.Title != toy.TitleEN {
			t.Errorf("lang=fr on an English-only record: %+v", toy)
		}
		if r := e.barcode(t, cheddarUPC, "lang", "en").Results[0]; r.Title == nil || *r.Title != r.TitleEN {
			t.Errorf("lang=en: %+v", r)
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		b := e.barcode(t, withCheck("07700000001"))
		if b.Count != 0 || b.Results == nil {
			t.Errorf("unknown code: %+v", b)
		}
	})

	t.Run("WrongCheckDigit", func(t *testing.T) {
		right := int(cheddarUPC[11] - '0')
		for _, tc := range []struct {
			form, fixed string
			check       int
		}{
			{cheddarUPC[:11] + fmt.Sprint((right+1)%10), cheddarUPC, right},
			{"0 " + cheddarUPC[:11] + fmt.Sprint((right+3)%10), "0" + cheddarUPC, right},
			{"0042100005265", "0" + datesUPCA, 4},                                // EAN-13 of the dates, last digit off by one
			{"04252615", datesUPCE, 4},                                           // read as EAN-8 fails too: the UPC-E check is named
			{cheddarUPC[1:11] + fmt.Sprint((right+1)%10), cheddarUPC[1:], right}, // 11 digits, read as a UPC-A
		} {
			items := e.invalid(t, "/recall/upc?"+url.Values{"upc": {tc.form}}.Encode())
			it := items[0]
			if it.Type != "value_error" || it.Loc[1] != "upc" || it.Input != tc.form || it.Ctx["check_digit"] != float64(tc.check) ||
				!strings.Contains(it.Msg, fmt.Sprintf("should be %d", tc.check)) || !strings.Contains(it.Msg, "the code is '"+tc.fixed+"'.") {
				t.Errorf("upc %q: %+v; want the right check digit %d named, and %s", tc.form, it, tc.check, tc.fixed)
			}
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		for _, tc := range []struct{ query, typ, says string }{
			{"upc=04179800145X", "value_error", "only digits, spaces and dashes, not 'X'; send only the digits"},
			{"upc=UPC%20041798001459", "value_error", "not 'U'"},
			{"upc=0417.9800", "value_error", "not '.'"},
			{"upc=12345", "value_error", "has 5 digits"},
			{"upc=123456789", "value_error", "has 9 digits"},
			{"upc=041798001459041798", "value_error", "missing or extra digit"},
			{"upc=", "value_error", "empty"},
			{"upc=%20-%20", "value_error", "empty"},
			{"", "missing", "Query parameter 'upc' is required; send the barcode"},
			{"upc=96385074&upc=96385074", "value_error", "given 2 times"},
			{"upc=96385074&lang=de", "enum", "'en' or 'fr'"},
			{"barcode=96385074", "extra_forbidden", "Query parameter 'barcode' is unknown; use 'upc' or 'lang'."},
		} {
			items := e.invalid(t, "/recall/upc?"+tc.query)
			if it := items[0]; it.Type != tc.typ || !strings.Contains(it.Msg, tc.says) {
				t.Errorf("%q: %+v; want %s saying %q", tc.query, items, tc.typ, tc.says)
			}
		}
	})
	t.Run("NoLookup", func(t *testing.T) {
		s, _ := MustServer(t, e.catalog)
		s.Logger = discardLogger()
		base := MustHTTP(t, s.Handler()).URL
		unwired := &lookupEnv{base: base}
		for _, target := range []string{"/recall/upc?upc=" + toyEAN8, "/recall/vin?vin=4T1BB3EK5AU118081"} {
			if status, b := unwired.call(t, target); status != http.StatusServiceUnavailable {
				t.Errorf("%s without a Lookup: %d %s", target, status, b)
			}
		}
		if items := unwired.invalid(t, "/recall/upc?upc=1"); items[0].Loc[1] != "upc" {
			t.Errorf("parameters are still checked first: %+v", items)
		}
	})
}
