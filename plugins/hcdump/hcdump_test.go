package hcdump_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/detail"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/hcdump"
	"github.com/rappel-ca/rappel/plugins/vrdb"
)

func TestNormalize(t *testing.T) {
	out := guesttest.MustRun(t, os.DirFS("../../testdata/hc"), hcdump.Normalize)
	guesttest.Golden(t, "../../testdata/golden/hcdump.json", out)
	guesttest.Check(t, out)
}

// TestNormalize_Shapes runs testdata/hc-shapes, a row for each shape the
// dump's users report (see FORMATS.md), against its golden file, and
// checks what each shape must give.
func TestNormalize_Shapes(t *testing.T) {
	out := guesttest.MustRun(t, os.DirFS("../../testdata/hc-shapes"), hcdump.Normalize)
	guesttest.Golden(t, "../../testdata/golden/hcdump-shapes.json", out)
	guesttest.Check(t, out)
	byID := map[string]*rappel.Record{}
	for _, r := range out.Records {
		byID[r.RecordID] = r
	}
	rec := func(t *testing.T, id string) *rappel.Record {
		t.Helper()
		r := byID[id]
		if r == nil {
			t.Fatalf("no record %s", id)
		}
		return r
	}
	t.Run("AllergenFromIssue", func(t *testing.T) {
		for id, want := range map[string]string{
			"hc-72001": "peanut",   // Food - Allergen - Peanut / Allergène - Arachides
			"hc-72002": "egg,milk", // two full paths, and "Œufs, Lait" in French
			"hc-72003": "",         // Food - Microbial Contamination - Listeria
			"hc-72004": "mustard",  // French only: Allergène - Moutarde
			"hc-72010": "",         // Lupin is no allergen of the vocabulary, Other names none
			"hc-72005": "",         // free text
		} {
			if got := strings.Join(rec(t, id).Allergens, ","); got != want {
				t.Errorf("%s allergens %q, want %q", id, got, want)
			}
		}
	})
	t.Run("Organizations", func(t *testing.T) {
		for id, want := range map[string]string{
			"hc-72004": rappel.AgencyCFIA + "/" + rappel.TypeFood, // ACIA
			"hc-72006": rappel.AgencyHealthCanada + "/" + rappel.TypeHealthProduct,
			"hc-72007": rappel.AgencyHealthCanada + "/" + rappel.TypeMedicalDevice,
			"hc-72009": rappel.AgencyHealthCanada + "/" + rappel.TypeCannabis,
		} {
			if r := rec(t, id); r.Agency+"/"+r.RecallType != want {
				t.Errorf("%s is %s/%s, want %s", id, r.Agency, r.RecallType, want)
			}
		}
	})
	t.Run("Categories", func(t *testing.T) {
		r := rec(t, "hc-72005")
		if r.Category != "Drugs - Medical devices" || strings.Join(r.Categories, "|") != "Drugs|Medical devices" ||
			r.Translations.FR.Category != "Médicaments - Instruments médicaux" {
			t.Errorf("hc-72005: category %q, categories %q, French %q", r.Category, r.Categories, r.Translations.FR.Category)
		}
		if r := rec(t, "hc-72001"); r.Categories != nil {
			t.Errorf("hc-72001 has one category, but categories %q", r.Categories)
		}
	})
	t.Run("URLs", func(t *testing.T) {
		for id, want := range map[string][2]string{
			"hc-72003":   {"https://recalls-rappels.canada.ca/en/alert-recall/maison-dubois-brand-brie-recalled-due-listeria-monocytogenes", "https://recalls-rappels.canada.ca/fr/node/72003"},
			"hc-72005":   {"https://recalls-rappels.canada.ca/en/alert-recall/coldaway-tablets-and-suredose-dosing-cups-recalled", "https://recalls-rappels.canada.ca/fr/node/72005"},
			"hc-72006":   {"https://recalls-rappels.canada.ca/en/alert-recall/certain-lots-vita-plus-vitamin-d-drops-recalled", ""},
			"hc-72007":   {"https://recalls-rappels.canada.ca/en/alert-recall/public-advisory-unauthorized-heartbeat-pulse-oximeters", ""},
			"hc-72004":   {"", "https://recalls-rappels.canada.ca/fr/avis-rappel/sauce-salade-marque-z-rappelee-raison-moutarde-non-declaree"},
			"hc-72010":   {"", ""},
			"tc-2017500": {"https://recalls-rappels.canada.ca/en/alert-recall/transport-canada-recall-2017500-chevrolet", "https://recalls-rappels.canada.ca/fr/node/72101"},
		} {
			r := rec(t, id)
			if r.URLEn != want[0] || r.URLFr != want[1] {
				t.Errorf("%s: url_en %q, url_fr %q; want %q, %q", id, r.URLEn, r.URLFr, want[0], want[1])
			}
			if tr := r.Translations.EN; tr != nil && tr.URL != r.URLEn {
				t.Errorf("%s: translations.en.url %q differs from url_en", id, tr.URL)
			}
		}
	})
	t.Run("RecallClass", func(t *testing.T) {
		for id, want := range map[string]string{
			"hc-72001": "class_1", "hc-72002": "class_2", "hc-72004": "class_2", "hc-72005": "class_1",
			"hc-72006": "class_2", "hc-72007": "", "hc-72008": "", "hc-72009": "class_3", "hc-72010": "",
		} {
			if r := rec(t, id); r.HazardClass != want {
				t.Errorf("%s hazard_class %q, want %q", id, r.HazardClass, want)
			}
		}
	})
	t.Run("TextCleanUp", func(t *testing.T) {
		r := rec(t, "hc-72008")
		if r.Translations.EN.Title != "Smith & Sons kettles recalled due to burn hazard" ||
			r.Translations.EN.HazardDescription != "The lid can open while pouring. Hot water can spill." ||
			r.Translations.EN.WhatToDo != "Stop using the kettles & contact Smith & Sons." || r.Translations.EN.ProductDescription != "" {
			t.Errorf("hc-72008: %+v", r.Translations.EN)
		}
	})
	t.Run("TransportCanadaRows", func(t *testing.T) {
		r := rec(t, "tc-2017500")
		en, fr := r.Translations.EN, r.Translations.FR
		// The title says no more than recall_id and vehicle_make: left to
		// the vehicle database's. The Issue is the system.
		if r.RecallID != "2017500" || en.Title != "" || fr.Title != "" || r.System != "Steering" || en.System != "Steering" ||
			fr.System != "Direction" || en.HazardDescription != "" || en.WhatToDo != "" || r.LastUpdated != "" ||
			en.ProductDescription != "Light Truck & Van recalled by CHEVROLET" || r.Category != "Vehicles" {
			t.Errorf("tc-2017500: %+v %+v %+v", r, en, fr)
		}
		if r := rec(t, "tc-2019045"); r.RecallID != "2019045" || r.LastUpdated != "2019-03-01" || r.System != "Fuel System" {
			t.Errorf("tc-2019045 (no make in the title): %+v", r)
		}
	})
	wantProblems(t, out.Problems, []rappel.Problem{
		{RecordID: "hc-72010", Reason: `NID 72010 has the URL "javascript:void(0)" in recalls-en.json, which is no web address; it was left out.`},
		{RecordID: "hc-72010", Reason: `NID 72010: the allergen "Lupin" of its Issue is not one of Milk, Peanuts,`},
		{RecordID: "hc-72103", Reason: `NID 72103 (row 14 of recalls-en.json) was skipped: it is a Transport Canada notice but neither its URL "/en/node/72103" nor its title "Transport Canada Recall" names the recall number`},
	})
}

