package page_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/page"
)

// page82165 is the complete live page, NID 82165.
func page82165(t *testing.T) string {
	t.Helper()
	return string(guesttest.RealSample(t, "pages/stophurting-2026-08-16-ca-page-82165-en.html"))
}

// TestUnknownPartsAreProblems: every section, field, label, Additional
// information block, Background label and table column the reader does not
// know, and text of a section outside the parts it reads, is a problem
// naming it; the rest of the page is still read.
func TestUnknownPartsAreProblems(t *testing.T) {
	html := page82165(t)
	for _, e := range []struct{ old, new string }{
		{`<section class="ar-issue-long ar-section">`, `<section class="ar-recall-notes ar-section"><h2>Recall notes</h2><p>x</p></section><section class="ar-issue-long ar-section">`},
		{`<div class="field field--name-node-id field--label-inline">
          <div class="field--label">Identification number</div>`, `<div class="field field--label-inline"><div class="field--label">Mystery code</div><div class="field--item"><div class="field field--name-field-mystery-code field--item">M-1</div></div></div><div class="field field--name-node-id field--label-inline">
          <div class="field--label">Identification number</div>`},
		{`<div class="field field--name-field-background field--type-text-long field--label-hidden field--item">`, `<div class="field field--name-field-background field--type-text-long field--label-hidden field--item"><p><strong>Weight Sold</strong></p><p>3 tonnes</p>`},
		{`<details>
          <summary>Background</summary>`, `<details><summary>Recall notes</summary><p>y</p></details><details>
          <summary>Background</summary>`},
		{`<h2 class="h2" id="section_3">Issue</h2>`, `<h2 class="h2" id="section_3">Issue</h2><div><p>Stray words</p></div>`},
		{`<div class="field field--name-field-affected-products-txt`, `<table><thead><tr><th>Product</th><th>Flavour</th><th>UPC</th></tr></thead><tbody><tr><td>Stool</td><td>Bamboo</td><td>0 42272 90583 6</td></tr></tbody></table><div class="field field--name-field-affected-products-txt`},
	} {
		if !strings.Contains(html, e.old) {
			t.Fatalf("the real page no longer holds %q", e.old)
		}
		html = strings.Replace(html, e.old, e.new, 1)
	}
	v := run(t, map[string]string{"en/82165.html": html})
	for _, want := range [][]string{
		{"section", "Recall notes", "ar-recall-notes"},
		{"field", "mystery-code"},
		{"label", "Mystery code"},
		{"Background", "Weight Sold", "3 tonnes"},
		{"Additional information block", "Recall notes"},
		{"column", "Flavour"},
		{"section ar-issue-long", "outside", "Stray words"},
	} {
		if len(problemsWith(v, want...)) == 0 {
			t.Errorf("no problem names %q; problems: %+v", want, v.Problems)
		}
	}
	rec := byID(v)["hc-82165"]
	if rec == nil || rec.IdentificationNumber != "RA-82165" || len(rec.ProductList) != 1 || gtin(t, rec.ProductList[0].UPC) != "00042272905836" {
		t.Errorf("the rest of the page is not read: %+v", rec)
	}
}

// TestTableWithoutProducts: a page whose table shows rows but gives no
// product (here, a table naming no column) is a problem.
func TestTableWithoutProducts(t *testing.T) {
	html := strings.Replace(page82165(t), `<div class="field field--name-field-affected-products-txt`,
		`<table><tbody><tr><td>x</td><td>y</td></tr></tbody></table><div class="field field--name-field-affected-products-txt`, 1)
	v := run(t, map[string]string{"en/82165.html": html})
	if len(problemsWith(v, "affected-products table of 1 rows", "no product")) == 0 {
		t.Errorf("no problem says the table gave no product: %+v", v.Problems)
	}
}

