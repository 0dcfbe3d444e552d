package vrdb_test

import (
	"bytes"
	"encoding/csv"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/vrdb"
)

// realSample is Transport Canada's own daily extract, cut to whole recalls.
const realSample = "tc-vrdb-daily-sample.csv"

func TestNormalize(t *testing.T) {
	out := guesttest.MustRun(t, os.DirFS("../../testdata/tc"), vrdb.Normalize)
	guesttest.Golden(t, "../../testdata/golden/vrdb.json", out)
	guesttest.Check(t, out)
	mustServable(t, out)
	if len(out.Problems) != 0 {
		t.Errorf("problems: %+v", out.Problems)
	}
}

// TestNormalize_Monthly runs the monthly full file's shape: a byte-order
// mark, CRLF, every field quoted, the 15 columns without LAST_UPDATE_DATE
// and MANUFACTURER_NAME_NM, years and counts written "2018.0".
func TestNormalize_Monthly(t *testing.T) {
	out := guesttest.MustRun(t, os.DirFS("../../testdata/tc-monthly"), vrdb.Normalize)
	guesttest.Golden(t, "../../testdata/golden/vrdb-monthly.json", out)
	mustServable(t, out)
	if len(out.Problems) != 0 {
		t.Errorf("problems: %+v", out.Problems)
	}
	for _, r := range out.Records {
		if r.Manufacturer != "" || r.LastUpdated != r.RecallDate {
			t.Errorf("%s: manufacturer %q, last_updated %q: the file has neither", r.RecordID, r.Manufacturer, r.LastUpdated)
		}
	}
}

