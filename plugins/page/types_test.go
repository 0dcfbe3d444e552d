package page_test

import (
	"html"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/hcvocab"
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/realjudged"
)

// role is what the contract (testdata/FORMATS.md) says a column becomes.
type role string

const (
	roleBrand    role = "brand"    // the name's first part
	roleName     role = "name"     // the name
	roleSize     role = "size"     // size
	roleUPC      role = "upc"      // upc: one product per barcode, a GTIN
	roleLot      role = "lot"      // lot_codes, as printed
	roleDescribe role = "describe" // the name's details, "Header: value"
)

// radarColumns are every key of realjudged.RadarFile's tables, by page type, and the
// role of each: a key the file has and this map lacks fails the test.
var radarColumns = map[string]role{
	// food
	"brand": roleBrand, "product": roleName, "size": roleSize, "upc": roleUPC, "codes": roleLot, "codeS": roleLot,
	// drugs
	"productName": roleName, "marketAuthorization": roleLot, "dosageForm": roleDescribe, "strength": roleSize, "lotNumber": roleLot,
	// devices
	"affectedProducts": roleName, "lotOrSerialNumber": roleLot, "modelOrCatalogueNumber": roleLot, "modelOrCatalogNumber": roleLot,
	// consumer products
	"partNumber": roleLot, "modelNumber": roleLot, "colour": roleDescribe, "modelName": roleName, "modelType": roleDescribe,
	"model": roleLot, "serialNumbers": roleLot, "styleNumber": roleLot, "colours": roleDescribe, "itemDescription": roleName,
	// cannabis
	"productSize": roleSize, "packagingDate": roleLot, "printedValues": roleDescribe, "actualValues": roleDescribe,
}

// pageType names the page type of a record by its table's keys.
func pageType(keys []string) string {
	has := func(k string) bool { return slices.Contains(keys, k) }
	switch {
	case has("column1"):
		return "no-thead"
	case has("upc") && has("brand"):
		return "food"
	case has("marketAuthorization"):
		return "drugs"
	case has("lotOrSerialNumber"):
		return "devices"
	case has("printedValues"):
		return "cannabis"
	}
	return "consumer"
}

// radarRecords reads the records of realjudged.RadarFile of page type typ.
func radarRecords(t *testing.T, typ string) []realjudged.RadarRecord {
	t.Helper()
	var out []realjudged.RadarRecord
	for _, r := range realjudged.Radar(t) {
		if len(r.Detail.Products) > 0 && pageType(r.Detail.Products[0].Fields.Keys) == typ {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no %s page", realjudged.RadarFile, typ)
	}
	return out
}

// esc is HTML text.
func esc(s string) string { return html.EscapeString(s) }

// isNoneText says a cell holds nothing, as the contract reads it.
func isNoneText(s string) bool {
	switch guest.FoldKey(strings.TrimSuffix(strings.TrimSpace(s), ".")) {
	case "", "none", "not applicable", "n/a", "aucun", "aucune", "s.o.", "-", "sans objet":
		return true
	}
	return false
}

// parts cuts a cell at "; ", as printed, leaving out parts saying none.
func parts(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ";") {
		if p = strings.TrimSpace(p); !isNoneText(p) {
			out = append(out, p)
		}
	}
	return out
}

