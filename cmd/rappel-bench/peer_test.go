package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

// peerRecords are a few records covering every class of the query set.
func peerRecords() []*rappel.Record {
	tr := func(title, desc string) *rappel.Translation {
		return &rappel.Translation{Title: title, ProductDescription: desc}
	}
	return []*rappel.Record{
		{RecordID: "hc-1", RecallID: "1", RecallType: "food", Agency: "CFIA", EventDate: "2024-03-01",
			Translations: rappel.Translations{EN: tr("Cheese recalled due to Listeria", "Cheddar cheese"), FR: tr("Fromage rappelé en raison de Listeria", "Fromages cheddar")},
			ProductList:  []rappel.Product{{Name: "Cheddar", UPC: testUPC}}},
		{RecordID: "hc-2", RecallID: "2", RecallType: "food", Agency: "CFIA", EventDate: "2024-02-01",
			Translations: rappel.Translations{EN: tr("Soft cheese recalled due to Salmonella", "")}},
		{RecordID: "tc-3", RecallID: "3", RecallType: "vehicle", Agency: "Transport Canada", EventDate: "2023-01-01",
			Translations:   rappel.Translations{EN: tr("Brake failure", "")},
			AffectedModels: []rappel.VehicleModel{{Make: "TOYOTA", Model: "CAMRY", Year: 2010}}},
		{RecordID: "hc-4", RecallID: "4", RecallType: "consumer_product", Agency: "Health Canada", EventDate: "2024-03-01",
			Translations: rappel.Translations{EN: tr("Toaster recalled: pieces of metal", "")}},
	}
}

// testUPC is a UPC-A with its check digit.
var testUPC = "06263931285" + strconv.Itoa(rappel.CheckDigit("06263931285"))

func peerBodies(t *testing.T, recs []*rappel.Record) map[string][]byte {
	bodies := map[string][]byte{}
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		bodies[r.RecordID] = b
	}
	return bodies
}

// TestMain stops pgtest's PostgreSQL server, when a test started one.
func TestMain(m *testing.M) { pgtest.Main(m) }

// eachPeer runs test against each peer, in a subtest that starts it: Bleve,
// SQLite, and PostgreSQL on pgtest's server (that subtest skips when
// PostgreSQL is not installed, and fails then under RAPPEL_CI).
func eachPeer(t *testing.T, test func(*testing.T, *httptest.Server)) {
	for name, start := range map[string]func(*testing.T) *httptest.Server{"bleve": newTestBleve, "postgres": newTestPG, "sqlite": newTestSQLite} {
		t.Run(name, func(t *testing.T) { test(t, start(t)) })
	}
}

// newTestPG loads peerRecords with the real schema into a new database on
// pgtest's server and serves them.
func newTestPG(t *testing.T) *httptest.Server {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	recs := peerRecords()
	if err := loadPG(ctx, pool, recs, peerBodies(t, recs), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newPGPeer(pool).routes())
	t.Cleanup(srv.Close)
	return srv
}

// newTestBleve indexes peerRecords with the real mapping into a scorch
// index on a temporary directory and serves it.
func newTestBleve(t *testing.T) *httptest.Server {
	t.Helper()
	recs := peerRecords()
	bodies := peerBodies(t, recs)
	idx, err := openBleve(filepath.Join(t.TempDir(), "idx"), recs, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	srv := httptest.NewServer(newBlevePeer(idx, recs, bodies).routes())
	t.Cleanup(srv.Close)
	return srv
}

// newTestSQLite loads peerRecords with the real schema into a database
// file in a temporary directory and serves it.
func newTestSQLite(t *testing.T) *httptest.Server {
	t.Helper()
	db, err := openSQLite(filepath.Join(t.TempDir(), "recalls.db"), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	recs := peerRecords()
	if err := loadSQLite(context.Background(), db, recs, peerBodies(t, recs), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newSQLitePeer(db).routes())
	t.Cleanup(srv.Close)
	return srv
}

type testPage struct {
	Count   int `json:"count"`
	Results []struct {
		RecordID string `json:"record_id"`
	} `json:"results"`
	Next *string `json:"next_cursor"`
}

func getJSON(t *testing.T, base, uri string, v any) int {
	t.Helper()
	resp, err := http.Get(base + uri)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v: %s", uri, err, b)
		}
	}
	return resp.StatusCode
}

func ids(p testPage) []string {
	var out []string
	for _, r := range p.Results {
		out = append(out, r.RecordID)
	}
	return out
}

// TestPeer_Search runs the query set's shapes through each peer's HTTP
// handler and index: each must match what rappel's semantics give.
func TestPeer_Search(t *testing.T) {
	eachPeer(t, testSearch)
}

// searchCase is a query string of GET /recall and the record ids it must
// answer, in order, with a count of as many.
type searchCase struct {
	query string
	want  []string
}

