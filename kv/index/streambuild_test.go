package index

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// checkSameSegment checks that the base segment built from store, streaming,
// is byte for byte the one BuildOptions makes of the store's records.
func checkSameSegment(t *testing.T, store *kv.Store, dir string) {
	t.Helper()
	ctx := context.Background()
	info, err := store.DatasetInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var recs []*rappel.Record
	if err := store.ForEachRecord(ctx, func(r *rappel.Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	snap, err := BuildOptions(recs, info, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := snap.EncodeSegment()
	if err != nil {
		t.Fatal(err)
	}
	m := segmentsAt(store, dir)
	if err := os.MkdirAll(m.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(m.Dir, "base.seg")
	if err := m.buildBase(ctx, info, path); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("the streamed segment (%d bytes) differs from the built one (%d bytes) from byte %d", len(got), len(want), i)
	}
	checkOnlyFiles(t, m.Dir, "base.seg")
}

// checkOnlyFiles checks that dir holds the files names and no others: a
// build leaves no temporary file behind.
func checkOnlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("%s holds %q, want %q", dir, got, names)
	}
}

// TestStreamBuild_SameSegment checks the streamed base of a store against
// the segment BuildOptions makes of the same records.
func TestStreamBuild_SameSegment(t *testing.T) {
	t.Run("records", func(t *testing.T) {
		dir := t.TempDir()
		store := seedStore(t, dir)
		defer store.Close()
		checkSameSegment(t, store, dir)
	})
	t.Run("empty", func(t *testing.T) {
		dir := t.TempDir()
		store := kvtest.OpenAt(t, filepath.Join(dir, "pebble"))
		defer store.Close()
		checkSameSegment(t, store, dir)
	})
}

// TestStreamBuild_SameSegmentBundle is TestStreamBuild_SameSegment on the
// bundle's records, every field and language of a real data set.
func TestStreamBuild_SameSegmentBundle(t *testing.T) {
	var recs []*rappel.Record
	if err := bundle.ReadRecords(bundle.Embedded(), func(r *rappel.Record) error { recs = append(recs, r); return nil }); err != nil || len(recs) == 0 {
		if os.Getenv("RAPPEL_TEST_BUNDLE") != "" {
			t.Fatalf("reading the bundle's records: %v", err)
		}
		t.Skip("no bundle embedded: run `make bundle`")
	}
	dir := t.TempDir()
	store := kvtest.OpenAt(t, filepath.Join(dir, "pebble"))
	defer store.Close()
	for i := 0; i < len(recs); i += 5000 {
		if err := store.PutRecords(context.Background(), recs[i:min(i+5000, len(recs))]); err != nil {
			t.Fatal(err)
		}
	}
	checkSameSegment(t, store, dir)
}

// TestStreamBuild_FullDisk checks that a build whose temporary files fill
// the disk fails saying so, and leaves no file behind.
func TestStreamBuild_FullDisk(t *testing.T) {
	dir := t.TempDir()
	store := seedStore(t, dir)
	defer store.Close()
	m := segmentsAt(store, dir)
	m.spillLimit = 64 << 10
	err := m.Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("Open on a full disk: %v, want an error saying the disk is full", err)
	}
	checkOnlyFiles(t, m.Dir)
}

// TestStreamBuild_CorruptRecord checks that a record the store cannot
// decode fails the build naming it, and leaves no file behind.
func TestStreamBuild_CorruptRecord(t *testing.T) {
	dir := t.TempDir()
	store := seedStore(t, dir)
	var id string
	if err := store.ForEachRecord(context.Background(), func(r *rappel.Record) error { id = r.RecordID; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{Logger: quietPebble{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Set([]byte("r/"+id), []byte{1, '{', '"'}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	store = kvtest.OpenAt(t, filepath.Join(dir, "pebble"))
	defer store.Close()
	m := segmentsAt(store, dir)
	err = m.Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), "decoding record \""+id+"\"") {
		t.Fatalf("Open over a corrupt record: %v, want an error naming record %s", err, id)
	}
	checkOnlyFiles(t, m.Dir)
}

// quietPebble is a pebble.Logger that keeps its replay notes to itself.
type quietPebble struct{}

func (quietPebble) Infof(string, ...any)  {}
func (quietPebble) Errorf(string, ...any) {}
func (quietPebble) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

// TestStreamBuild_CollectorTarget checks that a base is built with the
// collector's target lowered (its peak heap nearer what it keeps) and
// that the process's own target is back once it is written.
func TestStreamBuild_CollectorTarget(t *testing.T) {
	gogc := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	defer debug.SetGCPercent(debug.SetGCPercent(180))
	dir := t.TempDir()
	store := seedStore(t, dir)
	defer store.Close()
	m := segmentsAt(store, dir)
	var during []uint64
	m.onStep = func(string) { during = append(during, gogc()) }
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(during) == 0 || during[0] != buildGCPercent {
		t.Errorf("GOGC while the base was written: %v, want %d", during, buildGCPercent)
	}
	if got := gogc(); got != 180 {
		t.Errorf("GOGC after the build: %d, want the process's 180 back", got)
	}
}