// checkPageType runs the records of page type typ through the shipped
// plugin as pages of the live markup, and checks that every column is
// mapped (no problem names a column) and every cell lands where the
// contract says: names, sizes, lot codes as printed, and barcodes as
// GTINs, one product per barcode.
func checkPageType(t *testing.T, typ string) {
	recs := radarRecords(t, typ)
	pages := map[string]string{}
	for _, r := range recs {
		for _, k := range r.Detail.Products[0].Fields.Keys {
			if _, ok := radarColumns[k]; !ok {
				t.Errorf("NID %s: the column %q (%q) has no role in this test: add it to the contract", r.NID, k, realjudged.HeaderText(k))
			}
		}
		pages["en/"+r.NID+".html"] = r.Page(true)
	}
	v := run(t, pages)
	for _, p := range v.Problems {
		if strings.Contains(p.Reason, "column") || strings.Contains(p.Reason, "header") || strings.Contains(p.Reason, "does not know") {
			t.Errorf("problem: %s", p.Reason)
		}
	}
	got := byID(v)
	for _, r := range recs {
		rec := got["hc-"+r.NID]
		if rec == nil {
			t.Errorf("NID %s: no record", r.NID)
			continue
		}
		checkSummary(t, r, rec)
		prods := rec.ProductList
		for i, row := range r.Detail.Products {
			n := checkRow(t, r, i, row.Fields, prods)
			if n > len(prods) {
				t.Fatalf("NID %s: row %d wants %d products, %d are left: %+v", r.NID, i, n, len(prods), rec.ProductList)
			}
			prods = prods[n:]
		}
		if len(prods) != 0 {
			t.Errorf("NID %s: %d products more than the rows give: %+v", r.NID, len(prods), prods)
		}
	}
}

// checkSummary checks the parts of a page around its table.
func checkSummary(t *testing.T, r realjudged.RadarRecord, rec *rappel.Record) {
	d := r.Detail
	tr := rec.Translations.EN
	if tr == nil || tr.Title != guest.CleanText(d.Title) {
		t.Errorf("NID %s: title %+v, want %q", r.NID, tr, d.Title)
		return
	}
	if rec.AlertType != d.RecallType || rec.LastUpdated != d.LastUpdated || rec.URLEn != r.URL {
		t.Errorf("NID %s: alert_type %q, last_updated %q, url_en %q; want %q, %q, %q", r.NID, rec.AlertType, rec.LastUpdated, rec.URLEn, d.RecallType, d.LastUpdated, r.URL)
	}
	if a := guest.CleanText(d.Summary.Action); !strings.Contains(guest.FoldKey(a), "below") && tr.WhatToDo != a {
		t.Errorf("NID %s: what_to_do %q, want the summary's %q", r.NID, tr.WhatToDo, a)
	}
	if tr.ProductDescription != guest.CleanText(d.Header) {
		t.Errorf("NID %s: product_description %q, want the table's introduction %q", r.NID, tr.ProductDescription, d.Header)
	}
	if len(rec.Images) != len(d.Images) || len(d.Images) > 0 && rec.ImageURL != d.Images[0].URL {
		t.Errorf("NID %s: images %+v (image_url %q), want %d from data-src", r.NID, rec.Images, rec.ImageURL, len(d.Images))
	}
	for _, l := range hcvocab.SplitIssue(d.Summary.Issue) {
		if known, ok := hcvocab.LookupIssueLabel(l); ok {
			for _, a := range known.Allergens {
				if !slices.Contains(rec.Allergens, a) {
					t.Errorf("NID %s: allergens %v lack %s, from the issue %q", r.NID, rec.Allergens, a, d.Summary.Issue)
				}
			}
		}
	}
}

// checkRow checks the products one table row gave, at the head of prods,
// and returns how many it gives.
func checkRow(t *testing.T, r realjudged.RadarRecord, i int, f realjudged.RadarFields, prods []rappel.Product) int {
	var brand, name, size []string
	var lots, upcs []string
	var details []string
	for _, k := range f.Keys {
		v := guest.CleanText(f.Values[k])
		if isNoneText(v) {
			continue
		}
		switch radarColumns[k] {
		case roleBrand:
			brand = append(brand, v)
		case roleName:
			name = append(name, v)
		case roleSize:
			size = append(size, v)
		case roleLot:
			lots = append(lots, parts(v)...)
		case roleDescribe:
			details = append(details, v)
		case roleUPC:
			for _, p := range parts(v) {
				if _, err := rappel.ParseGTIN(p); err == nil {
					upcs = append(upcs, p)
				} else {
					lots = append(lots, p)
				}
			}
		}
	}
	n := max(1, len(upcs))
	if len(prods) < n {
		t.Errorf("NID %s row %d: %d products, want %d", r.NID, i, len(prods), n)
		return n
	}
	for j := range n {
		p := prods[j]
		for _, part := range slices.Concat(brand, name, details) {
			if !strings.Contains(p.Name, part) {
				t.Errorf("NID %s row %d: name %q lacks %q", r.NID, i, p.Name, part)
			}
		}
		if want := strings.Join(size, ", "); p.Size != want {
			t.Errorf("NID %s row %d: size %q, want %q", r.NID, i, p.Size, want)
		}
		for _, l := range lots {
			if !slices.Contains(p.LotCodes, l) {
				t.Errorf("NID %s row %d: lot_codes %q lack %q, as printed", r.NID, i, p.LotCodes, l)
			}
		}
		switch {
		case len(upcs) == 0 && p.UPC != "":
			t.Errorf("NID %s row %d: upc %q, want none", r.NID, i, p.UPC)
		case len(upcs) > 0 && gtin(t, p.UPC) != gtin(t, upcs[j]):
			t.Errorf("NID %s row %d: upc %q, want the GTIN of %q", r.NID, i, p.UPC, upcs[j])
		}
	}
	return n
}

