package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rappel-ca/rappel/bundle"
)

// TestBundle_Reproducible builds the same bundle twice, with no
// --built-at, and checks that the two are the same bytes, file for file,
// stamped with SOURCE_DATE_EPOCH rather than the clock.
func TestBundle_Reproducible(t *testing.T) {
	epoch := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	t.Setenv("SOURCE_DATE_EPOCH", "1795564800")
	a := mustBuildBundleAt(t, "")
	time.Sleep(1100 * time.Millisecond) // a clock stamp would differ
	b := mustBuildBundleAt(t, "")
	m, err := bundle.ReadManifest(os.DirFS(a))
	if err != nil {
		t.Fatal(err)
	}
	if !m.BuiltAt.Equal(epoch) {
		t.Fatalf("built_at %v, want SOURCE_DATE_EPOCH's %v", m.BuiltAt, epoch)
	}
	files := mustReadTree(t, a)
	other := mustReadTree(t, b)
	if len(files) != len(other) || len(files) < 5 {
		t.Fatalf("the builds hold %d and %d files", len(files), len(other))
	}
	for name, body := range files {
		if !bytes.Equal(body, other[name]) {
			t.Errorf("%s differs between two builds of the same corpus (%d and %d bytes)", name, len(body), len(other[name]))
		}
	}
}

// mustReadTree reads every file under dir, by slash-separated path.
func mustReadTree(tb testing.TB, dir string) map[string][]byte {
	tb.Helper()
	out := map[string][]byte{}
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		out[p], err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
