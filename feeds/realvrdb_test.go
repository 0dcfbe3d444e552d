package feeds_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/kv/kvtest"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

// tcRecall is what Transport Canada's CSV says of one recall, read with
// encoding/csv: what its record must hold.
type tcRecall struct {
	number, firstMake, manufacturer, mfrNumbers string
	units                                       int
	date, updated                               string
	commentEN, commentFR                        string
	models                                      []rappel.VehicleModel
}

// readTCRecalls reads the CSV's rows by header name and gathers them by
// recall number.
func readTCRecalls(t *testing.T, data []byte) map[string]*tcRecall {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	out := map[string]*tcRecall{}
	for _, row := range rows[1:] {
		get := func(name string) string { return row[col[name]] }
		n := get("RECALL_NUMBER_NUM")
		r := out[n]
		if r == nil {
			units, err := strconv.Atoi(strings.TrimSuffix(strings.ReplaceAll(get("UNIT_AFFECTED_NBR"), ",", ""), ".00"))
			if err != nil {
				t.Fatalf("recall %s: UNIT_AFFECTED_NBR %q", n, get("UNIT_AFFECTED_NBR"))
			}
			r = &tcRecall{number: n, firstMake: get("MAKE_NAME_NM"), manufacturer: get("MANUFACTURER_NAME_NM"),
				mfrNumbers: get("MANUFACTURER_RECALL_NO_TXT"), units: units, date: get("RECALL_DATE_DTE"), updated: get("LAST_UPDATE_DATE"),
				commentEN: get("COMMENT_ETXT"), commentFR: get("COMMENT_FTXT")}
			out[n] = r
		}
		year, err := strconv.Atoi(get("YEAR"))
		if err != nil {
			t.Fatalf("recall %s: YEAR %q", n, get("YEAR"))
		}
		m := rappel.VehicleModel{Make: guest.CleanText(get("MAKE_NAME_NM")), Model: guest.CleanText(get("MODEL_NAME_NM")), Year: year}
		if !slices.Contains(r.models, m) {
			r.models = append(r.models, m)
		}
	}
	return out
}

// TestRefresh_RealVRDB serves Transport Canada's own daily extract from an
// upstream to the shipped vrdb plugin, through the refresher into Pebble,
// the read index and the API: every recall comes out, from every row, with
// its units, make, manufacturer, every model year, its dates and its whole
// comment in both languages, and each of its manufacturer recall numbers
// finds it.
func TestRefresh_RealVRDB(t *testing.T) {
	data := guesttest.RealSample(t, "tc-vrdb-daily-sample.csv")
	want := readTCRecalls(t, data)
	up := feedstest.NewUpstream(t)
	up.Set("/tc/vrdb.csv", data)
	stack := refreshReal(t, map[string]string{"vrdb": vrdbPkg}, feeds.VRDB(up.URL+"/tc/vrdb.csv"))
	st := stack.r.States()[0]
	t.Logf("vrdb: %d records, %d rows or values rejected", st.Records, st.Rejected)
	if st.LastError != "" || st.Rejected != 0 || len(st.Problems) != 0 || st.Records != len(want) || len(want) != 104 {
		t.Fatalf("state %+v; want all 104 recalls of the CSV and no problem", st)
	}
	get := stack.get

	var page struct {
		Count   int             `json:"count"`
		Results []rappel.Record `json:"results"`
	}
	get("/recall?recall_agency="+url.QueryEscape(rappel.AgencyTransportCanada)+"&limit=500", &page)
	if page.Count != len(want) || len(page.Results) != len(want) {
		t.Fatalf("GET /recall found %d Transport Canada recalls (%d results), want %d", page.Count, len(page.Results), len(want))
	}
	for _, rec := range page.Results {
		w := want[rec.RecallID]
		if w == nil {
			t.Errorf("%s is no recall of the CSV", rec.RecordID)
			continue
		}
		var one rappel.Record
		get("/recall/"+rec.RecordID, &one)
		if one.RecordID != rec.RecordID || one.Manufacturer != rec.Manufacturer || len(one.AffectedModels) != len(rec.AffectedModels) {
			t.Errorf("GET /recall/%s differs from its search result", rec.RecordID)
		}
		checkTCRecord(t, &rec, w)

		for _, n := range rappel.RecallNumbers(w.mfrNumbers) {
			var found struct {
				Results []rappel.Record `json:"results"`
			}
			get("/recall?limit=50&q="+url.QueryEscape(`"`+n+`"`), &found)
			if !slices.ContainsFunc(found.Results, func(r rappel.Record) bool { return r.RecordID == rec.RecordID }) {
				t.Errorf("q=%q does not find %s, whose manufacturer recall numbers are %q", n, rec.RecordID, w.mfrNumbers)
			}
		}
	}

	// A tire recall lists its tires as products too.
	var prod struct {
		ProductList []rappel.Product `json:"product_list"`
	}
	get("/recall/products?id=2022638", &prod)
	if len(prod.ProductList) != 2 || prod.ProductList[0].Name != "BRIDGESTONE ALENZA SPORT A/S 235/55R20" {
		t.Errorf("products of the tire recall 2022638: %+v", prod.ProductList)
	}
}

