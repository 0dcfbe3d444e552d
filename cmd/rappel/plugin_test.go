package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
	"github.com/rappel-ca/rappel/plugins/testreport"
)

const testGuests = "./plugins/testdata/guests/"

// mustWasmFile builds the plugin at pkg into dir/name and returns its path.
func mustWasmFile(tb testing.TB, dir, name, pkg string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, plugintest.Build(tb, pkg), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// runPluginTest runs "rappel plugin test" with args and returns its output.
func runPluginTest(tb testing.TB, args ...string) (string, error) {
	tb.Helper()
	c := NewPluginTestCommand()
	if err := c.ParseFlags(args); err != nil {
		tb.Fatal(err)
	}
	var out bytes.Buffer
	c.Stdout = &out
	c.Bundle = fstest.MapFS{} // no bundled plugin unless a test gives one
	err := c.Run(context.Background())
	return out.String(), err
}

func TestPluginTest(t *testing.T) {
	dir := t.TempDir()
	root := plugintest.ModuleRoot(t)
	hc := filepath.Join(root, "testdata", "hc")
	hcdump := mustWasmFile(t, dir, "hcdump.wasm", "./plugins/hcdump/wasm")
	cache := filepath.Join(dir, "cache")

	t.Run("Accepted", func(t *testing.T) {
		out, err := runPluginTest(t, hcdump, "--input", hc, "--cache-dir", cache)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, want := range []string{"source    hcdump: partial records", "2 files", "12 accepted, 0 refused", "verdict   accepted"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("OneFile", func(t *testing.T) {
		// Flags first, module last; the English file alone is a valid dump.
		out, err := runPluginTest(t, "--input", filepath.Join(hc, "recalls-en.json"), "--cache-dir", cache, hcdump)
		if err != nil || !strings.Contains(out, "1 files") {
			t.Fatalf("%v\n%s", err, out)
		}
	})
	t.Run("LosesRecords", func(t *testing.T) {
		lossy := mustWasmFile(t, dir, "hcdump-lossy.wasm", testGuests+"lossy")
		out, err := runPluginTest(t, lossy, "--source", "hcdump", "--input", hc, "--against", hcdump, "--cache-dir", cache)
		if !errors.Is(err, errRejected) || !strings.Contains(out, "verdict   rejected: it lost 6 of the 12 records") || !strings.Contains(out, "the candidate lacks 6 of them") {
			t.Fatalf("err = %v\n%s", err, out)
		}
	})
	t.Run("AgainstBundled", func(t *testing.T) {
		lossy := mustWasmFile(t, dir, "hcdump-lossy.wasm", testGuests+"lossy")
		c := NewPluginTestCommand()
		if err := c.ParseFlags([]string{lossy, "--source", "hcdump", "--input", hc, "--cache-dir", cache, "--json"}); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		c.Stdout = &out
		c.Bundle = fstest.MapFS{"plugins/hcdump.wasm": {Data: plugintest.Build(t, "./plugins/hcdump/wasm")}}
		if err := c.Run(context.Background()); !errors.Is(err, errRejected) {
			t.Fatalf("err = %v\n%s", err, out.String())
		}
		var rep testreport.Report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Against == nil || rep.Against.Plugin != "bundled" || rep.Against.Lost != 6 || rep.Verdict != "rejected" {
			t.Fatalf("report = %+v, against %+v", rep, rep.Against)
		}
	})
	t.Run("Diff", func(t *testing.T) {
		// Every record kept, every hazard rewritten: the server would
		// hold it for approval, and --diff says what changed.
		norisk := mustWasmFile(t, dir, "hcdump-norisk.wasm", testGuests+"norisk")
		out, err := runPluginTest(t, norisk, "--source", "hcdump", "--input", hc, "--against", hcdump, "--cache-dir", cache, "--diff")
		for _, want := range []string{"diff      12 records compared; 0 gained [], 0 lost []", "hazard_description    12 changed (100.0%)", "title_en               0 changed (  0.0%) []", "verdict   held: it changed the hazard_description of 12 of the 12 records", "/admin/plugins/hcdump/approve"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if !errors.Is(err, errRejected) {
			t.Fatalf("err = %v, want the held verdict's exit", err)
		}
		// The same records: accepted, nothing changed.
		chatty := mustWasmFile(t, dir, "hcdump-chatty.wasm", testGuests+"chatty")
		out, err = runPluginTest(t, chatty, "--source", "hcdump", "--input", hc, "--against", hcdump, "--cache-dir", cache, "--diff")
		if err != nil || !strings.Contains(out, "hazard_description     0 changed") || !strings.Contains(out, "verdict   accepted") {
			t.Fatalf("err = %v\n%s", err, out)
		}
	})
	t.Run("BadFields", func(t *testing.T) {
		bad := mustWasmFile(t, dir, "bad.wasm", testGuests+"badfields")
		out, err := runPluginTest(t, bad, "--source", "vrdb", "--input", hc, "--cache-dir", cache, "--json")
		if !errors.Is(err, errRejected) {
			t.Fatalf("err = %v\n%s", err, out)
		}
		var rep testreport.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Partial || rep.Accepted != 1 || rep.Refused != 4 || len(rep.Problems) != 4 || !strings.Contains(rep.Reason, "the host refused 4 of its records") {
			t.Fatalf("report = %+v", rep)
		}
		if rep.SHA256 != plugins.SHA256(plugintest.Build(t, testGuests+"badfields")) {
			t.Errorf("sha256 = %s", rep.SHA256)
		}
	})
	t.Run("Runaway", func(t *testing.T) {
		loop := mustWasmFile(t, dir, "loop.wasm", testGuests+"loop")
		out, err := runPluginTest(t, loop, "--source", "hcdump", "--input", hc, "--cache-dir", cache, "--timeout", "500ms")
		if !errors.Is(err, errRejected) || !strings.Contains(out, "stopped after 500ms") {
			t.Fatalf("err = %v\n%s", err, out)
		}
	})
	t.Run("KeepsNothing", func(t *testing.T) {
		// A dump with no row: the plugin runs, and keeps nothing, which
		// the server never serves (it refuses to empty a source).
		empty := filepath.Join(dir, "recalls-en.json")
		if err := os.WriteFile(empty, []byte("[]"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := runPluginTest(t, hcdump, "--input", empty, "--cache-dir", cache)
		if !errors.Is(err, errRejected) || !strings.Contains(out, "0 accepted") || !strings.Contains(out, "verdict   rejected: it kept nothing of its input") {
			t.Fatalf("err = %v\n%s", err, out)
		}
	})
	t.Run("NotWasm", func(t *testing.T) {
		junk := filepath.Join(dir, "junk.wasm")
		os.WriteFile(junk, []byte("not a module"), 0o644)
		out, err := runPluginTest(t, junk, "--source", "hcdump", "--input", hc, "--cache-dir", cache)
		if !errors.Is(err, errRejected) || !strings.Contains(out, "not a usable module") {
			t.Fatalf("err = %v\n%s", err, out)
		}
	})
}

func TestPluginTest_Flags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"x.wasm"},
		{"x.wasm", "--input", "in", "--stop", "sometimes"},
		{"x.wasm", "--input", "in", "--max-loss", "2"},
		{"x.wasm", "--input", "in", "extra"},
	} {
		if err := NewPluginTestCommand().ParseFlags(args); err == nil {
			t.Errorf("ParseFlags(%q) accepted", args)
		}
	}
	if err := run(context.Background(), []string{"plugin", "frobnicate"}); err == nil || !strings.Contains(err.Error(), "unknown plugin command") {
		t.Errorf("err = %v", err)
	}
}

// TestPluginTest_RecordsAndLog checks that --records writes the records
// the host accepted, one JSON object a line, and that --log shows the
// plugin's own stderr lines, which the report otherwise drops.
func TestPluginTest_RecordsAndLog(t *testing.T) {
	dir := t.TempDir()
	hc := filepath.Join(plugintest.ModuleRoot(t), "testdata", "hc")
	chatty := mustWasmFile(t, dir, "hcdump.wasm", testGuests+"chatty")
	records := filepath.Join(dir, "out.ndjson")
	out, err := runPluginTest(t, chatty, "--input", hc, "--cache-dir", filepath.Join(dir, "cache"), "--records", records, "--log")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"log       2 lines", "  chatty: starting", "  chatty: 12 records"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimSuffix(string(mustRead(t, records)), "\n"), "\n")
	if len(lines) != 12 {
		t.Fatalf("%d records written, want 12", len(lines))
	}
	for _, line := range lines {
		var r rappel.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.RecordID == "" || r.Agency == "" {
			t.Errorf("record line %q: %v", line, err)
		}
	}
	if out, _ := runPluginTest(t, chatty, "--input", hc, "--cache-dir", filepath.Join(dir, "cache")); strings.Contains(out, "chatty:") {
		t.Errorf("log lines shown without --log:\n%s", out)
	}
}

// TestPluginTest_WholeLog checks that --log shows every log line of the
// plugin, past the first lines a run the server logs.
func TestPluginTest_WholeLog(t *testing.T) {
	dir := t.TempDir()
	babble := mustWasmFile(t, dir, "hcdump.wasm", testGuests+"babble")
	out, _ := runPluginTest(t, babble, "--input", dir, "--against", "none", "--cache-dir", filepath.Join(dir, "cache"), "--log")
	if want := "20000 lines"; !strings.Contains(out, want) || !strings.Contains(out, "babble line 19999 ") {
		t.Errorf("output lacks %q and the last line:\n%.2000s", want, out)
	}
}

// TestPluginTest_UnknownSource checks that a module named after no source
// is refused as the server refuses it, not judged on its own.
func TestPluginTest_UnknownSource(t *testing.T) {
	dir := t.TempDir()
	hc := filepath.Join(plugintest.ModuleRoot(t), "testdata", "hc")
	wasm := mustWasmFile(t, dir, "recalls.wasm", "./plugins/hcdump/wasm")
	out, err := runPluginTest(t, wasm, "--input", hc, "--cache-dir", filepath.Join(dir, "cache"))
	if err == nil || !strings.Contains(err.Error(), `there is no source named "recalls"`) || !strings.Contains(err.Error(), "detail, hcdump, vrdb") || strings.Contains(out, "accepted") {
		t.Fatalf("err = %v\n%s", err, out)
	}
}

// TestPluginTest_AgainstFailing tests a fix for a renamed column against
// the plugin it replaces, which fails on the renamed file: as the server
// does on such a payload, the candidate is judged alone and accepted, and
// the report says why nothing was compared.
func TestPluginTest_AgainstFailing(t *testing.T) {
	dir := t.TempDir()
	root := plugintest.ModuleRoot(t)
	doc := mustRead(t, filepath.Join(root, "testdata", "tc", "vrdb.csv"))
	in := filepath.Join(dir, "vrdb.csv")
	os.WriteFile(in, bytes.Replace(doc, []byte(`"MANUFACTURER_RECALL_NO_TXT"`), []byte(`"MANUFACTURER_RECALL_NUMBER"`), 1), 0o644)
	fixed := mustWasmFile(t, dir, "vrdb.wasm", "./plugins/testdata/guests/vrdbrenamed")
	bundled := mustWasmFile(t, t.TempDir(), "vrdb.wasm", "./plugins/vrdb/wasm")
	out, err := runPluginTest(t, fixed, "--input", in, "--against", bundled, "--cache-dir", filepath.Join(dir, "cache"))
	if err != nil || !strings.Contains(out, "which failed on this input") || !strings.Contains(out, "MANUFACTURER_RECALL_NO_TXT") || !strings.Contains(out, "verdict   accepted") {
		t.Fatalf("%v\n%s", err, out)
	}
}
