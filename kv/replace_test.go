package kv

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/rappel-ca/rappel"
)

// TestStore_ReplaceHoldsNoBatch holds Replace to writing through tables: a
// batch of the same data (Load's) is the size of the data, grown by
// doubling, and copied at commit, so its write allocates more than twice
// the data; Replace's allocates a small part of it.
func TestStore_ReplaceHoldsNoBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MB twice")
	}
	ctx := context.Background()
	const n, size = 2048, 32 << 10 // 64 MiB of raw data
	rng := rand.New(rand.NewPCG(1, 2))
	recs := makeRecords(n)
	raws := make([]rappel.RawRecord, n)
	parts := make([]*rappel.Record, n)
	for i := range raws {
		data := make([]byte, size)
		for j := range data {
			data[j] = byte('a' + rng.IntN(26))
		}
		raws[i] = raw(fmt.Sprintf("%07d", n-i), string(data), recs[i].RecordID)
		parts[i] = partial(recs[i].RecordID, fmt.Sprint("title ", i))
	}
	partials := map[string][]*rappel.Record{"vrdb": parts}
	rawBy := map[string][]rappel.RawRecord{"vrdb": raws}
	states := []rappel.SourceState{{Feed: rappel.FeedState{Source: "vrdb", Records: n}}}
	info := rappel.DatasetInfo{Source: "feeds", Records: n}

	allocated := func(write func(s *Store) error) uint64 {
		s := MustOpenStore(t)
		if err := s.Load(ctx, makeRecords(3), nil, nil, nil, rappel.DatasetInfo{Source: "bundle"}); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if err := write(s); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if got := len(mustRaw(t, s, "vrdb", true)); got != n {
			t.Fatalf("%d raw records stored, want %d", got, n)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	// Tables first: the batch's store flushes its memtable in the
	// background after its write, which a measure taken after it would
	// count. The allocation counter is the process's, so other work only
	// adds to it: the least of three runs is Replace's own.
	tables := uint64(math.MaxUint64)
	for range 3 {
		tables = min(tables, allocated(func(s *Store) error { return s.Replace(ctx, recs, partials, rawBy, states, info) }))
	}
	batch := allocated(func(s *Store) error {
		// The same data in one batch, as Replace wrote it before.
		if err := s.clearData(ctx); err != nil {
			return err
		}
		return s.Load(ctx, recs, partials, rawBy, states, info)
	})
	data := uint64(n * size)
	t.Logf("writing %d MiB of raw data: %d MiB allocated in one batch, %d MiB through tables", data>>20, batch>>20, tables>>20)
	if batch < 2*data {
		t.Errorf("the batch's write allocated %d MiB, less than twice the data (%d MiB): the comparison no longer holds", batch>>20, data>>20)
	}
	if tables > data/4 {
		t.Errorf("Replace allocated %d MiB writing %d MiB of raw data, more than a quarter of it: does it build a batch again?", tables>>20, data>>20)
	}
}
