package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
)

// isChangeLog reports whether key belongs to the change log: an entry or
// its generation.
func isChangeLog(key []byte) bool {
	return bytes.HasPrefix(key, []byte(changePrefix)) || bytes.Equal(key, changesKey)
}

// entry is one change as Changes passes it.
type entry struct {
	seq     uint64
	id      string
	deleted bool
}

func (e entry) String() string {
	if e.deleted {
		return fmt.Sprintf("%d-%s", e.seq, e.id)
	}
	return fmt.Sprintf("%d+%s", e.seq, e.id)
}

// mustChanges returns the entries after after, failing the test on an
// error.
func mustChanges(tb testing.TB, s *Store, gen, after uint64) []entry {
	tb.Helper()
	out, err := changes(s, gen, after)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func changes(s *Store, gen, after uint64) ([]entry, error) {
	var out []entry
	err := s.Changes(context.Background(), gen, after, func(seq uint64, id string, deleted bool) error {
		out = append(out, entry{seq, id, deleted})
		return nil
	})
	return out, err
}

// mustLog fails unless the entries after after are want, written as
// "seq+id" for a put and "seq-id" for a delete, separated by spaces.
func mustLog(tb testing.TB, s *Store, gen, after uint64, want string) {
	tb.Helper()
	var got []string
	for _, e := range mustChanges(tb, s, gen, after) {
		got = append(got, e.String())
	}
	if g := strings.Join(got, " "); g != want {
		tb.Fatalf("log after %d = %q, want %q", after, g, want)
	}
}

func mustTrim(tb testing.TB, s *Store, upTo uint64) {
	tb.Helper()
	if err := s.TrimChanges(context.Background(), upTo); err != nil {
		tb.Fatal(err)
	}
}

func mustChangeSeq(tb testing.TB, s *Store) (gen, seq uint64) {
	tb.Helper()
	gen, seq, err := s.ChangeSeq(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return gen, seq
}

// mustSeq fails unless the store is at gen and seq.
func mustSeq(tb testing.TB, s *Store, gen, seq uint64) {
	tb.Helper()
	if g, q := mustChangeSeq(tb, s); g != gen || q != seq {
		tb.Fatalf("ChangeSeq() = %d, %d; want %d, %d", g, q, gen, seq)
	}
}

// rec returns record i with record_id id and title.
func rec(i int, id, title string) *rappel.Record {
	r := makeRecord(i)
	r.RecordID = id
	r.Translations.EN.Title = title
	return r
}

func TestStore_Changes(t *testing.T) {
	ctx := context.Background()

	t.Run("PutDelete", func(t *testing.T) {
		s := MustOpenStore(t)
		mustSeq(t, s, 0, 0)
		mustLog(t, s, 0, 0, "")
		MustPut(t, s, rec(1, "hc-1", "a"), rec(2, "hc-2", "a"), rec(3, "hc-3", "a"))
		// Stored as it is (hc-1), changed (hc-2), twice in one call (hc-3:
		// the last wins, logged once).
		MustPut(t, s, rec(1, "hc-1", "a"), rec(2, "hc-2", "b"), rec(3, "hc-3", "b"), rec(3, "hc-3", "c"))
		MustPut(t, s, rec(1, "hc-1", "a"))
		if err := s.DeleteRecords(ctx, []string{"hc-1", "hc-9", "hc-1"}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteRecords(ctx, []string{"hc-1"}); err != nil {
			t.Fatal(err)
		}
		mustLog(t, s, 0, 0, "1+hc-1 2+hc-2 3+hc-3 4+hc-2 5+hc-3 6-hc-1")
		mustSeq(t, s, 0, 6)
		mustLog(t, s, 0, 4, "5+hc-3 6-hc-1")
		mustLog(t, s, 0, 6, "")
		checkIndex(t, s)
	})

	t.Run("ApplySource", func(t *testing.T) {
		s := MustOpenStore(t)
		st := rappel.SourceState{Feed: rappel.FeedState{Source: "hcdump"}}
		apply := func(c *rappel.SourceChange) {
			t.Helper()
			c.State = st
			if err := s.ApplySource(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		apply(&rappel.SourceChange{
			PutPartials: []*rappel.Record{partial("hc-1", "one")},
			PutRecords:  []*rappel.Record{rec(1, "hc-1", "a"), rec(2, "hc-2", "a")},
		})
		// A refresh that changes partials and raw records only logs nothing.
		apply(&rappel.SourceChange{PutPartials: []*rappel.Record{partial("hc-1", "uno")}, PutRaw: []rappel.RawRecord{raw("7", "row", "hc-1")}})
		// hc-2 changed, hc-3 new, hc-1 deleted twice and a missing id
		// deleted: each record logged once.
		apply(&rappel.SourceChange{
			PutRecords:    []*rappel.Record{rec(2, "hc-2", "b"), rec(3, "hc-3", "a")},
			DeleteRecords: []string{"hc-1", "hc-8", "hc-1"},
		})
		mustLog(t, s, 0, 0, "1+hc-1 2+hc-2 3+hc-2 4+hc-3 5-hc-1")
		checkIndex(t, s)
	})

	t.Run("NothingOnCanceled", func(t *testing.T) {
		s := MustOpenStore(t)
		MustPut(t, s, rec(1, "hc-1", "a"))
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.PutRecords(canceled, []*rappel.Record{rec(2, "hc-2", "a")}); !errors.Is(err, context.Canceled) {
			t.Fatalf("PutRecords with a canceled context: %v", err)
		}
		// The batch never committed: its number is handed out next.
		MustPut(t, s, rec(3, "hc-3", "a"))
		mustLog(t, s, 0, 0, "1+hc-1 2+hc-3")
	})

	t.Run("Reopen", func(t *testing.T) {
		s := MustOpenStoreAt(t, "db", vfs.NewMem())
		MustPut(t, s, rec(1, "hc-1", "a"), rec(2, "hc-2", "a"))
		MustReopen(t, s)
		mustSeq(t, s, 0, 2)
		MustPut(t, s, rec(1, "hc-1", "b"))
		mustLog(t, s, 0, 0, "1+hc-1 2+hc-2 3+hc-1")
		// With every entry trimmed, the floor keeps the numbers going.
		mustTrim(t, s, 3)
		MustReopen(t, s)
		mustSeq(t, s, 0, 3)
		MustPut(t, s, rec(2, "hc-2", "b"))
		mustLog(t, s, 0, 3, "4+hc-2")
	})

	t.Run("Trim", func(t *testing.T) {
		s := MustOpenStore(t)
		for i := range 5 {
			MustPut(t, s, rec(i, fmt.Sprintf("hc-%d", i), "a"))
		}
		mustTrim(t, s, 2)
		mustLog(t, s, 0, 2, "3+hc-2 4+hc-3 5+hc-4")
		if n := len(allKeys(t, s, changePrefix)); n != 3 {
			t.Fatalf("%d entries stored after trimming to 2, want 3", n)
		}
		// A reader from before the trim reads what is left.
		mustLog(t, s, 0, 0, "3+hc-2 4+hc-3 5+hc-4")
		// Trimming below the floor does nothing; beyond the last number,
		// it trims to the last only.
		mustTrim(t, s, 1)
		mustTrim(t, s, 1000)
		mustSeq(t, s, 0, 5)
		MustPut(t, s, rec(9, "hc-9", "a"))
		mustLog(t, s, 0, 5, "6+hc-9")
	})

	t.Run("ErrBadValue", func(t *testing.T) {
		s := MustOpenStore(t)
		if err := s.db.Set(changeKey(1), []byte("\x07hc-1"), pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if _, err := changes(s, 0, 0); err == nil || !strings.Contains(err.Error(), "change 1") {
			t.Fatalf("Changes over an unknown kind of change: %v, want an error naming it", err)
		}
	})

	t.Run("ErrNotOpen", func(t *testing.T) {
		s := NewStore(filepath.Join(t.TempDir(), "db"))
		if _, _, err := s.ChangeSeq(ctx); !errors.Is(err, errNotOpen) {
			t.Errorf("ChangeSeq: %v", err)
		}
		if _, err := changes(s, 0, 0); !errors.Is(err, errNotOpen) {
			t.Errorf("Changes: %v", err)
		}
		if err := s.TrimChanges(ctx, 1); !errors.Is(err, errNotOpen) {
			t.Errorf("TrimChanges: %v", err)
		}
		if _, err := s.IndexState(ctx); !errors.Is(err, errNotOpen) {
			t.Errorf("IndexState: %v", err)
		}
		if err := s.PutIndexState(ctx, nil); !errors.Is(err, errNotOpen) {
			t.Errorf("PutIndexState: %v", err)
		}
	})
}

// mustNewGeneration fails unless the store moved from generation gen at
// seq to gen+1, keeping seq and with an empty log, and unless a reader of
// gen is told so; then it puts a record and checks that its entry is
// numbered after seq and is all the new generation holds.
func mustNewGeneration(t *testing.T, s *Store, gen, seq uint64) {
	t.Helper()
	mustSeq(t, s, gen+1, seq)
	if _, err := changes(s, gen, seq); !errors.Is(err, ErrGenerationChanged) {
		t.Fatalf("Changes of the old generation: %v, want ErrGenerationChanged", err)
	}
	if n := len(allKeys(t, s, changePrefix)); n != 0 {
		t.Fatalf("%d entries left after a full load", n)
	}
	MustPut(t, s, rec(999, "hc-new", "a"))
	want := fmt.Sprintf("%d+hc-new", seq+1)
	mustLog(t, s, gen+1, seq, want)
	// The whole generation, read from 0, is what came after the load.
	mustLog(t, s, gen+1, 0, want)
}

func TestStore_Changes_FullLoads(t *testing.T) {
	ctx := context.Background()
	in := makeLoadInput(20)

	// withEntries returns a store whose log holds entries while it holds
	// no records, as Load and Ingest need.
	withEntries := func(t *testing.T, fs vfs.FS, path string) *Store {
		s := MustOpenStoreAt(t, path, fs)
		MustPut(t, s, rec(1, "hc-1", "a"), rec(2, "hc-2", "a"))
		if err := s.DeleteRecords(ctx, []string{"hc-1", "hc-2"}); err != nil {
			t.Fatal(err)
		}
		mustSeq(t, s, 0, 4)
		return s
	}

	t.Run("Load", func(t *testing.T) {
		s := withEntries(t, nil, filepath.Join(t.TempDir(), "db"))
		if err := s.Load(ctx, in.recs, in.parts, in.raw, in.states, in.info); err != nil {
			t.Fatal(err)
		}
		MustReopen(t, s)
		mustNewGeneration(t, s, 0, 4)
	})

	t.Run("Replace", func(t *testing.T) {
		s := MustOpenStore(t)
		if err := s.Load(ctx, in.recs, in.parts, in.raw, in.states, in.info); err != nil {
			t.Fatal(err)
		}
		MustPut(t, s, rec(1, "hc-1", "a"), rec(2, "hc-2", "a"))
		mustSeq(t, s, 1, 2)
		if err := s.Replace(ctx, in.recs[:5], in.parts, in.raw, in.states, in.info); err != nil {
			t.Fatal(err)
		}
		mustNewGeneration(t, s, 1, 2)
		MustReopen(t, s)
		mustSeq(t, s, 2, 3)
	})

	t.Run("Ingest", func(t *testing.T) {
		paths, err := WriteTables(ctx, t.TempDir(), in.recs, in.parts, in.raw, in.states, in.info)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "db")
		s := withEntries(t, nil, path)
		if err := s.Ingest(ctx, paths); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path + ".changes.sst"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the generation's table is left beside the store: %v", err)
		}
		MustReopen(t, s)
		mustNewGeneration(t, s, 0, 4)
		if r, err := s.Record(ctx, in.recs[7].RecordID); err != nil || r.RecordID != in.recs[7].RecordID {
			t.Fatalf("ingested record: %v, %v", r, err)
		}
	})

	t.Run("IngestFS", func(t *testing.T) {
		dir := t.TempDir()
		paths, err := WriteTables(ctx, dir, in.recs, in.parts, in.raw, in.states, in.info)
		if err != nil {
			t.Fatal(err)
		}
		s := withEntries(t, vfs.NewMem(), "db")
		if err := s.IngestFS(ctx, os.DirFS(dir), baseNames(paths)); err != nil {
			t.Fatal(err)
		}
		mustNewGeneration(t, s, 0, 4)
	})

	t.Run("RefusedIngestKeepsGeneration", func(t *testing.T) {
		paths, err := WriteTables(ctx, t.TempDir(), in.recs, in.parts, in.raw, in.states, in.info)
		if err != nil {
			t.Fatal(err)
		}
		s := MustOpenStore(t)
		MustPut(t, s, rec(1, "hc-1", "a"))
		if err := s.Ingest(ctx, paths); err == nil {
			t.Fatal("Ingest into a store holding records succeeded")
		}
		mustSeq(t, s, 0, 1)
		mustLog(t, s, 0, 0, "1+hc-1")
	})
}

// TestStore_Changes_Upgrade opens a store as schema version 2 left it,
// without a change log, and checks that it opens at the first generation
// with an empty log, its index kept, and logs what is written next.
func TestStore_Changes_Upgrade(t *testing.T) {
	s := MustOpenStoreAt(t, "db", vfs.NewMem())
	MustPut(t, s, rec(1, "hc-1", "a"), rec(2, "hc-2", "a"))
	b := s.db.NewBatch()
	b.DeleteRange([]byte(changePrefix), prefixEnd([]byte(changePrefix)), nil)
	b.Delete(changesKey, nil)
	b.Set(schemaKey, []byte{2}, nil)
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	index := allKeys(t, s, indexPrefix)
	MustReopen(t, s)
	if v, err := s.storedSchema(); err != nil || v != schemaVersion {
		t.Fatalf("schema after the upgrade = %d, %v; want %d", v, err, schemaVersion)
	}
	mustSeq(t, s, 1, 0)
	if got := allKeys(t, s, indexPrefix); len(got) != len(index) {
		t.Fatalf("the upgrade changed the index: %d keys, then %d", len(index), len(got))
	}
	checkIndex(t, s)
	MustPut(t, s, rec(1, "hc-1", "b"))
	mustLog(t, s, 1, 0, "1+hc-1")
	// Opened again, it is upgraded no more.
	MustReopen(t, s)
	mustSeq(t, s, 1, 1)
}

// TestStore_Changes_Concurrent runs writers of every kind at once with a
// reader following the log, and checks that the reader sees each number
// once, in increasing order, and that no entry ever appears below a number
// it has seen: what it saw is the whole log. Run it under the race
// detector.
func TestStore_Changes_Concurrent(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	const writers, rounds, perBatch = 4, 15, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers+2)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				recs := make([]*rappel.Record, perBatch)
				for i := range recs {
					recs[i] = rec(i, fmt.Sprintf("w%d-%d", w, i), fmt.Sprint("round ", r))
				}
				if err := s.PutRecords(ctx, recs); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Add(2)
	go func() { // deletes what writer 0 puts, whenever it is there
		defer wg.Done()
		for range rounds {
			if err := s.DeleteRecords(ctx, []string{"w0-0", "w0-1"}); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() { // refreshes a source
		defer wg.Done()
		for r := range rounds {
			c := &rappel.SourceChange{
				State:      rappel.SourceState{Feed: rappel.FeedState{Source: "hcdump"}},
				PutRecords: []*rappel.Record{rec(1, "src-1", fmt.Sprint("round ", r))},
			}
			if r%2 == 1 {
				c.DeleteRecords = []string{"w1-1"}
			}
			if err := s.ApplySource(ctx, c); err != nil {
				errs <- err
				return
			}
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	var seen []entry
	var after uint64
	follow := func() {
		t.Helper()
		for _, e := range mustChanges(t, s, 0, after) {
			if e.seq <= after {
				t.Fatalf("entry %v after %d", e, after)
			}
			after = e.seq
			seen = append(seen, e)
		}
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		follow()
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	follow()
	all := mustChanges(t, s, 0, 0)
	if len(all) != len(seen) {
		t.Fatalf("the reader saw %d entries, the log holds %d: an entry appeared below one it had seen", len(seen), len(all))
	}
	last := map[string]bool{}
	for i, e := range all {
		if e != seen[i] {
			t.Fatalf("entry %d is %v, the reader saw %v", i, e, seen[i])
		}
		if i > 0 && e.seq != all[i-1].seq+1 {
			t.Fatalf("entries %v then %v: a gap without a failed commit", all[i-1], e)
		}
		last[e.id] = e.deleted
	}
	// Every put of the writers changed its records.
	puts := 0
	for _, e := range all {
		if !e.deleted && e.id[0] == 'w' {
			puts++
		}
	}
	if want := writers * rounds * perBatch; puts != want {
		t.Fatalf("%d puts logged, want %d", puts, want)
	}
	// The last entry of each record says whether it is there.
	for id, deleted := range last {
		_, err := s.Record(ctx, id)
		if gone := rappel.ErrorCode(err) == rappel.ENOTFOUND; gone != deleted {
			t.Errorf("record %s: last logged deleted=%v, stored: %v", id, deleted, err)
		}
	}
	mustSeq(t, s, 0, all[len(all)-1].seq)
	checkIndex(t, s)
}

func TestStore_IndexState(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStoreAt(t, "db", vfs.NewMem())
	mustState := func(want []byte) {
		t.Helper()
		got, err := s.IndexState(ctx)
		if err != nil || !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("IndexState() = %q, %v; want %q", got, err, want)
		}
	}
	mustState(nil)
	want := []byte("segments: 1 2 3\x00gen 1 seq 40")
	if err := s.PutIndexState(ctx, want); err != nil {
		t.Fatal(err)
	}
	mustState(want)
	MustReopen(t, s)
	mustState(want)
	// A full load leaves it for the index to find the new generation.
	in := makeLoadInput(3)
	if err := s.Replace(ctx, in.recs, in.parts, in.raw, in.states, in.info); err != nil {
		t.Fatal(err)
	}
	mustState(want)
	// Empty is not absent.
	if err := s.PutIndexState(ctx, nil); err != nil {
		t.Fatal(err)
	}
	mustState([]byte{})

	if err := s.db.Set(indexStateKey, []byte("\x07x"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if _, err := s.IndexState(ctx); err == nil {
		t.Fatal("IndexState() read an unknown value version")
	}
}

// BenchmarkChangeLog_Add1000 measures the work the change log adds to a
// batch of 1,000 changed records before it commits: collecting their ids
// and appending their numbered entries. The commit then writes those
// entries to the WAL and the memtable with the rest of the batch
// (BenchmarkStore_PutRecords1000 measures the whole).
func BenchmarkChangeLog_Add1000(b *testing.B) {
	s := MustOpenStoreAt(b, "db", vfs.NewMem())
	recs := makeRecords(1000)
	batch := s.db.NewBatch()
	defer batch.Close()
	b.ReportAllocs()
	for b.Loop() {
		batch.Reset()
		var ch changed
		for _, r := range recs {
			ch.add(r.RecordID, changeUpdated)
		}
		if _, err := s.logChanges(batch, &ch, s.now()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(batch.Len())/1000, "batch-bytes/record")
}

func TestChanged_Add(t *testing.T) {
	var c changed
	for _, a := range []struct {
		id      string
		deleted bool
	}{{"a", false}, {"b", false}, {"b", true}, {"c", true}, {"c", true}, {"d", false}, {"a", true}} {
		kind := byte(changeUpdated)
		if a.deleted {
			kind = changeDeleted
		}
		c.add(a.id, kind)
	}
	var got []string
	for i, id := range c.ids {
		got = append(got, entry{uint64(i + 1), id, c.kinds[i] == changeDeleted}.String())
	}
	if s, want := strings.Join(got, " "), "1-a 2-b 3-c 4+d"; s != want {
		t.Fatalf("changes = %q, want %q", s, want)
	}
}
