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
	for _, r := range out.Records {
		ids = append(ids, r.RecordID)
	}
	byID := out.ByID()
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
		{RecordID: "hc-90006", Reason: "The images panel of en/90006.json was left out: it is not a list of images, {fullUrl, thumbUrl, title} or {url, title}."},
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
	realEN, _ := os.ReadFile("../../testdata/detail-real/en/72335.json")
	realFR, _ := os.ReadFile("../../testdata/detail-real/fr/72335.json")
	unknowns, _ := os.ReadFile("../../testdata/detail-real/en/72336.json")
	frRealOnly, _ := os.ReadFile("../../testdata/detail-real/fr/72337.json")
	f.Add("72335", realEN, realFR)
	f.Add("72336", unknowns, []byte(nil))
	f.Add("72337", []byte(nil), frRealOnly)
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
				if p.Name == "" {
					t.Fatalf("%s has a product without a name", r.RecordID)
				}
			}
			if r.RecallType != "" && !rappel.RecallTypes.Has(r.RecallType) {
				t.Fatalf("%s has recall type %q", r.RecordID, r.RecallType)
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

// TestNormalize_Real runs testdata/detail-real, documents in the shape
// public clients of Health Canada's detail API show (see testdata/FORMATS.md):
// category codes, basic_details, the cms_ panels, product panels of Brand
// name, Common name, Code(s) on product and an 11-digit UPC, a product
// table, images with site-relative fullUrl and thumbUrl. Every part of the
// notice reaches the record.
func TestNormalize_Real(t *testing.T) {
	out := guesttest.MustRun(t, os.DirFS("../../testdata/detail-real"), detail.Normalize)
	guesttest.Golden(t, "../../testdata/golden/detail-real.json", out)
	guesttest.Check(t, out)
	byID := out.ByID()

	r := byID["hc-72335"]
	if r == nil {
		t.Fatalf("no record hc-72335 in %+v", out.Records)
	}
	en, fr := r.Translations.EN, r.Translations.FR
	if en == nil || fr == nil {
		t.Fatalf("hc-72335 translations %+v", r.Translations)
	}
	for _, c := range []struct{ field, got, want string }{
		{"recall_type", r.RecallType, rappel.TypeFood},
		{"recall_date", r.RecallDate, "2020-02-26"},
		{"hazard_description", en.HazardDescription, "The recalled products may contain elevated levels of lead. Chemical - lead. Testing found lead above the level allowed in food for infants."},
		{"what_to_do", en.WhatToDo, "Do not consume the recalled products. Throw them out or return them to the store where they were bought."},
		{"product_description", en.ProductDescription, "Organic fruit purées for infants, sold in pouches and multipacks."},
		{"fr hazard_description", fr.HazardDescription, "Les produits rappelés pourraient contenir des teneurs élevées en plomb."},
		{"fr what_to_do", fr.WhatToDo, "Ne consommez pas les produits rappelés."},
		{"recalling_firm", r.RecallingFirm, "Maple Grove Foods Inc."},
		{"manufacturer", r.Manufacturer, "Verger du Nord Ltée"},
		{"alert_type", r.AlertType, "Food recall warning"},
		{"identification_number", r.IdentificationNumber, "RA-72335"},
		{"cfia_id", r.CFIAID, "13579"},
		{"categories", strings.Join(r.Categories, "|"), "Food|Fruits and vegetables"},
		{"distribution", strings.Join(r.Distribution, "|"), "Ontario|Quebec"},
		{"image_url", r.ImageURL, "https://healthycanadians.gc.ca/recall-alert-rappel-avis/hc-sc/2020/assets/ra-72335-01_full.jpg"},
	} {
		if c.got != c.want {
			t.Errorf("hc-72335 %s = %q, want %q", c.field, c.got, c.want)
		}
	}
	if len(r.Images) != 2 || r.Images[1].URL != "https://healthycanadians.gc.ca/recall-alert-rappel-avis/hc-sc/2020/assets/ra-72335-02_thumb.jpg" || r.Images[0].Title != "Organic apple and pear purée" {
		t.Errorf("hc-72335 images %+v, want the full image, else the thumbnail, made absolute", r.Images)
	}
	type want struct{ name, upc, lots, size string }
	wants := []want{
		{"Maple Grove Organic apple and pear purée", "067123450013", "BB 2021 JA 15|BB 2021 JA 22", "128 ml"},
		// 081234567890 fails its check digit: digits printed without
		// their check digit stay searchable as a code, never a upc.
		{"Maple Grove Organic mango purée", "", "BB 2021 FE 02|81234567890", "128 ml"},
		{"Maple Grove Organic pear purée, multipack", "0 67123 45002 0", "BB 2021 MR 01", "4 x 90 ml"},
		{"Maple Grove Organic plum purée, multipack", "067123450037", "BB 2021 MR 08|BB 2021 MR 15", "4 x 90 ml"},
	}
	if len(r.ProductList) != len(wants) {
		t.Fatalf("hc-72335 has %d products, want %d: %+v", len(r.ProductList), len(wants), r.ProductList)
	}
	for i, w := range wants {
		p := r.ProductList[i]
		if p.Name != w.name || p.UPC != w.upc || strings.Join(p.LotCodes, "|") != w.lots || p.Size != w.size {
			t.Errorf("hc-72335 product %d = %+v, want %+v", i+1, p, w)
		}
	}

	// A notice whose url is an API path: images resolve against the site.
	if r := byID["hc-72336"]; r == nil || r.RecallID != "72336" || r.RecallType != "" ||
		strings.Join(r.Categories, "|") != "Consumer products|Household items" ||
		r.ImageURL != "https://healthycanadians.gc.ca/recall-alert-rappel-avis/hc-sc/2020/assets/ra-72336-01.jpg" ||
		len(r.ProductList) != 2 || r.ProductList[0].Name != "Trailhead Folding camp stool" || r.ProductList[0].UPC != "077300123456" ||
		r.ProductList[1].Name != "Trailhead folding camp stool, tall" || r.ProductList[1].UPC != "0 77300 12346 3" {
		t.Errorf("hc-72336 = %+v", r)
	}
	// A French-only notice: its products under French keys.
	if r := byID["hc-72337"]; r == nil || len(r.ProductList) != 1 || r.ProductList[0].Name != "Bel Érable Tartinade aux noisettes" ||
		r.ProductList[0].UPC != "062900111224" || strings.Join(r.ProductList[0].LotCodes, "|") != "2020 AL 30" || r.ProductList[0].Size != "250 g" {
		t.Errorf("hc-72337 = %+v", r)
	}

	// What the normalizer does not know is said, never dropped silently.
	for _, want := range []string{
		`en/72336.json has a panel "recall_timeline"`,
		`The key "Recall date" in basic_details of en/72336.json`,
		`The key "Model number" in product_1 of en/72336.json`,
		`The column "Colour" of the table in product_2 of en/72336.json`,
		`The category code "9" of en/72336.json`,
	} {
		found := false
		for _, p := range out.Problems {
			found = found || p.RecordID == "hc-72336" && strings.Contains(p.Reason, want)
		}
		if !found {
			t.Errorf("no problem says %q; problems: %+v", want, out.Problems)
		}
	}
	if len(out.Problems) != 5 {
		t.Errorf("%d problems, want 5: %+v", len(out.Problems), out.Problems)
	}
}

// TestNormalize_Categories checks the forms of category: the API's codes as
// strings or numbers, whose sections lead the categories a document names
// and alone give only a recall type, several sections (no recall type), a
// code it does not know, and values that make the document unreadable.
func TestNormalize_Categories(t *testing.T) {
	doc := func(category string) []byte {
		return []byte(`{"recallId": "1", "title": "T", "category": ` + category + `, "panels": []}`)
	}
	out := guesttest.MustRun(t, fstest.MapFS{
		"en/1.json": {Data: []byte(`{"recallId": "1", "category": [1, "3"], "panels": [{"panelName": "basic_details", "text": "<b>Category:</b> Dairy<BR/><b>Category:</b> Food"}]}`)},
		"en/2.json": {Data: doc(`["2"]`)},
		"en/3.json": {Data: doc(`"Food"`)},
		"en/4.json": {Data: doc(`[{}]`)},
		"en/5.json": {Data: doc(`["Food", "12"]`)},
	}, detail.Normalize)
	if len(out.Records) != 3 {
		t.Fatalf("got %d records, want 3: %+v", len(out.Records), out.Records)
	}
	for i, want := range []struct{ cats, typ string }{
		{"Food|Health products|Dairy", ""}, {"", rappel.TypeVehicle}, {"Food", ""},
	} {
		if r := out.Records[i]; strings.Join(r.Categories, "|") != want.cats || r.RecallType != want.typ {
			t.Errorf("%s: categories %q, recall type %q; want %q, %q", r.RecordID, r.Categories, r.RecallType, want.cats, want.typ)
		}
	}
	want := []string{
		`en/3.json was skipped: its category is "Food", not a list of codes or names.`,
		`en/4.json was skipped: its category holds {}, which is neither a string nor a number.`,
		`The category code "12" of en/5.json is none of 1 (Food), 2 (Vehicles), 3 (Health products) or 4 (Consumer products); it was left out.`,
	}
	if len(out.Problems) != len(want) {
		t.Fatalf("problems %+v, want %q", out.Problems, want)
	}
	for i, w := range want {
		if out.Problems[i].Reason != w {
			t.Errorf("problem %d = %q, want %q", i, out.Problems[i].Reason, w)
		}
	}
}

// TestNormalizeSite resolves a document's relative image paths against the
// site given when the document's url is a path, and refuses a site that is
// no web address.
func TestNormalizeSite(t *testing.T) {
	doc := `{"recallId": "1", "title": "T", "url": "/recall-alert-rappel-avis/api/1/en", "panels": [
		{"panelName": "images", "data": [{"fullUrl": "/assets/a.jpg", "thumbUrl": "/assets/a_t.jpg", "title": "A"}]}]}`
	norm, err := detail.NormalizeSite("https://recalls.example.ca/")
	if err != nil {
		t.Fatal(err)
	}
	out := guesttest.MustRun(t, fstest.MapFS{"en/1.json": {Data: []byte(doc)}}, norm)
	if len(out.Records) != 1 || out.Records[0].ImageURL != "https://recalls.example.ca/assets/a.jpg" {
		t.Errorf("got %+v", out)
	}
	for _, bad := range []string{"recalls.example.ca", "ftp://recalls.example.ca/", "/assets"} {
		if _, err := detail.NormalizeSite(bad); err == nil || !strings.Contains(err.Error(), "no absolute http or https address") {
			t.Errorf("NormalizeSite(%q) = %v, want an error saying why", bad, err)
		}
	}
}
