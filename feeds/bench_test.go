package feeds_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/internal/logtest"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/kvtest"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// benchCorpus returns the corpus `make corpus` generated (build/corpus-*),
// or skips the benchmark.
func benchCorpus(b *testing.B) string {
	dirs, _ := filepath.Glob(filepath.Join(plugintest.ModuleRoot(b), "build", "corpus-*", "manifest.json"))
	if len(dirs) == 0 {
		b.Skip("no corpus: run `make corpus` first")
	}
	slices.Sort(dirs)
	return filepath.Dir(dirs[len(dirs)-1])
}

// benchNode is a node under benchmark: a store, its read index behind the
// real HTTP handler, and a refresher of the corpus served upstream.
type benchNode struct {
	b       *testing.B
	ctx     context.Context
	store   *kv.Store
	catalog *index.Catalog
	r       *feeds.Refresher
	handler http.Handler
	logs    *logtest.Buffer
}

// newBenchNode starts a node on up whose store holds the embedded bundle as
// a dataset of bundleKind, or nothing when it is "".
func newBenchNode(b *testing.B, up *feedstest.Upstream, bundleKind string) *benchNode {
	n := &benchNode{b: b, ctx: context.Background(), catalog: &index.Catalog{}, logs: &logtest.Buffer{}}
	n.store = kvtest.Open(b)
	if bundleKind != "" {
		loadEmbeddedAs(b, n.store, bundleKind)
	}
	host := MustOpenHost(b)
	host.Timeout = 5 * time.Minute
	norm := newNormalizer(b, host)
	n.r = feeds.NewRefresher(n.store, norm,
		feeds.HCDump(up.URL+"/hc/recalls-en.json", up.URL+"/hc/recalls-fr.json"),
		feeds.VRDB(up.URL+"/tc/vrdb.csv"),
		feeds.Detail(up.URL+"/detail/{lang}/{id}.json"))
	n.r.DetailRate = 0
	n.r.Deadline = time.Hour
	n.r.ActivePlugin = norm.Active
	n.r.Logger = slog.New(slog.NewTextHandler(n.logs, nil))
	n.r.Fetcher.Logger = slog.New(slog.DiscardHandler)
	idx := MustIndex(b, n.store)
	n.catalog = idx.Catalog
	n.r.Listeners = []rappel.ChangeListener{idx}
	if err := n.r.Open(n.ctx); err != nil {
		b.Fatal(err)
	}
	if err := idx.DataChanged(n.ctx, true); err != nil {
		b.Fatal(err)
	}
	srv := edge.NewServer()
	srv.Catalog = n.catalog
	srv.Keys = edge.NewStaticKeys([]string{"k"})
	srv.Logger = slog.New(slog.DiscardHandler)
	n.handler = srv.Handler()
	return n
}

// loadEmbeddedAs loads the embedded bundle into an empty store, as serve
// does on first start, as a dataset of kind. The benchmarks that diff load
// it as the agencies': the corpus their upstream serves is the one the
// bundle was built from, as `rappel bundle --fetch` builds one from the
// agencies' files. Over a generated bundle the first live refresh is the
// switch, which BenchmarkRefresh_Switch measures.
func loadEmbeddedAs(b *testing.B, store *kv.Store, kind string) {
	ctx := context.Background()
	if _, err := bundle.ReadManifest(bundle.Embedded()); err != nil {
		b.Skipf("no embedded bundle: %v", err)
	}
	if err := bundle.Load(ctx, bundle.Embedded(), store, slog.New(slog.DiscardHandler)); err != nil {
		b.Fatal(err)
	}
	info, err := store.DatasetInfo(ctx)
	if err != nil {
		b.Fatal(err)
	}
	info.Kind = kind
	if err := store.SetDatasetInfo(ctx, info); err != nil {
		b.Fatal(err)
	}
}

// search serves GET /recall?q=recalled&limit=100 and returns its latency.
func (n *benchNode) search(req *http.Request) time.Duration {
	w := httptest.NewRecorder()
	start := time.Now()
	n.handler.ServeHTTP(w, req)
	d := time.Since(start)
	if w.Code != http.StatusOK {
		n.b.Fatalf("search: %d %s", w.Code, w.Body.String()[:min(200, w.Body.Len())])
	}
	return d
}

// searchEvery paces the searches: 200 a second, a steady load rather than
// a saturating one, so that latency is measured, not throughput.
const searchEvery = 5 * time.Millisecond