// TestAssemble_TransportCanadaRows merges the dump's Transport Canada rows
// of every shape with the vehicle database's sample (and the shapes' detail
// documents), as the bundle build and the feeds do: each recall is one
// record, whose dates and vehicles come from the database and whose
// addresses come from the dump.
func TestAssemble_TransportCanadaRows(t *testing.T) {
	det := guesttest.MustRun(t, os.DirFS("../../testdata/detail-shapes"), detail.Normalize)
	dump := guesttest.MustRun(t, os.DirFS("../../testdata/hc-shapes"), hcdump.Normalize)
	tc := guesttest.MustRun(t, os.DirFS("../../testdata/tc"), vrdb.Normalize)
	recs, problems := rappel.Assemble(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), det.Records, dump.Records, tc.Records)
	if len(problems) != 0 {
		t.Errorf("assembly problems: %+v", problems)
	}
	vehicles := 0
	byID := map[string]*rappel.Record{}
	for _, r := range recs {
		if r.RecallType == rappel.TypeVehicle {
			vehicles++
		}
		byID[r.RecordID] = r
	}
	if vehicles != len(tc.Records) {
		t.Errorf("%d vehicle records from %d recalls of the database and 2 TC rows of the dump naming two of them; want %d", vehicles, len(tc.Records), len(tc.Records))
	}
	r := byID["tc-2017500"]
	if r == nil || r.URLEn != "https://recalls-rappels.canada.ca/en/alert-recall/transport-canada-recall-2017500-chevrolet" ||
		r.Title(rappel.LangEN) != "CHEVROLET SILVERADO 1500 (2016–2017) – Steering" || r.EventDate != "2017-06-06" ||
		r.LastUpdated != r.EventDate || r.VehicleMake != "CHEVROLET" || r.Translations.EN.ProductDescription == "" {
		t.Errorf("tc-2017500 should be the database's recall with the dump's address and product: %+v", r)
	}
}

