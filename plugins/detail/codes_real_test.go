package detail_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/detail"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/realjudged"
)

// TestCodeColumns_Real checks, on the 34 live pages of the real samples
// (../shared/real, realjudged.RadarFile), that each affected-products
// column's codes are read under its header: a model, part, style or
// catalogue number is a model and never a lot, a lot or serial number a
// lot or serial number, a packaging date nothing that selects units, and
// that lot_codes keep every code as printed beside them (the text
// Assemble gives the applicability).
func TestCodeColumns_Real(t *testing.T) {
	models := []string{"modelOrCatalogueNumber", "modelOrCatalogNumber", "partNumber", "modelNumber", "styleNumber", "model"}
	lots := []string{"lotOrSerialNumber", "lotNumber", "serialNumbers"}
	var nModels, nLots int
	for _, r := range realjudged.Radar(t) {
		if len(r.Detail.Products) == 0 {
			continue
		}
		out := guesttest.MustRun(t, fstest.MapFS{"en/" + r.NID + ".html": {Data: []byte(r.Page(true))}}, detail.Normalize)
		if len(out.Records) != 1 {
			t.Fatalf("NID %s: %d records", r.NID, len(out.Records))
		}
		prods := out.Records[0].ProductList
		var all rappel.Applicability
		var printed []string
		for _, p := range prods {
			printed = append(printed, p.LotCodes...)
			if p.Applicability == nil {
				if len(p.LotCodes) > 0 {
					t.Errorf("NID %s: product %q prints %q but has no applicability", r.NID, p.Name, p.LotCodes)
				}
				continue
			}
			if p.Applicability.Text != "" {
				t.Errorf("NID %s: product %q codes_text %q, want none: Assemble gives it the lot codes", r.NID, p.Name, p.Applicability.Text)
			}
			a := p.Applicability
			all.Lots = append(all.Lots, a.Lots...)
			all.Models = append(all.Models, a.Models...)
			all.Serials = append(all.Serials, a.Serials...)
			all.BestBefore = append(all.BestBefore, a.BestBefore...)
		}
		for _, row := range r.Detail.Products {
			for _, k := range models {
				v := strings.TrimSpace(row.Fields.Values[k])
				if v == "" || v == "Not applicable" {
					continue
				}
				nModels++
				if !slices.Contains(all.Models, v) {
					t.Errorf("NID %s: %s %q is not among the models %q", r.NID, realjudged.HeaderText(k), v, all.Models)
				}
				if slices.Contains(all.Lots, strings.ToUpper(v)) {
					t.Errorf("NID %s: %s %q was read as a lot", r.NID, realjudged.HeaderText(k), v)
				}
				if !slices.Contains(printed, v) {
					t.Errorf("NID %s: %s %q is not kept in lot_codes as printed", r.NID, realjudged.HeaderText(k), v)
				}
			}
			for _, k := range lots {
				// The cell read alone: its lots ("Lot # 26025260" is
				// 26025260; ">50 Lot Numbers. Contact MFG" none).
				v := row.Fields.Values[k]
				for _, code := range rappel.ParseApplicability(v).Lots {
					nLots++
					if !slices.Contains(all.Lots, code) && !slices.Contains(all.Serials, code) {
						t.Errorf("NID %s: %s %q is not among the lots %q or serial numbers %q", r.NID, realjudged.HeaderText(k), code, all.Lots, all.Serials)
					}
					if slices.Contains(all.Models, code) {
						t.Errorf("NID %s: %s %q was read as a model", r.NID, realjudged.HeaderText(k), code)
					}
				}
			}
			if d := row.Fields.Values["packagingDate"]; d != "" && len(all.BestBefore) > 0 {
				t.Errorf("NID %s: the packaging date %q was read as a best-before date %v", r.NID, d, all.BestBefore)
			}
		}
	}
	if nModels == 0 || nLots == 0 {
		t.Fatalf("the real pages gave %d model and %d lot cells to check", nModels, nLots)
	}
	t.Logf("%d model cells and %d lots checked", nModels, nLots)
}
