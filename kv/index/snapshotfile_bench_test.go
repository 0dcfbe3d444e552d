package index

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
)

// embeddedSegment returns the bundle's read index as the binary holds it,
// or skips.
func embeddedSegment(b *testing.B) []byte {
	seg, _, err := bundle.IndexSegment()
	if err != nil {
		b.Fatal(err)
	}
	if seg == nil {
		b.Skip("no bundle with a read index is embedded: run `make bundle`")
	}
	return seg
}

// BenchmarkSegment_Open opens the bundle's segment as a node starts:
// every checksum and structure check, over the embedded bytes and over a
// mapped file.
func BenchmarkSegment_Open(b *testing.B) {
	data := embeddedSegment(b)
	b.Run("embedded", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := OpenSegmentBytes("bundle", data, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mmap", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "base.seg")
		s, err := OpenSegmentBytes("bundle", data, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.WriteSegment(path); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			s, err := OpenSegment(path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
}

// BenchmarkSegment_Held reports the Go heap a snapshot holds once open:
// built in memory from the bundle's records, and read from its segment.
func BenchmarkSegment_Held(b *testing.B) {
	data := embeddedSegment(b)
	for b.Loop() {
		before := liveHeap()
		s, err := OpenSegmentBytes("bundle", data, Options{})
		if err != nil {
			b.Fatal(err)
		}
		seg := liveHeap() - before
		runtime.KeepAlive(s)
		s = nil
		var recs []*rappel.Record
		if err := bundle.ReadRecords(bundle.Embedded(), func(r *rappel.Record) error { recs = append(recs, r); return nil }); err != nil {
			b.Fatal(err)
		}
		before = liveHeap()
		built, err := Build(recs, rappel.DatasetInfo{})
		if err != nil {
			b.Fatal(err)
		}
		recs = nil
		mem := liveHeap() - before
		runtime.KeepAlive(built)
		b.ReportMetric(float64(seg)/1e6, "segment-heap-MB")
		b.ReportMetric(float64(mem)/1e6, "built-heap-MB")
	}
}

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// BenchmarkSegment_Search compares each query class answered by the
// snapshot built in memory and by the bundle's segment.
func BenchmarkSegment_Search(b *testing.B) {
	data := embeddedSegment(b)
	seg, err := OpenSegmentBytes("bundle", data, Options{})
	if err != nil {
		b.Fatal(err)
	}
	built := bundled(b)
	ctx := context.Background()
	classes := []struct {
		name string
		q    rappel.Search
	}{
		{"page100", rappel.Search{Limit: 100}},
		{"filter", rappel.Search{Limit: 20, FilterValues: rappel.FilterValues{RecallType: "vehicle"}}},
		{"common", rappel.Search{Limit: 20, Query: mustQuery(b, "recall")}},
		{"rare", rappel.Search{Limit: 20, Query: mustQuery(b, "salmonella")}},
		{"phrase", rappel.Search{Limit: 20, Query: mustQuery(b, `"peanut butter"`)}},
		{"relevance", rappel.Search{Limit: 20, Query: mustQuery(b, "cheese listeria"), SortBy: rappel.SortRelevance}},
		{"value", rappel.Search{Limit: 20, SortBy: rappel.SortValue}},
		{"typo", rappel.Search{Limit: 20, Query: mustQuery(b, "lysteria")}},
		{"typo2", rappel.Search{Limit: 20, Query: mustQuery(b, "contaminaton")}},
		{"split", rappel.Search{Limit: 20, Query: mustQuery(b, "f150")}},
		{"prefix", rappel.Search{Limit: 20, Query: mustQuery(b, "frozen listeri"), PrefixLast: true}},
		{"prefix2", rappel.Search{Limit: 20, Query: mustQuery(b, "pe*")}},
	}
	for _, impl := range []struct {
		name string
		s    *Snapshot
	}{{"built", built}, {"segment", seg}} {
		for _, c := range classes {
			b.Run(c.name+"/"+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				buf := make([]byte, 0, 1<<20)
				for b.Loop() {
					q := c.q
					q.Buf = buf
					if _, err := impl.s.View().Search(ctx, checked(b, &q)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run("suggest/"+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			qs := []string{"lysteri", "chocol", "frozen pe", "brie chee", "air"}
			for i := 0; b.Loop(); i++ {
				if _, err := impl.s.Suggest(ctx, qs[i%len(qs)], "", 8); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("record/"+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				impl.s.RecordJSON(built.ids.view((i*7919)%built.n), "")
			}
		})
	}
}