// checkSearches runs cases on srv.
func checkSearches(t *testing.T, srv *httptest.Server, cases []searchCase) {
	t.Helper()
	for _, tt := range cases {
		var p testPage
		if code := getJSON(t, srv.URL, "/recall?"+tt.query, &p); code != http.StatusOK {
			t.Errorf("%s: status %d", tt.query, code)
			continue
		}
		if !slices.Equal(ids(p), tt.want) || p.Count != len(tt.want) {
			t.Errorf("%s: %v (count %d), want %v", tt.query, ids(p), p.Count, tt.want)
		}
	}
}

func testSearch(t *testing.T, srv *httptest.Server) {
	checkSearches(t, srv, []searchCase{
		{"", []string{"hc-1", "hc-4", "hc-2", "tc-3"}}, // event_date desc, record_id asc
		{"q=cheese+listeria", []string{"hc-1"}},
		{"q=listeria+OR+salmonella", []string{"hc-1", "hc-2"}},
		{"q=" + url.QueryEscape(`"soft cheese"`), []string{"hc-2"}},
		{"q=" + url.QueryEscape(`"pieces of metal"`), []string{"hc-4"}},
		{"q=cheese+-salmonella", []string{"hc-1"}},
		{"q=recalls", []string{"hc-1", "hc-4", "hc-2"}}, // English stem
		{"q=rappele", []string{"hc-1"}},                 // French, accent folded
		{"q=fromage", []string{"hc-1"}},                 // French stem of "Fromages"
		{"recall_type=vehicle", []string{"tc-3"}},
		{"recall_agency=Health+Canada", []string{"hc-4"}},
		{"issued_after=2024-02-15", []string{"hc-1", "hc-4"}},
		{"q=recalled&recall_type=food&issued_after=2024-01-01&issued_before=2024-02-28", []string{"hc-2"}},
	})
}

func TestPeer_Cursor(t *testing.T) {
	eachPeer(t, testCursor)
}

func testCursor(t *testing.T, srv *httptest.Server) {
	var walked []string
	uri := "/recall?limit=3"
	for range 3 {
		var p testPage
		if code := getJSON(t, srv.URL, uri, &p); code != http.StatusOK {
			t.Fatalf("%s: status %d", uri, code)
		}
		if p.Count != 4 {
			t.Errorf("count %d on a cursor page, want 4", p.Count)
		}
		walked = append(walked, ids(p)...)
		if p.Next == nil {
			break
		}
		uri = "/recall?limit=3&cursor=" + url.QueryEscape(*p.Next)
	}
	if want := []string{"hc-1", "hc-4", "hc-2", "tc-3"}; !slices.Equal(walked, want) {
		t.Errorf("walk %v, want %v", walked, want)
	}
}

func TestPeer_Lookups(t *testing.T) {
	eachPeer(t, testLookups)
}

func testLookups(t *testing.T, srv *httptest.Server) {
	var upc struct {
		GTIN    string         `json:"gtin"`
		Results []lookupResult `json:"results"`
	}
	if code := getJSON(t, srv.URL, "/recall/upc?upc="+testUPC, &upc); code != http.StatusOK || len(upc.Results) != 1 || upc.Results[0].RecordID != "hc-1" {
		t.Errorf("upc: %d %+v", code, upc)
	}
	var vin struct {
		Results []lookupResult `json:"results"`
	}
	if code := getJSON(t, srv.URL, "/recall/vin?vin="+sampleVIN, &vin); code != http.StatusOK || len(vin.Results) != 1 || vin.Results[0].Match != "make_model_year" {
		t.Errorf("vin: %d %+v", code, vin)
	}
	var stats statsBody
	if code := getJSON(t, srv.URL, "/recall/stats?group_by=recall_type&period=all", &stats); code != http.StatusOK ||
		stats.Total != 4 || len(stats.ByType) != 3 || stats.ByType[0] != (statsGroup{"food", 2}) || stats.IssuedAfter != "2023-01-01" {
		t.Errorf("stats: %d %+v", code, stats)
	}
	var rec struct {
		RecordID string `json:"record_id"`
	}
	if code := getJSON(t, srv.URL, "/recall/hc-2", &rec); code != http.StatusOK || rec.RecordID != "hc-2" {
		t.Errorf("record: %d %+v", code, rec)
	}
	if code := getJSON(t, srv.URL, "/recall/hc-9", nil); code != http.StatusNotFound {
		t.Errorf("unknown record: %d, want 404", code)
	}
}

