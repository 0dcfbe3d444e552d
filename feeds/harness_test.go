package feeds_test

import (
	"cmp"
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/kvtest"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// The shipped plugins and the test guests, by import path.
const (
	hcdumpPkg = "./plugins/hcdump/wasm"
	vrdbPkg   = "./plugins/vrdb/wasm"
	detailPkg = "./plugins/detail/wasm"
	guests    = "./plugins/testdata/guests/"
)

var shipped = map[string]string{"hcdump": hcdumpPkg, "vrdb": vrdbPkg, "detail": detailPkg}

// hostNormalizer is a rappel.Normalizer over the plugin host, with the
// plugin of each source swappable, that counts what it normalizes.
type hostNormalizer struct {
	tb   testing.TB
	host *plugins.Host

	mu      sync.Mutex
	plugins map[string]*plugins.Plugin
	runs    map[string]int
	emitted map[string]int // records emitted, per source
}

func (n *hostNormalizer) Normalize(ctx context.Context, source string, input fs.FS) (*rappel.Normalized, error) {
	n.mu.Lock()
	p := n.plugins[source]
	n.runs[source]++
	n.mu.Unlock()
	res, err := p.Run(ctx, input)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	n.emitted[source] += len(res.Records)
	n.mu.Unlock()
	return &rappel.Normalized{Records: res.Records, Problems: res.Problems, Plugin: p.SHA256, Duration: res.Duration}, nil
}

// Active returns the SHA-256 of source's plugin.
func (n *hostNormalizer) Active(source string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if p := n.plugins[source]; p != nil {
		return p.SHA256
	}
	return ""
}

// Use makes the module built from pkg source's plugin.
func (n *hostNormalizer) Use(source, pkg string) {
	n.tb.Helper()
	p, err := n.host.Load(context.Background(), source, plugintest.Build(n.tb, pkg))
	if err != nil {
		n.tb.Fatal(err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.plugins[source] = p
}

// counts returns the runs and emitted records per source since the last
// call, and resets them.
func (n *hostNormalizer) counts() (runs, emitted map[string]int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	runs, emitted = n.runs, n.emitted
	n.runs, n.emitted = map[string]int{}, map[string]int{}
	return runs, emitted
}

// cacheDir is shared by the tests' hosts, so that each module is compiled
// once per test binary.
var cacheDir = sync.OnceValue(func() string {
	d, err := os.MkdirTemp("", "rappel-feeds-test-cache-")
	if err != nil {
		panic(err)
	}
	return d
})

func TestMain(m *testing.M) {
	plugintest.ServeChild()
	code := m.Run()
	os.RemoveAll(cacheDir())
	os.Exit(code)
}

// MustOpenHost opens a plugin host with runaway protection on.
func MustOpenHost(tb testing.TB) *plugins.Host {
	tb.Helper()
	h := plugins.NewHost()
	h.Timeout = 30 * time.Second
	h.CacheDir = cacheDir()
	h.Logger = slog.New(slog.DiscardHandler)
	if err := h.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close(context.Background()) })
	return h
}

func newNormalizer(tb testing.TB, host *plugins.Host) *hostNormalizer {
	n := &hostNormalizer{tb: tb, host: host, plugins: map[string]*plugins.Plugin{}, runs: map[string]int{}, emitted: map[string]int{}}
	for source, pkg := range shipped {
		n.Use(source, pkg)
	}
	return n
}

// harness is a refresher over a real store, real plugins and an upstream
// serving the samples in testdata/.
type harness struct {
	t     *testing.T
	ctx   context.Context
	store *kv.Store
	up    *feedstest.Upstream
	norm  *hostNormalizer
	r     *feeds.Refresher
	now   time.Time
	// kind is the kind of the data loadStore loads: by default the
	// agencies', as a bundle fetched from the same upstream would be (the
	// samples the upstream serves); rappel.DatasetSynthetic for a
	// generated bundle, which the first live refresh replaces whole.
	kind string
}

// newHarness serves testdata/hc, tc and detail upstream and opens a
// refresher of the three sources on an empty store.
func newHarness(t *testing.T) *harness {
	t.Helper()
	root := plugintest.ModuleRoot(t)
	h := &harness{t: t, ctx: context.Background(), now: time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)}
	h.up = feedstest.NewUpstream(t)
	h.up.LoadDir(t, "/hc", filepath.Join(root, "testdata", "hc"))
	h.up.LoadDir(t, "/tc", filepath.Join(root, "testdata", "tc"))
	h.up.LoadDir(t, "/detail", filepath.Join(root, "testdata", "detail"))
	h.store = kvtest.Open(t)
	h.norm = newNormalizer(t, MustOpenHost(t))
	h.r = feeds.NewRefresher(h.store, h.norm,
		feeds.HCDump(h.up.URL+"/hc/recalls-en.json", h.up.URL+"/hc/recalls-fr.json"),
		feeds.VRDB(h.up.URL+"/tc/vrdb.csv"),
		feeds.Detail(h.up.URL+"/detail/{lang}/{id}.json"))
	h.setFetcher(5 * time.Second)
	h.r.DetailRate = 0
	h.r.Interval = time.Minute
	h.r.ActivePlugin = h.norm.Active
	h.r.Now = func() time.Time { return h.now }
	h.r.Logger = slog.New(slog.DiscardHandler)
	return h
}

