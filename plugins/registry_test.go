package plugins_test

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

const hcdumpPkg = "./plugins/hcdump/wasm"

// hcInput is the hand-checked Health Canada dump sample.
func hcInput(tb testing.TB) fs.FS {
	return os.DirFS(filepath.Join(plugintest.ModuleRoot(tb), "testdata", "hc"))
}

// MustOpenRegistry returns an open registry whose hcdump plugin is the
// shipped one, watching dir, closed at cleanup.
func MustOpenRegistry(tb testing.TB, h *plugins.Host, dir string, configure ...func(*plugins.Registry)) *plugins.Registry {
	tb.Helper()
	r := plugins.NewRegistry(h, map[string][]byte{"hcdump": plugintest.Build(tb, hcdumpPkg)})
	r.Dir = dir
	r.PollInterval = time.Hour // tests Scan, unless they want the watcher
	r.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range configure {
		c(r)
	}
	if err := r.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// ungated lets a candidate change any share of the records' content: the
// tests using it swap in the upper guest, which changes every title, to
// see a swap's effect, not the content gate's (see gate_test.go).
func ungated(r *plugins.Registry) { r.MaxChange = 1 }

func status(tb testing.TB, r *plugins.Registry, source string) plugins.PluginStatus {
	tb.Helper()
	for _, s := range r.Status() {
		if s.Source == source {
			return s
		}
	}
	tb.Fatalf("no status for %s in %+v", source, r.Status())
	return plugins.PluginStatus{}
}

// waitStatus waits until the source's status satisfies ok.
func waitStatus(tb testing.TB, r *plugins.Registry, source string, ok func(plugins.PluginStatus) bool) plugins.PluginStatus {
	tb.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := status(tb, r, source)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			tb.Fatalf("status of %s never changed as expected: %+v", source, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustNormalize(tb testing.TB, r *plugins.Registry, input fs.FS) *rappel.Normalized {
	tb.Helper()
	out, err := r.Normalize(context.Background(), "hcdump", input)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// mustPrime gives the registry input as the source's whole payload.
func mustPrime(tb testing.TB, r *plugins.Registry, input fs.FS) *rappel.Normalized {
	tb.Helper()
	out, err := r.Prime(context.Background(), "hcdump", input)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func titles(out *rappel.Normalized) (all, upper int) {
	for _, r := range out.Records {
		if tr := r.Translations.EN; tr != nil && tr.Title != "" {
			all++
			if tr.Title == strings.ToUpper(tr.Title) {
				upper++
			}
		}
	}
	return all, upper
}

func TestRegistry_Normalize(t *testing.T) {
	r := MustOpenRegistry(t, MustOpenHost(t), "")
	t.Run("OK", func(t *testing.T) {
		out := mustNormalize(t, r, hcInput(t))
		if len(out.Records) < 12 || out.Plugin != plugins.SHA256(plugintest.Build(t, hcdumpPkg)) || out.Duration <= 0 {
			t.Fatalf("records = %d, plugin = %s, duration = %s", len(out.Records), out.Plugin, out.Duration)
		}
		for _, rec := range out.Records {
			if rec.FetchedAt != "" {
				t.Fatalf("%s has fetched_at %q; the host stamps it", rec.RecordID, rec.FetchedAt)
			}
		}
		st := status(t, r, "hcdump")
		if st.Active != out.Plugin || st.Origin != "bundled" || st.Since.IsZero() {
			t.Fatalf("status = %+v", st)
		}
	})
	t.Run("ErrNoSource", func(t *testing.T) {
		if _, err := r.Normalize(context.Background(), "nosuch", hcInput(t)); err == nil || !strings.Contains(err.Error(), "no plugin") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ErrRun", func(t *testing.T) {
		// Not the dump: the plugin gives up, and the run fails as a whole.
		_, err := r.Normalize(context.Background(), "hcdump", os.DirFS(t.TempDir()))
		if err == nil || !strings.Contains(err.Error(), "recalls-en.json") {
			t.Fatalf("err = %v, want the plugin's fatal sentence", err)
		}
	})
}

func TestRegistry_HotSwap(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var activated *rappel.Normalized
	r := MustOpenRegistry(t, MustOpenHost(t), dir, ungated, func(r *plugins.Registry) {
		r.PollInterval = 50 * time.Millisecond
		r.OnActivate = func(source string, out *rappel.Normalized) {
			mu.Lock()
			defer mu.Unlock()
			activated = out
		}
	})
	before := mustPrime(t, r, hcInput(t))
	if n, upper := titles(before); n == 0 || upper == n {
		t.Fatalf("titles before the swap: %d, %d upper case", n, upper)
	}

	upper := plugintest.Build(t, guests+"upper")
	plugintest.Install(t, dir, "hcdump", upper)
	st := waitStatus(t, r, "hcdump", func(s plugins.PluginStatus) bool { return s.Active == plugins.SHA256(upper) })
	if st.Origin != filepath.Join(dir, "hcdump.wasm") || st.Rejected != "" {
		t.Fatalf("status after the swap = %+v", st)
	}
	mu.Lock()
	if activated == nil || activated.Plugin != st.Active || len(activated.Records) != len(before.Records) {
		t.Errorf("OnActivate got %+v", activated)
	}
	mu.Unlock()

	after := mustNormalize(t, r, hcInput(t))
	if n, up := titles(after); n == 0 || up != n || after.Plugin != st.Active {
		t.Fatalf("titles after the swap: %d, %d upper case, plugin %s", n, up, after.Plugin)
	}
}

func TestRegistry_RejectsCandidate(t *testing.T) {
	tests := []struct {
		guest  string // a package, or "" for bytes that are not a module
		reason string
	}{
		{guests + "lossy", "it lost"},
		{guests + "badfields", "the host refused"},
		{guests + "garbage", "the host refused"},
		{guests + "panic", "panic: assignment to entry in nil map"},
		{guests + "fatal", "not a JSON array"},
		{guests + "loop", "stopped after"},
		{guests + "flood", "output exceeded"},
		{"", "not a usable module"},
	}
	dir := t.TempDir()
	h := MustOpenHost(t, func(h *plugins.Host) { h.Timeout = 3 * time.Second; h.MaxOutput = 8 << 20 })
	r := MustOpenRegistry(t, h, dir)
	bundled := mustPrime(t, r, hcInput(t))
	for _, tt := range tests {
		name := filepath.Base(tt.guest)
		if tt.guest == "" {
			name = "notwasm"
		}
		t.Run(name, func(t *testing.T) {
			wasm := []byte("\x00asm but not really a module")
			if tt.guest != "" {
				wasm = plugintest.Build(t, tt.guest)
			}
			plugintest.Install(t, dir, "hcdump", wasm)
			r.Scan(context.Background())
			st := status(t, r, "hcdump")
			if st.Rejected != plugins.SHA256(wasm) || !strings.Contains(st.RejectedReason, tt.reason) || st.RejectedAt.IsZero() {
				t.Fatalf("status = %+v, want the candidate rejected for %q", st, tt.reason)
			}
			if !strings.HasPrefix(st.RejectedReason, "hcdump.wasm (sha256 ") || !strings.HasSuffix(st.RejectedReason, ".") {
				t.Errorf("reason is not a sentence naming the file: %q", st.RejectedReason)
			}
			t.Logf("%s", st.RejectedReason)
			// The bundled plugin keeps running.
			out := mustNormalize(t, r, hcInput(t))
			if st.Active != bundled.Plugin || out.Plugin != bundled.Plugin || len(out.Records) != len(bundled.Records) {
				t.Fatalf("after the rejection: active %s, ran %s with %d records", st.Active, out.Plugin, len(out.Records))
			}
		})
	}
}

func TestRegistry_CandidateWaitsForPayload(t *testing.T) {
	dir := t.TempDir()
	upper := plugintest.Build(t, guests+"upper")
	plugintest.Install(t, dir, "hcdump", upper)
	r := MustOpenRegistry(t, MustOpenHost(t), dir, ungated)
	// Found at Open, but there is nothing to try it on yet.
	st := status(t, r, "hcdump")
	if st.Pending != plugins.SHA256(upper) || st.Origin != "bundled" {
		t.Fatalf("status before any payload = %+v", st)
	}
	// A refresh's run, on what may be only part of the payload, is not
	// what a candidate is tried on.
	if _, up := titles(mustNormalize(t, r, hcInput(t))); up != 0 {
		t.Fatalf("the candidate ran before it was tried: %d upper-case titles", up)
	}
	r.Scan(context.Background())
	if st := status(t, r, "hcdump"); st.Pending != plugins.SHA256(upper) || st.Origin != "bundled" {
		t.Fatalf("status after a refresh's run = %+v, want the candidate still pending", st)
	}
	// The whole last good payload is; the watcher then tries the candidate.
	if _, up := titles(mustPrime(t, r, hcInput(t))); up != 0 {
		t.Fatalf("the candidate ran before it was tried: %d upper-case titles", up)
	}
	waitStatus(t, r, "hcdump", func(s plugins.PluginStatus) bool { return s.Active == plugins.SHA256(upper) && s.Pending == "" })
}

func TestRegistry_UnknownSource(t *testing.T) {
	dir := t.TempDir()
	plugintest.Install(t, dir, "nosuch", plugintest.Build(t, guests+"probe"))
	r := MustOpenRegistry(t, MustOpenHost(t), dir)
	st := status(t, r, "nosuch")
	if st.Active != "" || !strings.Contains(st.RejectedReason, `no source named "nosuch"`) || !strings.Contains(st.RejectedReason, "hcdump") {
		t.Fatalf("status = %+v", st)
	}
}