// TestPeerSearchOf checks that a parameter the peers do not implement is
// refused rather than ignored, so that no class silently measures
// something else.
func TestPeerSearchOf(t *testing.T) {
	for _, q := range []string{"sort_by=relevance", "q=%22open", "limit=0", "cursor=!!!", "cursor=YWJj"} {
		r := httptest.NewRequest(http.MethodGet, "/recall?"+q, nil)
		if _, err := peerSearchOf(r); err == nil {
			t.Errorf("peerSearchOf(%s) succeeded", q)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/recall?q=a+OR+b+-c&recall_type=food&limit=7&cursor="+encodeCursor("2024-01-01", "hc-1"), nil)
	s, err := peerSearchOf(r)
	if err != nil {
		t.Fatal(err)
	}
	if s.Limit != 7 || s.RecallType != "food" || s.AfterDate != "2024-01-01" || s.AfterID != "hc-1" || len(s.Query.Clauses) != 2 {
		t.Errorf("peerSearchOf = %+v", s)
	}
}

func TestPGWhere(t *testing.T) {
	q, err := rappel.ParseQuery(`cheese "soft cheese" OR brie -salmonella`)
	if err != nil {
		t.Fatal(err)
	}
	conds, args := pgWhere(&peerSearch{Query: q, RecallType: "food", IssuedAfter: "2020-01-01"})
	got := strings.Join(conds, " AND ")
	for _, want := range []string{
		"tsv @@ ((phraseto_tsquery('rappel_en', $1) || phraseto_tsquery('rappel_fr', $1))",
		"&& (phraseto_tsquery('rappel_en', $2) || phraseto_tsquery('rappel_fr', $2) || phraseto_tsquery('rappel_en', $3) || phraseto_tsquery('rappel_fr', $3))",
		"&& !!(phraseto_tsquery('rappel_en', $4)",
		"recall_type = $5", "event_date >= $6",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("conditions lack %q:\n%s", want, got)
		}
	}
	if want := (sqlArgs{"cheese", "soft cheese", "brie", "salmonella", "food", "2020-01-01"}); !slices.Equal(args, want) {
		t.Errorf("args %v, want %v", args, want)
	}
}

func TestBareHandler(t *testing.T) {
	body := []byte(`{"entity_type":"recall","count":1}`)
	srv := httptest.NewServer(bareHandler(Bodies{"/recall?q=a": body}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/recall?q=a")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(got) != string(body) || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("bare: %d %q %q", resp.StatusCode, got, resp.Header.Get("Content-Type"))
	}
	if resp, err := http.Get(srv.URL + "/recall?q=b"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("bare answered an unrecorded URI: %v %v", resp, err)
	}
}

func TestPickSamples(t *testing.T) {
	recs := peerRecords()
	s := pickSamples(recs)
	if s.RecordID != "tc-3" || s.UPC != testUPC {
		t.Errorf("pickSamples = %+v, want the middle record tc-3 and the UPC of hc-1", s)
	}
	names := map[string]bool{}
	for _, c := range Classes(s) {
		if names[c.Name] {
			t.Errorf("class %s twice", c.Name)
		}
		names[c.Name] = true
		if _, err := url.ParseRequestURI(c.Path); err != nil {
			t.Errorf("class %s: %v", c.Name, err)
		}
	}
	if len(names) != 14 {
		t.Errorf("%d classes, want 14 (the issue's 13 and GET /recall/{record_id})", len(names))
	}
}

func TestSQLiteWhere(t *testing.T) {
	q, err := rappel.ParseQuery(`cheese "soft cheese" OR brie -salmonella F-150`)
	if err != nil {
		t.Fatal(err)
	}
	conds, args := sqliteWhere(&peerSearch{Query: q, RecallType: "food", IssuedBefore: "2020-01-01"})
	got := strings.Join(conds, " AND ")
	for _, want := range []string{
		"id IN (SELECT rowid FROM text_en WHERE text_en MATCH $1 UNION SELECT rowid FROM text_fr WHERE text_fr MATCH $1)",
		"id IN (SELECT rowid FROM text_en WHERE text_en MATCH $2 UNION",
		"id NOT IN (SELECT rowid FROM text_en WHERE text_en MATCH $3 UNION SELECT rowid FROM text_fr WHERE text_fr MATCH $3)",
		"recall_type = $5", "event_date <= $6",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("conditions lack %q:\n%s", want, got)
		}
	}
	if want := (sqlArgs{`"cheese"`, `"soft cheese" OR "brie"`, `"salmonella"`, `"F-150"`, "food", "2020-01-01"}); !slices.Equal(args, want) {
		t.Errorf("args %q, want %q", args, want)
	}
}

// TestSQLite_QueryText checks that what a user types reaches FTS5 as words
// only, as rappel reads them: FTS5's operators, prefix star and column
// filters are not syntax but words (a word the tokenizer splits, such as
// "NEAR(cheese", being the phrase of its parts), and a q of no words is no
// search.
func TestSQLite_QueryText(t *testing.T) {
	var cases []searchCase
	for _, tt := range []struct {
		q    string
		want []string
	}{
		{`NEAR(cheese listeria)`, nil},
		{`en:cheese`, nil},
		{`cheese*`, []string{"hc-1", "hc-2"}},
		{`"pieces of metal" AND`, nil},
		{`-`, []string{"hc-1", "hc-4", "hc-2", "tc-3"}},
		{`"metal pieces"`, nil},
	} {
		cases = append(cases, searchCase{"q=" + url.QueryEscape(tt.q), tt.want})
	}
	checkSearches(t, newTestSQLite(t), cases)
}
