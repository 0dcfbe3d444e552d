package kv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
)

// loadInput is what Load and WriteTables take.
type loadInput struct {
	recs   []*rappel.Record
	parts  map[string][]*rappel.Record
	raw    map[string][]rappel.RawRecord
	states []rappel.SourceState
	info   rappel.DatasetInfo
}

// makeLoadInput returns n records, partial records of two sources (one
// set twice, as a batch would overwrite it), raw records with and without
// data, the sources' states and the dataset info.
func makeLoadInput(n int) loadInput {
	in := loadInput{
		recs:  makeRecords(n),
		parts: map[string][]*rappel.Record{},
		raw:   map[string][]rappel.RawRecord{},
		info:  rappel.DatasetInfo{UpdatedAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), Source: "bundle", Records: n, Bundle: "test"},
	}
	for i, r := range in.recs {
		source := []string{"hcdump", "vrdb"}[i%2]
		in.parts[source] = append(in.parts[source], partial(r.RecordID, "part "+r.RecordID))
		data := "raw " + r.RecordID
		if i%3 == 0 {
			data = ""
		}
		rr := raw(r.RecordID[3:], data, r.RecordID)
		if data == "" {
			rr.Data = nil
		}
		in.raw[source] = append(in.raw[source], rr)
	}
	in.parts["hcdump"] = append(in.parts["hcdump"], partial(in.recs[0].RecordID, "set last"))
	for _, source := range []string{"hcdump", "vrdb"} {
		in.states = append(in.states, rappel.SourceState{Feed: rappel.FeedState{Source: source, Records: len(in.parts[source])}, Plugin: "sha-" + source})
	}
	return in
}

