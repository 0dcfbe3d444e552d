package feeds_test

import (
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds"
)

// kettlesPage is a notice's English recall page in the current layout,
// its French page linked as its hreflang alternate, and the French page.
const (
	kettlesPageEN = `<!DOCTYPE html><html lang="en"><head><link rel="alternate" hreflang="fr" href="{site}/fr/avis-rappel/bouilloires"></head><body><main>
<div class="region region-header"><div class="h3" id="wb-cont-nav">Consumer product recall</div><h1 class="gc-thickline" id="wb-cont"><span>Northwind electric kettles recalled due to burn hazard</span></h1></div>
<section class="ar-affected-products ar-section"><h2>Affected products</h2>
<table><thead><tr><th>Brand</th><th>Product</th><th>Size</th><th>UPC</th><th>Codes</th></tr></thead>
<tbody><tr><td>Northwind</td><td>Electric kettle</td><td>1.7 L</td><td>0 42272 90583 6; 6 924878 900955</td><td>Lot 60D0924</td></tr></tbody></table></section>
</main></body></html>`
	kettlesPageFR = `<!DOCTYPE html><html lang="fr"><body><main>
<div class="region region-header"><div class="h3" id="wb-cont-nav">Rappel de produit de consommation</div><h1 class="gc-thickline" id="wb-cont"><span>Rappel de bouilloires électriques Northwind</span></h1></div>
<section class="ar-issue-long ar-section"><h2>Problème</h2><div class="field field--name-field-issue-long field--item"><p>La poignée peut se détacher.</p></div></section>
</main></body></html>`
)

// TestRefresh_Pages: a refresh reads a notice from the pages' NID on from
// its recall pages (the English one at the dump's URL, the French one at
// its alternate), and an older notice from the old API, which it does not
// ask the pages for; a page fetched again unchanged keeps its products.
func TestRefresh_Pages(t *testing.T) {
	h := newHarness(t)
	h.r.Sources[2] = feeds.DetailPages(h.up.URL+"/detail/{lang}/{id}.json", h.up.URL+"/{lang}/node/{id}", 70005)
	replace(t, h, "/hc/recalls-en.json", "https://recalls-rappels.canada.ca/en/alert-recall/northwind-electric-kettles-recalled-due-burn-hazard", h.up.URL+"/en/alert-recall/kettles")
	h.up.Set("/en/alert-recall/kettles", []byte(strings.ReplaceAll(kettlesPageEN, "{site}", h.up.URL)))
	h.up.Set("/fr/avis-rappel/bouilloires", []byte(kettlesPageFR))
	h.open()
	h.mustRefresh()

	check := func() {
		t.Helper()
		rec := h.record("hc-70005")
		if rec == nil {
			t.Fatal("no record hc-70005")
		}
		var gtins []rappel.GTIN
		for _, p := range rec.ProductList {
			g, err := rappel.ParseGTIN(p.UPC)
			if err != nil || p.Name != "Northwind Electric kettle" || p.Size != "1.7 L" || len(p.LotCodes) != 1 || p.LotCodes[0] != "Lot 60D0924" {
				t.Errorf("product %+v (%v)", p, err)
			}
			gtins = append(gtins, g)
		}
		if len(gtins) != 2 || gtins[0] != "00042272905836" || gtins[1] != "06924878900955" {
			t.Errorf("GTINs %v, want the page's two barcodes", gtins)
		}
		if rec.Translations.FR == nil || rec.Translations.FR.HazardDescription != "La poignée peut se détacher." {
			t.Errorf("French translation %+v, want the French page's", rec.Translations.FR)
		}
	}
	check()
	for _, nid := range []string{"70001", "70002", "70003", "70004"} {
		if reqs := h.up.Requests("/en/node/" + nid); len(reqs) != 0 {
			t.Errorf("the page of notice %s, before 70005, which the old API has, was asked for: %v", nid, reqs)
		}
	}
	if reqs := h.up.Requests("/detail/en/70006"); len(reqs) != 1 {
		t.Errorf("notice 70006, whose page is not there, was asked of the old API %d times, want once", len(reqs))
	}
	if rec := h.record("hc-70001"); rec == nil || len(rec.ProductList) == 0 {
		t.Errorf("hc-70001, from the old API: %+v", rec)
	}

	// The notice's row changes; its page, asked for again conditionally,
	// has not: it keeps its products.
	h.up.ResetHits()
	replace(t, h, "/hc/recalls-en.json", "Northwind   electric kettles", "Northwind electric kettles")
	h.mustRefresh()
	if n := h.up.Hits("/en/alert-recall/kettles"); n != 1 {
		t.Errorf("the page was asked for %d times, want once", n)
	}
	check()
}
