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
			"hc-72001": "peanut",       // Peanut / Arachides
			"hc-72002": "egg,milk",     // Egg - Milk / Œufs - Lait
			"hc-72003": "",             // Listeria
			"hc-72004": "mustard",      // French only: Moutarde
			"hc-72010": "",             // Lupin is no allergen of the vocabulary, Other names none
			"hc-72005": "",             // a drug
			"hc-72011": "egg",          // Issue Other: the title's "undeclared egg"
			"hc-72012": "sesame,milk",  // no Issue: the title's "undeclared sesame and milk"
			"hc-72013": "egg,soy,milk", // Egg - Soy - Milk
			"hc-71002": "",             // Salmonella
		} {
			if got := strings.Join(rec(t, id).Allergens, ","); got != want {
				t.Errorf("%s allergens %q, want %q", id, got, want)
			}
		}
	})
	t.Run("HazardType", func(t *testing.T) {
		for id, want := range map[string][2]string{
			"hc-72013": {"Allergen: Egg, Soy, Milk", "Allergène : Œufs, Soja, Lait"},
			"hc-71002": {"Microbial contamination: Salmonella", "Contamination microbienne : Salmonelle"},
			"hc-72010": {"Lupin - Other", ""}, // an unknown label: the Issue as written
			"hc-72014": {"Product quality", ""},
		} {
			r := rec(t, id)
			if got := r.Translations.EN.HazardDescription; got != want[0] {
				t.Errorf("%s: English hazard_description %q, want %q", id, got, want[0])
			}
			if want[1] != "" && (r.Translations.FR == nil || r.Translations.FR.HazardDescription != want[1]) {
				t.Errorf("%s: French hazard_description %+v, want %q", id, r.Translations.FR, want[1])
			}
		}
	})
	t.Run("Paragraphs", func(t *testing.T) {
		for id, want := range map[string]string{
			"hc-72013": "Check to see if you have recalled products. Do not consume recalled products",
			"hc-72014": "Return the affected products to your local pharmacy for a replacement, and for proper disposal. If you are unsure whether your product is affected, check with your pharmacy. Consult a health care professional if you have used the affected product and you have health concerns. Report any health product-related side effects to Health Canada.",
		} {
			if got := rec(t, id).Translations.EN.WhatToDo; got != want {
				t.Errorf("%s: what_to_do\n  %q\nwant %q", id, got, want)
			}
		}
		if got := rec(t, "hc-72013").Translations.FR.WhatToDo; got != "Vérifiez si vous avez les produits rappelés. Ne consommez pas les produits rappelés" {
			t.Errorf("hc-72013: French what_to_do %q", got)
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
		// A joiner inside a value does not cut it.
		for id, want := range map[string]string{
			"hc-72012":   "Nuts, grains, and seeds|Condiments",
			"tc-2025112": "Truck - Med. & H.D.|Light Truck & Van",
			"tc-2024761": "SUV|Minivan",
		} {
			if r := rec(t, id); strings.Join(r.Categories, "|") != want {
				t.Errorf("%s: categories %q, want %q", id, r.Categories, want)
			}
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
		// The title says no more than recall_id and vehicle_make: kept,
		// and replaced by the vehicle database's when merged. The Issue
		// is the system.
		if r.RecallID != "2017500" || en.Title != "Transport Canada Recall - 2017500 - CHEVROLET" || !rappel.IsPlaceholderTitle(fr.Title) ||
			r.System != "Steering" || en.System != "Steering" || fr.System != "Direction" || en.HazardDescription != "" || en.WhatToDo != "" ||
			r.LastUpdated != "" || en.ProductDescription != "Light Truck & Van recalled by CHEVROLET" || r.Category != "Vehicles" {
			t.Errorf("tc-2017500: %+v %+v %+v", r, en, fr)
		}
		if r := rec(t, "tc-2019045"); r.RecallID != "2019045" || r.LastUpdated != "2019-03-01" || r.System != "Fuel System" {
			t.Errorf("tc-2019045 (no make in the title): %+v", r)
		}
	})
	wantProblems(t, out.Problems, []rappel.Problem{
		{RecordID: "hc-72010", Reason: `NID 72010 has the URL "javascript:void(0)" in recalls-en.json, which is no web address; it was left out.`},
		{RecordID: "hc-72010", Reason: `NID 72010: its Issue label "Lupin" is none the dump is known to use for food; it gives no allergen or hazard type.`},
		{RecordID: "hc-72103", Reason: `NID 72103 (row 14 of recalls-en.json) was skipped: it is a Transport Canada notice but neither its URL "/en/node/72103" nor its title "Transport Canada Recall" names the recall number`},
		{RecordID: "tc-2020311", Reason: `NID 72106 (row 21 of recalls-en.json) has the Organization "Road Safety and Motor Vehicle Regulation", which the dump has never used (it knows CFIA (ACIA), TC, `},
	})
}

// TestAssemble_TransportCanadaRows merges the dump's Transport Canada rows
// of every shape with the vehicle database's sample (and the shapes' detail
// documents), as the bundle build and the feeds do: each recall is one
// record, whose dates and vehicles come from the database and whose
// addresses come from the dump; a recall the database does not list is
// served from the dump's row alone, dated by its last update.
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
	// The dump's rows name two recalls of the database, and two it does
	// not list (tc-2024761, tc-2025112).
	if want := len(tc.Records) + 2; vehicles != want {
		t.Errorf("%d vehicle records from %d recalls of the database and the dump's TC rows; want %d", vehicles, len(tc.Records), want)
	}
	r := byID["tc-2017500"]
	if r == nil || r.URLEn != "https://recalls-rappels.canada.ca/en/alert-recall/transport-canada-recall-2017500-chevrolet" ||
		r.Title(rappel.LangEN) != "CHEVROLET SILVERADO 1500 (2016–2017) – Steering" || r.EventDate != "2017-06-06" ||
		r.LastUpdated != r.EventDate || r.VehicleMake != "CHEVROLET" || r.Translations.EN.ProductDescription == "" {
		t.Errorf("tc-2017500 should be the database's recall with the dump's address and product: %+v", r)
	}
	r = byID["tc-2024761"]
	if r == nil || r.Title(rappel.LangEN) != "Transport Canada Recall - 2024761 - HONDA" || r.EventDate != "2025-05-02" ||
		r.RecallDate != "2025-05-02" || r.System != "Visual System" || strings.Join(r.Categories, "|") != "SUV|Minivan" ||
		r.Agency != rappel.AgencyTransportCanada || r.Translations.EN.ProductDescription != "SUV recalled by HONDA" {
		t.Errorf("tc-2024761, which only the dump lists, should be served from its row: %+v", r)
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
	if got, want := strings.Join(ids, " "), "hc-80001 hc-80003 hc-80006 hc-80007 hc-80009"; got != want {
		t.Errorf("records %s, want %s", got, want)
	}
	if r := byID["hc-80001"]; r == nil || r.Translations.FR == nil || r.HazardClass != "class_2" {
		t.Errorf("hc-80001 should load with its French twin and class_2: %+v", r)
	}
	if r := byID["hc-80003"]; r == nil || r.Agency != rappel.AgencyHealthCanada || r.RecallType != rappel.TypeHealthProduct || r.Status != rappel.StatusActive {
		t.Errorf("hc-80003, of an organization the dump has never used, should be kept as a Health Canada health product: %+v", r)
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
		{RecordID: "hc-80003", Reason: `NID 80003 (row 5 of recalls-en.json) has the Organization "Ministry of Magic", which the dump has never used (it knows CFIA (ACIA), TC,`},
		{RecordID: "hc-80003", Reason: `NID 80003 has Archived "Maybe", which is none of 0, 1, No, Yes (Non, Oui); the notice was taken for active.`},
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
	// The one other problem is the sample's organization the dump has
	// never used.
	if len(out.Records) != 12 || len(out.Problems) != 2 || !strings.Contains(out.Problems[0].Reason, "The French file was ignored, so every record is English only: reading recalls-fr.json: the file is not a JSON array") ||
		out.Problems[1].RecordID != "hc-70008" {
		t.Errorf("got %d records and problems %+v; want 12 English-only records and the French file's problem", len(out.Records), out.Problems)
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
	en2023, _ := os.ReadFile("../../testdata/hc-2023/recalls-en.json")
	fr2023, _ := os.ReadFile("../../testdata/hc-2023/recalls-fr.json")
	f.Add(en, fr)
	f.Add(badEN, badFR)
	f.Add(en2023, fr2023)
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

// TestNormalize_2023 reads rows written in the dump's vocabulary of 2023 to
// early 2024 (testdata/hc-2023, written from its description): full
// organization names, Archived "No"/"Yes", category paths joined by ", ",
// titles and advice in literal quotes, empty products. Every row loads,
// with no problem, as its 2024 twin would.
func TestNormalize_2023(t *testing.T) {
	out := guesttest.MustRun(t, os.DirFS("../../testdata/hc-2023"), hcdump.Normalize)
	guesttest.Golden(t, "../../testdata/golden/hcdump-2023.json", out)
	guesttest.Check(t, out)
	if len(out.Problems) != 0 {
		t.Errorf("problems: %+v", out.Problems)
	}
	type want struct {
		agency, typ, status, categories, allergens, title string
	}
	wants := map[string]want{
		"hc-68101":   {rappel.AgencyCFIA, rappel.TypeFood, "active", "", "peanut", "Brand A Trail Mix recalled due to undeclared peanut"},
		"hc-68102":   {rappel.AgencyCFIA, rappel.TypeFood, "archived", "Dairy|Meat and poultry", "", "Maison B brand deli meats and cheeses recalled due to Listeria monocytogenes"},
		"hc-68103":   {rappel.AgencyCFIA, rappel.TypeFood, "active", "", "egg,milk", "Brand C Chocolate Bars recalled due to undeclared egg and milk"},
		"tc-2023401": {rappel.AgencyTransportCanada, rappel.TypeVehicle, "active", "Car|SUV", "", "Transport Canada Recall - 2023401 - FORD"},
		"tc-2022187": {rappel.AgencyTransportCanada, rappel.TypeVehicle, "archived", "Truck - Med. & H.D.|Light Truck & Van", "", "Transport Canada Recall - 2022187 - FREIGHTLINER"},
		"hc-68301":   {rappel.AgencyHealthCanada, rappel.TypeHealthProduct, "active", "", "", "Unauthorized sexual enhancement products may pose serious health risks"},
		"hc-68302":   {rappel.AgencyHealthCanada, rappel.TypeMedicalDevice, "archived", "Cardiovascular|General hospital and personal use", "", "Certain lots of Brand D infusion sets recalled"},
		"hc-68303":   {rappel.AgencyHealthCanada, rappel.TypeConsumerProduct, "active", "", "", "Brand E wooden toy trains recalled due to choking hazard"},
		"hc-68304":   {rappel.AgencyHealthCanada, rappel.TypeCannabis, "active", "", "", "Brand F dried cannabis recalled due to mould"},
	}
	if len(out.Records) != len(wants) {
		t.Errorf("%d records, want %d", len(out.Records), len(wants))
	}
	for _, r := range out.Records {
		w, ok := wants[r.RecordID]
		got := want{r.Agency, r.RecallType, r.Status, strings.Join(r.Categories, "|"), strings.Join(r.Allergens, ","), r.Title(rappel.LangEN)}
		if !ok || got != w {
			t.Errorf("%s: %+v, want %+v", r.RecordID, got, w)
		}
	}
	byID := map[string]*rappel.Record{}
	for _, r := range out.Records {
		byID[r.RecordID] = r
	}
	if r := byID["hc-68301"]; r.Translations.EN.WhatToDo != "Do not use these products. Consult your health care professional if you have used them and have health concerns." {
		t.Errorf("hc-68301: what_to_do %q", r.Translations.EN.WhatToDo)
	}
	if r := byID["hc-68101"]; r.Category != "Nuts, grains, and seeds" || r.Translations.FR.Category != "Noix, grains et graines" || r.Translations.EN.ProductDescription != "" ||
		r.Translations.FR.Title != "Mélange montagnard de marque A rappelé en raison d'arachides non déclarées" {
		t.Errorf("hc-68101: %+v %+v", r, r.Translations.FR)
	}
}
