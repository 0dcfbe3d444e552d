package kv

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rappel-ca/rappel"
)

// benchRecords is about the size of the bundled corpus.
const benchRecords = 41_000

// BenchmarkStore_PutRecords measures one PutRecords of the whole corpus, on
// disk, synced: into an empty store (first start from the bundle), and over
// the same records each changed (a refresh that touches everything).
func BenchmarkStore_PutRecords(b *testing.B) {
	ctx := context.Background()
	recs := makeRecords(benchRecords)

	b.Run("Empty", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			s := NewStore(filepath.Join(b.TempDir(), fmt.Sprint(i)))
			s.Logger = nil
			if err := s.Open(ctx); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := s.PutRecords(ctx, recs); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchRecords), "ns/record")
	})

	b.Run("Update", func(b *testing.B) {
		s := MustOpenStoreAt(b, filepath.Join(b.TempDir(), "db"), nil)
		if err := s.PutRecords(ctx, recs); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			for _, r := range recs { // a new status and translation each round
				r.Status = rappel.Statuses[i%2]
				r.Translations.EN.HazardDescription = fmt.Sprint("round ", i)
			}
			b.StartTimer()
			if err := s.PutRecords(ctx, recs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchRecords), "ns/record")
	})

	b.Run("Unchanged", func(b *testing.B) {
		s := MustOpenStoreAt(b, filepath.Join(b.TempDir(), "db"), nil)
		if err := s.PutRecords(ctx, recs); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := s.PutRecords(ctx, recs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStore_Record measures reading one record by id from a store
// holding the corpus.
func BenchmarkStore_Record(b *testing.B) {
	ctx := context.Background()
	s := MustOpenStoreAt(b, filepath.Join(b.TempDir(), "db"), nil)
	recs := makeRecords(benchRecords)
	if err := s.PutRecords(ctx, recs); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Record(ctx, recs[(i*7919)%len(recs)].RecordID); err != nil {
			b.Fatal(err)
		}
	}
}
