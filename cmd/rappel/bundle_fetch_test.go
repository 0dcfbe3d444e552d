package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/kvtest"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/plugintest"
	"github.com/rappel-ca/rappel/plugins/shipped"
)

// A detail document for one notice of the real dump. No real detail
// document was kept (../shared/real/README.md), so this one is made up;
// every other notice's answers 404, a notice without documents.
const fetchedDetailEN = `{"recallId": "77619", "title": "Braised abalone in brown sauce recalled due to undeclared egg", "url": "https://recalls-rappels.canada.ca/en/alert-recall/braised-abalone-brown-sauce-recalled-due-undeclared-egg", "start_date": 1749772800, "date_published": 1749772800, "category": ["1"], "panels": [{"panelName": "summary", "title": "Summary", "text": "<p>Braised abalone in brown sauce may contain egg, which is not declared on the label.</p>"}]}`

// TestBundle_FetchedFromAgencies builds a bundle with --fetch from an
// upstream on loopback serving the agencies' real files (Health Canada's
// English dump of June 2025, with an empty French one since none of that
// day was kept, and Transport Canada's daily vehicle file), every URL
// carrying a key in its query string. It checks the manifest's provenance
// (kind agencies, every document's address without its query string, its
// SHA-256 and size, every notice's detail documents fetched), that the
// bundle holds the real records and no other, that a node loading it
// serves a dataset of kind agencies, and that the node's first live
// refresh against the same upstream normalizes nothing, fetches no detail
// document and announces no new recall.
func TestBundle_FetchedFromAgencies(t *testing.T) {
	dump := guesttest.RealSample(t, "hc-dump-en-2025-06.json")
	vrdb := guesttest.RealSample(t, "tc-vrdb-daily-sample.csv")
	up := feedstest.NewUpstream(t)
	docs := map[string][]byte{"/hc/recalls-en.json": dump, "/hc/recalls-fr.json": []byte("[]"), "/tc/vrdb.csv": vrdb}
	for p, b := range docs {
		up.Set(p, b)
	}
	up.Set("/detail/en/77619.json", []byte(fetchedDetailEN))
	const key = "?key=secret"
	feedFlags := []string{
		"--feed-hc-en", up.URL + "/hc/recalls-en.json" + key, "--feed-hc-fr", up.URL + "/hc/recalls-fr.json" + key,
		"--feed-tc-vrdb", up.URL + "/tc/vrdb.csv" + key, "--feed-detail", up.URL + "/detail/{lang}/{id}.json" + key,
	}

	pluginsDir, wasm := shippedPlugins(t)
	start := time.Now().Add(-time.Second)
	out, c := fetchBundle(t, pluginsDir, append(feedFlags, "--detail-rate", "0")...)

	// The provenance.
	m, err := bundle.ReadManifest(os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	p := m.Provenance
	if m.Kind() != rappel.DatasetAgencies || p == nil || len(p.Fetched) != len(docs) {
		t.Fatalf("manifest kind %s, provenance %+v; want agencies and the %d documents fetched whole", m.Kind(), p, len(docs))
	}
	for _, d := range p.Fetched {
		path := strings.TrimPrefix(d.URL, up.URL)
		sum := sha256.Sum256(docs[path])
		if strings.ContainsAny(d.URL, "?#") || strings.Contains(d.URL, "secret") || docs[path] == nil ||
			d.SHA256 != hex.EncodeToString(sum[:]) || d.Bytes != int64(len(docs[path])) || d.At.Before(start) {
			t.Errorf("fetched %+v; want its address without the key, its SHA-256 and size, and when", d)
		}
	}
	var rows []map[string]string
	if err := json.Unmarshal(dump, &rows); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{} // every record_id the real files give
	notices := 0             // the notices that have detail documents to fetch
	for _, row := range rows {
		if row["Organization"] == "TC" {
			ids["tc-"+rappel.TransportRecallNumber(row["URL"], row["Title"])] = true
		} else {
			ids["hc-"+row["NID"]] = true
			notices++
		}
	}
	csvRows, err := csv.NewReader(bytes.NewReader(vrdb)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(csvRows[0], "RECALL_NUMBER_NUM")
	for _, row := range csvRows[1:] {
		ids["tc-"+row[col]] = true
	}
	if p.Details != notices || p.DetailsLeft != 0 {
		t.Errorf("details of %d notices fetched, %d left; want all %d", p.Details, p.DetailsLeft, notices)
	}
	if m.BuiltAt.Before(start.Truncate(time.Second)) || m.BuiltAt.After(time.Now()) || m.ReferenceDate != "" {
		t.Errorf("built_at %v, reference date %q; want the fetch's time and no reference date", m.BuiltAt, m.ReferenceDate)
	}

	// The real records, and no generated one.
	var n int
	var abalone *rappel.Record
	if err := bundle.ReadRecords(os.DirFS(out), func(r *rappel.Record) error {
		n++
		if !ids[r.RecordID] {
			t.Errorf("%s (%q) is in none of the real files", r.RecordID, r.Title(rappel.LangEN))
		}
		if r.RecordID == "hc-77619" {
			abalone = r
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != len(ids) || abalone == nil || abalone.Title(rappel.LangEN) != "Braised abalone in brown sauce recalled due to undeclared egg" {
		t.Fatalf("%d records, want the real files' %d; hc-77619 is %+v", n, len(ids), abalone)
	}

	// A node loading it serves the agencies' data, and its first live
	// refresh against the same upstream changes nothing.
	before, after, emitted, newRecalls := firstRefresh(t, out, c, wasm, up)
	if emitted != 0 {
		t.Errorf("the first refresh normalized %d records; want none, the bundle's raw records being the upstream's", emitted)
	}
	if got := up.Requests("/detail/"); len(got) != 0 {
		t.Errorf("the first refresh fetched %d detail documents (%v…); want none", len(got), got[0])
	}
	if len(newRecalls) != 0 {
		t.Errorf("new recalls announced: %+v; want none", newRecalls)
	}
	if changed := changedRecords(before, after); len(changed) != 0 {
		t.Errorf("the first refresh changed %v", changed)
	}

	// With no time for detail documents, every notice is left for the
	// node, whose first refresh fetches them all; what they add is an
	// update, not a new recall.
	t.Run("NoDetailBudget", func(t *testing.T) {
		out, c := fetchBundle(t, pluginsDir, append(feedFlags, "--detail-rate", "0", "--detail-budget", "0")...)
		m, err := bundle.ReadManifest(os.DirFS(out))
		if err != nil {
			t.Fatal(err)
		}
		if p := m.Provenance; p.Details != 0 || p.DetailsLeft != notices {
			t.Errorf("details of %d notices fetched, %d left; want all %d left", p.Details, p.DetailsLeft, notices)
		}
		before, after, _, newRecalls := firstRefresh(t, out, c, wasm, up)
		if got := up.Requests("/detail/"); len(got) != 2*notices {
			t.Errorf("the first refresh fetched %d detail documents; want the %d notices' two each", len(got), notices)
		}
		if len(newRecalls) != 0 {
			t.Errorf("new recalls announced: %+v; want none", newRecalls)
		}
		if changed := changedRecords(before, after); !slices.Equal(changed, []string{"hc-77619"}) {
			t.Errorf("the first refresh changed %v; want hc-77619 alone, the only notice with a detail document", changed)
		}
	})
}

// shippedPlugins builds the shipped plugins into a directory, as make
// does, and returns it with the modules by source.
func shippedPlugins(tb testing.TB) (dir string, wasm map[string][]byte) {
	dir, wasm = tb.TempDir(), map[string][]byte{}
	for name := range shipped.Sources {
		wasm[name] = plugintest.Build(tb, "./plugins/"+name+"/wasm")
		if err := os.WriteFile(filepath.Join(dir, name+".wasm"), wasm[name], 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir, wasm
}

// fetchBundle runs rappel bundle --fetch with flags and returns the
// bundle's directory and the command, as it parsed its flags.
func fetchBundle(tb testing.TB, pluginsDir string, flags ...string) (string, *BundleCommand) {
	tb.Helper()
	out, corpus := tb.TempDir(), filepath.Join(tb.TempDir(), "corpus")
	c := NewBundleCommand()
	if err := c.ParseFlags(append([]string{"--fetch", "--corpus", corpus, "--plugins", pluginsDir, "--out", out, "--log-level", "warn"}, flags...)); err != nil {
		tb.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return out, c
}

// firstRefresh loads the bundle in out into an empty store, checks that
// it is a dataset of the agencies, and runs a first live refresh of the
// feeds c fetched the bundle from, with the shipped plugins run natively.
// It returns the records before and after, how many records the plugins
// emitted and the new recalls announced; up's hits count from the
// refresh on.
func firstRefresh(tb testing.TB, out string, c *BundleCommand, wasm map[string][]byte, up *feedstest.Upstream) (before, after map[string]string, emitted int, announced []rappel.NewRecalls) {
	tb.Helper()
	ctx := context.Background()
	store := kvtest.Open(tb)
	if err := bundle.Load(ctx, os.DirFS(out), store, slog.New(slog.DiscardHandler)); err != nil {
		tb.Fatal(err)
	}
	info, err := store.DatasetInfo(ctx)
	if err != nil || info.Kind != rappel.DatasetAgencies || info.Source != "bundle" || info.Synthetic() {
		tb.Fatalf("dataset info %+v, %v; want a bundle of kind agencies", info, err)
	}
	before = storedRecords(tb, store)

	host := bundleHost(slog.LevelError)
	norm := &nativeNormalizer{plugins: map[string]*plugins.Plugin{}}
	for name, src := range shipped.Sources {
		norm.plugins[name] = host.LoadNative(name, wasm[name], src.Normalize)
	}
	r := feeds.NewRefresher(store, norm, c.Feeds.sources()...) // the bundle's feed URLs, as rappel serve takes them
	r.DetailRate = 0
	r.Logger = slog.New(slog.DiscardHandler)
	r.Fetcher.Logger = r.Logger
	if err := r.Open(ctx); err != nil {
		tb.Fatal(err)
	}
	up.ResetHits()
	if err := r.Refresh(ctx); err != nil {
		tb.Fatal(err)
	}
	for _, st := range r.States() {
		if !st.Live || st.LastError != "" {
			tb.Errorf("%s after the first refresh: %+v", st.Source, st)
		}
	}
	if announced, err = store.NewRecalls(ctx); err != nil {
		tb.Fatal(err)
	}
	return before, storedRecords(tb, store), norm.emitted, announced
}

// changedRecords returns the record_ids whose records differ between
// before and after, or are in one only, in order.
func changedRecords(before, after map[string]string) []string {
	var ids []string
	for id, b := range before {
		if a, ok := after[id]; !ok || a != b {
			ids = append(ids, id)
		}
	}
	for id := range after {
		if _, ok := before[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// storedRecords returns every record of store as JSON, by record_id.
func storedRecords(tb testing.TB, store *kv.Store) map[string]string {
	tb.Helper()
	out := map[string]string{}
	if err := store.ForEachRecord(context.Background(), func(r *rappel.Record) error {
		b, err := json.Marshal(r)
		out[r.RecordID] = string(b)
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	return out
}

// nativeNormalizer runs the shipped plugins natively, as rappel bundle
// does, and counts the records they emit.
type nativeNormalizer struct {
	plugins map[string]*plugins.Plugin
	mu      sync.Mutex
	emitted int
}

func (n *nativeNormalizer) Normalize(ctx context.Context, source string, input fs.FS) (*rappel.Normalized, error) {
	p := n.plugins[source]
	res, err := p.Run(ctx, input)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	n.emitted += len(res.Records)
	n.mu.Unlock()
	return &rappel.Normalized{Records: res.Records, Problems: res.Problems, Plugin: p.SHA256, Duration: res.Duration}, nil
}
