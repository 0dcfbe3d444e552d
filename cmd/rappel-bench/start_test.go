package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestParseStatusMem(t *testing.T) {
	status := "Name:\trappel\nVmPeak:\t 2198708 kB\nVmHWM:\t  349012 kB\nVmRSS:\t  231016 kB\nRssAnon:\t   20480 kB\nRssFile:\t  210000 kB\nRssShmem:\t     536 kB\nThreads:\t8\n"
	got := parseStatusMem(status)
	want := Mem{RSSKB: 231016, PeakKB: 349012, AnonKB: 20480, FileKB: 210000}
	if got != want {
		t.Errorf("parseStatusMem = %+v, want %+v", got, want)
	}
	if m := readMem(os.Getpid()); m.RSSKB <= 0 || m.PeakKB < m.RSSKB || m.AnonKB <= 0 {
		t.Errorf("readMem of this process = %+v, want a resident set, a peak at least as high and private memory", m)
	}
}

// TestMixedLoad runs wrk with the mixed-load script against a real server:
// every request URI is sent, with the key.
func TestMixedLoad(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("wrk is not installed")
	}
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Gateway-Key") != benchKey {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		seen[r.URL.RequestURI()]++
		mu.Unlock()
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	uris := []string{"/recall/hc-1", "/recall?q=%22pieces+of+metal%22", "/recall?q=recalled&cursor=abc_-1", "/recall/vin?vin=4T1BB3EK5AU118081"}
	w, err := runWrkMixed(context.Background(), "", srv.URL, uris, filepath.Join(t.TempDir(), "mixed.lua"), keyHeader(), 2, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if w.RPS <= 0 || w.Errors != 0 {
		t.Errorf("wrk = %+v, want requests and no failures", w)
	}
	for _, u := range uris {
		if seen[u] == 0 {
			t.Errorf("the mixed load never sent %s; it sent %v", u, seen)
		}
	}
	if len(seen) != len(uris) {
		t.Errorf("the mixed load sent %v, want only %q", seen, uris)
	}
}

// TestWaitIdle checks waitIdle on real processes: a sleeping one is idle,
// a spinning one is not.
func TestWaitIdle(t *testing.T) {
	var log bytes.Buffer
	sleeper, err := startProc("sleep", "", "", 1, &log, nil, "sleep", "60")
	if err != nil {
		t.Fatal(err)
	}
	defer sleeper.Stop()
	if err := sleeper.waitIdle(context.Background(), 30*time.Second); err != nil {
		t.Errorf("waitIdle on sleep: %v", err)
	}
	spinner, err := startProc("spin", "", "", 1, &log, nil, "sh", "-c", "while :; do :; done")
	if err != nil {
		t.Fatal(err)
	}
	defer spinner.Stop()
	if err := spinner.waitIdle(context.Background(), 2*time.Second); err == nil {
		t.Error("waitIdle on a process spinning found it idle")
	}
	if cpuTicks(spinner.PID()) <= 0 {
		t.Error("cpuTicks of a spinning process is not positive")
	}
}

// TestCloneDir checks that a clone of a store links its tables, copies
// the rest, and leaves the source as it was when the clone changes.
func TestCloneDir(t *testing.T) {
	src, dst := filepath.Join(t.TempDir(), "store"), filepath.Join(t.TempDir(), "data")
	for name, body := range map[string]string{"pebble/000001.sst": "table", "pebble/MANIFEST-000001": "manifest", "pebble/000002.log": "wal"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := cloneDir(src, dst); err != nil {
		t.Fatal(err)
	}
	same := func(name string) bool {
		a, err1 := os.Stat(filepath.Join(src, name))
		b, err2 := os.Stat(filepath.Join(dst, name))
		if err1 != nil || err2 != nil {
			t.Fatalf("stat %s: %v, %v", name, err1, err2)
		}
		return os.SameFile(a, b)
	}
	if !same("pebble/000001.sst") {
		t.Error("the table was copied, not linked")
	}
	if same("pebble/MANIFEST-000001") || same("pebble/000002.log") {
		t.Error("the manifest or the log was linked, not copied: the clone would change the source")
	}
	if err := os.WriteFile(filepath.Join(dst, "pebble/MANIFEST-000001"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(src, "pebble/MANIFEST-000001")); string(b) != "manifest" {
		t.Errorf("the source's manifest is %q after the clone's changed", b)
	}
	if n := dirBytes(dst); n != int64(len("table")+len("changed")+len("wal")) {
		t.Errorf("dirBytes = %d", n)
	}
}

// TestLogSteps reads the steps of the second start in a log that holds
// two, as rappel writes them.
func TestLogSteps(t *testing.T) {
	first := `time=2026-11-25T19:23:31.311Z level=INFO msg="dataset ready" records=999990
time=2026-11-25T19:23:31.319Z level=INFO msg=serving addr=127.0.0.1:37457
`
	second := `time=2026-11-25T19:23:32.941Z level=INFO msg="starting rappel" version=dev
time=2026-11-25T19:23:32.951Z level=INFO msg="Found 1 WALs" component=pebble
time=2026-11-25T19:23:33.151Z level=INFO msg="keeping the data dir's feeds data" data_updated_at=2026-11-25T18:55:49.000Z
time=2026-11-25T19:23:36.298Z level=INFO msg="dataset ready" records=999990 source=feeds
time=2026-11-25T19:23:36.299Z level=INFO msg=serving addr=127.0.0.1:45749
time=2026-11-25T19:23:36.310Z level=INFO msg=request method=GET route=/recall status=200
time=2026-11-25T19:23:39.259Z level=INFO msg=serving addr=127.0.0.1:45501
`
	file := filepath.Join(t.TempDir(), "rappel.log")
	if err := os.WriteFile(file, []byte(first+second), 0o644); err != nil {
		t.Fatal(err)
	}
	exec := time.Date(2026, 11, 25, 19, 23, 32, 900e6, time.UTC)
	got := logSteps(file, int64(len(first)), exec)
	want := Start{Logging: 41 * time.Millisecond, Bundle: 251 * time.Millisecond, Ready: 3398 * time.Millisecond, Serving: 3399 * time.Millisecond}
	if got != want {
		t.Errorf("logSteps = %+v, want %+v", got, want)
	}
	if got := logSteps(filepath.Join(t.TempDir(), "none.log"), 0, exec); got.Ready != -1 || got.Logging != -1 {
		t.Errorf("logSteps of no log = %+v, want every step missing", got)
	}
}

// TestScaleKey checks that the data sets' key follows the code that makes
// them, and not the tests beside it.
func TestScaleKey(t *testing.T) {
	h := &Harness{Repo: t.TempDir()}
	write := func(name, body string) {
		path := filepath.Join(h.Repo, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("bundle/synth/synth.go", "package synth")
	key := h.scaleKey()
	write("bundle/synth/synth_test.go", "package synth // a test")
	if got := h.scaleKey(); got != key {
		t.Errorf("a test file changed the key: %s, then %s", key, got)
	}
	write("plugins/vrdb/vrdb.go", "package vrdb")
	if got := h.scaleKey(); got == key {
		t.Errorf("a normalizer's code left the key as it was: %s", got)
	}
}