// latencies searches every searchEvery until stop is closed (or count
// times when stop is nil) and returns the latencies, sorted.
func (n *benchNode) latencies(count int, stop <-chan struct{}) []time.Duration {
	req := httptest.NewRequest(http.MethodGet, "/recall?q=recalled&limit=100", nil)
	req.Header.Set("X-Gateway-Key", "k")
	t := time.NewTicker(searchEvery)
	defer t.Stop()
	var lat []time.Duration
	for i := 0; stop != nil || i < count; i++ {
		lat = append(lat, n.search(req))
		select {
		case <-stop:
			slices.Sort(lat)
			return lat
		case <-t.C:
		}
	}
	slices.Sort(lat)
	return lat
}

func pct(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	return lat[min(len(lat)-1, int(float64(len(lat))*p))]
}

// refreshWhileSearching refreshes once while searching without pause, and
// returns the refresh's duration and the searches' latencies.
func (n *benchNode) refreshWhileSearching() (time.Duration, []time.Duration) {
	stop := make(chan struct{})
	done := make(chan []time.Duration)
	go func() { done <- n.latencies(0, stop) }()
	start := time.Now()
	err := n.r.Refresh(n.ctx)
	took := time.Since(start)
	close(stop)
	lat := <-done
	if err != nil {
		n.b.Fatal(err)
	}
	return took, lat
}