func mustOpenAt(tb testing.TB, fs vfs.FS, path string) *Store {
	tb.Helper()
	s := &Store{Path: path, FS: fs}
	if err := s.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// mustPairs returns every key and value in s, in key order, as lines.
func mustPairs(tb testing.TB, s *Store) []string {
	tb.Helper()
	it, err := s.db.NewIter(nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer it.Close()
	var out []string
	for it.First(); it.Valid(); it.Next() {
		out = append(out, string(it.Key())+" = "+string(it.Value()))
	}
	if err := it.Error(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// mustSamePairs fails unless a and b hold exactly the same keys and values.
func mustSamePairs(tb testing.TB, a, b *Store) {
	tb.Helper()
	pa, pb := mustPairs(tb, a), mustPairs(tb, b)
	if len(pa) != len(pb) {
		tb.Fatalf("the stores hold %d and %d keys", len(pa), len(pb))
	}
	for i := range pa {
		if pa[i] != pb[i] {
			tb.Fatalf("key %d differs:\n%q\n%q", i, pa[i], pb[i])
		}
	}
}

func TestStore_Ingest_SameAsLoad(t *testing.T) {
	ctx := context.Background()
	in := makeLoadInput(300)
	// Small tables, so that the load spans several.
	defer func(n int) { tableTarget = n }(tableTarget)
	tableTarget = 16 << 10

	loaded := mustOpenAt(t, nil, filepath.Join(t.TempDir(), "pebble"))
	if err := loaded.Load(ctx, in.recs, in.parts, in.raw, in.states, in.info); err != nil {
		t.Fatal(err)
	}
	paths, err := WriteTables(ctx, filepath.Join(t.TempDir(), "sst"), in.recs, in.parts, in.raw, in.states, in.info)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 2 {
		t.Fatalf("WriteTables wrote %d tables, want several", len(paths))
	}
	ingested := mustOpenAt(t, nil, filepath.Join(t.TempDir(), "pebble"))
	if err := ingested.Ingest(ctx, paths); err != nil {
		t.Fatal(err)
	}
	mustSamePairs(t, loaded, ingested)
	// No table spans a key the store held (m/schema): all went straight
	// to the bottom level, without a flush; so did the table of one key
	// that starts the change log's generation.
	if m := ingested.db.Metrics(); m.Levels[6].TablesCount != int64(len(paths)+1) || m.Flush.Count != 0 {
		t.Fatalf("after ingesting %d tables and the generation's, the bottom level holds %d and %d flushes ran", len(paths), m.Levels[6].TablesCount, m.Flush.Count)
	}
	if got := mustPairs(t, ingested); len(got) < 300*4 {
		t.Fatalf("the stores hold only %d keys", len(got))
	}
	// What the store reads back through its methods is the load's.
	got, err := ingested.Partials(ctx, "hcdump", []string{in.recs[0].RecordID})
	if err != nil {
		t.Fatal(err)
	}
	if title := got[in.recs[0].RecordID].Translations.EN.Title; title != "set last" {
		t.Fatalf("partial record set twice reads %q, want the last", title)
	}
	// And it survives a reopen, as Ingest's files moved into the store.
	if err := ingested.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ingested.Open(ctx); err != nil {
		t.Fatal(err)
	}
	mustSamePairs(t, loaded, ingested)
}

// baseNames returns the last element of each path, as IngestFS takes
// them from a directory.
func baseNames(paths []string) []string {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	return names
}

func TestStore_IngestFS(t *testing.T) {
	ctx := context.Background()
	in := makeLoadInput(50)
	dir := t.TempDir()
	paths, err := WriteTables(ctx, dir, in.recs, in.parts, in.raw, in.states, in.info)
	if err != nil {
		t.Fatal(err)
	}
	names := baseNames(paths)
	mem := vfs.NewMem()
	if err := mem.MkdirAll("data", 0o755); err != nil {
		t.Fatal(err)
	}
	// A directory left by an interrupted run is cleared first.
	if err := mem.MkdirAll("data/pebble.ingest/stale", 0o755); err != nil {
		t.Fatal(err)
	}
	ingested := mustOpenAt(t, mem, "data/pebble")
	if err := ingested.IngestFS(ctx, os.DirFS(dir), names); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat("data/pebble.ingest"); err == nil {
		t.Fatal("IngestFS left its copies behind")
	}
	loaded := mustOpenAt(t, vfs.NewMem(), "pebble")
	if err := loaded.Load(ctx, in.recs, in.parts, in.raw, in.states, in.info); err != nil {
		t.Fatal(err)
	}
	mustSamePairs(t, loaded, ingested)
	// The source files are the caller's: they stay.
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStore_Ingest_NotEmpty(t *testing.T) {
	ctx := context.Background()
	in := makeLoadInput(10)
	paths, err := WriteTables(ctx, t.TempDir(), in.recs, in.parts, in.raw, in.states, in.info)
	if err != nil {
		t.Fatal(err)
	}
	s := mustOpenAt(t, nil, filepath.Join(t.TempDir(), "pebble"))
	if err := s.PutRecords(ctx, []*rappel.Record{makeRecord(1000)}); err != nil {
		t.Fatal(err)
	}
	before := mustPairs(t, s)
	err = s.Ingest(ctx, paths)
	if err == nil || !strings.Contains(err.Error(), "already holds records") {
		t.Fatalf("Ingest into a store holding a record: %v, want a refusal", err)
	}
	if after := mustPairs(t, s); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatal("a refused Ingest changed the store")
	}
}

func TestWriteTables_Refuses(t *testing.T) {
	in := makeLoadInput(2)
	in.recs = append(in.recs, in.recs[0])
	if _, err := WriteTables(context.Background(), t.TempDir(), in.recs, nil, nil, nil, in.info); err == nil {
		t.Fatal("WriteTables took a record twice")
	}
	if _, err := WriteTables(context.Background(), t.TempDir(), nil, nil, nil, []rappel.SourceState{{Feed: rappel.FeedState{Source: "a/b"}}}, in.info); err == nil {
		t.Fatal("WriteTables took a source name with a slash")
	}
}