// TestFrenchPage: the French page, whose current-layout labels the
// evidence does not show (testdata/FORMATS.md), is read by its fields'
// classes: its text is the record's French translation, its labels are
// not checked, and the data come from the English page.
func TestFrenchPage(t *testing.T) {
	en := page82165(t)
	fr := en
	for old, new := range map[string]string{
		`<html lang="en"`: `<html lang="fr"`,
		`Cosyland Kids Kitchen Step Stools recalled due to fall and entrapment hazards</span>`: `Marchepied de cuisine pour enfants Cosyland rappelé</span>`,
		`>Product</div>`:                              `>Produit</div>`,
		`>What to do</div>`:                           `>Ce que vous devriez faire</div>`,
		`<summary>Background</summary>`:               `<summary>Contexte</summary>`,
		`<strong><span><span><span><span>Number Sold`: `<strong><span><span><span><span>Nombre vendu`,
		`>Published by</div>`:                         `>Publié par</div>`,
		`Health Canada</span>`:                        `Santé Canada</span>`,
	} {
		fr = strings.Replace(fr, old, new, 1)
	}
	v := run(t, map[string]string{"en/82165.html": en, "fr/82165.html": fr})
	for _, p := range v.Problems {
		t.Errorf("problem: %s", p.Reason)
	}
	rec := byID(v)["hc-82165"]
	if rec == nil || rec.Translations.FR == nil || rec.Translations.FR.Title != "Marchepied de cuisine pour enfants Cosyland rappelé" {
		t.Fatalf("French translation: %+v", rec)
	}
	if rec.Translations.EN.Title == rec.Translations.FR.Title || rec.UnitsSold == "" || rec.Agency != rappel.AgencyHealthCanada {
		t.Errorf("the data do not come from the English page: %+v", rec)
	}
}

// TestWasmPlugin: the page plugin alone (plugins/page/wasm), built and
// run in the host, and its normalizer run natively, read the real pages as
// the detail source's plugin does.
func TestWasmPlugin(t *testing.T) {
	pages, _ := readRealPages(t)
	want := byID(run(t, pages))
	fsys := fstest.MapFS{}
	for name, html := range pages {
		fsys[name] = &fstest.MapFile{Data: []byte(html)}
	}
	ctx := context.Background()
	alone := load(t, "./plugins/page/wasm")
	res, err := alone.Run(ctx, fsys)
	if err != nil {
		t.Fatal(err)
	}
	native := guesttest.MustRun(t, fsys, page.Normalize)
	for name, recs := range map[string][]*rappel.Record{"plugins/page/wasm": res.Records, "page.Normalize": native.Records} {
		if len(recs) != len(want) {
			t.Fatalf("%s gave %d records, the detail plugin %d", name, len(recs), len(want))
		}
		for _, r := range recs {
			w := want[r.RecordID]
			r.FetchedAt = ""
			if w == nil || !reflect.DeepEqual(r, w) {
				t.Errorf("%s: %s differs from the detail plugin's", name, r.RecordID)
			}
		}
	}
}

// FuzzPage: any bytes as a page give records with valid record_ids and
// problems with reasons, never a panic; a page that gives no record says
// why in a problem.
func FuzzPage(f *testing.F) {
	for _, s := range []string{
		"", "<html>", "<main></main>", `<main><div class="ar-section"></div></main>`,
		`<main><div class="recall-alert-body"><dl><dt>Starting date:</dt><dd>February 30, 2020</dd></dl><table><tr><th>UPC</th></tr><tr><td>0 41798 00145 8</td></tr></table></div></main>`,
		`<main><section class="ar-affected-products ar-section"><table><tr><td>1</td><td>2</td></tr></table></section></main>`,
	} {
		f.Add([]byte(s))
	}
	if dir, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "real", "pages")); err == nil {
		if entries, err := os.ReadDir(dir); err == nil {
			for _, e := range entries {
				if strings.HasSuffix(e.Name(), ".html") {
					if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
						f.Add(b)
					}
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := guesttest.Run(fstest.MapFS{"en/7.html": {Data: b}}, page.Normalize)
		if out.Err != "" {
			t.Fatalf("error: %s", out.Err)
		}
		guesttest.Check(t, out)
		if len(out.Records) == 0 && len(out.Problems) == 0 {
			t.Fatalf("no record and no problem for %q", b)
		}
	})
}
