// Package plugintest builds plugin modules for tests, so that tests run the
// real .wasm through the real host rather than a stand-in, and lets a test
// binary serve as the host's child process (ServeChild).
package plugintest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/rappel-ca/rappel/plugins"
)

// ServeChild serves one plugin run and exits when this test binary was
// started as a Host's child (its first argument is plugins.ChildCommand, as
// the Host's default command gives it); otherwise it returns at once. Call
// it first in the TestMain of a package whose tests run plugins in child
// processes: it is what rappel's main does for "rappel plugin-child".
func ServeChild() {
	if len(os.Args) > 1 && os.Args[1] == plugins.ChildCommand {
		os.Exit(plugins.RunChild(context.Background()))
	}
}

var (
	mu    sync.Mutex
	built = map[string][]byte{}
)

// Build compiles the Go main package at pkg (an import path or a path
// relative to the module root) for GOOS=wasip1 GOARCH=wasm and returns the
// module's bytes. Results are shared within the test binary; the go build
// cache makes later binaries fast.
func Build(tb testing.TB, pkg string) []byte {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if b, ok := built[pkg]; ok {
		return b
	}
	out := filepath.Join(tb.TempDir(), "plugin.wasm")
	// The flags of the Makefile's plugin builds, so that a plugin built
	// here has the SHA-256 of the bundle's: no commit and no build ID
	// stamped in, only the code.
	cmd := exec.Command(goTool(), "build", "-trimpath", "-buildvcs=false", "-ldflags=-buildid=", "-o", out, pkg)
	cmd.Dir = ModuleRoot(tb)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("building %s for wasip1: %v\n%s", pkg, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	built[pkg] = b
	return b
}

// Install puts wasm into dir as name.wasm the way an operator should:
// written aside under a dot-name, which a registry watching dir ignores,
// then renamed into place, so the registry never reads half a module.
func Install(tb testing.TB, dir, name string, wasm []byte) {
	tb.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, wasm, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name+".wasm")); err != nil {
		tb.Fatal(err)
	}
}

// ModuleRoot returns the directory holding go.mod.
func ModuleRoot(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command(goTool(), "env", "GOMOD").Output()
	if err != nil {
		tb.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
