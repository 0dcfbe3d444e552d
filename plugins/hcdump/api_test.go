package hcdump_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// TestAPI_AllergenFromIssue runs the real plugins (Wasm, through the real
// host) over testdata/detail-shapes, testdata/hc-shapes and testdata/tc,
// merges their records as the bundle build does, indexes them and serves
// them through the real edge router over HTTP. hc-72001's only allergen
// evidence is its dump row's Issue, "Peanut" (it has no
// detail document): /recall?allergen=peanut must find it; a notice whose
// Issue names no allergen is found by the allergens its title calls
// undeclared. The dump's Transport Canada rows must be one record each with
// the database's recall, or served alone when the database does not list
// it, and an in-store code printed without its check digit must be
// searchable.
func TestAPI_AllergenFromIssue(t *testing.T) {
	ctx := context.Background()
	h := plugins.NewHost()
	h.InProcess = true
	h.Timeout = time.Minute
	h.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := h.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	root := plugintest.ModuleRoot(t)
	run := func(source, dir string) []*rappel.Record {
		t.Helper()
		p, err := h.Load(ctx, source, plugintest.Build(t, "./plugins/"+source+"/wasm"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Run(ctx, os.DirFS(filepath.Join(root, "testdata", dir)))
		if err != nil {
			t.Fatal(err)
		}
		v := plugins.Judge(source, res, plugins.DefaultPartial()[source])
		if v.Refused != 0 {
			t.Fatalf("the host refused %d of %s's records: %+v", v.Refused, source, v.Refusals)
		}
		return v.Records
	}
	det, dump, tc := run("detail", "detail-shapes"), run("hcdump", "hc-shapes"), run("vrdb", "tc")
	for _, r := range slices.Concat(det, dump, tc) {
		if r.RecordID == "hc-72001" && !slices.Equal(r.Allergens, []string{"peanut"}) {
			t.Fatalf("the plugin gave hc-72001 the allergens %q, want peanut", r.Allergens)
		}
		if r.RecordID != "hc-72001" && slices.Contains(r.Allergens, "peanut") {
			t.Fatalf("%s has peanut too: the test would prove nothing", r.RecordID)
		}
	}
	recs, problems := rappel.Assemble(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), det, dump, tc)
	if len(problems) != 0 {
		t.Fatalf("assembly problems: %+v", problems)
	}
	snap, err := index.Build(recs, rappel.DatasetInfo{UpdatedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Source: "bundle"})
	if err != nil {
		t.Fatal(err)
	}
	catalog := &index.Catalog{}
	catalog.Swap(snap)
	const key = "rk_test_hcdump_api"
	s := edge.NewServer()
	s.Catalog = catalog
	s.Keys = edge.NewStaticKeys([]string{key})
	s.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)

	get := func(t *testing.T, target string) page {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, ts.URL+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Gateway-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", target, resp.StatusCode, body)
		}
		var p page
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatalf("GET %s: %v", target, err)
		}
		return p
	}
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"/recall?allergen=peanut", []string{"hc-72001"}},
		{"/recall?allergen=peanut&lang=fr", []string{"hc-72001"}},
		{"/recall?allergen=milk", []string{"hc-72012", "hc-72013", "hc-72002"}},
		{"/recall?allergen=egg", []string{"hc-72011", "hc-72013", "hc-72002"}}, // 72011 from its title alone
		{"/recall?allergen=sesame", []string{"hc-72012"}},                      // an empty Issue: the title
		{"/recall?q=2024761", []string{"tc-2024761"}},                          // a recall only the dump lists
		{"/recall?allergen=mustard", []string{"hc-72004"}},                     // from a French-only row
		{"/recall?category=Medical%20devices&recall_type=health_product", []string{"hc-72005"}},
		{"/recall?q=2017500", []string{"tc-2017500"}},
		{"/recall?q=%220235278%2000000%22", []string{"hc-71001"}}, // an in-store code without its check digit
		{"/recall?q=0246810", []string{"hc-71002"}},
		{"/recall?category=dairy", []string{"hc-72003", "hc-71001"}}, // 71001's Category joins Meat and poultry and Dairy
	} {
		t.Run(tc.target, func(t *testing.T) {
			if got := get(t, tc.target).ids(); !slices.Equal(got, tc.want) {
				t.Errorf("GET %s found %q, want %q", tc.target, got, tc.want)
			}
		})
	}
	t.Run("OneRecordPerVehicleRecall", func(t *testing.T) {
		p := get(t, "/recall?recall_type=vehicle&limit=100")
		if p.Count != len(tc)+2 {
			t.Errorf("%d vehicle recalls served for the database's %d and the two only the dump lists: %q", p.Count, len(tc), p.ids())
		}
		// The one record has both sources' fields: the dump's address
		// (its row's title only names the recall) and the database's
		// vehicles.
		for _, r := range p.Results {
			if r.RecordID == "tc-2017500" && (r.URLEn != "https://recalls-rappels.canada.ca/en/alert-recall/transport-canada-recall-2017500-chevrolet" || r.VehicleMake != "CHEVROLET") {
				t.Errorf("tc-2017500 is served with url_en %q and vehicle_make %q", r.URLEn, r.VehicleMake)
			}
		}
	})
}

// page is a GET /recall page, decoded as far as these tests read it.
type page struct {
	Count   int `json:"count"`
	Results []struct {
		RecordID    string `json:"record_id"`
		URLEn       string `json:"url_en"`
		VehicleMake string `json:"vehicle_make"`
	} `json:"results"`
}

func (p page) ids() []string {
	var out []string
	for _, r := range p.Results {
		out = append(out, r.RecordID)
	}
	return out
}