// BenchmarkRefresh measures, on the corpus `make corpus` generates (41,000
// records; 40k + 36k dump rows, 59k CSV rows, 49k detail documents)
// served by a local upstream, through the real plugins with runaway
// protection on, into Pebble and the read index:
//
//   - FullIngest: a node whose store holds the embedded bundle (built from
//     that corpus) takes its first live refresh of all 41,000 records;
//   - NotModified: ten refreshes where every upstream answers 304;
//   - FewChanged: a refresh where 10 rows of the English dump changed;
//   - search latency (GET /recall?q=recalled, 100 results, in process, 200
//     searches a second) at rest (before and after) and during each
//     refresh.
//
// Run it once: go test -run '^$' -bench 'BenchmarkRefresh$' -benchtime 1x -timeout 60m ./feeds/
func BenchmarkRefresh(b *testing.B) {
	up := corpusUpstream(b)
	n := newBenchNode(b, up, rappel.DatasetAgencies)
	atRest := func(b *testing.B) {
		for b.Loop() {
			runtime.GC()
			lat := n.latencies(3000, nil)
			b.ReportMetric(float64(pct(lat, 0.5).Microseconds()), "search-p50-µs")
			b.ReportMetric(float64(pct(lat, 0.99).Microseconds()), "search-p99-µs")
		}
	}
	b.Run("SearchAtRest", atRest)
	b.Run("FullIngest", func(b *testing.B) {
		for b.Loop() {
			n.fullIngest(b)
		}
	})
	b.Run("NotModified", func(b *testing.B) {
		for b.Loop() {
			var all []time.Duration
			var worst time.Duration
			for range 10 {
				took, lat := n.refreshWhileSearching()
				worst = max(worst, took)
				all = append(all, lat...)
			}
			slices.Sort(all)
			b.ReportMetric(worst.Seconds(), "s/refresh-max")
			b.ReportMetric(float64(pct(all, 0.99).Microseconds()), "search-p99-µs")
			b.Logf("10 refreshes answered 304: slowest %s; search during them: p50 %s, p99 %s over %d\n%s", worst.Round(time.Millisecond),
				pct(all, 0.5), pct(all, 0.99), len(all), n.logs.Take("msg=refresh"))
		}
	})
	b.Run("FewChanged", func(b *testing.B) {
		for b.Loop() {
			en := up.Doc("/hc/recalls-en.json")
			// Flip the archived flag of the first 10 rows that have one.
			changed := en
			for range 10 {
				changed = bytes.Replace(changed, []byte(`"Archived":"0"}`), []byte(`"Archived":"X"}`), 1)
			}
			changed = bytes.ReplaceAll(changed, []byte(`"Archived":"X"}`), []byte(`"Archived":"1"}`))
			up.Set("/hc/recalls-en.json", changed)
			took, lat := n.refreshWhileSearching()
			b.ReportMetric(took.Seconds(), "s/refresh")
			b.ReportMetric(float64(pct(lat, 0.99).Microseconds()), "search-p99-µs")
			b.Logf("refresh with 10 dump rows changed: %s; search during it: p50 %s, p99 %s over %d\n%s", took.Round(time.Millisecond),
				pct(lat, 0.5), pct(lat, 0.99), len(lat), n.logs.Take("msg=refresh"))
			up.Set("/hc/recalls-en.json", en)
			if err := n.r.Refresh(n.ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SearchAtRestAfter", atRest)
}

// BenchmarkRefresh_Cold measures the first refresh of a node with an empty
// store: every record of the corpus fetched (49k detail documents among
// them, unthrottled) and normalized through the plugins.
//
// Run it once: go test -run '^$' -bench 'BenchmarkRefresh_Cold$' -benchtime 1x -timeout 60m ./feeds/
func BenchmarkRefresh_Cold(b *testing.B) {
	up := corpusUpstream(b)
	for b.Loop() {
		n := newBenchNode(b, up, "")
		n.fullIngest(b)
	}
}

// corpusUpstream serves the corpus.
func corpusUpstream(b *testing.B) *feedstest.Upstream {
	dir := benchCorpus(b)
	up := feedstest.NewUpstream(b)
	up.LoadDir(b, "/hc", filepath.Join(dir, "hc"))
	up.LoadDir(b, "/tc", filepath.Join(dir, "tc"))
	up.LoadDir(b, "/detail", filepath.Join(dir, "detail"))
	return up
}

// fullIngest refreshes once, searching meanwhile, and reports.
func (n *benchNode) fullIngest(b *testing.B) {
	took, lat := n.refreshWhileSearching()
	b.ReportMetric(took.Seconds(), "s/refresh")
	b.ReportMetric(float64(n.catalog.Current().Len()), "records")
	b.ReportMetric(float64(pct(lat, 0.99).Microseconds()), "search-p99-µs")
	b.Logf("ingest %s, %d records served; search during it: p50 %s, p99 %s over %d\n%s", took.Round(time.Millisecond),
		n.catalog.Current().Len(), pct(lat, 0.5), pct(lat, 0.99), len(lat), n.logs.Take("msg=refresh"))
}

// BenchmarkRefresh_Switch measures the switch: the first live refresh over
// the generated bundle, whose upstream here has every record_id the bundle
// has (the worst case: nothing can be told apart by id), so the whole store
// is replaced by what the dump and the vehicle file yield, then the detail
// documents of every notice fetched (unthrottled) as they are for a node
// that never had them.
//
// Run it once: go test -run '^$' -bench 'BenchmarkRefresh_Switch$' -benchtime 1x -timeout 60m ./feeds/
func BenchmarkRefresh_Switch(b *testing.B) {
	up := corpusUpstream(b)
	for b.Loop() {
		n := newBenchNode(b, up, rappel.DatasetSynthetic)
		n.fullIngest(b)
		if info, err := n.store.DatasetInfo(n.ctx); err != nil || info.Synthetic() {
			b.Fatalf("after the switch the dataset is %+v (%v)", info, err)
		}
	}
}

// BenchmarkRefresh_Visible measures how soon a change upstream is served,
// on the corpus `make corpus` generates served by a local upstream, a node
// whose store holds the embedded bundle and whose read index follows it
// through segment files (as serve's), detail documents at the default rate
// (10 a second) and budget:
//
//   - Takeover: the first live refresh over the bundle, and the detail
//     documents it fetched (none: the bundle has the corpus's);
//   - Archive100, Archive1000: that many notices archived in the English
//     dump; the seconds from the refresh's start until the read index
//     serves every one archived (visible-s), until the refresh ends, its
//     notices' detail documents fetched after (refresh-s), and how many;
//   - Reserialized: both dumps written again by another JSON writer (every
//     "/" and non-ASCII character escaped, other key order, whitespace and
//     entity spelling), and the CSV quoted otherwise: the refresh's
//     seconds, the detail documents it fetched and the records it changed
//     (none of either).
//
// Run it once: go test -run '^$' -bench 'BenchmarkRefresh_Visible$' -benchtime 1x -timeout 60m ./feeds/
func BenchmarkRefresh_Visible(b *testing.B) {
	up := corpusUpstream(b)
	n := newBenchNode(b, up, rappel.DatasetAgencies)
	n.followWithSegments(b)
	n.r.DetailRate = 10
	const en = "/hc/recalls-en.json"
	b.Run("Takeover", func(b *testing.B) {
		for b.Loop() {
			up.ResetHits()
			took, _ := n.refreshWhileSearching()
			b.ReportMetric(took.Seconds(), "refresh-s")
			b.ReportMetric(float64(up.Hits("/detail/")), "detail-docs")
		}
	})
	for _, count := range []int{100, 1000} {
		b.Run(fmt.Sprintf("Archive%d", count), func(b *testing.B) {
			for b.Loop() {
				orig := up.Doc(en)
				changed, ids := flipRows(b, orig, nil, count, `"Archived":"0"}`, `"Archived":"1"}`)
				if len(ids) != count {
					b.Fatalf("only %d active notices to archive", len(ids))
				}
				up.Set(en, changed)
				up.ResetHits()
				visible, took := n.refreshUntil(func(snap *index.View) bool {
					for _, id := range ids {
						if r, ok := snap.Record(id); !ok || r.Status != rappel.StatusArchived {
							return false
						}
					}
					return true
				})
				b.ReportMetric(visible.Seconds(), "visible-s")
				b.ReportMetric(took.Seconds(), "refresh-s")
				b.ReportMetric(float64(up.Hits("/detail/")), "detail-docs")
				b.Logf("%d notices archived: served after %s, refresh %s, %d detail documents\n%s", count, visible.Round(time.Millisecond),
					took.Round(time.Millisecond), up.Hits("/detail/"), n.logs.Take("msg=refresh"))
				up.Set(en, orig)
				n.catchUp(b)
			}
		})
	}
	b.Run("Reserialized", func(b *testing.B) {
		for b.Loop() {
			docs := map[string][]byte{}
			for _, p := range []string{en, "/hc/recalls-fr.json", "/tc/vrdb.csv"} {
				docs[p] = up.Doc(p)
			}
			up.Set(en, reserializeJSON(b, docs[en]))
			up.Set("/hc/recalls-fr.json", reserializeJSON(b, docs["/hc/recalls-fr.json"]))
			up.Set("/tc/vrdb.csv", reserializeCSV(b, docs["/tc/vrdb.csv"]))
			up.ResetHits()
			_, seq, _ := n.catalog.Current().ChangePos()
			took, _ := n.refreshWhileSearching()
			_, after, _ := n.catalog.Current().ChangePos()
			changed := after - seq
			b.ReportMetric(took.Seconds(), "refresh-s")
			b.ReportMetric(float64(up.Hits("/detail/")), "detail-docs")
			b.ReportMetric(float64(changed), "changes")
			b.Logf("re-serialized: refresh %s, %d detail documents, %d changes\n%s", took.Round(time.Millisecond), up.Hits("/detail/"), changed, n.logs.Take("msg=refresh"))
			for p, doc := range docs {
				up.Set(p, doc)
			}
			n.catchUp(b)
		}
	})
}

// followWithSegments makes the read index follow the store through
// segment files, from the embedded bundle's, as serve wires it: a refresh
// costs the index in proportion to what it changed.
func (n *benchNode) followWithSegments(b *testing.B) {
	seg, version, err := bundle.IndexSegment()
	if err != nil {
		b.Fatal(err)
	}
	segments := &index.Segments{Dir: b.TempDir(), Store: n.store, Catalog: n.catalog, Bundle: seg, BundleVersion: version}
	if err := segments.Open(n.ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { segments.Close() })
	n.r.Listeners = []rappel.ChangeListener{segments}
}

// refreshUntil refreshes once and returns how long after its start served
// held (polled every millisecond), and how long the refresh took.
func (n *benchNode) refreshUntil(served func(*index.View) bool) (visible, took time.Duration) {
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- n.r.Refresh(n.ctx) }()
	for {
		if served(n.catalog.Current()) {
			visible = time.Since(start)
			break
		}
		select {
		case err := <-done:
			took = time.Since(start)
			if err != nil {
				n.b.Fatal(err)
			}
			if !served(n.catalog.Current()) {
				n.b.Fatal("the refresh ended without serving the change")
			}
			return took, took
		case <-time.After(time.Millisecond):
		}
	}
	if err := <-done; err != nil {
		n.b.Fatal(err)
	}
	return visible, time.Since(start)
}

// catchUp refreshes with no limit on detail requests, to start the next
// measure from a node caught up with its upstream.
func (n *benchNode) catchUp(b *testing.B) {
	rate := n.r.DetailRate
	n.r.DetailRate = 0
	defer func() { n.r.DetailRate = rate }()
	if err := n.r.Refresh(n.ctx); err != nil {
		b.Fatal(err)
	}
	n.logs.Take("")
}
