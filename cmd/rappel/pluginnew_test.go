package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// TestPluginNew scaffolds the vrdb plugin's module as an integrator would,
// outside the repository, against this checkout (--replace), then runs its
// own test, builds it to wasm with the README's command, and checks with
// "rappel plugin test" that the server would take it: its sample renames
// a column, which the scaffold's one-line alias maps.
func TestPluginNew(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := filepath.Join(t.TempDir(), "vrdb-plugin")
	root := plugintest.ModuleRoot(t)
	if err := run(context.Background(), []string{"plugin", "new", "vrdb", "--dir", dir, "--replace", root}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"go.mod", "main.go", "main_test.go", "Makefile", "README.md", "testdata/in/vrdb.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the scaffold lacks %s", f)
		}
	}
	const build = "GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -trimpath -buildvcs=false -o vrdb.wasm ."
	for _, f := range []string{"README.md", "Makefile"} {
		if b := mustRead(t, filepath.Join(dir, f)); !strings.Contains(strings.ReplaceAll(string(b), "\t", ""), build) {
			t.Errorf("%s lacks the build command %q:\n%s", f, build, b)
		}
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	step := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(goTool, args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// The scaffold's own test runs on its sample: passes, not skipped.
	ownTest := func() {
		t.Helper()
		step(nil, "mod", "tidy")
		if out := step(nil, "test", "-count=1", "-v", "./..."); !strings.Contains(out, "--- PASS: TestNormalize") {
			t.Fatalf("the scaffold's test did not pass:\n%s", out)
		}
	}
	ownTest()
	step([]string{"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0"}, "build", "-trimpath", "-buildvcs=false", "-o", "vrdb.wasm", ".")

	out, err := runPluginTest(t, filepath.Join(dir, "vrdb.wasm"), "--input", filepath.Join(dir, "testdata", "in"), "--cache-dir", filepath.Join(dir, "cache"))
	if err != nil || !strings.Contains(out, "1 accepted, 0 refused") || !strings.Contains(out, "problems  0") {
		t.Fatalf("%v\n%s", err, out)
	}

	// The other sources' scaffolds pass their own test on their sample.
	for _, source := range []string{"hcdump", "detail"} {
		dir = filepath.Join(t.TempDir(), source)
		if err := run(context.Background(), []string{"plugin", "new", source, "--dir", dir, "--replace", root}); err != nil {
			t.Fatal(err)
		}
		ownTest()
	}

	// A second scaffold into the same directory, or one for no source, is
	// refused with what to do.
	if err := run(context.Background(), []string{"plugin", "new", "vrdb", "--dir", dir, "--replace", root}); err == nil || !strings.Contains(err.Error(), "give another --dir") {
		t.Errorf("err = %v", err)
	}
	if err := run(context.Background(), []string{"plugin", "new", "recalls", "--replace", root}); err == nil || !strings.Contains(err.Error(), `there is no source named "recalls"`) {
		t.Errorf("err = %v", err)
	}
}
