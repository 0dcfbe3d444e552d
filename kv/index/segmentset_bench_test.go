package index

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// benchSegments returns Segments over a store holding the bundle's
// records, opened (its base written), and the records.
func benchSegments(b *testing.B) (*Segments, *kv.Store, []*rappel.Record) {
	b.Helper()
	all := bundled(b)
	var recs []*rappel.Record
	for d := range all.n {
		r, _ := all.Record(all.ids.str(d))
		recs = append(recs, r)
	}
	dir := b.TempDir()
	store := kvtest.OpenAt(b, filepath.Join(dir, "pebble"))
	b.Cleanup(func() { store.Close() })
	ctx := context.Background()
	for chunk := range slices.Chunk(recs, 5000) {
		if err := store.PutRecords(ctx, chunk); err != nil {
			b.Fatal(err)
		}
	}
	seg := segmentsAt(store, dir)
	seg.MergeAt = func(int, int) bool { return false }
	if err := seg.Open(ctx); err != nil {
		b.Fatal(err)
	}
	return seg, store, recs
}

// touch writes new versions of n records, as a refresh that changed them.
func touch(b *testing.B, store *kv.Store, recs []*rappel.Record, n, round int) {
	b.Helper()
	put := make([]*rappel.Record, n)
	for i := range put {
		c := *recs[(i*7919)%len(recs)]
		u := round*100000 + i
		c.UnitsAffected = &u
		put[i] = &c
	}
	if err := store.PutRecords(context.Background(), put); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSegments_Refresh is the cost of making a refresh that changed
// 1, 100 or 1,000 of the bundle's records visible: reading the changes,
// building and writing the delta segment, committing it and swapping the
// view. The base is never rebuilt.
func BenchmarkSegments_Refresh(b *testing.B) {
	seg, store, recs := benchSegments(b)
	ctx := context.Background()
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("changed=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				touch(b, store, recs, n, i+1)
				b.StartTimer()
				if err := seg.DataChanged(ctx, true); err != nil {
					b.Fatal(err)
				}
			}
			if d := seg.Catalog.Current().delta; d == nil || d.n < n {
				b.Fatalf("the delta holds %v records, want at least %d", d, n)
			}
		})
	}
}

// BenchmarkSegments_SearchDuringRefresh reports the p99 latency of a
// mix of searches at rest and while refreshes of 100 records run
// back to back, and their ratio (goal: within 1.2×); and, to tell the
// collector's share, the GC cycles of each phase and the refreshes run.
func BenchmarkSegments_SearchDuringRefresh(b *testing.B) {
	seg, store, recs := benchSegments(b)
	ctx := context.Background()
	queries := []*rappel.Search{{Limit: 100}, {Limit: 20, Query: mustQuery(b, "salmonella")},
		{Limit: 20, Query: mustQuery(b, `"peanut butter"`)}, {Limit: 20, SortBy: rappel.SortPublished, FilterValues: rappel.FilterValues{RecallType: "food"}}}
	run := func(n int) []time.Duration {
		lat := make([]time.Duration, 0, n)
		for i := range n {
			q := *queries[i%len(queries)]
			start := time.Now()
			if _, err := seg.Catalog.Current().Search(ctx, checked(b, &q)); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		return lat
	}
	p99 := func(l []time.Duration) time.Duration { return l[len(l)*99/100] }
	gcs := func() uint32 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.NumGC
	}
	for b.Loop() {
		gc0 := gcs()
		rest := run(4000)
		gc1 := gcs()
		var refreshes atomic.Int64
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				touch(b, store, recs, 100, i)
				if err := seg.DataChanged(ctx, true); err != nil {
					b.Error(err)
					return
				}
				refreshes.Add(1)
			}
		}()
		busy := run(4000)
		gc2 := gcs()
		close(stop)
		wg.Wait()
		b.ReportMetric(float64(gc1-gc0), "gc-rest")
		b.ReportMetric(float64(gc2-gc1), "gc-refreshing")
		b.ReportMetric(float64(refreshes.Load()), "refreshes")
		b.ReportMetric(float64(p99(rest).Microseconds()), "p99-rest-µs")
		b.ReportMetric(float64(p99(busy).Microseconds()), "p99-refreshing-µs")
		b.ReportMetric(float64(p99(busy))/float64(p99(rest)), "p99-ratio")
	}
}
