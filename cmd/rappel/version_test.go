package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/internal/buildinfo"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// stamp is what TestBinary stamps into the binary it builds.
var stamp = buildinfo.Info{Version: "v9.8.7-test", Commit: "0123456789abcdef0123456789abcdef01234567", BuildDate: "2026-11-22T06:00:00Z"}

// mustBuildRappel builds this command as the Makefile does, stamping
// stamp with -ldflags -X, and with -buildvcs=false as CI builds: the stamp
// must not need the toolchain's version control data.
func mustBuildRappel(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "rappel")
	pkg := "github.com/rappel-ca/rappel/internal/buildinfo"
	ldflags := "-X " + pkg + ".version=" + stamp.Version + " -X " + pkg + ".commit=" + stamp.Commit + " -X " + pkg + ".date=" + stamp.BuildDate
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, "./cmd/rappel")
	cmd.Dir = plugintest.ModuleRoot(tb)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// childEnv is the test's environment without the variables that would
// change what the binary does (RAPPEL_*, OTEL_*), plus extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RAPPEL_") && !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// runBinary runs bin with args and env and returns its exit code, stdout
// and stderr.
func runBinary(tb testing.TB, bin string, env []string, args ...string) (int, string, string) {
	tb.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &stdout, &stderr
	cmd.Dir = tb.TempDir()
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	tb.Fatalf("running rappel %s: %v", strings.Join(args, " "), err)
	return 0, "", ""
}

// TestBinary runs the real binary, built once, for what only the process
// shows: the stamped build, exit codes, stdout and stderr.
func TestBinary(t *testing.T) {
	bin := mustBuildRappel(t)
	env := childEnv()

	t.Run("Version", func(t *testing.T) {
		want := "rappel " + stamp.Version + "\ncommit " + stamp.Commit + "\nbuilt  " + stamp.BuildDate + "\ngo     go"
		api := "\napi    " + edge.APIVersion + "\n"
		for _, arg := range []string{"version", "--version", "-version"} {
			code, stdout, stderr := runBinary(t, bin, env, arg)
			if code != 0 || !strings.HasPrefix(stdout, want) || !strings.HasSuffix(stdout, api) || stderr != "" {
				t.Errorf("rappel %s: exit %d, stdout %q, stderr %q; want 0 and %q", arg, code, stdout, stderr, want)
			}
		}
	})

	t.Run("Help", func(t *testing.T) {
		for _, args := range [][]string{
			{"help"}, {"-h"}, {"--help"},
			{"serve", "-h"}, {"serve", "--help"}, {"serve", "-help"}, {"serve", "--addr", "127.0.0.1:1", "-h"},
			{"bundle", "-h"}, {"plugin", "-h"}, {"plugin", "test", "-h"}, {"plugin", "test", "x.wasm", "--help"},
			{"keys", "-h"}, {"keys", "add", "-h"}, {"keys", "list", "--help"}, {"keys", "revoke", "-help"}, {"keys", "revoke", "ID", "-h"},
			{"version", "-h"}, {"--version", "--help"},
		} {
			code, stdout, stderr := runBinary(t, bin, env, args...)
			if code != 0 || !strings.Contains(stdout, "Usage") || stderr != "" {
				t.Errorf("rappel %s: exit %d, stdout %q, stderr %q; want 0 and the usage on stdout", strings.Join(args, " "), code, stdout, stderr)
			}
		}
		// A command's help names each flag's variable.
		_, stdout, _ := runBinary(t, bin, env, "serve", "--help")
		for _, want := range []string{"--data-dir directory  [$RAPPEL_DATA_DIR]", "--log-level level  [$RAPPEL_LOG_LEVEL]", "--metrics-addr host:port  [$RAPPEL_METRICS_ADDR]"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("rappel serve --help lacks %q:\n%s", want, stdout)
			}
		}
	})

	t.Run("UsageErrors", func(t *testing.T) {
		for _, tc := range []struct {
			args   []string
			stderr string
		}{
			{nil, "Usage:"},
			{[]string{"frobnicate"}, `unknown command "frobnicate"`},
			{[]string{"serve", "--nope"}, `flag provided but not defined: -nope; "rappel serve -h" lists the flags`},
			{[]string{"serve", "--log-level", "verbose"}, "give debug, info, warn or error"},
			{[]string{"serve", "--feeds", "sometimes"}, "--feeds is \"sometimes\""},
			{[]string{"serve", "extra"}, `unexpected argument "extra"`},
			{[]string{"keys"}, "rappel keys add"},
			{[]string{"keys", "add", "--plan", "gold", "--label", "x"}, "--plan is \"gold\""},
			{[]string{"plugin"}, "rappel plugin test"},
			{[]string{"plugin", "test"}, "give the plugin to test"},
			{[]string{"version", "extra"}, `unexpected argument "extra"`},
		} {
			code, stdout, stderr := runBinary(t, bin, env, tc.args...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("rappel %s: exit %d, stdout %q, stderr %q; want 2 and %q on stderr", strings.Join(tc.args, " "), code, stdout, stderr, tc.stderr)
			}
		}
	})

	t.Run("UnknownEnv", func(t *testing.T) {
		env := childEnv("RAPPEL_DATA_DIRR=/srv/rappel", "RAPPEL_LOG_FORMAT=json", "RAPPEL_CI=1", "RAPPEL_TEST_BUNDLE=1")
		code, stdout, stderr := runBinary(t, bin, env, "version")
		want := "rappel: warning: RAPPEL_DATA_DIRR is set, but no rappel command has a flag --data-dirr: it is ignored; did you mean RAPPEL_DATA_DIR (--data-dir)?\n"
		if code != 0 || !strings.HasPrefix(stdout, "rappel "+stamp.Version) || stderr != want {
			t.Errorf("exit %d, stdout %q, stderr %q; want 0, the version and only\n%s", code, stdout, stderr, want)
		}
	})

	t.Run("Serve", func(t *testing.T) { testBinaryServe(t, bin) })
}

