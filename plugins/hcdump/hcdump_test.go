package hcdump_test

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/hcdump"
)

func TestNormalize(t *testing.T) {
	out := guesttest.MustRun(t, os.DirFS("../../testdata/hc"), hcdump.Normalize)
	guesttest.Golden(t, "../../testdata/golden/hcdump.json", out)
	guesttest.Check(t, out)
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
		{RecordID: "hc-80005", Reason: "carries no rn= recall number"},
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
	f.Add([]byte(`[{"NID":"1","Organization":"TC","URL":"x?rn=12"}]`), []byte(`[]`))
	f.Add([]byte(`[]`), []byte(nil))
	f.Fuzz(func(t *testing.T, en, fr []byte) {
		fsys := fstest.MapFS{"recalls-en.json": {Data: en}}
		if fr != nil {
			fsys["recalls-fr.json"] = &fstest.MapFile{Data: fr}
		}
		guesttest.Check(t, guesttest.Run(fsys, hcdump.Normalize))
	})
}
