package bundle_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv/index"
)

// mustWriteIndexedBundle writes a bundle with its sstables and its read
// index, as `rappel bundle` does, and returns its dir.
func mustWriteIndexedBundle(tb testing.TB) string {
	tb.Helper()
	// Enough records that the index takes several writes to unpack.
	ids := make([]string, 400)
	for i := range ids {
		ids[i] = fmt.Sprintf("hc-%d", i+1)
	}
	dir := mustWriteBundleDir(tb, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "a", ids...)
	mustAddTables(tb, dir)
	if err := bundle.WriteIndex(dir, func(path string, c bundle.Contents) error {
		snap, err := index.Build(c.Records, c.Info)
		if err != nil {
			return err
		}
		return snap.WriteSegment(path)
	}); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// openIndex opens the bundle's index through d, fails the test on an
// error, and returns its bytes (copied, then released) and what d logged.
func openIndex(tb testing.TB, d bundle.IndexDir, src fs.FS) ([]byte, string) {
	tb.Helper()
	var log strings.Builder
	d.Log = slog.New(slog.NewTextHandler(&log, nil))
	b, version, release, err := d.Open(src)
	if err != nil {
		tb.Fatal(err)
	}
	if version == "" {
		tb.Fatal("no version")
	}
	defer release()
	return bytes.Clone(b), log.String()
}

// TestIndexDir_Unpack checks that the packed index is unpacked into the
// data dir once, read from there afterwards, and unpacked again, with a
// sentence saying why, when what is there is not the whole index: a file
// cut short, an unpack stopped by a full disk midway.
func TestIndexDir_Unpack(t *testing.T) {
	src := os.DirFS(mustWriteIndexedBundle(t))
	m, err := bundle.ReadManifest(src)
	if err != nil {
		t.Fatal(err)
	}
	if m.Index == nil || m.Index.Packed != "index.seg.zst" || len(m.Tables) == 0 || m.Tables[0].Packed == "" {
		t.Fatalf("manifest: index %+v, tables %+v; want both packed", m.Index, m.Tables)
	}
	if _, err := fs.Stat(src, "index.seg"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the bundle holds index.seg unpacked too (%v): each byte once", err)
	}
	want, _, err := bundle.ReadIndex(src)
	if err != nil || int64(len(want)) != m.Index.Size {
		t.Fatalf("ReadIndex: %d bytes (%v), manifest says %d", len(want), err, m.Index.Size)
	}
	d := bundle.IndexDir{Dir: filepath.Join(t.TempDir(), "bundle")}
	seg := filepath.Join(d.Dir, "index.seg")

	got, log := openIndex(t, d, src)
	if !bytes.Equal(got, want) || !strings.Contains(log, "first start") {
		t.Fatalf("first open: %d bytes, log %q", len(got), log)
	}
	// The next start maps what is there.
	if got, log = openIndex(t, d, src); !bytes.Equal(got, want) || log != "" {
		t.Fatalf("second open: %d bytes, log %q; want no unpack", len(got), log)
	}

	t.Run("CutShort", func(t *testing.T) {
		if err := os.Truncate(seg, m.Index.Size/2); err != nil {
			t.Fatal(err)
		}
		got, log := openIndex(t, d, src)
		if !bytes.Equal(got, want) || !strings.Contains(log, "cut short") {
			t.Fatalf("after a truncation: %d bytes, log %q", len(got), log)
		}
	})

	t.Run("DiskFull", func(t *testing.T) {
		// Another bundle's index was there: the unpack starts over, and the
		// disk fills after the first write of the new one.
		if err := os.Remove(filepath.Join(d.Dir, "index.json")); err != nil {
			t.Fatal(err)
		}
		var writes atomic.Int32
		full := errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
			if op.Kind == errorfs.OpFileWrite && strings.HasSuffix(op.Path, "index.seg.tmp") && writes.Add(1) > 1 {
				return syscall.ENOSPC
			}
			return nil
		}))
		_, _, _, err := bundle.IndexDir{Dir: d.Dir, FS: full, Log: slog.New(slog.DiscardHandler)}.Open(src)
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("unpack on a full disk: %v, want ENOSPC", err)
		}
		if fi, err := os.Stat(seg + ".tmp"); err != nil || fi.Size() == 0 || fi.Size() >= m.Index.Size {
			t.Fatalf("the interrupted unpack left %v (%v); want part of the index", fi, err)
		}
		if _, err := os.Stat(filepath.Join(d.Dir, "index.json")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("an interrupted unpack left index.json (%v)", err)
		}
		got, log := openIndex(t, d, src)
		if !bytes.Equal(got, want) || !strings.Contains(log, "did not finish") {
			t.Fatalf("after an interrupted unpack: %d bytes, log %q", len(got), log)
		}
	})

	t.Run("Damaged", func(t *testing.T) {
		dir := mustWriteIndexedBundle(t)
		packed := filepath.Join(dir, "index.seg.zst")
		b, err := os.ReadFile(packed)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0xFF
		if err := os.WriteFile(packed, b, 0o644); err != nil {
			t.Fatal(err)
		}
		d := bundle.IndexDir{Dir: filepath.Join(t.TempDir(), "bundle"), Log: slog.New(slog.DiscardHandler)}
		_, _, _, err = d.Open(os.DirFS(dir))
		var damaged *bundle.DamagedError
		if !errors.As(err, &damaged) || !strings.Contains(err.Error(), "rebuild the binary") {
			t.Fatalf("a damaged packed index: %v, want a refusal", err)
		}
		if _, err := os.Stat(filepath.Join(d.Dir, "index.json")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a damaged index was recorded as unpacked (%v)", err)
		}
	})
}
