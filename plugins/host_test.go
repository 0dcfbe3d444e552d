package plugins_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

const guests = "./plugins/testdata/guests/"

// TestMain serves a plugin run when the host started this test binary as
// its child (the default Host.Command: this executable, plugin-child).
func TestMain(m *testing.M) {
	plugintest.ServeChild()
	os.Exit(m.Run())
}

// MustOpenHost returns an open host with the defaults (runs in child
// processes) and a short timeout, closed at cleanup. configure, when given,
// changes settings before Open.
func MustOpenHost(tb testing.TB, configure ...func(*plugins.Host)) *plugins.Host {
	tb.Helper()
	h := plugins.NewHost()
	h.Timeout = 20 * time.Second
	h.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range configure {
		c(h)
	}
	if err := h.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// stopModes are the two ways a host stops an untrusted guest; the tests
// that judge a run's end run under both.
var stopModes = []struct {
	name      string
	configure func(*plugins.Host)
}{
	{"ChildProcess", func(h *plugins.Host) {}},
	{"InProcess", func(h *plugins.Host) { h.InProcess = true }},
}

// forEachMode runs test once per stop mode, with an open host configured
// for it and then by configure.
func forEachMode(t *testing.T, test func(t *testing.T, h *plugins.Host), configure ...func(*plugins.Host)) {
	for _, m := range stopModes {
		t.Run(m.name, func(t *testing.T) {
			test(t, MustOpenHost(t, append([]func(*plugins.Host){m.configure}, configure...)...))
		})
	}
}

func mustLoad(tb testing.TB, h *plugins.Host, name, pkg string) *plugins.Plugin {
	tb.Helper()
	p, err := h.Load(context.Background(), name, plugintest.Build(tb, pkg))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestPlugin_Run_Sandbox(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *plugins.Host) {
		p := mustLoad(t, h, "probe", guests+"probe")
		res, err := p.Run(context.Background(), fstest.MapFS{"input.txt": {Data: []byte("hello")}})
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range res.Problems {
			t.Errorf("guest %s", pr.Reason)
		}
		// argv is the source name and the ABI version.
		if len(res.Records) != 1 || res.Records[0].RecordID != "probe-2" {
			t.Fatalf("records = %+v, want one probe-2", res.Records)
		}
	})
}

func TestPlugin_Run_Trusted(t *testing.T) {
	h := plugins.NewHost()
	h.Interruptible = false
	h.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := h.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	p := mustLoad(t, h, "probe", guests+"probe")
	res, err := p.Run(context.Background(), fstest.MapFS{"input.txt": {Data: []byte("hello")}})
	if err != nil || len(res.Records) != 1 || len(res.Problems) != 0 {
		t.Fatalf("trusted run: %v, %+v", err, res)
	}
}

func TestPlugin_Run_Timeout(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *plugins.Host) {
		p := mustLoad(t, h, "loop", guests+"loop")
		start := time.Now()
		_, err := p.Run(context.Background(), fstest.MapFS{})
		if err == nil || !strings.Contains(err.Error(), "stopped after 500ms (--plugin-timeout)") {
			t.Fatalf("err = %v, want the run stopped", err)
		}
		// Not a timing assertion: a guest that was not stopped would run forever.
		t.Logf("runaway guest stopped after %s", time.Since(start))
	}, func(h *plugins.Host) { h.Timeout = 500 * time.Millisecond })
}

func TestPlugin_Run_ContextCancel(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *plugins.Host) {
		p := mustLoad(t, h, "loop", guests+"loop")
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		if _, err := p.Run(ctx, fstest.MapFS{}); err == nil {
			t.Fatal("a cancelled run returned no error")
		}
	})
}

func TestPlugin_Run_OutputCap(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *plugins.Host) {
		p := mustLoad(t, h, "flood", guests+"flood")
		_, err := p.Run(context.Background(), fstest.MapFS{})
		if err == nil || !strings.Contains(err.Error(), "output exceeded") {
			t.Fatalf("err = %v, want output exceeded", err)
		}
	}, func(h *plugins.Host) { h.MaxOutput = 1 << 20 })
}