// TestNormalize_Bad runs the dump in testdata/bad/hc, whose English file
// breaks off in its last row: every bad row is a problem with its reason,
// and the good rows still load.
func TestNormalize_Bad(t *testing.T) {
	out := guesttest.MustRun(t, os.DirFS("../../testdata/bad/hc"), hcdump.Normalize)
	guesttest.Check(t, out)

	var ids []string
	byID := map[string]*rappel.Record{}
	for _, r := range out.Records {
		ids = append(ids, r.RecordID)
		byID[r.RecordID] = r
	}
	if got, want := strings.Join(ids, " "), "hc-80001 hc-80006 hc-80007 hc-80009"; got != want {
		t.Errorf("records %s, want %s", got, want)
	}
	if r := byID["hc-80001"]; r == nil || r.Translations.FR == nil || r.HazardClass != "class_2" {
		t.Errorf("hc-80001 should load with its French twin and class_2: %+v", r)
	}
	if r := byID["hc-80006"]; r == nil || r.HazardClass != "" || r.EventDate != "2020-01-01" {
		t.Errorf("hc-80006 should load without hazard_class: %+v", r)
	}
	if r := byID["hc-80007"]; r == nil || r.Translations.FR != nil || r.Translations.EN == nil {
		t.Errorf("hc-80007 should load English only, its French row being bad: %+v", r)
	}
	if r := byID["hc-80009"]; r == nil || r.Translations.EN != nil || r.Translations.FR == nil || r.RecallType != rappel.TypeFood {
		t.Errorf("hc-80009 should load French only: %+v", r)
	}

	wantProblems(t, out.Problems, []rappel.Problem{
		{RecordID: "hc-80007", Reason: `Row 2 of recalls-fr.json was skipped (NID 80007): its Dernière mise à jour "pas une date" is not a date`},
		{Reason: "Row 2 of recalls-en.json was skipped: it is a string, not an object."},
		{Reason: `Row 3 of recalls-en.json was skipped: its "NID" is a number, not a string.`},
		{Reason: "Row 4 of recalls-en.json was skipped: it has no NID."},
		{RecordID: "hc-80003", Reason: `its Organization "Ministry of Magic" is none of`},
		{RecordID: "hc-80004", Reason: `its Last updated "2021-02-30" is not a date`},
		{RecordID: "hc-80005", Reason: "names the recall number (rn= or \"Transport Canada Recall - <number>\")"},
		{RecordID: "hc-80006", Reason: `recall class "Class IV", which is not Class or Type I, II or III; hazard_class was left out.`},
		{RecordID: "hc-80001", Reason: "Row 9 of recalls-en.json repeats NID 80001"},
		{Reason: "recalls-en.json breaks off in row 11"},
	})
}

