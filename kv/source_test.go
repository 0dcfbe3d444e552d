package kv

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
)

// partial returns a partial record of id: not a valid record on its own.
func partial(id, title string) *rappel.Record {
	return &rappel.Record{RecordID: id, Translations: rappel.Translations{EN: &rappel.Translation{Title: title}}}
}

func mustHashes(tb testing.TB, s *Store, source string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	if err := s.PartialHashes(context.Background(), source, func(id, h string) error {
		out[id] = h
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return out
}

func mustRaw(tb testing.TB, s *Store, source string, data bool) []rappel.RawRecord {
	tb.Helper()
	var out []rappel.RawRecord
	fn := s.RawIndex
	if data {
		fn = s.RawData
	}
	if err := fn(context.Background(), source, func(r rappel.RawRecord) error {
		out = append(out, r)
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return out
}

func raw(key, data string, ids ...string) rappel.RawRecord {
	return rappel.RawRecord{Key: key, Hash: rappel.HashBytes([]byte(data)), IDs: ids, Data: []byte(data)}
}

func TestStore_ApplySource(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	a, b := partial("hc-1", "one"), partial("hc-2", "two")
	recs := []*rappel.Record{makeRecord(1), makeRecord(2)}
	recs[0].RecordID, recs[1].RecordID = "hc-1", "hc-2"
	info := rappel.DatasetInfo{UpdatedAt: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), Source: "feeds", Records: 2}
	c := &rappel.SourceChange{
		State:       rappel.SourceState{Feed: rappel.FeedState{Source: "hcdump", Live: true, Records: 2}, Plugin: "abc"},
		PutPartials: []*rappel.Record{a, b},
		PutRecords:  recs,
		PutRaw:      []rappel.RawRecord{raw("1", "row one", "hc-1"), raw("2", "row two", "hc-2"), raw("!header", "h")},
		NewRecalls:  &rappel.NewRecalls{At: info.UpdatedAt, Source: "hcdump", RecordIDs: []string{"hc-1", "hc-2"}},
		Info:        &info,
	}
	if err := s.ApplySource(ctx, c); err != nil {
		t.Fatal(err)
	}

	t.Run("OK", func(t *testing.T) {
		hashes := mustHashes(t, s, "hcdump")
		for _, p := range []*rappel.Record{a, b} {
			want, _ := rappel.ContentHash(p)
			if hashes[p.RecordID] != want {
				t.Errorf("hash of %s = %s, want rappel.ContentHash's %s", p.RecordID, hashes[p.RecordID], want)
			}
		}
		got, err := s.Partials(ctx, "hcdump", []string{"hc-2", "hc-9"})
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got["hc-2"], b) {
			t.Fatalf("Partials = %+v, %v", got, err)
		}
		all, err := s.Partials(ctx, "hcdump", nil)
		if err != nil || len(all) != 2 {
			t.Fatalf("all partials = %d, %v", len(all), err)
		}
		if r, err := s.Record(ctx, "hc-1"); err != nil || r.RecallID != recs[0].RecallID {
			t.Fatalf("record = %+v, %v", r, err)
		}
		checkIndex(t, s)
		idx := mustRaw(t, s, "hcdump", false)
		if len(idx) != 3 || idx[0].Key != "!header" || idx[0].Data != nil || !reflect.DeepEqual(idx[1].IDs, []string{"hc-1"}) {
			t.Fatalf("raw index = %+v", idx)
		}
		data := mustRaw(t, s, "hcdump", true)
		if string(data[1].Data) != "row one" || string(data[2].Data) != "row two" {
			t.Fatalf("raw data = %+v", data)
		}
		st, err := s.SourceState(ctx, "hcdump")
		if err != nil || !st.Feed.Live || st.Plugin != "abc" {
			t.Fatalf("state = %+v, %v", st, err)
		}
		if got, _ := s.DatasetInfo(ctx); !got.UpdatedAt.Equal(info.UpdatedAt) || got.Records != 2 {
			t.Fatalf("info = %+v", got)
		}
		batches, err := s.NewRecalls(ctx)
		if err != nil || len(batches) != 1 || batches[0].Seq != 1 || !reflect.DeepEqual(batches[0].RecordIDs, []string{"hc-1", "hc-2"}) {
			t.Fatalf("new recalls = %+v, %v", batches, err)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		c := &rappel.SourceChange{
			State:          rappel.SourceState{Feed: rappel.FeedState{Source: "hcdump", Live: true, Records: 1}},
			DeletePartials: []string{"hc-2"},
			DeleteRecords:  []string{"hc-2", "hc-404"},
			DeleteRaw:      []string{"2"},
			NewRecalls:     &rappel.NewRecalls{Source: "hcdump"}, // empty: not written
		}
		if err := s.ApplySource(ctx, c); err != nil {
			t.Fatal(err)
		}
		if h := mustHashes(t, s, "hcdump"); len(h) != 1 || h["hc-1"] == "" {
			t.Fatalf("hashes = %v", h)
		}
		if _, err := s.Record(ctx, "hc-2"); rappel.ErrorCode(err) != rappel.ENOTFOUND {
			t.Fatalf("hc-2: %v", err)
		}
		checkIndex(t, s)
		if idx := mustRaw(t, s, "hcdump", true); len(idx) != 2 || idx[1].Key != "1" || string(idx[1].Data) != "row one" {
			t.Fatalf("raw = %+v", idx)
		}
		if batches, _ := s.NewRecalls(ctx); len(batches) != 1 {
			t.Fatalf("an empty batch of new recalls was written: %+v", batches)
		}
	})

	t.Run("SourcesApart", func(t *testing.T) {
		// "hc" is a prefix of "hcdump": their keys must not mix.
		c := &rappel.SourceChange{State: rappel.SourceState{Feed: rappel.FeedState{Source: "hc"}}, PutPartials: []*rappel.Record{partial("hc-7", "x")}}
		if err := s.ApplySource(ctx, c); err != nil {
			t.Fatal(err)
		}
		if h := mustHashes(t, s, "hc"); len(h) != 1 {
			t.Fatalf("hc partials = %v", h)
		}
		if h := mustHashes(t, s, "hcdump"); len(h) != 1 || h["hc-7"] != "" {
			t.Fatalf("hcdump partials = %v", h)
		}
		states, err := s.SourceStates(ctx)
		if err != nil || len(states) != 2 || states[0].Feed.Source != "hc" || states[1].Feed.Source != "hcdump" {
			t.Fatalf("states = %+v, %v", states, err)
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		for _, c := range []*rappel.SourceChange{
			{State: rappel.SourceState{Feed: rappel.FeedState{Source: "a/b"}}},
			{State: rappel.SourceState{Feed: rappel.FeedState{Source: ""}}},
			{State: rappel.SourceState{Feed: rappel.FeedState{Source: "x"}}, PutRecords: []*rappel.Record{makeRecord(1), makeRecord(1)}},
		} {
			if err := s.ApplySource(ctx, c); rappel.ErrorCode(err) != rappel.EINVALID {
				t.Errorf("ApplySource(%+v) = %v, want EINVALID", c.State.Feed, err)
			}
		}
	})

	t.Run("Canceled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		c := &rappel.SourceChange{State: rappel.SourceState{Feed: rappel.FeedState{Source: "vrdb"}}, PutPartials: []*rappel.Record{partial("tc-1", "x")}}
		if err := s.ApplySource(cctx, c); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		if h := mustHashes(t, s, "vrdb"); len(h) != 0 {
			t.Fatal("a cancelled change was written")
		}
	})
}

// TestStore_ApplySource_Atomic crashes the file system before the commit
// lands: after reopening, none of the change is there.
func TestStore_ApplySource_Atomic(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	s := MustOpenStoreAt(t, "db", mem)
	first := &rappel.SourceChange{State: rappel.SourceState{Feed: rappel.FeedState{Source: "hcdump", Records: 1}}, PutPartials: []*rappel.Record{partial("hc-1", "one")}}
	if err := s.ApplySource(ctx, first); err != nil {
		t.Fatal(err)
	}
	crashed := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	second := &rappel.SourceChange{State: rappel.SourceState{Feed: rappel.FeedState{Source: "hcdump", Records: 2}}, PutPartials: []*rappel.Record{partial("hc-2", "two")}}
	if err := s.ApplySource(ctx, second); err != nil {
		t.Fatal(err)
	}
	// crashed is the disk as it was before the second change.
	s2 := MustOpenStoreAt(t, "db", crashed)
	if h := mustHashes(t, s2, "hcdump"); len(h) != 1 {
		t.Fatalf("after the crash: %v", h)
	}
	if st, _ := s2.SourceState(ctx, "hcdump"); st.Feed.Records != 1 {
		t.Fatalf("after the crash, state = %+v", st)
	}
	// And the synced one survives a crash right after it.
	after := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	s3 := MustOpenStoreAt(t, "db", after)
	if h := mustHashes(t, s3, "hcdump"); len(h) != 2 {
		t.Fatalf("a synced change was lost: %v", h)
	}
}

func TestStore_Load(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	recs := makeRecords(3)
	parts := map[string][]*rappel.Record{"hcdump": {partial(recs[0].RecordID, "a")}, "detail": {partial(recs[1].RecordID, "b")}}
	states := []rappel.SourceState{{Feed: rappel.FeedState{Source: "hcdump", Records: 1}}, {Feed: rappel.FeedState{Source: "detail", Records: 1}}}
	info := rappel.DatasetInfo{Source: "bundle", Records: 3}
	if err := s.Load(ctx, recs, parts, nil, states, info); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, s)
	if h := mustHashes(t, s, "detail"); len(h) != 1 {
		t.Fatalf("detail partials %v", h)
	}
	if got, _ := s.DatasetInfo(ctx); got.Source != "bundle" || got.Records != 3 {
		t.Fatalf("info %+v", got)
	}
	if err := s.Load(ctx, recs, parts, nil, states, info); err == nil {
		t.Fatal("loaded into a store holding records")
	}
}

func TestStore_NewRecalls(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	for i, ids := range [][]string{{"hc-1"}, {"hc-2", "hc-3"}, {"tc-4"}} {
		c := &rappel.SourceChange{State: rappel.SourceState{Feed: rappel.FeedState{Source: "hcdump"}}, NewRecalls: &rappel.NewRecalls{Source: "hcdump", Initial: i == 0, RecordIDs: ids}}
		if err := s.ApplySource(ctx, c); err != nil {
			t.Fatal(err)
		}
		if c.NewRecalls.Seq != uint64(i+1) {
			t.Fatalf("batch %d got seq %d", i, c.NewRecalls.Seq)
		}
	}
	if err := s.AckNewRecalls(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.AckNewRecalls(ctx, 99); err != nil {
		t.Fatal(err)
	}
	MustReopen(t, s)
	got, err := s.NewRecalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Seq != 1 || !got[0].Initial || got[1].Seq != 3 || got[1].RecordIDs[0] != "tc-4" {
		t.Fatalf("batches = %+v", got)
	}
	// Sequence numbers are not reused after acknowledgements.
	c := &rappel.SourceChange{State: rappel.SourceState{Feed: rappel.FeedState{Source: "hcdump"}}, NewRecalls: &rappel.NewRecalls{RecordIDs: []string{"x-1"}}}
	if err := s.ApplySource(ctx, c); err != nil || c.NewRecalls.Seq != 4 {
		t.Fatalf("seq %d, %v; want 4", c.NewRecalls.Seq, err)
	}
}

// allPairs returns every key and value of the store, as strings, for which
// keep is true.
func allPairs(tb testing.TB, s *Store, keep func(key []byte) bool) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for _, k := range allKeys(tb, s, "") {
		if !keep(k) {
			continue
		}
		v, closer, err := s.db.Get(k)
		if err != nil {
			tb.Fatal(err)
		}
		out[string(k)] = string(v)
		closer.Close()
	}
	return out
}

// isData reports whether key is data that Replace replaces.
func isData(key []byte) bool {
	if bytes.Equal(key, datasetKey) {
		return true
	}
	for _, p := range dataPrefixes {
		if bytes.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

func TestStore_Replace(t *testing.T) {
	ctx := context.Background()
	type data = loadInput
	// old has records 0 to 5, partials and raw records (with data) of two
	// sources; new keeps records 3 and 4 as they are, changes 5, drops 0
	// to 2, adds 6 to 8, and has one source only, whose raw records carry
	// no data.
	old := data{
		recs: makeRecords(6),
		parts: map[string][]*rappel.Record{
			"hcdump": {partial("hc-000001", "one"), partial("hc-000003", "three")},
			"vrdb":   {partial("hc-000002", "two")},
		},
		raw: map[string][]rappel.RawRecord{
			"hcdump": {raw("70001", "row one", "hc-000001"), raw("70003", "row three", "hc-000003")},
			"vrdb":   {raw("2018001", "csv row", "hc-000002")},
		},
		states: []rappel.SourceState{
			{Feed: rappel.FeedState{Source: "hcdump", Records: 2}, Plugin: "old-hcdump"},
			{Feed: rappel.FeedState{Source: "vrdb", Records: 1}, Plugin: "old-vrdb"},
		},
		info: rappel.DatasetInfo{UpdatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Source: "bundle", Records: 6, Bundle: "old"},
	}
	next := makeRecords(9)[3:]
	next[2].Translations.EN.Title = "Product 5 recalled again"
	rawNew := raw("70004", "row four", "hc-000004")
	rawNew.Data = nil
	new := data{
		recs:   next,
		parts:  map[string][]*rappel.Record{"hcdump": {partial("hc-000003", "three"), partial("hc-000004", "four")}},
		raw:    map[string][]rappel.RawRecord{"hcdump": {rawNew}},
		states: []rappel.SourceState{{Feed: rappel.FeedState{Source: "hcdump", Records: 2}, Plugin: "new-hcdump"}},
		info:   rappel.DatasetInfo{UpdatedAt: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), Source: "bundle", Records: 6, Bundle: "new"},
	}

	s := MustOpenStore(t)
	if err := s.Load(ctx, old.recs, old.parts, old.raw, old.states, old.info); err != nil {
		t.Fatal(err)
	}
	// What is not data: request counts and a batch of new recalls.
	if _, err := s.AddUsage(ctx, "2026-01", map[string]int64{"key1": 7}); err != nil {
		t.Fatal(err)
	}
	if err := s.ApplySource(ctx, &rappel.SourceChange{State: old.states[0], NewRecalls: &rappel.NewRecalls{Source: "hcdump", RecordIDs: []string{"hc-000001"}}}); err != nil {
		t.Fatal(err)
	}
	// The change log is neither: a replace starts its next generation
	// (TestStore_Changes).
	notData := func(k []byte) bool { return !isData(k) && !isChangeLog(k) }
	rest := allPairs(t, s, notData)

	if err := s.Replace(ctx, new.recs, new.parts, new.raw, new.states, new.info); err != nil {
		t.Fatal(err)
	}
	MustReopen(t, s)

	// The replaced store holds, as data, exactly what a fresh Load of the
	// new data writes, and everything else as it was.
	fresh := MustOpenStore(t)
	if err := fresh.Load(ctx, new.recs, new.parts, new.raw, new.states, new.info); err != nil {
		t.Fatal(err)
	}
	got, want := allPairs(t, s, isData), allPairs(t, fresh, isData)
	if !reflect.DeepEqual(got, want) {
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("left over after the replace: %q", k)
			}
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("key %q after the replace = %q, want %q", k, got[k], v)
			}
		}
	}
	checkIndex(t, s)
	if got := allPairs(t, s, notData); !reflect.DeepEqual(got, rest) {
		t.Errorf("the replace changed what is not data:\n got %q\nwant %q", got, rest)
	}
	if r, err := s.Record(ctx, "hc-000005"); err != nil || r.Translations.EN.Title != "Product 5 recalled again" {
		t.Errorf("hc-000005 = %+v, %v", r, err)
	}
	if _, err := s.Record(ctx, "hc-000000"); rappel.ErrorCode(err) != rappel.ENOTFOUND {
		t.Errorf("hc-000000 after the replace: %v, want not found", err)
	}
	if st, _ := s.SourceStates(ctx); len(st) != 1 || st[0].Plugin != "new-hcdump" {
		t.Errorf("states after the replace = %+v", st)
	}
	if r := mustRaw(t, s, "hcdump", true); len(r) != 1 || r[0].Key != "70004" || r[0].Data != nil {
		t.Errorf("raw records after the replace = %+v, want 70004 without data", r)
	}
}
