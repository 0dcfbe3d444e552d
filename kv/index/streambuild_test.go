package index

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
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
	checkSameSegmentRuns(t, store, dir, 0)
}

// checkSameSegmentRuns is checkSameSegment with a build holding budget
// bytes of postings before it writes them out as runs (0 for the
// default), and returns how many runs it wrote, both streams together.
func checkSameSegmentRuns(t *testing.T, store *kv.Store, dir string, budget int64) int {
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
	m.runBudget = budget
	var log bytes.Buffer
	m.Log = slog.New(slog.NewJSONHandler(&log, nil))
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
	var logged struct {
		EN int `json:"runs_en"`
		FR int `json:"runs_fr"`
	}
	line, _, _ := bytes.Cut(log.Bytes(), []byte("\n"))
	if err := json.Unmarshal(line, &logged); err != nil {
		t.Fatalf("the build's log %q: %v", log.String(), err)
	}
	return logged.EN + logged.FR
}

// bundleRecords returns the bundle's records, or skips without them.
func bundleRecords(t *testing.T) []*rappel.Record {
	t.Helper()
	var recs []*rappel.Record
	if err := bundle.ReadRecords(bundle.Embedded(), func(r *rappel.Record) error { recs = append(recs, r); return nil }); err != nil || len(recs) == 0 {
		if os.Getenv("RAPPEL_TEST_BUNDLE") != "" {
			t.Fatalf("reading the bundle's records: %v", err)
		}
		t.Skip("no bundle embedded: run `make bundle`")
	}
	return recs
}

// storeOf returns a store in dir holding recs.
func storeOf(t *testing.T, dir string, recs []*rappel.Record) *kv.Store {
	t.Helper()
	store := kvtest.OpenAt(t, filepath.Join(dir, "pebble"))
	for i := 0; i < len(recs); i += 5000 {
		if err := store.PutRecords(context.Background(), recs[i:min(i+5000, len(recs))]); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

// TestStreamBuild_Runs checks that a build whose postings go out as many
// runs, merged when the segment is written, makes the segment byte for
// byte, and removes its runs: a run per document of the mixed records,
// and a small budget over a few thousand of the bundle's.
func TestStreamBuild_Runs(t *testing.T) {
	t.Run("run_per_document", func(t *testing.T) {
		dir := t.TempDir()
		store := seedStore(t, dir)
		defer store.Close()
		if got, want := checkSameSegmentRuns(t, store, dir, 1), 2*len(mixedRecords()); got < want-2 {
			t.Errorf("%d runs, want a run per document and stream (about %d)", got, want)
		}
	})
	t.Run("bundle", func(t *testing.T) {
		recs := bundleRecords(t)
		dir := t.TempDir()
		store := storeOf(t, dir, recs[:min(len(recs), 4000)])
		defer store.Close()
		if got := checkSameSegmentRuns(t, store, dir, 256<<10); got < 20 {
			t.Errorf("%d runs, want many", got)
		}
	})
}

// TestStreamBuild_FullDiskRuns checks that a build whose runs of postings
// fill the disk fails saying so, and leaves no file behind: the records'
// JSON fits, the first run does not.
func TestStreamBuild_FullDiskRuns(t *testing.T) {
	dir := t.TempDir()
	store := seedStore(t, dir)
	defer store.Close()
	snap, err := BuildOptions(mixedRecords(), rappel.DatasetInfo{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := segmentsAt(store, dir)
	m.spillLimit = 2*int64(len(snap.enc.arena)) + 1 // the two files of JSON
	m.runBudget = 1
	err = m.Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("Open on a disk the runs fill: %v, want an error saying the disk is full", err)
	}
	checkOnlyFiles(t, m.Dir)
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
	recs := bundleRecords(t)
	dir := t.TempDir()
	store := storeOf(t, dir, recs)
	defer store.Close()
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
