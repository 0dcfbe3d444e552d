package kv

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

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

// BenchmarkStore_PutRecords1000 measures one PutRecords of 1,000 changed
// records into a store holding benchRecords, synced (benchWrites).
func BenchmarkStore_PutRecords1000(b *testing.B) {
	ctx := context.Background()
	recs := makeRecords(benchRecords)
	benchWrites(b, func(b *testing.B, s *Store) {
		if err := s.PutRecords(ctx, recs); err != nil {
			b.Fatal(err)
		}
	}, func(s *Store, i int) error {
		return s.PutRecords(ctx, changeBatch(recs, i))
	})
}

// BenchmarkStore_ApplySource1000 measures one ApplySource of 1,000
// changed records and their partials, as a feed refresh writes them, into
// a store holding benchRecords and their partials (benchWrites).
func BenchmarkStore_ApplySource1000(b *testing.B) {
	ctx := context.Background()
	recs := makeRecords(benchRecords)
	state := rappel.SourceState{Feed: rappel.FeedState{Source: "hcdump"}}
	benchWrites(b, func(b *testing.B, s *Store) {
		if err := s.ApplySource(ctx, &rappel.SourceChange{State: state, PutPartials: recs, PutRecords: recs}); err != nil {
			b.Fatal(err)
		}
	}, func(s *Store, i int) error {
		batch := changeBatch(recs, i)
		return s.ApplySource(ctx, &rappel.SourceChange{State: state, PutPartials: batch, PutRecords: batch})
	})
}

// changeBatch changes 1,000 records of recs, spread over them as a
// refresh's changes are over the record_ids, others for each i, and
// returns them.
func changeBatch(recs []*rappel.Record, i int) []*rappel.Record {
	batch := make([]*rappel.Record, 1000)
	stride := len(recs) / len(batch)
	for j := range batch {
		r := recs[j*stride+i%stride]
		r.Translations.EN.HazardDescription = fmt.Sprint("round ", i)
		batch[j] = r
	}
	return batch
}

// benchWrites fills a store with fill and measures write: on disk, and on
// Pebble's in-memory file system, where syncing costs nothing and the CPU
// shows (compactions included). Log is the store as it is; Trim also
// trims the change log after each write, as the read index does once it
// has merged the entries; NoLog turns the log off, which is what a write
// cost before there was one.
func benchWrites(b *testing.B, fill func(*testing.B, *Store), write func(*Store, int) error) {
	for _, fs := range []string{"Disk", "Mem"} {
		for _, mode := range []string{"Log", "Trim", "NoLog"} {
			b.Run(fs+"/"+mode, func(b *testing.B) {
				var s *Store
				if fs == "Mem" {
					s = MustOpenStoreAt(b, "db", vfs.NewMem())
				} else {
					s = MustOpenStoreAt(b, filepath.Join(b.TempDir(), "db"), nil)
				}
				fill(b, s)
				benchNoLog = mode == "NoLog"
				defer func() { benchNoLog = false }()
				b.ReportAllocs()
				before := s.db.Metrics().Total()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := write(s, i); err != nil {
						b.Fatal(err)
					}
					if mode == "Trim" {
						if err := s.TrimChanges(context.Background(), s.seq); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/record")
				// What Pebble wrote, flushes and compactions, which the
				// write pays for in the background.
				after := s.db.Metrics().Total()
				written := after.TableBytesFlushed + after.TableBytesCompacted - before.TableBytesFlushed - before.TableBytesCompacted
				b.ReportMetric(float64(written)/float64(b.N), "table-B/op")
			})
		}
	}
}

// BenchmarkStore_RecordFromTables measures Record on a store filled by
// ingesting the tables of the corpus, their blocks uncompressed (as a
// bundle's are, WriteTables) and Snappy-compressed (the store's default):
// reading an uncompressed block must not be slower. The block cache is
// Pebble's default, far smaller than the tables, so reads decode blocks.
func BenchmarkStore_RecordFromTables(b *testing.B) {
	ctx := context.Background()
	recs := makeRecords(benchRecords)
	info := rappel.DatasetInfo{Source: "bundle", Records: len(recs)}
	for _, tc := range []struct {
		name        string
		compression *sstable.CompressionProfile
	}{{"None", sstable.NoCompression}, {"Snappy", sstable.SnappyCompression}} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			s := MustOpenStoreAt(b, filepath.Join(dir, "db"), nil)
			paths, err := writeTables(ctx, filepath.Join(dir, "sst"), tc.compression, recs, nil, nil, nil, info)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Ingest(ctx, paths); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Record(ctx, recs[(i*7919)%len(recs)].RecordID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