// TestPageTypeFood: CFIA food tables, Brand | Product | Size | UPC | Codes
// (or Code(s)), with barcodes printed spaced, several in a cell, None.
func TestPageTypeFood(t *testing.T) { checkPageType(t, "food") }

// TestPageTypeDrugs: health product tables, Brand | Product name | Market
// authorization | Dosage form | Strength | Lot number.
func TestPageTypeDrugs(t *testing.T) { checkPageType(t, "drugs") }

// TestPageTypeDevices: medical device tables, Affected products | Lot or
// serial number | Model or catalogue (catalog) number.
func TestPageTypeDevices(t *testing.T) { checkPageType(t, "devices") }

// TestPageTypeConsumer: consumer product tables, each notice its own
// columns (Product | Part number | UPC, Model number | Colour, …).
func TestPageTypeConsumer(t *testing.T) { checkPageType(t, "consumer") }

// TestPageTypeCannabis: Product name | Lot number | Product size |
// Packaging date | Printed values | Actual values.
func TestPageTypeCannabis(t *testing.T) { checkPageType(t, "cannabis") }

// TestTableWithoutHead: a table with no <thead> (NID 82226) names its
// columns in its first row, which is read as its header, not a product.
func TestTableWithoutHead(t *testing.T) {
	recs := radarRecords(t, "no-thead")
	pages := map[string]string{}
	for _, r := range recs {
		pages["en/"+r.NID+".html"] = r.Page(false)
	}
	v := run(t, pages)
	for _, p := range v.Problems {
		t.Errorf("problem: %s", p.Reason)
	}
	for _, r := range recs {
		rec := byID(v)["hc-"+r.NID]
		if rec == nil {
			t.Fatalf("NID %s: no record", r.NID)
		}
		rows := r.Detail.Products[1:] // the first is the header
		if len(rec.ProductList) != len(rows) {
			t.Fatalf("NID %s: %d products, want %d: %+v", r.NID, len(rec.ProductList), len(rows), rec.ProductList)
		}
		for i, row := range rows {
			p := rec.ProductList[i]
			vals := row.Fields.Values
			if !strings.HasPrefix(p.Name, vals["column1"]) || !strings.Contains(p.Name, vals["column2"]) {
				t.Errorf("NID %s: name %q, want %q with its dosage form %q", r.NID, p.Name, vals["column1"], vals["column2"])
			}
			if !slices.Contains(p.LotCodes, vals["column6"]) || !slices.Contains(p.LotCodes, vals["column3"]) {
				t.Errorf("NID %s: lot_codes %q lack the lot %q or the authorization %q", r.NID, p.LotCodes, vals["column6"], vals["column3"])
			}
			if rec.Manufacturer != vals["column4"] || rec.Importer != vals["column5"] {
				t.Errorf("NID %s: manufacturer %q, importer %q; want %q, %q", r.NID, rec.Manufacturer, rec.Importer, vals["column4"], vals["column5"])
			}
		}
	}
}
