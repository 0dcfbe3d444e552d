package segment

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv/index"
)

// bundled is the snapshot of the embedded bundle, built once.
var bundled struct {
	once sync.Once
	snap *index.Snapshot
	err  error
}

// mustBundleSnapshot returns the snapshot of the embedded bundle, built as
// a node serving it builds it, skipping when the binary has no bundle.
func mustBundleSnapshot(tb testing.TB) *index.Snapshot {
	tb.Helper()
	bundled.once.Do(func() {
		m, err := bundle.ReadManifest(bundle.Embedded())
		if err != nil {
			bundled.err = err
			return
		}
		recs, err := bundleRecords()
		if err != nil {
			bundled.err = err
			return
		}
		bundled.snap, bundled.err = index.Build(recs, rappel.DatasetInfo{UpdatedAt: m.BuiltAt, Source: "bundle"})
	})
	switch {
	case errors.Is(bundled.err, bundle.ErrEmpty) && os.Getenv("RAPPEL_TEST_BUNDLE") == "":
		tb.Skip("no data bundle is embedded; run `make bundle` to test and benchmark against the real data")
	case bundled.err != nil:
		tb.Fatal(bundled.err)
	}
	return bundled.snap
}

func bundleRecords() ([]*rappel.Record, error) {
	var recs []*rappel.Record
	err := bundle.ReadRecords(bundle.Embedded(), func(r *rappel.Record) error {
		recs = append(recs, r)
		return nil
	})
	return recs, err
}

// TestWriteFile_Bundle writes the whole bundle's segment, maps it, and
// checks that it serves every record, filter and term as the index does.
func TestWriteFile_Bundle(t *testing.T) {
	snap := mustBundleSnapshot(t)
	path := filepath.Join(t.TempDir(), "bundle.seg")
	if err := WriteFile(path, snap); err != nil {
		t.Fatal(err)
	}
	seg, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	checkSame(t, snap, seg)
	m, _ := bundle.ReadManifest(bundle.Embedded())
	if seg.Len() != m.Records {
		t.Fatalf("%d records, the manifest says %d", seg.Len(), m.Records)
	}
	t.Run("Bytes", func(t *testing.T) {
		// The same file read as bytes, as it would be embedded.
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		seg, err := OpenBytes("bundle", b)
		if err != nil {
			t.Fatal(err)
		}
		if seg.Digest() != mustDigest(t, path) {
			t.Fatal("the bytes and the mapping differ")
		}
	})
}

func mustDigest(t *testing.T, path string) [32]byte {
	t.Helper()
	seg, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	return seg.Digest()
}
