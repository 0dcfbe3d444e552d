package detail_test

import (
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/detail"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

func TestNormalize(t *testing.T) {
	out := guesttest.MustRun(t, os.DirFS("../../testdata/detail"), detail.Normalize)
	guesttest.Golden(t, "../../testdata/golden/detail.json", out)
	guesttest.Check(t, out)
}

// TestNormalize_Bad runs testdata/bad/detail: UPCs that are not digits are
// dropped from their products, unknown allergens left out, bad dates left
// out, unreadable documents skipped, each with a problem; digits with a
// wrong check digit stay as a searchable code, and everything else loads.
func TestNormalize_Bad(t *testing.T) {
	out := guesttest.MustRun(t, os.DirFS("../../testdata/bad/detail"), detail.Normalize)
	guesttest.Check(t, out)

	var ids []string
	byID := map[string]*rappel.Record{}
	for _, r := range out.Records {
		ids = append(ids, r.RecordID)
		byID[r.RecordID] = r
	}
	// 90004 and 90005 have only an unreadable English document.
	if got, want := strings.Join(ids, " "), "hc-90001 hc-90002 hc-90003 hc-90006"; got != want {
		t.Errorf("records %s, want %s", got, want)
	}
	r := byID["hc-90001"]
	if r == nil || r.RecallID != "90001" || len(r.ProductList) != 3 || r.ProductList[0].UPC != "0 41798 00145 9" ||
		r.ProductList[1].UPC != "" || strings.Join(r.ProductList[1].LotCodes, ",") != "0 41798 00145 8" ||
		r.ProductList[2].UPC != "" || r.ProductList[2].LotCodes != nil || r.UPC != "" ||
		strings.Join(r.Allergens, ",") != "peanut,sesame" || r.AlertType != "Food recall warning" {
		t.Errorf("hc-90001 should keep its products without their bad UPCs, the one with digits as a code, and peanut and sesame only: %+v", r)
	}
	if r := byID["hc-90002"]; r == nil || r.EventDate != "" || r.RecallDate != "" || r.Translations.EN.Title != "Bad dates" {
		t.Errorf("hc-90002 should load without dates: %+v", r)
	}
	if r := byID["hc-90003"]; r == nil || r.Translations.EN != nil || r.Translations.FR == nil || r.EventDate != "2017-07-14" {
		t.Errorf("hc-90003 should load from its French document: %+v", r)
	}
	if r := byID["hc-90006"]; r == nil || r.Images != nil || r.ProductList != nil {
		t.Errorf("hc-90006 should load without images or products: %+v", r)
	}

	want := []rappel.Problem{
		{Reason: "en/abc.json was skipped: a document is named after its notice's NID, a number."},
		{RecordID: "hc-90001", Reason: `The allergen "Lupin" in en/90001.json is not one of Milk, Peanuts,`},
		{RecordID: "hc-90001", Reason: `(did you mean Peanuts?); it was left out.`},
		{RecordID: "hc-90001", Reason: `The UPC "12345" in the details of en/90001.json was dropped: the barcode has 5 digits`},
		{RecordID: "hc-90001", Reason: `The UPC "0 41798 ABCDE 9" of product "Letters in the UPC" (product_3) in en/90001.json was dropped: the barcode may hold only digits`},
		{RecordID: "hc-90002", Reason: "The start_date of en/90002.json, yesterday, is not a Unix time in seconds; event_date was left out."},
		{RecordID: "hc-90002", Reason: "The date_published of en/90002.json, -5, is not a Unix time in seconds; recall_date was left out."},
		{RecordID: "hc-90003", Reason: "en/90003.json was skipped: it is not JSON (unexpected end of JSON input"},
		{RecordID: "hc-90004", Reason: "en/90004.json was skipped: its title is a JSON number, not a string."},
		{RecordID: "hc-90005", Reason: "en/90005.json was skipped: it is a JSON array, not an object."},
		{RecordID: "hc-90006", Reason: "Product panel product_1 of en/90006.json was skipped: it names no product."},
		{RecordID: "hc-90006", Reason: "The images panel of en/90006.json was left out: it is not a list of {url, title}."},
	}
	for i := 0; i < len(out.Problems) || i < len(want); i++ {
		switch {
		case i >= len(want):
			t.Errorf("unexpected problem %+v", out.Problems[i])
		case i >= len(out.Problems):
			t.Errorf("missing problem %+v", want[i])
		case out.Problems[i].Source != detail.Source || out.Problems[i].RecordID != want[i].RecordID || !strings.Contains(out.Problems[i].Reason, want[i].Reason):
			t.Errorf("problem %d = %+v, want %+v", i, out.Problems[i], want[i])
		}
	}
}

func TestNormalize_Errors(t *testing.T) {
	out := guesttest.Run(fstest.MapFS{"recalls-en.json": {Data: []byte("[]")}}, detail.Normalize)
	if !strings.Contains(out.Err, "neither en/ nor fr/ exists") {
		t.Errorf("error %q, want a missing-directories error", out.Err)
	}
	out = guesttest.MustRun(t, fstest.MapFS{"en": {Mode: fs.ModeDir | 0o755}}, detail.Normalize)
	if len(out.Records)+len(out.Problems) != 0 {
		t.Errorf("an empty en/ gave %+v", out)
	}
}

func TestNormalize_Lenient(t *testing.T) {
	// recallId as a number, dates as strings, keys in other cases and the
	// colon outside the bold: what an older export may write.
	doc := `{"recallId": 123, "title": "T", "start_date": "1500000000", "date_published": 1.5e9,
		"panels": [{"panelName": "Details", "text": "<B>alert TYPE</B>: Recall<br /><strong>Recalling firm:</strong> Firm &amp; Co"},
		           {"panelName": "product_10", "text": "<b>Product:</b> Ten"},
		           {"panelName": "product_9", "text": "<b>Product:</b> Nine<br><b>UPC:</b> none"}]}`
	out := guesttest.MustRun(t, fstest.MapFS{"en/124.json": {Data: []byte("\ufeff" + doc)}}, detail.Normalize)
	if len(out.Records) != 1 || len(out.Problems) != 0 {
		t.Fatalf("got %+v", out)
	}
	r := out.Records[0]
	if r.RecordID != "hc-124" || r.RecallID != "123" || r.EventDate != "2017-07-14" || r.RecallDate != "2017-07-14" ||
		r.AlertType != "Recall" || r.RecallingFirm != "Firm & Co" || len(r.ProductList) != 2 || r.ProductList[0].Name != "Nine" {
		t.Errorf("got %+v", r)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, nid := range []string{"70001", "70002", "70004", "70006"} {
		en, _ := os.ReadFile("../../testdata/detail/en/" + nid + ".json")
		fr, _ := os.ReadFile("../../testdata/detail/fr/" + nid + ".json")
		f.Add(nid, en, fr)
	}
	for _, nid := range []string{"90001", "90002", "90006"} {
		en, _ := os.ReadFile("../../testdata/bad/detail/en/" + nid + ".json")
		f.Add(nid, en, []byte(nil))
	}
	shapesEN, _ := os.ReadFile("../../testdata/detail-shapes/en/71001.json")
	shapesFR, _ := os.ReadFile("../../testdata/detail-shapes/fr/71001.json")
	frOnly, _ := os.ReadFile("../../testdata/detail-shapes/fr/71002.json")
	f.Add("71001", shapesEN, shapesFR)
	f.Add("71002", []byte(nil), frOnly)
	f.Add("x1", []byte(`{}`), []byte(`[]`))
	f.Fuzz(func(t *testing.T, name string, en, fr []byte) {
		fsys := fstest.MapFS{}
		if en != nil {
			fsys["en/"+name+".json"] = &fstest.MapFile{Data: en}
		}
		if fr != nil {
			fsys["fr/"+name+".json"] = &fstest.MapFile{Data: fr}
		}
		out := guesttest.Run(fsys, detail.Normalize)
		guesttest.Check(t, out)
		for _, r := range out.Records {
			for _, d := range []string{r.EventDate, r.RecallDate} {
				if d != "" && !rappel.ValidDate(d) {
					t.Fatalf("%s has date %q", r.RecordID, d)
				}
			}
			for _, a := range r.Allergens {
				if !rappel.Allergens.Has(a) {
					t.Fatalf("%s has allergen %q", r.RecordID, a)
				}
			}
			for _, p := range r.ProductList {
				if p.UPC != "" {
					if _, err := rappel.ParseGTIN(p.UPC); err != nil {
						t.Fatalf("%s kept bad UPC %q", r.RecordID, p.UPC)
					}
				}
				if p.UPCPrefix != "" && (len(p.UPCPrefix) > 13 || strings.Trim(p.UPCPrefix, "0123456789") != "") {
					t.Fatalf("%s kept bad UPC prefix %q", r.RecordID, p.UPCPrefix)
				}
			}
		}
	})
}

// TestNormalize_Shapes runs testdata/detail-shapes, a notice for each way
// Canadian notices print barcodes: spaced UPC-A and EAN-13, a prefix the
// codes of items sold by weight start with, a whole in-store code starting
// 02, an in-store code printed without its check digit, and a French-only
// notice under the CUP header.
func TestNormalize_Shapes(t *testing.T) {
	out := guesttest.MustRun(t, os.DirFS("../../testdata/detail-shapes"), detail.Normalize)
	guesttest.Golden(t, "../../testdata/golden/detail-shapes.json", out)
	guesttest.Check(t, out)
	if len(out.Records) != 2 {
		t.Fatalf("got %d records, want 2", len(out.Records))
	}
	type want struct{ upc, prefix, lots string }
	for i, tc := range []struct {
		id    string
		wants []want
	}{
		{"hc-71001", []want{
			{upc: "0 55742 56277 4", lots: "BB 2024/06/30"},
			{upc: "4 892742 010357"},
			{prefix: "0235278", lots: "Packed on 2024-05-27"},
			{prefix: "0281234"},
			{upc: "0235278012992"},
			{lots: "Packed on 2024-05-28|0235278 00000"},
			{},
		}},
		{"hc-71002", []want{
			{prefix: "0246810", lots: "Emballé le 2024-06-25"},
			{lots: "0246810 00000"},
		}},
	} {
		r := out.Records[i]
		if r.RecordID != tc.id || len(r.ProductList) != len(tc.wants) {
			t.Fatalf("record %d is %s with %d products, want %s with %d", i, r.RecordID, len(r.ProductList), tc.id, len(tc.wants))
		}
		for j, w := range tc.wants {
			p := r.ProductList[j]
			if p.UPC != w.upc || p.UPCPrefix != w.prefix || strings.Join(p.LotCodes, "|") != w.lots {
				t.Errorf("%s product %d = %+v, want upc %q, upc_prefix %q, lot codes %q", tc.id, j+1, p, w.upc, w.prefix, w.lots)
			}
		}
	}
	if len(out.Problems) != 1 || !strings.Contains(out.Problems[0].Reason, `The UPC prefix "Starting with the store code" of product "Pâté – sold by weight" (product_7)`) {
		t.Errorf("problems %+v, want one for the prefix without digits", out.Problems)
	}
}
