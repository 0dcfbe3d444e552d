package bundle_test

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// mustAddTables adds to the bundle in dir the sstables `rappel bundle`
// writes, and returns it.
func mustAddTables(tb testing.TB, dir string) fs.FS {
	tb.Helper()
	if err := bundle.WriteTables(dir, func(sst string, c bundle.Contents) ([]string, error) {
		return kv.WriteTables(context.Background(), sst, c.Records, c.Partials, c.Raw, c.States, c.Info)
	}); err != nil {
		tb.Fatal(err)
	}
	return os.DirFS(dir)
}

// batchOnly hides the store's Ingest: Load fills it through a batch.
type batchOnly struct{ bundle.Store }

// loadTimed opens a store in a new directory, loads src into it, through
// a batch when batch is set, closes it and returns its path, how long
// opening and loading took, and what Load logged.
func loadTimed(tb testing.TB, src fs.FS, batch bool) (string, time.Duration, string) {
	tb.Helper()
	var log strings.Builder
	start := time.Now()
	s := kvtest.Open(tb)
	var store bundle.Store = s
	if batch {
		store = batchOnly{s}
	}
	if err := bundle.Load(context.Background(), src, store, slog.New(slog.NewTextHandler(&log, nil))); err != nil {
		tb.Fatal(err)
	}
	took := time.Since(start)
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	return s.Path, took, log.String()
}

// mustSameStores fails unless the Pebble databases at a and b hold
// exactly the same keys and values; it returns how many.
func mustSameStores(tb testing.TB, a, b string) int {
	tb.Helper()
	open := func(path string) (*pebble.DB, *pebble.Iterator) {
		db, err := pebble.Open(path, &pebble.Options{ReadOnly: true})
		if err != nil {
			tb.Fatal(err)
		}
		it, err := db.NewIter(nil)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { it.Close(); db.Close() })
		return db, it
	}
	_, ia := open(a)
	_, ib := open(b)
	n := 0
	ia.First()
	ib.First()
	for ; ia.Valid() && ib.Valid(); ia.Next() {
		if !bytes.Equal(ia.Key(), ib.Key()) || !bytes.Equal(ia.Value(), ib.Value()) {
			tb.Fatalf("key %d differs: %q = %.80q and %q = %.80q", n, ia.Key(), ia.Value(), ib.Key(), ib.Value())
		}
		n++
		ib.Next()
	}
	if ia.Valid() || ib.Valid() {
		tb.Fatalf("after %d equal keys, one store holds more: %v, %v", n, ia.Valid(), ib.Valid())
	}
	if err := ia.Error(); err != nil {
		tb.Fatal(err)
	}
	if err := ib.Error(); err != nil {
		tb.Fatal(err)
	}
	return n
}

// mustIngestSameAsBatch loads src into one empty store by ingesting its
// sstables and into another through a batch, checks that both hold the
// same keys and values, and logs how long each took.
func mustIngestSameAsBatch(t *testing.T, src fs.FS) {
	t.Helper()
	mustIngestSameAsBatchOf(t, src, src)
}

// mustIngestSameAsBatchOf is mustIngestSameAsBatch with the batch loaded
// from the bundle dir the embedded bundle src was built from, which
// holds the partial and raw records src leaves out.
func mustIngestSameAsBatchOf(t *testing.T, src, dir fs.FS) {
	t.Helper()
	batchPath, batchTook, batchLog := loadTimed(t, dir, true)
	ingestPath, ingestTook, ingestLog := loadTimed(t, src, false)
	if !strings.Contains(batchLog, "by=batch") || !strings.Contains(ingestLog, "by=ingest") {
		t.Fatalf("logs:\n%s%s", batchLog, ingestLog)
	}
	n := mustSameStores(t, batchPath, ingestPath)
	t.Logf("empty data dir to loaded bundle, %d keys: batch %v, ingest %v", n, batchTook.Round(time.Millisecond), ingestTook.Round(time.Millisecond))
}

func TestLoad_Ingest(t *testing.T) {
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	dir := mustWriteBundleDir(t, t1, "a", "hc-1", "hc-2", "hc-3")
	before, err := bundle.Version(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	// A bundle without tables (built before them) is loaded through a
	// batch, even into a store that can ingest.
	if _, _, l := loadTimed(t, os.DirFS(dir), false); !strings.Contains(l, "by=batch") {
		t.Fatalf("a bundle without tables: %s", l)
	}
	src := mustAddTables(t, dir)
	m, err := bundle.ReadManifest(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tables) == 0 || !strings.HasPrefix(m.Tables[0].Name, "sst/") || m.Tables[0].Size == 0 || len(m.Tables[0].SHA256) != 64 {
		t.Fatalf("manifest tables: %+v", m.Tables)
	}
	if after, err := bundle.Version(src); err != nil || after != before {
		t.Fatalf("version with tables %q (%v), without %q: want the same", after, err, before)
	}
	mustIngestSameAsBatch(t, src)
	// And what the store reads back is the bundle's, version included.
	if got := loaded(t, src); got.Info.Bundle != before || len(got.Records) != 3 || len(got.Partials) != 3 || len(got.Raw) != 3 {
		t.Fatalf("ingested: %+v", got)
	}
}

func TestLoad_IngestEmbedded(t *testing.T) {
	src := bundle.Embedded()
	m, err := bundle.ReadManifest(src)
	if err != nil || len(m.Tables) == 0 {
		if os.Getenv("RAPPEL_TEST_BUNDLE") == "" {
			t.Skip("no bundle with tables embedded; `make test` builds one first and sets RAPPEL_TEST_BUNDLE=1")
		}
		t.Fatalf("the embedded bundle has no tables (%v): rebuild it with `make bundle`", err)
	}
	// The package's data/ is the bundle dir the embedded bundle was built
	// from (the test runs in the package's directory).
	mustIngestSameAsBatchOf(t, src, os.DirFS("data"))
}

func TestLoad_IngestDamaged(t *testing.T) {
	dir := mustWriteBundleDir(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "a", "hc-1", "hc-2")
	src := mustAddTables(t, dir)
	m, err := bundle.ReadManifest(src)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, filepath.FromSlash(m.Tables[0].Packed))
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xFF
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s := kvtest.Open(t)
	err = bundle.Load(context.Background(), src, s, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "bundle is damaged: table sst/000001.sst") || !strings.Contains(err.Error(), "rebuild") {
		t.Fatalf("Load of a damaged table: %v, want a refusal naming it", err)
	}
	if empty, err := s.Empty(context.Background()); err != nil || !empty {
		t.Fatalf("after a refused load the store is empty = %v (%v), want empty", empty, err)
	}
}

// TestLoad_ReplaceByIngest checks that a store holding an older bundle,
// never refreshed live, takes a newer bundle's tables in place of its
// data: it then holds what a store filled with the newer bundle holds,
// and nothing of the older one's.
func TestLoad_ReplaceByIngest(t *testing.T) {
	ctx := context.Background()
	older := mustAddTables(t, mustWriteBundleDir(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "a", "hc-1", "hc-2", "hc-3"))
	newer := mustAddTables(t, mustWriteBundleDir(t, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), "b", "hc-2", "hc-4"))
	s := kvtest.Open(t)
	if err := bundle.Load(ctx, older, s, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if err := bundle.Load(ctx, newer, s, slog.New(slog.NewTextHandler(&log, nil))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "replaced the data dir's older bundle") {
		t.Fatalf("log: %s", log.String())
	}
	got, want := mustHeld(t, s), loaded(t, newer)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after replacing the older bundle the store holds\n%+v\nwant what the newer bundle alone gives\n%+v", got, want)
	}
}