// testBinaryServe starts the stamped binary's server on the embedded
// bundle and reads the build back from its first log line, GET /health and
// the metrics listener; its JSON log writes durations as seconds.
func testBinaryServe(t *testing.T, bin string) {
	if os.Getenv("RAPPEL_TEST_BUNDLE") == "" {
		t.Skip("no bundle embedded; `make test` builds one first and sets RAPPEL_TEST_BUNDLE=1")
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--data-dir", t.TempDir(), "--log-format", "json", "--log-level", "info")
	cmd.Env = childEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan map[string]any, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"msg": "not JSON: " + sc.Text()}
			}
			lines <- m
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		for range lines { // drain, so that the server never blocks writing its log
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("rappel serve after SIGTERM: %v", err)
		}
	})

	var first, loaded map[string]any
	var api, metrics string
	deadline := time.After(5 * time.Minute)
	for api == "" || metrics == "" {
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatal("rappel serve ended before listening")
			}
			if first == nil {
				first = m
			}
			switch m["msg"] {
			case "serving":
				api, _ = m["addr"].(string)
			case "serving metrics":
				metrics, _ = m["addr"].(string)
			case "loaded bundle into empty store":
				loaded = m
			}
		case <-deadline:
			t.Fatal("rappel serve did not start listening")
		}
	}

	if first["msg"] != "starting rappel" || first["commit"] != stamp.Commit || first["version"] != stamp.Version {
		t.Errorf("first log line = %v, want the stamped build", first)
	}
	if took, ok := loaded["took"].(float64); !ok || took <= 0 {
		t.Errorf("loading the bundle logged took %#v, want seconds as a number: %v", loaded["took"], loaded)
	}

	res, err := http.Get("http://" + api + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var h struct {
		Build      buildinfo.Info `json:"build"`
		APIVersion string         `json:"api_version"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &h) != nil ||
		h.Build.Version != stamp.Version || h.Build.Commit != stamp.Commit || h.Build.BuildDate != stamp.BuildDate || !strings.HasPrefix(h.Build.GoVersion, "go") ||
		h.APIVersion != edge.APIVersion {
		t.Errorf("GET /health = %d %s, want the stamped build and api_version %s", res.StatusCode, body, edge.APIVersion)
	}

	res, err = http.Get("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	f := fams["rappel_build_info"]
	if f == nil || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetGauge().GetValue() != 1 {
		t.Fatalf("rappel_build_info = %v", f)
	}
	labels := map[string]string{}
	for _, l := range f.GetMetric()[0].GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["version"] != stamp.Version || labels["commit"] != stamp.Commit || labels["build_date"] != stamp.BuildDate || !strings.HasPrefix(labels["go_version"], "go") {
		t.Errorf("rappel_build_info labels = %v, want the stamped build", labels)
	}
}
