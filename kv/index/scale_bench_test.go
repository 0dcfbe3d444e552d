package index

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// The scale benchmarks answer the query classes whose cost grows with the
// number of records on a segment several times the bundle's: the bundle's
// records repeated under new record_ids, so that every term's documents
// and every phrase's candidates grow with the copies, as a larger data
// set's do. RAPPEL_BENCH_COPIES sets the copies (5 by default: about
// 200,000 records); the segment is built once per content version and
// kept in RAPPEL_BENCH_SCALE_DIR (the system's temporary directory by
// default), since building it takes a minute and a few GB of heap.

// scaleConfig returns the number of copies and the directory the scaled
// segment and store are kept in.
func scaleConfig(b *testing.B) (copies int, dir string) {
	copies = 5
	if v := os.Getenv("RAPPEL_BENCH_COPIES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("RAPPEL_BENCH_COPIES=%q: want a number of copies, 1 or more", v)
		}
		copies = n
	}
	dir = os.Getenv("RAPPEL_BENCH_SCALE_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	return copies, dir
}

// scaledSegment returns the scaled segment, mapped as a node serves it,
// building it on first use, or skips without the bundle.
func scaledSegment(b *testing.B) *Snapshot {
	copies, dir := scaleConfig(b)
	path := filepath.Join(dir, fmt.Sprintf("rappel-scale-v%d-x%d-spread.seg", SegmentContent, copies))
	if _, err := os.Stat(path); err != nil {
		buildScaled(b, path, copies)
	}
	s, err := OpenSegment(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// scaledStore returns a Pebble store holding the scaled records, filling
// it on first use.
func scaledStore(b *testing.B) *kv.Store {
	copies, dir := scaleConfig(b)
	at := filepath.Join(dir, fmt.Sprintf("rappel-scale-store-x%d-spread", copies))
	done := filepath.Join(at, "filled")
	if _, err := os.Stat(done); err != nil {
		if err := os.RemoveAll(at); err != nil {
			b.Fatal(err)
		}
		store := kvtest.OpenAt(b, filepath.Join(at, "pebble"))
		for chunk := range slices.Chunk(scaledRecords(b, copies), 5000) {
			if err := store.PutRecords(context.Background(), chunk); err != nil {
				b.Fatal(err)
			}
		}
		if err := store.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(done, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	store := kvtest.OpenAt(b, filepath.Join(at, "pebble"))
	b.Cleanup(func() { store.Close() })
	return store
}

// scaledRecords returns the bundle's records repeated copies times, each
// copy after the first under record_ids of its own.
func scaledRecords(b *testing.B, copies int) []*rappel.Record {
	var base []*rappel.Record
	if err := bundle.ReadRecords(bundle.Embedded(), func(r *rappel.Record) error { base = append(base, r); return nil }); err != nil || len(base) == 0 {
		b.Skip("no bundle embedded: run `make bundle`")
	}
	recs := make([]*rappel.Record, 0, copies*len(base))
	for c := range copies {
		for _, r := range base {
			cp := *r
			if c > 0 {
				cp.RecordID = r.RecordID + "-x" + strconv.Itoa(c)
				cp.EventDate = laterDay(r.EventDate, c)
			}
			recs = append(recs, &cp)
		}
	}
	return recs
}

// laterDay returns the YYYY-MM-DD date days after date, or date when it is
// not one. A copy a few days after its original is among other records in
// the document order, as a larger data set's records are, rather than
// beside its original: copies side by side would make runs in every
// bitmap that a real data set does not have.
func laterDay(date string, days int) string {
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return date
	}
	return d.AddDate(0, 0, days).Format(time.DateOnly)
}

// buildScaled writes the scaled records as a segment at path.
func buildScaled(b *testing.B, path string, copies int) {
	s, err := Build(scaledRecords(b, copies), rappel.DatasetInfo{})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.WriteSegment(path); err != nil {
		b.Fatal(err)
	}
	s = nil
	runtime.GC()
}

// BenchmarkScale_VIN is GET /recall/vin's work past decoding, for the
// bundle's VIN of the scale table (a 2010 Toyota Camry), and for the make
// and year alone, the fallback when no recall names the model: the store's
// vehicle keys ("store"), then the summaries of the records they name
// ("lookup"). The store alone needs no segment: -bench 'VIN/store' with 25
// copies measures a million records without building their index.
func BenchmarkScale_VIN(b *testing.B) {
	ctx := context.Background()
	store := scaledStore(b)
	for _, model := range []string{"CAMRY", ""} {
		vehicle := func(b *testing.B) []string {
			ids, err := store.RecordIDsByVehicle(ctx, "TOYOTA", model, 2010)
			if err != nil || len(ids) == 0 {
				b.Fatalf("%d recalls of the vehicle, error %v", len(ids), err)
			}
			return ids
		}
		name := cmp.Or(model, "make_year")
		b.Run("store_"+name, func(b *testing.B) {
			b.ReportAllocs()
			var found int
			for b.Loop() {
				found = len(vehicle(b))
			}
			b.ReportMetric(float64(found), "records")
		})
		b.Run("lookup_"+name, func(b *testing.B) {
			s := scaledSegment(b)
			b.ReportAllocs()
			for b.Loop() {
				if len(s.View().Summaries(vehicle(b))) == 0 {
					b.Fatal("no summaries of the vehicle's recalls")
				}
			}
		})
	}
}

// BenchmarkScale_Search answers the classes of the scale table on the
// scaled segment.
func BenchmarkScale_Search(b *testing.B) {
	s := scaledSegment(b)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		q    rappel.Search
	}{
		{"page100", rappel.Search{Limit: 100}},
		{"and", rappel.Search{Query: mustQuery(b, "pieces metal")}},
		{"phrase", rappel.Search{Query: mustQuery(b, `"pieces of metal"`)}},
		{"phrase_relevance", rappel.Search{Query: mustQuery(b, `"pieces of metal"`), SortBy: rappel.SortRelevance}},
		{"phrase_common", rappel.Search{Query: mustQuery(b, `"may contain"`)}},
		{"or", rappel.Search{Query: mustQuery(b, "listeria OR salmonella")}},
		{"not", rappel.Search{Query: mustQuery(b, "recalled -salmonella")}},
		{"rare", rappel.Search{Query: mustQuery(b, "shellfish")}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 1<<20)
			for b.Loop() {
				q := c.q
				q.Buf = buf
				if _, err := s.View().Search(ctx, checked(b, &q)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScale_Stats answers GET /recall/stats's class of the scale
// table, with a period, on the scaled segment.
func BenchmarkScale_Stats(b *testing.B) {
	s := scaledSegment(b)
	for _, q := range []rappel.StatsQuery{
		{GroupBy: "recall_type"},
		{GroupBy: "recall_type", Since: "2020-01-01"},
		{GroupBy: "category"},
	} {
		b.Run(q.GroupBy+"_"+q.Since, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.View().Stats(context.Background(), &q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScale_FirstBuild is a node's first start on the scaled store:
// no segments yet, so the read index is built from the store and written
// as a segment ("write"), which Segments.Open then maps and checks whole
// ("open": the mapped file's pages count in the resident size too). Run
// one of them once (-benchtime=1x) under /usr/bin/time -v for its peak
// resident size; the store is filled on first use, which a second run
// skips.
func BenchmarkScale_FirstBuild(b *testing.B) {
	store := scaledStore(b)
	ctx := context.Background()
	b.Run("write", func(b *testing.B) {
		for b.Loop() {
			m := &Segments{Dir: b.TempDir(), Store: store, Catalog: &Catalog{}}
			info, err := store.DatasetInfo(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if err := m.buildBase(ctx, info, filepath.Join(m.Dir, "base.seg")); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			m := &Segments{Dir: b.TempDir(), Store: store, Catalog: &Catalog{}}
			if err := m.Open(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(m.Catalog.Current().Len()), "records")
			if err := m.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
