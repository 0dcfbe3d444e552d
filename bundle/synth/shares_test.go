package synth_test

import (
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

// TestGenerate_Shares checks the upstream-level shares of
// testdata/FORMATS.md's "Target mix and field presence", which are what make
// the merged records match the spec's presence rates.
func TestGenerate_Shares(t *testing.T) {
	c, _ := mustCorpus(t)
	fr := map[string]bool{}
	for _, row := range c.dumpFR {
		fr[*row["NID"]] = true
	}
	var rows, category, french, nonTC, withDoc, nullUpdated, class, tc, foodDocs, allergens, updates int
	for _, row := range c.dumpEN {
		rows++
		if row["Category"] != nil {
			category++
		}
		if fr[*row["NID"]] {
			french++
		}
		if isTC(row) {
			tc++
			continue
		}
		nonTC++
		if row["Last updated"] == nil {
			nullUpdated++
		}
		if v := row["Recall class"]; v != nil && *v != "" && *v != "--" {
			class++
		}
		if c.pages["en/"+*row["NID"]] != nil {
			withDoc++ // recall pages, which TestGenerate_Pages reads back
			continue
		}
		d := c.docsEN[*row["NID"]]
		if d == nil {
			if row["Last updated"] == nil {
				t.Fatalf("row %s has neither a detail document nor a Last updated", *row["NID"])
			}
			continue
		}
		withDoc++
		if d.RecallID != *row["NID"] {
			updates++
		}
		if organization(row) == "CFIA" {
			foodDocs++
			if strings.Contains(d.keyText(), "<b>Allergens:</b>") {
				allergens++
			}
		}
	}
	recalls := map[string]bool{}
	withNumber := map[string]bool{}
	for _, r := range c.csvRows {
		recalls[r[0]] = true
		if r[2] != "" {
			withNumber[r[0]] = true
		}
	}

	keys := []string{"Recall class page", "Recalling firm", "Companies", "Distribution", "Place of origin",
		"Units sold", "Time period sold", "Manufacturer", "Importer", "CFIA ID", "DIN", "NPN", "Municipality", "UPC"}
	// In the API's shape the recalling firm and the manufacturer may be
	// named on the product panels, as Distributor and Manufacturer.
	onProducts := map[string]string{"Recalling firm": "Distributor", "Manufacturer": "Manufacturer"}
	keyDocs := map[string]int{}
	var products, categories, images, legacy, legacyImages, relative int
	for _, d := range c.docsEN {
		text, productText := d.keyText(), d.productText()
		for _, k := range keys {
			if strings.Contains(text, "<b>"+k+":</b>") || onProducts[k] != "" && strings.Contains(productText, "<b>"+onProducts[k]+":</b>") {
				keyDocs[k]++
			}
		}
		if _, ok := d.panel("product_1"); ok {
			products++
		}
		if d.legacy() {
			legacy++
		}
		if d.legacy() && len(d.Category) > 0 || strings.Contains(text, "<b>Category:</b>") {
			categories++
		}
		for _, p := range d.Panels {
			if p.PanelName != "images" {
				continue
			}
			images++
			var imgs []struct{ URL string }
			if d.legacy() {
				legacyImages++
				if json.Unmarshal(p.Data, &imgs) == nil && !strings.HasPrefix(imgs[0].URL, "https://") {
					relative++
				}
			}
		}
	}
	docs := len(c.docsEN)

	for _, s := range []struct {
		name      string
		got, want float64
		tolerance float64
	}{
		{"Category non-null, of dump rows", share(category, rows), 75, 2},
		{"French twin, of dump rows", share(french, rows), 89, 2},
		{"TC rows in the dump, of vehicle recalls", share(tc, len(recalls)), 94, 1.5},
		{"manufacturer recall number, of vehicle recalls", share(len(withNumber), len(recalls)), 90, 1.5},
		{"detail documents, of non-TC rows", share(withDoc, nonTC), 97, 1},
		{"Last updated null, of non-TC rows", share(nullUpdated, nonTC), 41, 2},
		{"Recall class set, of non-TC rows", share(class, nonTC), 73, 2},
		{"updated notices, of non-TC rows", share(updates, nonTC), 0.5, 0.3},
		{"product panels, of documents", share(products, docs), 80, 2},
		{"category, of documents", share(categories, docs), 80, 2},
		{"older shape, of documents", share(legacy, docs), 10, 1.5},
		{"images panel, of documents", share(images, docs), 31, 2},
		{"relative first image, of older-shape images panels", share(relative, legacyImages), 5, 3},
		{"Allergens, of food documents", share(allergens, foodDocs), 22, 2},
		{"Recall class page, of documents", share(keyDocs["Recall class page"], docs), 19, 1.5},
		{"Recalling firm, of documents", share(keyDocs["Recalling firm"], docs), 17, 1.5},
		{"Companies, of documents", share(keyDocs["Companies"], docs), 13, 1.5},
		{"Distribution, of documents", share(keyDocs["Distribution"], docs), 11.5, 1.5},
		{"Place of origin, of documents", share(keyDocs["Place of origin"], docs), 9.7, 1.5},
		{"Units sold, of documents", share(keyDocs["Units sold"], docs), 9.7, 1.5},
		{"Time period sold, of documents", share(keyDocs["Time period sold"], docs), 8.8, 1.5},
		{"Manufacturer, of documents", share(keyDocs["Manufacturer"], docs), 5, 1},
		{"Importer, of documents", share(keyDocs["Importer"], docs), 2.8, 1},
	} {
		t.Logf("%s: %.2f%% (want %.1f)", s.name, s.got, s.want)
		if math.Abs(s.got-s.want) > s.tolerance {
			t.Errorf("%s: %.1f%%, want %.1f%% ±%.1f", s.name, s.got, s.want, s.tolerance)
		}
	}
	for _, k := range []string{"CFIA ID", "DIN", "NPN", "Municipality", "UPC"} {
		if n := keyDocs[k]; n == 0 || share(n, docs) > 1 {
			t.Errorf("%s on %d documents, want a handful", k, n)
		}
	}
}

// TestGenerate_Vehicles checks the vehicle recalls' makes and models are
// the catalogue's real ones and their spread is plausible.
func TestGenerate_Vehicles(t *testing.T) {
	c, _ := mustCorpus(t)
	makes := map[string]int{}
	models := map[string]map[string]bool{}
	years := map[string]map[string]bool{}
	for _, r := range c.csvRows {
		if models[r[0]] == nil {
			models[r[0]], years[r[0]] = map[string]bool{}, map[string]bool{}
			makes[r[5]]++
		}
		models[r[0]][r[6]] = true
		years[r[0]][r[1]] = true
	}
	for rn := range models {
		if n := len(models[rn]); n < 1 || n > 8 {
			t.Errorf("recall %s covers %d models", rn, n)
		}
		if n := len(years[rn]); n < 1 || n > 5 {
			t.Errorf("recall %s covers %d model years", rn, n)
		}
	}
	for _, mk := range []string{"FORD", "CHEVROLET", "TOYOTA", "HONDA", "TESLA", "MERCEDES-BENZ", "HARLEY-DAVIDSON", "FREIGHTLINER", "GRACO", "GOODYEAR"} {
		if makes[mk] == 0 {
			t.Errorf("no recall of make %s", mk)
		}
	}
	rn := regexp.MustCompile(`^(\d{2}[SCEV]\d{2}|N\d{9}|[A-Z]\d{2}|\d{2}T[A-Z]\d{2}|[A-Z]\d[A-Z]|SC\d{3}|\d{3}|R\d{4}|\d{2}V-\d{3}|P\d{3}|RC-\d{4}|\d{2}-\d{3})$`)
	several := 0
	for _, r := range c.csvRows {
		nums := rappel.RecallNumbers(r[2])
		for _, n := range nums {
			if !rn.MatchString(n) {
				t.Fatalf("manufacturer recall number %q of %q", n, r[2])
			}
		}
		if len(nums) > 1 {
			several++
		}
	}
	if several == 0 {
		t.Error("no row names several manufacturer recall numbers")
	}
}
