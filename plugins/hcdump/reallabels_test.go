package hcdump_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/hcvocab"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/hcdump"
)

// realLabels are the Issue labels of real rows of 2023 to 2026 that the
// vocabulary once lacked, with the hazard description a food notice whose
// Issue is that label alone gets, and how many rows of the real files
// (every file below, a NID once) carry each.
var realLabels = map[string]struct {
	hazard      string
	description string
	rows        int
}{
	"Vibrio parahaemolyticus": {hcvocab.HazardMicrobial, "Microbial contamination: Vibrio parahaemolyticus", 35},
	"Marine Biotoxin":         {hcvocab.HazardChemical, "Chemical: Marine Biotoxin", 21},
	"Labelling and packaging": {hcvocab.HazardLabelling, "Labelling and packaging", 409},
	"Nutrition Issue":         {hcvocab.HazardNutrition, "Nutrition", 1},
	"Nutrition":               {hcvocab.HazardNutrition, "Nutrition", 1},
	"Tampering":               {hcvocab.HazardTampering, "Tampering", 1},
}

// realRows reads the real rows of every era, by NID, a later file's row
// replacing an earlier one's: the dump of 2023-11 and of 2024-05 as pandas
// re-wrote them (7 columns), the dump of June 2025 as the agency wrote it,
// and its CSV form of August 2026.
func realRows(t *testing.T) map[string]map[string]string {
	t.Helper()
	rows := map[string]map[string]string{}
	derived := map[string]string{"recall_id": "NID", "organization": "Organization", "product_name": "Product",
		"issue": "Issue", "category": "Category", "updated_at": "Last updated"}
	readCSV := func(name string, rename map[string]string) {
		r := csv.NewReader(bytes.NewReader(guesttest.RealSample(t, name)))
		recs, err := r.ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, rec := range recs[1:] {
			row := map[string]string{}
			for i, h := range recs[0] {
				if rename != nil {
					if h = rename[h]; h == "" {
						continue
					}
				}
				row[h] = rec[i]
			}
			rows[row["NID"]] = row
		}
	}
	readCSV("hc-dump-en-2023-11-derived-7cols-16672rows.csv", derived)
	readCSV("hc-dump-en-2024-05-derived-7cols-29648rows.csv", derived)
	var dump []map[string]string
	if err := json.Unmarshal(guesttest.RealSample(t, "hc-dump-en-2025-06.json"), &dump); err != nil {
		t.Fatal(err)
	}
	for _, row := range dump {
		rows[row["NID"]] = row
	}
	readCSV("pages/stophurting-2026-08-16-ca-recalls-opendata-sample.csv", nil)
	return rows
}

// TestNormalize_RealLabels normalizes every real row whose Issue carries
// one of the labels above: each is read as a label of the vocabulary with
// its hazard type (no problem names it), and a food notice whose Issue is
// that label alone is described with it.
func TestNormalize_RealLabels(t *testing.T) {
	var rows []map[string]string
	counts := map[string]int{}
	for _, row := range realRows(t) {
		carries := false
		for _, label := range hcvocab.SplitIssue(row["Issue"]) {
			if _, ok := realLabels[label]; ok {
				counts[label]++
				carries = true
			}
		}
		if carries {
			rows = append(rows, row)
		}
	}
	for label, want := range realLabels {
		if counts[label] != want.rows {
			t.Errorf("%d real rows carry %q, want %d", counts[label], label, want.rows)
		}
		got, ok := hcvocab.LookupIssueLabel(label)
		if !ok || got.Hazard != want.hazard {
			t.Errorf("LookupIssueLabel(%q) = %+v, %v; want hazard %q", label, got, ok, want.hazard)
		}
	}
	dump, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	out := guesttest.MustRun(t, fstest.MapFS{"recalls-en.json": {Data: dump}}, hcdump.Normalize)
	for _, p := range out.Problems {
		for label := range realLabels {
			if strings.Contains(p.Reason, "label \""+label+"\"") {
				t.Errorf("a problem names %q: %s", label, p.Reason)
			}
		}
	}
	byID := out.ByID()
	described := 0
	for _, row := range rows {
		want, alone := realLabels[row["Issue"]]
		k := hcvocab.ClassifyDumpRow(row["Organization"], row["Archived"], row["Category"])
		if !alone || k.RecallType != rappel.TypeFood {
			continue
		}
		rec := byID["hc-"+row["NID"]]
		if rec == nil {
			t.Errorf("NID %s (%q) gave no record", row["NID"], row["Issue"])
			continue
		}
		if got := rec.Translations.EN.HazardDescription; got != want.description {
			t.Errorf("NID %s (%q): hazard_description %q, want %q", row["NID"], row["Issue"], got, want.description)
		}
		described++
	}
	if described < 60 {
		t.Errorf("only %d food rows carry one of the labels alone", described)
	}
	t.Logf("%d real rows carry the labels (%v); %d food rows with one alone", len(rows), counts, described)
}

func TestNamesHazard(t *testing.T) {
	for _, tc := range []struct {
		label, hazard string
		want          bool
	}{
		{"Nutrition Issue", hcvocab.HazardNutrition, true},
		{"Nutrition", hcvocab.HazardNutrition, true},
		{"labelling and packaging", hcvocab.HazardLabelling, true},
		{"Chimique", hcvocab.HazardChemical, true},
		{"Marine Biotoxin", hcvocab.HazardChemical, false},
		{"Nutrition", "", false},
	} {
		if got := hcvocab.NamesHazard(tc.label, tc.hazard); got != tc.want {
			t.Errorf("NamesHazard(%q, %q) = %v, want %v", tc.label, tc.hazard, got, tc.want)
		}
	}
}
