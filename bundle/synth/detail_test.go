package synth

import (
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/detail"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

// TestDocument_ShapesAgree writes one document in the older shape and in
// every variant of the API's, runs the detail normalizer on each, and
// checks they make the same record, but for what FORMATS.md says differs:
// the API's product names lead with the brand, and its code 1 gives the
// recall type food.
func TestDocument_ShapesAgree(t *testing.T) {
	d := &document{
		recallID: "5001", start: 1700000000, published: 1700086400,
		urlEN: recallsSite + "/en/alert-recall/maple-cheeses", urlFR: recallsSite + "/fr/avis-rappel/fromages-maple",
		titleEN: "Maple brand cheeses recalled due to Listeria", titleFR: "Fromages de marque Maple rappelés en raison de Listeria",
		catEN: []string{"Food", "Dairy"}, catFR: []string{"Aliments", "Produits laitiers"},
		sumEN: "<p>Listeria</p><p>The cheeses may be contaminated.</p>", sumFR: "<p>Listeria</p><p>Les fromages pourraient être contaminés.</p>",
		whatEN: "Do not eat them.", whatFR: "Ne les mangez pas.",
		alert: "Food recall warning", idNumber: "RA-5001",
		details: []detailLine{
			{"Recalling firm", "Maple &amp; Sons"}, {"Manufacturer", "Fromagerie du Nord"}, {"Companies", "Maple &amp; Sons; Dairy Hub"},
			{"Allergens", "Milk"}, {"Recall class page", "https://inspection.canada.ca/classes"}, {"Audience", "General public"},
		},
		products: []product{
			{nameEN: "Cheddar – Original", nameFR: "Cheddar – Original", upc: "0 41798 00145 9", lots: []string{"BB 2024 JA 10", "BB 2024 JA 11"}, sizeEN: "200 g", sizeFR: "200 g", dropZero: true},
			{nameEN: "Brie", nameFR: "Brie", prefix: "0235278", lots: []string{"Packed on 2024-01-02"}, sizeEN: "variable", sizeFR: "variable"},
			{nameEN: "Gouda", nameFR: "Gouda", upc: "0235278 00000", sizeEN: "412 g", sizeFR: "412 g"},
			{nameEN: "Feta", nameFR: "Féta", sizeEN: "150 g", sizeFR: "150 g"},
			{nameEN: "Maple Swiss", nameFR: "Suisse Maple", upc: "4 892742 010357", sizeEN: "1 kg", sizeFR: "1 kg"},
		},
		images: []image{{recallsSite + "/sites/default/files/2024-01/rs5001_1.jpg", "Front"}, {"/sites/default/files/2024-01/rs5001_2.jpg", "Label"}},
		code:   "1",
		brand:  "Maple",
	}
	d.legacy = true
	want := normalizeDocument(t, d)
	want.RecallType = rappel.TypeFood
	for i := range want.ProductList {
		if p := &want.ProductList[i]; p.Name != "Maple Swiss" {
			p.Name = "Maple " + p.Name
		}
	}
	want.ProductList[0].UPC = "041798001459" // printed as 41798001459, the 0 dropped
	if len(want.ProductList) != 5 || want.ProductList[1].UPCPrefix != "0235278" || want.ImageURL == "" || len(want.Allergens) != 1 {
		t.Fatalf("the older shape's record lacks what the test compares: %+v", want)
	}
	for variant := range 16 {
		d.shape = shape{table: variant&1 != 0, firmLines: variant&2 != 0, idPanel: variant&4 != 0, contacts: variant&8 != 0}
		if got := normalizeDocument(t, d); !reflect.DeepEqual(got, want) {
			t.Errorf("API shape %+v makes\n%+v\nwant\n%+v", d.shape, got, want)
		}
	}
}

// normalizeDocument runs the detail normalizer on d's two documents and
// returns its one record; any problem fails the test.
func normalizeDocument(t *testing.T, d *document) *rappel.Record {
	t.Helper()
	out := guesttest.MustRun(t, fstest.MapFS{
		"en/5001.json": {Data: d.appendJSON(nil, false)},
		"fr/5001.json": {Data: d.appendJSON(nil, true)},
	}, detail.Normalize)
	if len(out.Records) != 1 || len(out.Problems) != 0 {
		t.Fatalf("shape %+v: %d records, problems %+v\n%s", d.shape, len(out.Records), out.Problems, d.appendJSON(nil, false))
	}
	return out.Records[0]
}