// setFetcher gives the refresher a fetcher with short retries and timeout
// per attempt.
func (h *harness) setFetcher(timeout time.Duration) {
	f := feeds.NewFetcher()
	f.Retries = 2
	f.BackoffMin, f.BackoffMax = time.Millisecond, 20*time.Millisecond
	f.Timeout = timeout
	f.Logger = slog.New(slog.DiscardHandler)
	h.r.Fetcher = f
}

// open opens the refresher.
func (h *harness) open() {
	h.t.Helper()
	if err := h.r.Open(h.ctx); err != nil {
		h.t.Fatal(err)
	}
}

// loadBundle loads the store as the bundle would: the samples normalized
// through the plugins, assembled, with each source's partial records and a
// state that is not live, plus extra partial records, which a source's first
// live refresh must remove.
// With raw set, the bundle remembers the raw records it came from, as
// `rappel bundle` writes them (feeds.BundleRaw).
func (h *harness) loadBundle(extra map[string][]*rappel.Record, withRaw bool) {
	h.t.Helper()
	var raw map[string][]rappel.RawRecord
	if withRaw {
		var err error
		if raw, err = feeds.BundleRaw(sampleCorpus(h.t)); err != nil {
			h.t.Fatal(err)
		}
	}
	h.loadStore(extra, raw, false)
}

// sampleDirs are the samples' directories under testdata/, by source.
var sampleDirs = map[string]string{"hcdump": "hc", "vrdb": "tc", "detail": "detail"}

// sampleCorpus returns the samples by source, as BundleRaw reads them.
func sampleCorpus(tb testing.TB) map[string]fs.FS {
	root := plugintest.ModuleRoot(tb)
	corpus := map[string]fs.FS{}
	for source, dir := range sampleDirs {
		corpus[source] = os.DirFS(filepath.Join(root, "testdata", dir))
	}
	return corpus
}

// loadStore loads the store as loadBundle says, with the raw records raw,
// and every source's state live when live is set (a data dir the feeds
// wrote).
func (h *harness) loadStore(extra map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, live bool) {
	h.t.Helper()
	root := plugintest.ModuleRoot(h.t)
	dirs := sampleDirs
	parts := map[string][]*rappel.Record{}
	var states []rappel.SourceState
	var ordered [][]*rappel.Record
	for _, source := range rappel.SourcePrecedence {
		res, err := h.norm.Normalize(h.ctx, source, os.DirFS(filepath.Join(root, "testdata", dirs[source])))
		if err != nil {
			h.t.Fatal(err)
		}
		parts[source] = append(res.Records, extra[source]...)
		ordered = append(ordered, parts[source])
		states = append(states, rappel.SourceState{Feed: rappel.FeedState{Source: source, Records: len(parts[source]), Live: live}, Plugin: res.Plugin})
	}
	built := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	recs, problems := rappel.Assemble(built, ordered...)
	if len(problems) > 0 {
		h.t.Fatalf("assembling the bundle: %+v", problems)
	}
	if err := h.store.Load(h.ctx, recs, parts, raw, states, rappel.DatasetInfo{UpdatedAt: built, Source: "bundle", Kind: cmp.Or(h.kind, rappel.DatasetAgencies), Records: len(recs), Bundle: "test-bundle"}); err != nil {
		h.t.Fatal(err)
	}
	h.norm.counts()
}

// refresh advances the clock a minute and refreshes.
func (h *harness) refresh() error {
	h.t.Helper()
	h.now = h.now.Add(time.Minute)
	return h.r.Refresh(h.ctx)
}

// mustRefresh refreshes and fails the test on error.
func (h *harness) mustRefresh() {
	h.t.Helper()
	if err := h.refresh(); err != nil {
		h.t.Fatal(err)
	}
}

// records returns every stored record's JSON by record_id.
func (h *harness) records() map[string]string {
	h.t.Helper()
	out := map[string]string{}
	if err := h.store.ForEachRecord(h.ctx, func(r *rappel.Record) error {
		b, _ := json.Marshal(r)
		out[r.RecordID] = string(b)
		return nil
	}); err != nil {
		h.t.Fatal(err)
	}
	return out
}

// record returns the stored record with id, or nil.
func (h *harness) record(id string) *rappel.Record {
	h.t.Helper()
	r, err := h.store.Record(h.ctx, id)
	if rappel.ErrorCode(err) == rappel.ENOTFOUND {
		return nil
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// state returns source's feed state as /health shows it.
func (h *harness) state(source string) rappel.FeedState {
	h.t.Helper()
	for _, st := range h.r.States() {
		if st.Source == source {
			return st
		}
	}
	h.t.Fatalf("no state for %s", source)
	return rappel.FeedState{}
}

// golden returns the record_ids of testdata/golden/assembled.json.
func golden(tb testing.TB) []string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(plugintest.ModuleRoot(tb), "testdata", "golden", "assembled.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var g struct{ Records []rappel.Record }
	if err := json.Unmarshal(b, &g); err != nil {
		tb.Fatal(err)
	}
	var ids []string
	for _, r := range g.Records {
		ids = append(ids, r.RecordID)
	}
	sort.Strings(ids)
	return ids
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
