package pgtest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestBinDir checks where the binaries are looked for: a RAPPEL_PG_BIN
// without initdb is "missing" (a skip, or a failure under RAPPEL_CI), not
// a start that fails later.
func TestBinDir(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("RAPPEL_PG_BIN", empty)
	if _, err := BinDir(); !errors.Is(err, ErrMissing) {
		t.Fatalf("RAPPEL_PG_BIN without initdb: %v, want ErrMissing", err)
	}
	if err := os.WriteFile(filepath.Join(empty, "initdb"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if d, err := BinDir(); err != nil || d != empty {
		t.Fatalf("RAPPEL_PG_BIN with initdb: %q, %v", d, err)
	}
	if got := majorOf("/usr/lib/postgresql/15/bin"); got != 15 {
		t.Fatalf("majorOf: %d", got)
	}
}