// wantProblems checks that got holds exactly the problems of want, in order,
// each reason containing want's.
func wantProblems(t *testing.T, got, want []rappel.Problem) {
	t.Helper()
	for i := 0; i < len(got) || i < len(want); i++ {
		switch {
		case i >= len(want):
			t.Errorf("unexpected problem %+v", got[i])
		case i >= len(got):
			t.Errorf("missing problem %+v", want[i])
		case got[i].Source != hcdump.Source || got[i].RecordID != want[i].RecordID || !strings.Contains(got[i].Reason, want[i].Reason):
			t.Errorf("problem %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestNormalize_Errors(t *testing.T) {
	for name, tc := range map[string]struct {
		fsys fstest.MapFS
		want string
	}{
		"Missing":  {fstest.MapFS{"recalls-fr.json": {Data: []byte("[]")}}, "reading recalls-en.json: open recalls-en.json: file does not exist"},
		"Empty":    {fstest.MapFS{"recalls-en.json": {Data: nil}}, "reading recalls-en.json: the file is not a JSON array (it is empty)"},
		"NotJSON":  {fstest.MapFS{"recalls-en.json": {Data: []byte("NID,Title\n1,x\n")}}, "reading recalls-en.json: the file is not a JSON array (invalid character 'N'"},
		"NotArray": {fstest.MapFS{"recalls-en.json": {Data: []byte(`{"NID": "1"}`)}}, "reading recalls-en.json: the file is not a JSON array (it starts with {)"},
	} {
		t.Run(name, func(t *testing.T) {
			out := guesttest.Run(tc.fsys, hcdump.Normalize)
			if !strings.HasPrefix(out.Err, tc.want) {
				t.Errorf("error %q, want %q", out.Err, tc.want)
			}
		})
	}
	t.Run("NotArrayOnDisk", func(t *testing.T) {
		out := guesttest.Run(os.DirFS("../../testdata/bad/hc-notarray"), hcdump.Normalize)
		if out.Err == "" || len(out.Records) != 0 {
			t.Errorf("got %d records and error %q, want an error", len(out.Records), out.Err)
		}
	})
}

func TestNormalize_FrenchUnusable(t *testing.T) {
	en, err := os.ReadFile("../../testdata/hc/recalls-en.json")
	if err != nil {
		t.Fatal(err)
	}
	out := guesttest.MustRun(t, fstest.MapFS{
		"recalls-en.json": {Data: en},
		"recalls-fr.json": {Data: []byte("<html>Service unavailable</html>")},
	}, hcdump.Normalize)
	if len(out.Records) != 12 || len(out.Problems) != 1 || !strings.Contains(out.Problems[0].Reason, "The French file was ignored, so every record is English only: reading recalls-fr.json: the file is not a JSON array") {
		t.Errorf("got %d records and problems %+v; want 12 English-only records and one problem", len(out.Records), out.Problems)
	}
}

func TestNormalize_TruncatedEverywhere(t *testing.T) {
	// Cut the sample dump at every byte: never an error past the opening
	// bracket, never a panic, and never a record that was not in the whole.
	en, err := os.ReadFile("../../testdata/hc/recalls-en.json")
	if err != nil {
		t.Fatal(err)
	}
	en = bytes.TrimSpace(en)
	whole := map[string]string{}
	for _, r := range guesttest.MustRun(t, fstest.MapFS{"recalls-en.json": {Data: en}}, hcdump.Normalize).Records {
		whole[r.RecordID] = r.Translations.EN.Title
	}
	for n := 1; n < len(en); n++ {
		out := guesttest.Run(fstest.MapFS{"recalls-en.json": {Data: en[:n]}}, hcdump.Normalize)
		if out.Err != "" {
			t.Fatalf("cut at %d: error %s", n, out.Err)
		}
		if len(out.Problems) == 0 {
			t.Fatalf("cut at %d: no problem reported", n)
		}
		for _, r := range out.Records {
			if title, ok := whole[r.RecordID]; !ok || r.Translations.EN.Title != title {
				t.Fatalf("cut at %d: record %s with title %q is not in the whole dump", n, r.RecordID, r.Translations.EN.Title)
			}
		}
	}
}

func FuzzNormalize(f *testing.F) {
	en, _ := os.ReadFile("../../testdata/hc/recalls-en.json")
	fr, _ := os.ReadFile("../../testdata/hc/recalls-fr.json")
	badEN, _ := os.ReadFile("../../testdata/bad/hc/recalls-en.json")
	badFR, _ := os.ReadFile("../../testdata/bad/hc/recalls-fr.json")
	f.Add(en, fr)
	f.Add(badEN, badFR)
	// Every shape of testdata/hc-shapes on its own, with its French twin,
	// so that mutations start from each.
	for _, pair := range shapeSeeds(f) {
		f.Add(pair[0], pair[1])
	}
	f.Add([]byte(`[{"NID":"1","Organization":"TC","URL":"x?rn=12"}]`), []byte(`[]`))
	f.Add([]byte(`[]`), []byte(nil))
	f.Fuzz(func(t *testing.T, en, fr []byte) {
		fsys := fstest.MapFS{"recalls-en.json": {Data: en}}
		if fr != nil {
			fsys["recalls-fr.json"] = &fstest.MapFile{Data: fr}
		}
		out := guesttest.Run(fsys, hcdump.Normalize)
		guesttest.Check(t, out)
		for _, r := range out.Records {
			for _, a := range r.Allergens {
				if !rappel.Allergens.Has(a) {
					t.Fatalf("%s has allergen %q", r.RecordID, a)
				}
			}
			for _, u := range []string{r.URLEn, r.URLFr} {
				if u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
					t.Fatalf("%s has the URL %q, which is not absolute", r.RecordID, u)
				}
			}
			if r.HazardClass != "" && !rappel.HazardClasses.Has(r.HazardClass) {
				t.Fatalf("%s has hazard_class %q", r.RecordID, r.HazardClass)
			}
		}
	})
}

// shapeSeeds returns, for each row of testdata/hc-shapes's English file,
// a dump of that row alone and its French twin (an empty French file when
// it has none), and the French-only rows alone.
func shapeSeeds(tb testing.TB) [][2][]byte {
	tb.Helper()
	read := func(name string) []json.RawMessage {
		b, err := os.ReadFile("../../testdata/hc-shapes/" + name)
		if err != nil {
			tb.Fatal(err)
		}
		var rows []json.RawMessage
		if err := json.Unmarshal(b, &rows); err != nil {
			tb.Fatal(err)
		}
		return rows
	}
	nid := func(row json.RawMessage) string {
		var r struct{ NID string }
		_ = json.Unmarshal(row, &r)
		return r.NID
	}
	fr := map[string]json.RawMessage{}
	for _, row := range read("recalls-fr.json") {
		fr[nid(row)] = row
	}
	array := func(row json.RawMessage) []byte {
		if row == nil {
			return []byte("[]")
		}
		return append(append([]byte("[\n"), row...), "\n]"...)
	}
	var out [][2][]byte
	for _, row := range read("recalls-en.json") {
		out = append(out, [2][]byte{array(row), array(fr[nid(row)])})
		delete(fr, nid(row))
	}
	for _, row := range fr {
		out = append(out, [2][]byte{array(nil), array(row)})
	}
	return out
}