// checkTCRecord compares a served record with what the CSV says of its
// recall.
func checkTCRecord(t *testing.T, rec *rappel.Record, w *tcRecall) {
	t.Helper()
	models := slices.Clone(w.models)
	slices.SortFunc(models, func(a, b rappel.VehicleModel) int {
		return cmp.Or(cmp.Compare(a.Make, b.Make), cmp.Compare(a.Model, b.Model), cmp.Compare(a.Year, b.Year))
	})
	switch {
	case rec.UnitsAffected == nil || *rec.UnitsAffected != w.units:
		t.Errorf("%s: units_affected %v, the CSV says %d", rec.RecordID, rec.UnitsAffected, w.units)
	case rec.VehicleMake != guest.CleanText(w.firstMake):
		t.Errorf("%s: vehicle_make %q, the CSV's first row says %q", rec.RecordID, rec.VehicleMake, w.firstMake)
	case rec.Manufacturer != guest.CleanText(w.manufacturer):
		t.Errorf("%s: manufacturer %q, the CSV says %q", rec.RecordID, rec.Manufacturer, w.manufacturer)
	case !slices.Equal(rec.AffectedModels, models):
		t.Errorf("%s: affected_models %v, the CSV's rows say %v", rec.RecordID, rec.AffectedModels, models)
	case rec.EventDate != w.date || rec.LastUpdated != w.updated:
		t.Errorf("%s: event_date %s, last_updated %s; the CSV says %s, %s", rec.RecordID, rec.EventDate, rec.LastUpdated, w.date, w.updated)
	case rec.ManufacturerRecallNumber != guest.CleanText(w.mfrNumbers):
		t.Errorf("%s: manufacturer_recall_number %q, the CSV says %q", rec.RecordID, rec.ManufacturerRecallNumber, w.mfrNumbers)
	case rec.Translations.EN == nil || rec.Translations.EN.HazardDescription != guest.CleanText(w.commentEN):
		t.Errorf("%s: English hazard_description is not the whole COMMENT_ETXT", rec.RecordID)
	case rec.Translations.FR == nil || rec.Translations.FR.HazardDescription != guest.CleanText(w.commentFR):
		t.Errorf("%s: French hazard_description is not the whole COMMENT_FTXT", rec.RecordID)
	}
	// The comment is whole: its last line, after every line break of the
	// CSV, is served.
	lines := strings.Split(strings.TrimSpace(w.commentEN), "\n")
	if last := guest.CleanText(lines[len(lines)-1]); rec.Translations.EN != nil && !strings.HasSuffix(rec.Translations.EN.HazardDescription, last) {
		t.Errorf("%s: the comment's last line %q is not served", rec.RecordID, lines[len(lines)-1])
	}
}

// realStack is a refresher over a real store and real plugins, with the
// read index it feeds and the API over HTTP in front of it.
type realStack struct {
	r   *feeds.Refresher
	get func(path string, v any) // GET with a key; fails the test unless 200 and JSON
	// try is get returning the status, failing the test only on a body
	// of 200 that is not JSON.
	try func(path string, v any) int
}

// refreshReal opens a store, the shipped plugins of pkgs (by source), a
// refresher of sources and the API behind its index, and refreshes once.
func refreshReal(t *testing.T, pkgs map[string]string, sources ...*feeds.Source) *realStack {
	t.Helper()
	ctx := context.Background()
	store := kvtest.Open(t)
	norm := &hostNormalizer{tb: t, host: MustOpenHost(t), plugins: map[string]*plugins.Plugin{}, runs: map[string]int{}, emitted: map[string]int{}}
	for source, pkg := range pkgs {
		norm.Use(source, pkg)
	}
	idx := MustIndex(t, store)
	catalog := idx.Catalog
	r := feeds.NewRefresher(store, norm, sources...)
	r.Logger = slog.New(slog.DiscardHandler)
	r.Fetcher.Logger = r.Logger
	r.ActivePlugin = norm.Active
	r.Listeners = []rappel.ChangeListener{idx}
	if err := r.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}

	srv := edge.NewServer()
	srv.Catalog = catalog
	srv.Keys = edge.NewStaticKeys([]string{"k"})
	srv.Logger = slog.New(slog.DiscardHandler)
	api := httptest.NewServer(srv.Handler())
	t.Cleanup(api.Close)
	try := func(path string, v any) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, api.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Gateway-Key", "k")
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
			return resp.StatusCode
		}
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return resp.StatusCode
	}
	get := func(path string, v any) {
		t.Helper()
		if code := try(path, v); code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
	}
	return &realStack{r: r, get: get, try: try}
}