// TestNormalize_Real runs Transport Canada's own daily extract: every recall
// loads, from every row.
func TestNormalize_Real(t *testing.T) {
	data := guesttest.RealSample(t, realSample)
	out := guesttest.MustRun(t, fstest.MapFS{"vrdb.csv": {Data: data}}, vrdb.Normalize)
	guesttest.Check(t, out)
	mustServable(t, out)
	if len(out.Problems) != 0 {
		t.Errorf("%d problems, want none; the first: %+v", len(out.Problems), out.Problems[0])
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	recalls := map[string]bool{}
	for _, row := range rows[1:] {
		recalls["tc-"+row[0]] = true
	}
	if len(out.Records) != len(recalls) || len(recalls) != 104 {
		t.Errorf("%d records from %d recalls, want 104 of 104", len(out.Records), len(recalls))
	}
}

// mustServable fails the test for a record the host would refuse.
func mustServable(tb testing.TB, out guesttest.Output) {
	tb.Helper()
	for _, r := range out.Records {
		c := *r
		c.FetchedAt = time.Unix(0, 0).UTC().Format(time.RFC3339)
		if err := c.Validate(); err != nil {
			tb.Fatalf("%s would be refused: %v", r.RecordID, err)
		}
	}
}

// TestNormalize_Bad runs testdata/bad/tc/vrdb.csv: every row that cannot be
// used is a problem naming its line, column and value, and recall 2019001
// still loads from its good rows, non-adjacent, after its bad ones. A row
// whose count of units or last update is wrong is used without it.
func TestNormalize_Bad(t *testing.T) {
	out := guesttest.MustRun(t, os.DirFS("../../testdata/bad/tc"), vrdb.Normalize)
	guesttest.Check(t, out)
	mustServable(t, out)
	if len(out.Records) != 3 {
		t.Fatalf("got %d records, want 3", len(out.Records))
	}
	r := out.Records[0]
	var years []int
	for _, m := range r.AffectedModels {
		years = append(years, m.Year)
	}
	if r.RecordID != "tc-2019001" || !slices.Equal(years, []int{2017, 2019, 2020}) ||
		r.UnitsAffected == nil || *r.UnitsAffected != 950 || r.EventDate != "2019-05-01" || r.LastUpdated != "2019-05-10" {
		t.Errorf("tc-2019001 should hold the 2017, 2019 and 2020 rows only: %+v", r)
	}
	if r := out.Records[1]; r.RecordID != "tc-2019002" || r.Translations.FR.HazardDescription != "" || *r.UnitsAffected != 1200 || r.LastUpdated != "2019-06-01" {
		t.Errorf("tc-2019002 should load from its good row, its last update the recall date: %+v", r)
	}
	if r := out.Records[2]; r.RecordID != "tc-2019003" || r.UnitsAffected != nil || r.Manufacturer != "TOYO TIRE" ||
		len(r.ProductList) != 1 || r.ProductList[0].Name != "TOYO OPEN COUNTRY A/T III LT275/65R18" {
		t.Errorf("tc-2019003 should load without its fraction of a unit, its tire a product: %+v", r)
	}
	want := []rappel.Problem{
		{RecordID: "tc-2019001", Reason: "Line 8 of vrdb.csv was skipped: it has 16 fields where the header has 17."},
		{RecordID: "tc-2019001", Reason: `Line 13 of vrdb.csv was skipped: its YEAR "20l8" is not a model year.`},
		{RecordID: "tc-2019001", Reason: `Line 19 of vrdb.csv: its UNIT_AFFECTED_NBR "many" is not a whole number of units; the row was used without it.`},
		{RecordID: "tc-2019001", Reason: `Line 25 of vrdb.csv was skipped: its RECALL_DATE_DTE "2019-13-01" is not a date`},
		{Reason: "Line 31 of vrdb.csv was skipped: it has no RECALL_NUMBER_NUM."},
		{Reason: `Line 37 of vrdb.csv was skipped: its RECALL_NUMBER_NUM "R-2019" is not a recall number.`},
		{Reason: `Line 43 of vrdb.csv was skipped: extraneous or missing " in quoted-field.`},
		{RecordID: "tc-2019002", Reason: `Line 50 of vrdb.csv: its LAST_UPDATE_DATE "2019-06-31" is not a date`},
		{RecordID: "tc-2019003", Reason: `Line 51 of vrdb.csv: its UNIT_AFFECTED_NBR "12.50" is not a whole number of units; the row was used without it.`},
	}
	wantProblems(t, out.Problems, want)
}

// wantProblems compares problems with want, whose reasons may be prefixes.
func wantProblems(t *testing.T, got, want []rappel.Problem) {
	t.Helper()
	for i := 0; i < len(got) || i < len(want); i++ {
		switch {
		case i >= len(want):
			t.Errorf("unexpected problem %+v", got[i])
		case i >= len(got):
			t.Errorf("missing problem %+v", want[i])
		case got[i].Source != vrdb.Source || got[i].RecordID != want[i].RecordID || !strings.HasPrefix(got[i].Reason, want[i].Reason):
			t.Errorf("problem %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// The header rows of the daily extract and of the monthly full file.
const (
	header        = `"RECALL_NUMBER_NUM","YEAR","MANUFACTURER_RECALL_NO_TXT","CATEGORY_ETXT","CATEGORY_FTXT","MAKE_NAME_NM","MODEL_NAME_NM","UNIT_AFFECTED_NBR","SYSTEM_TYPE_ETXT","SYSTEM_TYPE_FTXT","NOTIFICATION_TYPE_ETXT","NOTIFICATION_TYPE_FTXT","COMMENT_ETXT","COMMENT_FTXT","RECALL_DATE_DTE","LAST_UPDATE_DATE","MANUFACTURER_NAME_NM"`
	monthlyHeader = `"RECALL_NUMBER_NUM","YEAR","MANUFACTURER_RECALL_NO_TXT","CATEGORY_ETXT","CATEGORY_FTXT","MAKE_NAME_NM","MODEL_NAME_NM","UNIT_AFFECTED_NBR","SYSTEM_TYPE_ETXT","SYSTEM_TYPE_FTXT","NOTIFICATION_TYPE_ETXT","NOTIFICATION_TYPE_FTXT","COMMENT_ETXT","COMMENT_FTXT","RECALL_DATE_DTE"`
)

func TestNormalize_Errors(t *testing.T) {
	for name, tc := range map[string]struct {
		data *fstest.MapFile
		want string
	}{
		"Missing":     {nil, "reading vrdb.csv: open vrdb.csv: file does not exist"},
		"Empty":       {&fstest.MapFile{Data: []byte("\ufeff")}, "reading vrdb.csv: the file is empty"},
		"WrongHeader": {&fstest.MapFile{Data: []byte("\ufeff\"NUMBER\",\"YEAR\"\r\n\"1\",\"2\"\r\n")}, "reading vrdb.csv: the header lacks RECALL_NUMBER_NUM, MANUFACTURER_RECALL_NO_TXT"},
		"TwiceNamed":  {&fstest.MapFile{Data: []byte(header + `,"YEAR"` + "\n")}, "reading vrdb.csv: the header names column YEAR twice"},
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
		if !strings.Contains(out.Err, "the header lacks") || !strings.Contains(out.Err, "may name LAST_UPDATE_DATE and MANUFACTURER_NAME_NM") {
			t.Errorf("error %q, want a header error naming the columns", out.Err)
		}
	})
}

func TestNormalize_HeaderOnly(t *testing.T) {
	for _, data := range []string{header + "\n", "\ufeff" + monthlyHeader + "\r\n", header} {
		out := guesttest.MustRun(t, fstest.MapFS{"vrdb.csv": {Data: []byte(data)}}, vrdb.Normalize)
		if len(out.Records) != 0 || len(out.Problems) != 0 {
			t.Errorf("%q: got %+v, want nothing", data, out)
		}
	}
}

func TestNormalize_ColumnsReordered(t *testing.T) {
	// Columns are found by name, so an export that moves one still loads.
	data := "MANUFACTURER_NAME_NM,RECALL_DATE_DTE," + strings.ReplaceAll(strings.TrimSuffix(header, `,"RECALL_DATE_DTE","LAST_UPDATE_DATE","MANUFACTURER_NAME_NM"`), `"`, "") + ",LAST_UPDATE_DATE\n" +
		"FORD MOTOR,2001-02-03,2001001,2001,,Car,Voiture,FORD,FOCUS,10,Brakes,Freins,Safety Mfr,Sécurité - fabricant,Comment,Commentaire,2001-03-04\n"
	out := guesttest.MustRun(t, fstest.MapFS{"vrdb.csv": {Data: []byte(data)}}, vrdb.Normalize)
	if len(out.Records) != 1 || len(out.Problems) != 0 {
		t.Fatalf("got %+v", out)
	}
	if r := out.Records[0]; r.EventDate != "2001-02-03" || r.LastUpdated != "2001-03-04" || r.VehicleMake != "FORD" || r.Manufacturer != "FORD MOTOR" || *r.UnitsAffected != 10 {
		t.Errorf("got %+v", r)
	}
}

// TestNormalize_UnknownColumns: columns the normalizer does not know are one
// problem for the file, however many rows it has, and the rows still load.
func TestNormalize_UnknownColumns(t *testing.T) {
	row := `"2022001",2022,,"SUV","Véhicule utilitaire-sport","KIA","TELLURIDE","1,234.00","Brakes","Freins","Safety Mfr","Sécurité - fabricant","Comment","Commentaire","2022-01-05","2022-01-06","KIA","x",`
	data := header + `,"RECALL_STATUS",` + "\n" + row + "\n" + strings.Replace(row, "2022,", "2023,", 1) + "\n" + strings.Replace(row, "2022001", "2022002", 1) + "\n"
	out := guesttest.MustRun(t, fstest.MapFS{"vrdb.csv": {Data: []byte(data)}}, vrdb.Normalize)
	if len(out.Records) != 2 || len(out.Records[0].AffectedModels) != 2 || *out.Records[0].UnitsAffected != 1234 {
		t.Errorf("records: %+v", out.Records)
	}
	wantProblems(t, out.Problems, []rappel.Problem{{Reason: "The header of vrdb.csv names columns RECALL_STATUS, an unnamed column at position 19, which this normalizer does not know; their values were ignored."}})
}

// TestNormalize_Products: the rows of tire, child car seat and equipment
// recalls name products, which product_list lists; the rows of vehicles do
// not, even in the same recall.
func TestNormalize_Products(t *testing.T) {
	rows := []string{
		`"2022638",2022,,"Tire","Pneu","BRIDGESTONE","ALENZA SPORT A/S 235/55R20","340.00","Tires","Pneus","Safety Mfr","Sécurité - fabricant","Comment","Commentaire","2022-11-04","2023-01-04","BRIDGESTONE-FIRESTONE"`,
		`"2022638",2022,,"Tire","Pneu","FIRESTONE","DESTINATION LE2 P265/65R17","340.00","Tires","Pneus","Safety Mfr","Sécurité - fabricant","Comment","Commentaire","2022-11-04","2023-01-04","BRIDGESTONE-FIRESTONE"`,
		`"2022638",2022,,"SUV","Véhicule utilitaire-sport","TOYOTA","HIGHLANDER","340.00","Tires","Pneus","Safety Mfr","Sécurité - fabricant","Comment","Commentaire","2022-11-04","2023-01-04","BRIDGESTONE-FIRESTONE"`,
		`"2022745",2021,,"Child Car Seat","Siège d'auto pour enfant","DIONO","RADIAN 3RXT","43,768.00","Seats And Restraints","Sièges et dispositifs de retenue","Safety Mfr","Sécurité - fabricant","Comment","Commentaire","2022-12-16","2022-12-19","DIONO"`,
		`"2022654",2019,,"Equipment","Matériel","TREMCAR","DRY BULK 5 AXLES","118.00","Steering","Direction","Safety Mfr","Sécurité - fabricant","Comment","Commentaire","2022-11-10","2022-11-17","TREMCAR"`,
	}
	out := guesttest.MustRun(t, fstest.MapFS{"vrdb.csv": {Data: []byte(header + "\n" + strings.Join(rows, "\n") + "\n")}}, vrdb.Normalize)
	mustServable(t, out)
	want := map[string][]string{
		"tc-2022638": {"BRIDGESTONE ALENZA SPORT A/S 235/55R20", "FIRESTONE DESTINATION LE2 P265/65R17"},
		"tc-2022745": {"DIONO RADIAN 3RXT"},
		"tc-2022654": {"TREMCAR DRY BULK 5 AXLES"},
	}
	for _, r := range out.Records {
		var names []string
		for _, p := range r.ProductList {
			names = append(names, p.Name)
		}
		if !slices.Equal(names, want[r.RecordID]) || r.RecallType != rappel.TypeVehicle || r.AffectedModels == nil {
			t.Errorf("%s: products %q, recall_type %s, affected_models %v; want products %q", r.RecordID, names, r.RecallType, r.AffectedModels, want[r.RecordID])
		}
	}
	if r := out.Records[0]; r.VehicleCategory != "Tire" || r.Translations.FR.VehicleCategory != "Pneu" || len(r.AffectedModels) != 3 {
		t.Errorf("tc-2022638: %+v", r)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, p := range []string{"../../testdata/tc/vrdb.csv", "../../testdata/tc-monthly/vrdb.csv", "../../testdata/bad/tc/vrdb.csv", "../../testdata/bad/tc-header/vrdb.csv"} {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte(header + "\n\"1\",2018,,,,\"A\",\"B\",\"3,000.00\",,,,,,,\"2018-01-01\",\"2018-01-02\",\"C\"\n"))
	f.Add([]byte(monthlyHeader + "\n\"1\",\"2018.0\",,,,\"A\",\"B\",\"3.0\",,,,,,,\"2018/01/01\"\n"))
	f.Fuzz(fuzzNormalize)
}

// FuzzNormalize_Real mutates the rows of Transport Canada's own daily
// extract: its header and the rows of each recall are one seed.
func FuzzNormalize_Real(f *testing.F) {
	data := guesttest.RealSample(f, realSample)
	cr := csv.NewReader(bytes.NewReader(data))
	if _, err := cr.Read(); err != nil {
		f.Fatal(err)
	}
	head := data[:cr.InputOffset()]
	seeds := map[string][]byte{}
	var order []string
	for {
		start := cr.InputOffset()
		row, err := cr.Read()
		if err != nil {
			break
		}
		if seeds[row[0]] == nil {
			order = append(order, row[0])
			seeds[row[0]] = bytes.Clone(head)
		}
		seeds[row[0]] = append(seeds[row[0]], data[start:cr.InputOffset()]...)
	}
	if len(order) != 104 {
		f.Fatalf("%d recalls in the real sample, want 104", len(order))
	}
	for _, n := range order {
		f.Add(seeds[n])
	}
	f.Fuzz(fuzzNormalize)
}

// fuzzNormalize runs data through the normalizer: whatever the input, no
// panic, every problem has a reason, and every record is one the host
// would serve.
func fuzzNormalize(t *testing.T, data []byte) {
	out := guesttest.Run(fstest.MapFS{"vrdb.csv": {Data: data}}, vrdb.Normalize)
	guesttest.Check(t, out)
	mustServable(t, out)
}

// TestNormalizeWith_Aliases: a file that renames a column loads through a
// one-line alias, as the original does; an alias for a column that does not
// exist, or a file naming a column both ways, is refused with what to do.
func TestNormalizeWith_Aliases(t *testing.T) {
	orig, err := os.ReadFile("../../testdata/tc/vrdb.csv")
	if err != nil {
		t.Fatal(err)
	}
	renamed := strings.Replace(string(orig), "RECALL_NUMBER_NUM", "Recall_No", 1)
	in := fstest.MapFS{"vrdb.csv": {Data: []byte(renamed)}}
	if out := guesttest.Run(in, vrdb.Normalize); !strings.Contains(out.Err, "lacks RECALL_NUMBER_NUM") {
		t.Fatalf("without the alias: err = %q", out.Err)
	}
	want := guesttest.MustRun(t, os.DirFS("../../testdata/tc"), vrdb.Normalize)
	got := guesttest.MustRun(t, in, vrdb.NormalizeWith(vrdb.Aliases{"RECALL_NO": vrdb.ColumnRecallNumber}))
	if len(got.Records) == 0 || len(got.Records) != len(want.Records) || len(got.Problems) != len(want.Problems) {
		t.Fatalf("with the alias: %d records, %d problems; want %d, %d", len(got.Records), len(got.Problems), len(want.Records), len(want.Problems))
	}
	for i := range want.Records {
		if got.Records[i].RecordID != want.Records[i].RecordID {
			t.Errorf("record %d is %s, want %s", i, got.Records[i].RecordID, want.Records[i].RecordID)
		}
	}
	if out := guesttest.Run(in, vrdb.NormalizeWith(vrdb.Aliases{"RECALL_NO": "RECALL_NUMBER"})); !strings.Contains(out.Err, "names column RECALL_NUMBER, which vrdb.csv does not have") {
		t.Errorf("alias of no column: err = %q", out.Err)
	}
	both := fstest.MapFS{"vrdb.csv": {Data: orig}}
	if out := guesttest.Run(both, vrdb.NormalizeWith(vrdb.Aliases{"YEAR": vrdb.ColumnRecallNumber})); !strings.Contains(out.Err, "twice") {
		t.Errorf("a column named both ways: err = %q", out.Err)
	}
}
