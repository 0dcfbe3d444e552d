package kv

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv/index"
)

// BenchmarkStore_ForEachRecord measures what a node does before it serves
// from a warm data dir: reading and decoding every record of the bundle
// from the store (Decode), and that followed by the read index's build
// (Rebuild, as `rappel serve` does). The bundled corpus when one is
// embedded, else the synthetic records of the other benchmarks.
func BenchmarkStore_ForEachRecord(b *testing.B) {
	ctx := context.Background()
	var recs []*rappel.Record
	if err := bundle.ReadRecords(bundle.Embedded(), func(r *rappel.Record) error { recs = append(recs, r); return nil }); err != nil {
		b.Logf("no bundle (%v): synthetic records", err)
		recs = makeRecords(benchRecords)
	}
	s := MustOpenStoreAt(b, filepath.Join(b.TempDir(), "db"), nil)
	if err := s.PutRecords(ctx, recs); err != nil {
		b.Fatal(err)
	}
	n := len(recs)
	recs = nil
	readAll := func(b *testing.B) []*rappel.Record {
		out := make([]*rappel.Record, 0, n)
		if err := s.ForEachRecord(ctx, func(r *rappel.Record) error { out = append(out, r); return nil }); err != nil {
			b.Fatal(err)
		}
		return out
	}
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			readAll(b)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
	})
	b.Run("Rebuild", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := index.Build(readAll(b), rappel.DatasetInfo{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
	})
}