func TestPlugin_Run_MemoryLimit(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *plugins.Host) {
		p := mustLoad(t, h, "hog", guests+"hog")
		_, err := p.Run(context.Background(), fstest.MapFS{})
		// The Go runtime in the guest gives up when memory.grow fails; the
		// run's error names the limit and the flag that raises it.
		want := "it ran out of memory at the limit of 128 MiB (--plugin-memory)"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want %q", err, want)
		}
	}, func(h *plugins.Host) {
		h.MemoryLimitPages = 2048 // 128 MiB
		// Room for the process (the race detector's shadow memory is
		// large), so that the guest's page limit is what stops it.
		h.MaxChildMemory = 4 << 30
	})
}

// TestPlugin_Run_MemoryBomb: a guest growing its memory without bound is
// stopped at its own limit, and its process stays near that limit: the
// linear memory grows in place, not by copies that once took a process
// with a 256 MiB limit to 946 MiB (and one with 1 GiB to 2.5 GiB). The
// process cap here, 640 MiB, is what those copies passed.
func TestPlugin_Run_MemoryBomb(t *testing.T) {
	h := MustOpenHost(t, func(h *plugins.Host) {
		h.MemoryLimitPages = 4096 // 256 MiB
		h.MaxChildMemory = 640 << 20
	})
	p := mustLoad(t, h, "hog", guests+"hog")
	_, err := p.Run(context.Background(), fstest.MapFS{})
	want := "it ran out of memory at the limit of 256 MiB (--plugin-memory)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

func TestPlugin_Run_ChildMemoryCap(t *testing.T) {
	// The guest may have 1 GiB, but its process only 200 MiB: the parent
	// kills the process before the guest reaches its own limit.
	h := MustOpenHost(t, func(h *plugins.Host) { h.MaxChildMemory = 200 << 20 })
	p := mustLoad(t, h, "hog", guests+"hog")
	_, err := p.Run(context.Background(), fstest.MapFS{})
	want := "its process used more than 200 MiB and was stopped; the guest may use 1024 MiB of memory (--plugin-memory)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

func TestPlugin_Run_Panic(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *plugins.Host) {
		p := mustLoad(t, h, "panic", guests+"panic")
		res, err := p.Run(context.Background(), fstest.MapFS{})
		if err == nil || !strings.Contains(err.Error(), "exited with code 2") || !strings.Contains(err.Error(), "panic: assignment to entry in nil map") {
			t.Fatalf("err = %v, want exit code 2 and the panic", err)
		}
		if len(res.Records) != 0 {
			t.Fatalf("a failed run returned records: %+v", res.Records)
		}
	})
}

func TestPlugin_Run_InvalidLines(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *plugins.Host) {
		p := mustLoad(t, h, "garbage", guests+"garbage")
		res, err := p.Run(context.Background(), fstest.MapFS{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Records) != 1 || res.Records[0].RecordID != "hc-4" {
			t.Fatalf("records = %+v, want only hc-4", res.Records)
		}
		want := []string{
			"output line 1 is not a record",
			`unknown field "surprise"`,
			`record_id "Has Spaces"`,
			"more than one JSON value",
			"units_affected",
			"row 9 has no title",
		}
		if len(res.Problems) != len(want) || len(res.Refusals) != len(want)-1 {
			t.Fatalf("problems = %+v, refusals = %d, want %d and %d", res.Problems, len(res.Refusals), len(want), len(want)-1)
		}
		var all strings.Builder
		for _, pr := range res.Problems {
			if pr.Source != "garbage" {
				t.Errorf("problem source = %q", pr.Source)
			}
			all.WriteString(pr.Reason + "\n")
		}
		for _, w := range want {
			if !strings.Contains(all.String(), w) {
				t.Errorf("no problem mentions %q in:\n%s", w, all.String())
			}
		}
	})
}

func TestPlugin_Run_Fatal(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *plugins.Host) {
		p := mustLoad(t, h, "fatal", guests+"fatal")
		_, err := p.Run(context.Background(), fstest.MapFS{})
		if err == nil || !strings.Contains(err.Error(), "not a JSON array") {
			t.Fatalf("err = %v, want the guest's fatal sentence", err)
		}
	})
}

