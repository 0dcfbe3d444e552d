package vrdb_test

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/vrdb"
)

func TestNormalize(t *testing.T) {
	out := guesttest.MustRun(t, os.DirFS("../../testdata/tc"), vrdb.Normalize)
	guesttest.Golden(t, "../../testdata/golden/vrdb.json", out)
	guesttest.Check(t, out)
}

// TestNormalize_Bad runs testdata/bad/tc/vrdb.csv: every bad row is a
// problem naming its line, and recall 2019001 still loads from its good
// rows, non-adjacent, after its bad ones.
func TestNormalize_Bad(t *testing.T) {
	out := guesttest.MustRun(t, os.DirFS("../../testdata/bad/tc"), vrdb.Normalize)
	guesttest.Check(t, out)
	if len(out.Records) != 2 {
		t.Fatalf("got %d records, want 2", len(out.Records))
	}
	r := out.Records[0]
	if r.RecordID != "tc-2019001" || len(r.AffectedModels) != 2 || r.AffectedModels[0].Year != 2019 || r.AffectedModels[1].Year != 2020 ||
		r.UnitsAffected == nil || *r.UnitsAffected != 950 || r.EventDate != "2019-05-01" {
		t.Errorf("tc-2019001 should hold the 2019 and 2020 rows only: %+v", r)
	}
	if r := out.Records[1]; r.RecordID != "tc-2019002" || r.Translations.FR.HazardDescription != "" || *r.UnitsAffected != 1200 {
		t.Errorf("tc-2019002 should load from its good row: %+v", r)
	}
	want := []rappel.Problem{
		{RecordID: "tc-2019001", Reason: "Line 3 of vrdb.csv was skipped: it has 14 fields where the header has 15."},
		{RecordID: "tc-2019001", Reason: `Line 4 of vrdb.csv was skipped: its YEAR "20l8" is not a model year.`},
		{RecordID: "tc-2019001", Reason: `Line 5 of vrdb.csv was skipped: its UNIT_AFFECTED_NBR "many" is not a whole number.`},
		{RecordID: "tc-2019001", Reason: `Line 6 of vrdb.csv was skipped: its RECALL_DATE_DTE "2019-13-01" is not a date`},
		{Reason: "Line 7 of vrdb.csv was skipped: it has no RECALL_NUMBER_NUM."},
		{Reason: `Line 8 of vrdb.csv was skipped: its RECALL_NUMBER_NUM "R-2019" is not a recall number.`},
		{Reason: `Line 9 of vrdb.csv was skipped: extraneous or missing " in quoted-field.`},
	}
	for i := 0; i < len(out.Problems) || i < len(want); i++ {
		switch {
		case i >= len(want):
			t.Errorf("unexpected problem %+v", out.Problems[i])
		case i >= len(out.Problems):
			t.Errorf("missing problem %+v", want[i])
		case out.Problems[i].Source != vrdb.Source || out.Problems[i].RecordID != want[i].RecordID || !strings.Contains(out.Problems[i].Reason, want[i].Reason):
			t.Errorf("problem %d = %+v, want %+v", i, out.Problems[i], want[i])
		}
	}
}

const header = `"RECALL_NUMBER_NUM","YEAR","MANUFACTURER_RECALL_NO_TXT","CATEGORY_ETXT","CATEGORY_FTXT","MAKE_NAME_NM","MODEL_NAME_NM","UNIT_AFFECTED_NBR","SYSTEM_TYPE_ETXT","SYSTEM_TYPE_FTXT","NOTIFICATION_TYPE_ETXT","NOTIFICATION_TYPE_FTXT","COMMENT_ETXT","COMMENT_FTXT","RECALL_DATE_DTE"`

func TestNormalize_Errors(t *testing.T) {
	for name, tc := range map[string]struct {
		data *fstest.MapFile
		want string
	}{
		"Missing":     {nil, "reading vrdb.csv: open vrdb.csv: file does not exist"},
		"Empty":       {&fstest.MapFile{Data: []byte("\ufeff")}, "reading vrdb.csv: the file is empty"},
		"WrongHeader": {&fstest.MapFile{Data: []byte("\ufeff\"NUMBER\",\"YEAR\"\r\n\"1\",\"2\"\r\n")}, "reading vrdb.csv: the header lacks RECALL_NUMBER_NUM, MANUFACTURER_RECALL_NO_TXT"},
		"TwiceNamed":  {&fstest.MapFile{Data: []byte(header + `,"YEAR"` + "\r\n")}, "reading vrdb.csv: the header names column YEAR twice"},
		"NotCSV":      {&fstest.MapFile{Data: []byte(`[{"NID": "1"}]`)}, "reading vrdb.csv header: parse error on line 1"},
	} {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			if tc.data != nil {
				fsys["vrdb.csv"] = tc.data
			}
			out := guesttest.Run(fsys, vrdb.Normalize)
			if !strings.HasPrefix(out.Err, tc.want) {
				t.Errorf("error %q, want %q", out.Err, tc.want)
			}
		})
	}
	t.Run("WrongHeaderOnDisk", func(t *testing.T) {
		out := guesttest.Run(os.DirFS("../../testdata/bad/tc-header"), vrdb.Normalize)
		if !strings.Contains(out.Err, "the header lacks") {
			t.Errorf("error %q, want a header error", out.Err)
		}
	})
}

func TestNormalize_HeaderOnly(t *testing.T) {
	out := guesttest.MustRun(t, fstest.MapFS{"vrdb.csv": {Data: []byte("\ufeff" + header + "\r\n")}}, vrdb.Normalize)
	if len(out.Records) != 0 || len(out.Problems) != 0 {
		t.Errorf("got %+v, want nothing", out)
	}
}

func TestNormalize_ColumnsReordered(t *testing.T) {
	// Columns are found by name, so an export that moves one still loads.
	data := "RECALL_DATE_DTE," + strings.ReplaceAll(strings.TrimSuffix(header, `,"RECALL_DATE_DTE"`), `"`, "") + "\n" +
		"2001-02-03,2001001,2001,,Car,Voiture,FORD,FOCUS,10,Brakes,Freins,Safety Recall,Rappel de sécurité,Comment,Commentaire\n"
	out := guesttest.MustRun(t, fstest.MapFS{"vrdb.csv": {Data: []byte(data)}}, vrdb.Normalize)
	if len(out.Records) != 1 || out.Records[0].EventDate != "2001-02-03" || out.Records[0].VehicleMake != "FORD" {
		t.Errorf("got %+v", out)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, p := range []string{"../../testdata/tc/vrdb.csv", "../../testdata/bad/tc/vrdb.csv", "../../testdata/bad/tc-header/vrdb.csv"} {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte(header + "\n\"1\",\"2018.0\",,,,\"A\",\"B\",\"3.0\",,,,,,,\"2018/01/01\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := guesttest.Run(fstest.MapFS{"vrdb.csv": {Data: data}}, vrdb.Normalize)
		guesttest.Check(t, out)
		for _, r := range out.Records {
			if r.UnitsAffected != nil && *r.UnitsAffected < 0 {
				t.Fatalf("%s has negative units_affected", r.RecordID)
			}
			if r.EventDate != "" && !rappel.ValidDate(r.EventDate) {
				t.Fatalf("%s has event_date %q", r.RecordID, r.EventDate)
			}
		}
	})
}
