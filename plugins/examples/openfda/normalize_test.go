package openfda_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/examples/openfda"
	"github.com/rappel-ca/rappel/plugins/examples/openfda/fdatest"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// fda is the agency the manifest names, which the node registers from it.
var fda = rappel.Agency{Name: "FDA", EN: "U.S. Food and Drug Administration", FR: "Food and Drug Administration des États-Unis"}

// TestMain serves a plugin run when the host started this test binary as
// its child, and otherwise registers the agency, as the node does when it
// reads the manifest, so that records naming it are valid.
func TestMain(m *testing.M) {
	plugintest.ServeChild()
	if err := rappel.RegisterAgency(fda); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// mustServable fails the test for a record the host would refuse.
func mustServable(tb testing.TB, recs []*rappel.Record) {
	tb.Helper()
	for _, r := range recs {
		c := *r
		c.FetchedAt = time.Unix(0, 0).UTC().Format(time.RFC3339)
		if err := c.Validate(); err != nil {
			tb.Fatalf("%s would be refused: %v", r.RecordID, err)
		}
	}
}

// doc is an API response holding results.
func doc(results ...string) []byte {
	return []byte(`{"meta": {"results": {"skip": 0, "limit": 1000, "total": 1}}, "results": [` + strings.Join(results, ",") + `]}`)
}

// kellogg is the sample's first result, the mapping's worked example.
const kellogg = `{"status": "Terminated", "city": "Mississauga", "state": "Ontario", "country": "Canada",
	"classification": "Class II", "openfda": {}, "product_type": "Food", "event_id": "66476",
	"recalling_firm": "Kellogg Canada Corporate Office", "address_2": "N/A", "postal_code": "N/A",
	"distribution_pattern": "Canada", "recall_number": "F-0087-2014",
	"product_description": "Pringles(R) SALT & VINEGAR Potato Chips, 168 g (UPC 064100852464) and 181 g (UPC 037000230090), Pringles Manufacturing Company, 1306 Highway 70 Bypass,   Jackson, TN, USA 38301-5072",
	"product_quantity": "182, 000 cases of 14 units",
	"reason_for_recall": "There was a change in Canadian labeling regulations where lactose was no longer sufficient, the label needed to stated \"contains milk\"",
	"recall_initiation_date": "20131007", "center_classification_date": "20131030", "report_date": "20131106",
	"code_info": "All lot codes and best before dates currently on shelf of the following product, where milk is not declared on the list of ingredients"}`

// TestNormalize_Kellogg checks every field of one mapped result.
func TestNormalize_Kellogg(t *testing.T) {
	out := guesttest.MustRun(t, fstest.MapFS{"food.json": {Data: doc(kellogg)}}, openfda.Normalize)
	if len(out.Records) != 1 || len(out.Problems) != 0 {
		t.Fatalf("records %+v, problems %+v", out.Records, out.Problems)
	}
	mustServable(t, out.Records)
	got, err := json.Marshal(out.Records[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"record_id":"fda-f-0087-2014","recall_id":"F-0087-2014","recall_type":"food","agency":"FDA","status":"archived",` +
		`"event_date":"2013-10-07","recall_date":"2013-11-06","translations":{"en":{` +
		`"title":"Pringles(R) SALT \u0026 VINEGAR Potato Chips, 168 g (UPC 064100852464) and 181 g (UPC 037000230090), Pringles Manufacturing…",` +
		`"product_description":"Pringles(R) SALT \u0026 VINEGAR Potato Chips, 168 g (UPC 064100852464) and 181 g (UPC 037000230090), Pringles Manufacturing Company, 1306 Highway 70 Bypass, Jackson, TN, USA 38301-5072",` +
		`"hazard_description":"There was a change in Canadian labeling regulations where lactose was no longer sufficient, the label needed to stated \"contains milk\""}},` +
		`"fetched_at":"","hazard_class":"class_2","recalling_firm":"Kellogg Canada Corporate Office","allergens":["milk"],` +
		`"companies":["Kellogg Canada Corporate Office"],"distribution":["Canada"],"place_of_origin":"Mississauga, Ontario, Canada",` +
		`"units_sold":"182, 000 cases of 14 units","upc":"064100852464"}`
	if string(got) != want {
		t.Errorf("record\n got %s\nwant %s", got, want)
	}
}

// result is kellogg with some fields replaced (a value of nil removes the
// key).
func result(t *testing.T, set map[string]any) string {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal([]byte(kellogg), &r); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if v == nil {
			delete(r, k)
		} else {
			r[k] = v
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNormalize_Fields: openFDA's missing values, its dates and its
// vocabularies, one result at a time.
func TestNormalize_Fields(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     map[string]any
		check   func(r *rappel.Record) bool
		problem string // the start of the one problem wanted, or ""
	}{
		{"NAIsMissing", map[string]any{"distribution_pattern": "N/A", "state": "N/A", "product_quantity": "n/a", "recalling_firm": ""},
			func(r *rappel.Record) bool {
				return r.Distribution == nil && r.PlaceOfOrigin == "Mississauga, Canada" && r.UnitsSold == "" && r.RecallingFirm == "" && r.Companies == nil
			}, ""},
		{"NoInitiationDate", map[string]any{"recall_initiation_date": "N/A"},
			func(r *rappel.Record) bool { return r.EventDate == "2013-11-06" && r.RecallDate == "2013-11-06" }, ""},
		{"NoReportDate", map[string]any{"report_date": nil},
			func(r *rappel.Record) bool { return r.EventDate == "2013-10-07" && r.RecallDate == "2013-10-07" }, ""},
		{"OnlyClassificationDate", map[string]any{"report_date": "", "recall_initiation_date": nil},
			func(r *rappel.Record) bool { return r.EventDate == "2013-10-30" && r.RecallDate == "2013-10-30" }, ""},
		{"NoDate", map[string]any{"report_date": "", "recall_initiation_date": nil, "center_classification_date": "N/A"}, nil,
			"Result 1 of food.json was skipped: it has none of recall_initiation_date"},
		{"BadDate", map[string]any{"report_date": "2013-11-06"}, nil,
			"Result 1 of food.json was skipped: its report_date '2013-11-06' is not a date written YYYYMMDD."},
		{"ImpossibleDate", map[string]any{"report_date": "20130231"}, nil,
			"Result 1 of food.json was skipped: its report_date '20130231'"},
		{"Ongoing", map[string]any{"status": "Ongoing"}, func(r *rappel.Record) bool { return r.Status == rappel.StatusActive }, ""},
		{"Completed", map[string]any{"status": "Completed"}, func(r *rappel.Record) bool { return r.Status == rappel.StatusArchived }, ""},
		{"UnknownStatus", map[string]any{"status": "Pending"}, func(r *rappel.Record) bool { return r.Status == rappel.StatusActive },
			"The status 'Pending' of result 1 of food.json is not Ongoing, Terminated or Completed; the record was kept as active."},
		{"Drugs", map[string]any{"product_type": "Drugs"}, func(r *rappel.Record) bool { return r.RecallType == rappel.TypeHealthProduct }, ""},
		{"Devices", map[string]any{"product_type": "Devices"}, func(r *rappel.Record) bool { return r.RecallType == rappel.TypeMedicalDevice }, ""},
		{"Biologics", map[string]any{"product_type": "Biologics"}, func(r *rappel.Record) bool { return r.RecallType == rappel.TypeHealthProduct }, ""},
		{"Veterinary", map[string]any{"product_type": "Veterinary"}, func(r *rappel.Record) bool { return r.RecallType == rappel.TypeHealthProduct }, ""},
		{"Tobacco", map[string]any{"product_type": "Tobacco"}, func(r *rappel.Record) bool { return r.RecallType == rappel.TypeConsumerProduct }, ""},
		{"UnknownType", map[string]any{"product_type": "Cosmetics"}, nil,
			"Result 1 of food.json was skipped: its product_type 'Cosmetics' is not one of Food, Drugs, Devices"},
		{"ClassI", map[string]any{"classification": "Class I"}, func(r *rappel.Record) bool { return r.HazardClass == "class_1" }, ""},
		{"ClassIII", map[string]any{"classification": "Class III"}, func(r *rappel.Record) bool { return r.HazardClass == "class_3" }, ""},
		{"NotYetClassified", map[string]any{"classification": "Not Yet Classified"}, func(r *rappel.Record) bool { return r.HazardClass == "" }, ""},
		{"UnknownClass", map[string]any{"classification": "Class IV"}, func(r *rappel.Record) bool { return r.HazardClass == "" },
			"The classification 'Class IV' of result 1 of food.json is not Class I, II or III"},
		{"NoRecallNumber", map[string]any{"recall_number": nil}, nil, "Result 1 of food.json was skipped: it has no recall_number."},
		{"NARecallNumber", map[string]any{"recall_number": "N/A"}, nil, "Result 1 of food.json was skipped: it has no recall_number."},
		{"BadRecallNumber", map[string]any{"recall_number": "F 0087/2014"}, nil, "Result 1 of food.json was skipped: its recall_number 'F 0087/2014' does not make a record_id"},
		{"NotAReport", map[string]any{"recall_number": 87}, nil, "Result 1 of food.json was skipped: it is not an enforcement report"},
		{"NoBarcode", map[string]any{"product_description": "Potato chips, SUPC #4351050", "code_info": "UPC 064100852465"},
			func(r *rappel.Record) bool {
				return r.UPC == "" && r.Translations.EN.Title == "Potato chips, SUPC #4351050"
			}, ""},
		{"NoAllergenTalk", map[string]any{"reason_for_recall": "Peanut butter may be contaminated with Salmonella."},
			func(r *rappel.Record) bool { return r.Allergens == nil }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := guesttest.MustRun(t, fstest.MapFS{"food.json": {Data: doc(result(t, tc.set))}}, openfda.Normalize)
			mustServable(t, out.Records)
			switch {
			case tc.check == nil && len(out.Records) != 0:
				t.Errorf("got a record, want none: %+v", out.Records[0])
			case tc.check != nil && (len(out.Records) != 1 || !tc.check(out.Records[0])):
				t.Errorf("records %+v", out.Records)
			}
			var reasons []string
			for _, p := range out.Problems {
				if p.Source != openfda.Source {
					t.Errorf("problem %+v names another source", p)
				}
				reasons = append(reasons, p.Reason)
			}
			if tc.problem == "" && len(reasons) != 0 || tc.problem != "" && (len(reasons) != 1 || !strings.HasPrefix(reasons[0], tc.problem)) {
				t.Errorf("problems %q, want one starting %q", reasons, tc.problem)
			}
		})
	}
}

// TestNormalize_Unusable: a document that is not a list of results fails
// the run with a sentence naming it, so the node keeps its last good data.
func TestNormalize_Unusable(t *testing.T) {
	for _, tc := range []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"ErrorBody", fstest.MapFS{"drug.json": {Data: []byte(`{"error": {"code": "NOT_FOUND", "message": "No matches found!"}}`)}},
			"the document drug.json is an openFDA error response (NOT_FOUND: No matches found!) rather than results"},
		{"NoResults", fstest.MapFS{"food.json": {Data: []byte(`{"meta": {}}`)}}, `the document food.json has no "results" list`},
		{"ResultsNotAList", fstest.MapFS{"food.json": {Data: []byte(`{"results": {}}`)}}, "the document food.json is not an openFDA API response"},
		{"NotJSON", fstest.MapFS{"food.json": {Data: []byte(`<html>Service Unavailable</html>`)}}, "the document food.json is not an openFDA API response"},
		{"AnArray", fstest.MapFS{"food.json": {Data: []byte(`[]`)}}, "the document food.json is not an openFDA API response"},
		{"NoDocument", fstest.MapFS{"notes.txt": {Data: []byte(`x`)}}, "no .json document was given under /in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fsys["a-good.json"] = &fstest.MapFile{Data: doc(kellogg)}
			if tc.name == "NoDocument" {
				delete(tc.fsys, "a-good.json")
			}
			out := guesttest.Run(tc.fsys, openfda.Normalize)
			if !strings.HasPrefix(out.Err, tc.want) {
				t.Errorf("error %q, want one starting %q", out.Err, tc.want)
			}
		})
	}
}

// realDocuments is the real sample as the manifest's documents.
func realDocuments(tb testing.TB) fstest.MapFS {
	tb.Helper()
	fsys := fstest.MapFS{}
	for name, b := range fdatest.RealDocuments(tb) {
		fsys[name] = &fstest.MapFile{Data: b}
	}
	return fsys
}

// wantReal checks the records of the real sample's 15 results.
func wantReal(t *testing.T, recs []*rappel.Record) {
	t.Helper()
	if len(recs) != 15 {
		t.Fatalf("%d records, want 15", len(recs))
	}
	mustServable(t, recs)
	types := map[string]int{}
	for _, r := range recs {
		types[r.RecallType]++
	}
	if types[rappel.TypeFood] != 10 || types[rappel.TypeHealthProduct] != 5 {
		t.Errorf("recall types %v, want food ×10 and health_product ×5", types)
	}
	i := slices.IndexFunc(recs, func(r *rappel.Record) bool { return r.RecordID == "fda-f-0087-2014" })
	if i < 0 {
		t.Fatal("no record fda-f-0087-2014, the Kellogg recall")
	}
	if k := recs[i]; !slices.Equal(k.Allergens, []string{"milk"}) || k.UPC != "064100852464" {
		t.Errorf("fda-f-0087-2014 has allergens %q and upc %q, want milk and 064100852464", k.Allergens, k.UPC)
	}
}

// TestNormalize_Real maps the real sample natively.
func TestNormalize_Real(t *testing.T) {
	out := guesttest.MustRun(t, realDocuments(t), openfda.Normalize)
	if len(out.Problems) != 0 {
		t.Errorf("problems: %+v", out.Problems)
	}
	wantReal(t, out.Records)
}

// TestPlugin_Real builds the plugin to Wasm and runs it through the real
// host on the real sample, as a node would run it: the host must accept
// every record. A document that is an error response must fail the run.
func TestPlugin_Real(t *testing.T) {
	ctx := context.Background()
	h := plugins.NewHost()
	h.Timeout = time.Minute
	h.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := h.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	p, err := h.Load(ctx, openfda.Source, plugintest.Build(t, "./plugins/examples/openfda/wasm"))
	if err != nil {
		t.Fatal(err)
	}
	docs := realDocuments(t)
	res, err := p.Run(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	v := plugins.Judge(openfda.Source, res, false)
	if v.Refused != 0 || len(v.Problems) != 0 {
		t.Fatalf("the host refused %d records; problems %+v", v.Refused, v.Problems)
	}
	wantReal(t, v.Records)

	docs["drug.json"] = &fstest.MapFile{Data: []byte(`{"error": {"code": "SERVER_ERROR", "message": "Check your request and try again"}}`)}
	if _, err := p.Run(ctx, docs); err == nil || !strings.Contains(err.Error(), "document drug.json is an openFDA error response") {
		t.Errorf("run on an error response: %v, want the plugin's fatal sentence", err)
	}
}

// TestManifest: manifest.json is JSON with the fields the node reads, and
// names the agency and the source the plugin's records use.
func TestManifest(t *testing.T) {
	b, err := os.ReadFile("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("manifest.json is not JSON: %v", err)
	}
	for _, f := range []string{"source", "agency", "record_id_prefix", "documents", "conditional_get", "interval", "merge"} {
		if _, ok := m[f]; !ok {
			t.Errorf("manifest.json has no %q", f)
		}
	}
	if len(m) != 7 {
		t.Errorf("manifest.json has %d fields, want 7: %v", len(m), m)
	}
	agency, _ := m["agency"].(map[string]any)
	if m["source"] != openfda.Source || m["record_id_prefix"] != "fda-" || agency["name"] != openfda.Agency || agency["name"] != fda.Name || agency["en"] != fda.EN || agency["fr"] != fda.FR {
		t.Errorf("manifest.json names source %v, prefix %v, agency %v; want %s, fda-, %+v", m["source"], m["record_id_prefix"], agency, openfda.Source, fda)
	}
	if m["conditional_get"] != true || m["interval"] != "1h" || m["merge"] != "own" {
		t.Errorf("conditional_get %v, interval %v, merge %v", m["conditional_get"], m["interval"], m["merge"])
	}
	docs, _ := m["documents"].([]any)
	var names []string
	for _, d := range docs {
		d, _ := d.(map[string]any)
		u, err := url.Parse(fmtString(d["url"]))
		if err != nil || u.Scheme != "https" || u.Host != "api.fda.gov" || d["format"] != "json" || d["max_bytes"] != float64(64<<20) {
			t.Errorf("document %v", d)
		}
		names = append(names, fmtString(d["name"]))
	}
	if !slices.Equal(names, []string{"food.json", "drug.json"}) {
		t.Errorf("documents %q, want food.json and drug.json", names)
	}
}

func fmtString(v any) string {
	s, _ := v.(string)
	return s
}

// FuzzNormalize: any document gives records the host accepts, problems
// with a reason, or an error; never a panic.
func FuzzNormalize(f *testing.F) {
	f.Add(doc(kellogg))
	f.Add(doc(`{"recall_number": "D-1", "product_type": "Drugs", "report_date": "20200101", "product_description": "UPC: 0 60383 70928 0"}`, `{}`, `null`, `7`))
	f.Add([]byte(`{"error": {"code": "NOT_FOUND"}}`))
	f.Add([]byte(`{"results": [{"recall_number": "Z-0001-2020", "product_type": "Devices", "status": "Ongoing", "recall_initiation_date": "20200229", "reason_for_recall": "undeclared tree nuts, sesame seeds and soy"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := guesttest.Run(fstest.MapFS{"food.json": {Data: data}}, openfda.Normalize)
		mustServable(t, out.Records)
		for _, r := range out.Records {
			if !strings.HasPrefix(r.RecordID, "fda-") || r.Agency != openfda.Agency {
				t.Fatalf("record %s of agency %s", r.RecordID, r.Agency)
			}
		}
		for _, p := range out.Problems {
			if p.Reason == "" {
				t.Fatalf("problem without a reason: %+v", p)
			}
		}
	})
}
