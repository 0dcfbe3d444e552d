package plugins_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// hcMoved is the Health Canada sample moved under v2/, which the shipped
// hcdump plugin fails on and the hcmoved guest reads.
func hcMoved(tb testing.TB) fstest.MapFS {
	tb.Helper()
	moved := fstest.MapFS{}
	for _, name := range []string{"recalls-en.json", "recalls-fr.json"} {
		b, err := os.ReadFile(filepath.Join(plugintest.ModuleRoot(tb), "testdata", "hc", name))
		if err != nil {
			tb.Fatal(err)
		}
		moved["v2/"+name] = &fstest.MapFile{Data: b}
	}
	return moved
}

// report is source's part of the registry's report.
func report(tb testing.TB, r *plugins.Registry, source string) plugins.SourceReport {
	tb.Helper()
	for _, s := range r.Report().Sources {
		if s.Source == source {
			return s
		}
	}
	tb.Fatalf("no report for %s", source)
	return plugins.SourceReport{}
}

// The active plugin fails on the source's whole payload (here, the last
// good one primed again after the upstream moved its files): a candidate
// is tried on that payload, with no successful run first, and activated.
// The swap is kept in ActiveDir: a registry reopened on it runs the
// candidate, says why, and a binary bundling another plugin runs its own.
func TestRegistry_CandidateOnCurrentPayload(t *testing.T) {
	dir, activeDir := t.TempDir(), t.TempDir()
	h := MustOpenHost(t)
	keep := func(r *plugins.Registry) { r.ActiveDir = activeDir }
	r := MustOpenRegistry(t, h, dir, keep)
	bundled := r.Active("hcdump")
	if _, err := r.Prime(context.Background(), "hcdump", hcMoved(t)); err == nil {
		t.Fatal("the shipped plugin read the moved files")
	}
	fixed := plugintest.Build(t, guests+"hcmoved")
	plugintest.Install(t, dir, "hcdump", fixed)
	r.Scan(context.Background())
	st := status(t, r, "hcdump")
	if st.Active != plugins.SHA256(fixed) || !strings.Contains(st.Why, "current payload") || st.Rejected != "" {
		t.Fatalf("status after the scan = %+v, want the fix active on the current payload", st)
	}
	if out, err := r.Normalize(context.Background(), "hcdump", hcMoved(t)); err != nil || len(out.Records) < 12 || out.Plugin != st.Active {
		t.Fatalf("a run after the swap: %v, %+v", err, out)
	}
	rep := r.Report()
	if a := report(t, r, "hcdump").Active; a == nil || a.From != "dir" || a.SHA256 != st.Active || len(rep.History) != 1 || rep.History[0].Event != "activated" {
		t.Fatalf("report after the swap = %+v", rep)
	}
	r.Close()

	again := MustOpenRegistry(t, h, t.TempDir(), keep)
	if got := status(t, again, "hcdump"); got.Active != st.Active || got.Why != st.Why || !got.Since.Equal(st.Since) || got.Origin != st.Origin {
		t.Fatalf("after a restart: %+v, want %+v", got, st)
	}
	if out, err := again.Normalize(context.Background(), "hcdump", hcMoved(t)); err != nil || out.Plugin != st.Active {
		t.Fatalf("a run after a restart: %v, %+v", err, out)
	}
	again.Close()

	upper := plugintest.Build(t, guests+"upper")
	upgraded := plugins.NewRegistry(h, map[string][]byte{"hcdump": upper})
	upgraded.ActiveDir = activeDir
	if err := upgraded.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer upgraded.Close()
	if got := upgraded.Active("hcdump"); got != plugins.SHA256(upper) || got == bundled {
		t.Fatalf("a binary bundling another plugin runs %s, want its own", got)
	}
}

// GET /admin/plugins' states: a candidate waiting for a payload is held,
// one being tried is trying, a refused one says why.
func TestRegistry_Report(t *testing.T) {
	dir := t.TempDir()
	h := MustOpenHost(t, func(h *plugins.Host) { h.Timeout = 3 * time.Second })
	r := MustOpenRegistry(t, h, dir)
	upper := plugintest.Build(t, guests+"upper")
	plugintest.Install(t, dir, "hcdump", upper)
	r.Scan(context.Background())
	c := report(t, r, "hcdump").Candidates
	if len(c) != 1 || c[0].State != "held" || c[0].Reason != "awaiting_payload" || c[0].SHA256 != plugins.SHA256(upper) || c[0].Since.IsZero() || !strings.HasSuffix(c[0].Why, ".") {
		t.Fatalf("candidates before any payload = %+v, want upper held", c)
	}

	loop := plugintest.Build(t, guests+"loop")
	plugintest.Install(t, dir, "hcdump", loop)
	mustPrime(t, r, hcInput(t))
	done := make(chan struct{})
	go func() { defer close(done); r.Scan(context.Background()) }()
	waitReport(t, r, func(c []plugins.CandidateReport) bool {
		return len(c) == 1 && c[0].State == "trying" && c[0].SHA256 == plugins.SHA256(loop)
	})
	<-done
	c = report(t, r, "hcdump").Candidates
	if len(c) != 1 || c[0].State != "refused" || !strings.Contains(c[0].Why, "stopped after") || filepath.Dir(c[0].Path) != filepath.Join(dir, plugins.RefusedDir) {
		t.Fatalf("candidates after the trial = %+v, want loop refused, moved to refused/", c)
	}
	if _, err := os.Stat(filepath.Join(dir, "hcdump.wasm")); !os.IsNotExist(err) {
		t.Errorf("the refused candidate is still in the plugins dir: %v", err)
	}
	if h := r.Report().History; len(h) != 1 || h[0].Event != "refused" || h[0].Why != c[0].Why {
		t.Fatalf("history = %+v", h)
	}
}

// waitReport waits until hcdump's candidates satisfy ok.
func waitReport(tb testing.TB, r *plugins.Registry, ok func([]plugins.CandidateReport) bool) {
	tb.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		c := report(tb, r, "hcdump").Candidates
		if ok(c) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("candidates never as expected: %+v", c)
		}
	}
}