func TestHost_Load_NotWasm(t *testing.T) {
	h := MustOpenHost(t)
	if _, err := h.Load(context.Background(), "bad", []byte("\x00asm garbage")); err == nil {
		t.Fatal("loaded garbage as a module")
	}
}

// envImportProbe makes TestImport_ChildEnvIgnored the child it starts.
const envImportProbe = "RAPPEL_TEST_IMPORT_PROBE"

// TestImport_ChildEnvIgnored starts this test binary, which imports
// plugins, with the environment variable that once made any such program
// serve a plugin run (and exit) before its main: the binary must run its
// tests as usual, and a host it opens must refuse to start children of its
// own rather than nest.
func TestImport_ChildEnvIgnored(t *testing.T) {
	if os.Getenv(envImportProbe) != "" {
		err := plugins.NewHost().Open(context.Background())
		if err == nil || !strings.Contains(err.Error(), "plugins.RunChild") {
			t.Fatalf("a host opened in a marked child: %v", err)
		}
		fmt.Println("imported without serving")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestImport_ChildEnvIgnored$", "-test.v")
	cmd.Env = append(os.Environ(), "RAPPEL_PLUGIN_CHILD="+plugins.ABIVersion, envImportProbe+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "imported without serving") || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("the binary did not run its test: %v\n%s", err, out)
	}
}

// TestHost_Command runs children through Host.Command: a command that
// reaches RunChild by another road serves runs as the default does, and a
// command that cannot start is named in the error.
func TestHost_Command(t *testing.T) {
	t.Run("Wrapper", func(t *testing.T) {
		// A shell that execs this binary as the child: the environment
		// the host gives children has no PATH, hence /bin/sh.
		h := MustOpenHost(t, func(h *plugins.Host) {
			h.Command = []string{"/bin/sh", "-c", `exec "$0" ` + plugins.ChildCommand, os.Args[0]}
		})
		p := mustLoad(t, h, "probe", guests+"probe")
		res, err := p.Run(context.Background(), fstest.MapFS{"input.txt": {Data: []byte("hello")}})
		if err != nil || len(res.Records) != 1 || res.Records[0].RecordID != "probe-2" {
			t.Fatalf("run through a wrapper: %v, %+v", err, res)
		}
	})
	t.Run("Missing", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "no-such-rappel")
		h := MustOpenHost(t, func(h *plugins.Host) { h.Command = []string{missing, plugins.ChildCommand} })
		p := mustLoad(t, h, "probe", guests+"probe")
		_, err := p.Run(context.Background(), fstest.MapFS{})
		if err == nil || !strings.Contains(err.Error(), missing) {
			t.Fatalf("err = %v, want the missing command named", err)
		}
	})
}

// TestPlugin_Run_LogFlood: a guest that writes 20,000 long log lines gets
// MaxLogLines of them in the server's log, each cut to a few hundred bytes,
// and one line counting the rest; its problem lines are all kept.
func TestPlugin_Run_LogFlood(t *testing.T) {
	var logged strings.Builder
	h := MustOpenHost(t, func(h *plugins.Host) { h.Logger = slog.New(slog.NewJSONHandler(&logged, nil)) })
	p := mustLoad(t, h, "babble", guests+"babble")
	res, err := p.Run(context.Background(), fstest.MapFS{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 2 {
		t.Errorf("problems = %+v, want the guest's two", res.Problems)
	}
	lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
	if len(lines) != h.MaxLogLines+1 {
		t.Fatalf("%d lines logged (%d bytes), want %d and one counting the rest", len(lines), logged.Len(), h.MaxLogLines+1)
	}
	for _, l := range lines[:h.MaxLogLines] {
		if len(l) > 600 {
			t.Fatalf("a log line of %d bytes was logged: %.200s…", len(l), l)
		}
	}
	last := lines[len(lines)-1]
	want := fmt.Sprintf(`"logged":%d,"not_logged":%d,"not_logged_bytes":`, h.MaxLogLines, 20_000-h.MaxLogLines)
	if !strings.Contains(last, want) {
		t.Fatalf("last line %s, want %s", last, want)
	}
}
