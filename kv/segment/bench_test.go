package segment

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv/index"
)

// The benchmarks measure the embedded bundle's segment:
//
//	go test -run '^$' -bench . -benchmem ./kv/segment/

// BenchmarkWrite writes the bundle's segment from its built snapshot, in
// memory and to a synced file; bytes is the segment's size.
func BenchmarkWrite(b *testing.B) {
	snap := mustBundleSnapshot(b)
	b.Run("Encode", func(b *testing.B) {
		b.ReportAllocs()
		var size int
		for b.Loop() {
			buf, err := Encode(snap)
			if err != nil {
				b.Fatal(err)
			}
			size = len(buf)
		}
		b.ReportMetric(float64(size), "bytes")
	})
	b.Run("WriteFile", func(b *testing.B) {
		b.ReportAllocs()
		path := filepath.Join(b.TempDir(), "bundle.seg")
		for b.Loop() {
			if err := WriteFile(path, snap); err != nil {
				b.Fatal(err)
			}
		}
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(fi.Size()), "bytes")
	})
}

// mustBundleFile writes the bundle's segment into a temporary directory.
func mustBundleFile(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bundle.seg")
	if err := WriteFile(path, mustBundleSnapshot(b)); err != nil {
		b.Fatal(err)
	}
	return path
}

// mustBundleSegment returns the bundle's snapshot and its segment, mapped
// from a file until the benchmark ends.
func mustBundleSegment(b *testing.B) (*index.Snapshot, *Segment) {
	b.Helper()
	seg, err := Open(mustBundleFile(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = seg.Close() })
	return mustBundleSnapshot(b), seg
}

// BenchmarkOpen opens the bundle's segment, checksums and structure
// checked: mapped from its file, and over bytes in memory as an embedded
// segment would be.
func BenchmarkOpen(b *testing.B) {
	path := mustBundleFile(b)
	b.Run("Mmap", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			seg, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			_ = seg.Close()
		}
	})
	b.Run("Bytes", func(b *testing.B) {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := OpenBytes("bundle", data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRecordJSON looks records up by record_id, in random order and
// all three language variants, in the index and in the mapped segment.
func BenchmarkRecordJSON(b *testing.B) {
	snap, seg := mustBundleSegment(b)
	ids := make([]string, snap.Len())
	for d := range ids {
		ids[d] = snap.DocID(int32(d))
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	langs := []string{"", rappel.LangEN, rappel.LangFR}
	for _, c := range []struct {
		name   string
		lookup func(id, lang string) ([]byte, bool)
	}{{"Index", snap.RecordJSON}, {"Segment", seg.RecordJSON}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if _, ok := c.lookup(ids[n%len(ids)], langs[n%3]); !ok {
					b.Fatal("not found")
				}
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "lookups/s")
		})
	}
}

// BenchmarkPostings looks terms up in the mapped segment's dictionary, in
// random order, and reads their documents in place: the first lookup of a
// term validates its bitmap, the next ones only decode its header.
func BenchmarkPostings(b *testing.B) {
	snap, seg := mustBundleSegment(b)
	type term struct {
		stream int
		text   string
	}
	var terms []term
	for _, stream := range []int{index.StreamEN, index.StreamFR} {
		snap.Postings(stream, func(t string, _ *roaring.Bitmap) { terms = append(terms, term{stream, t}) })
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(terms), func(i, j int) { terms[i], terms[j] = terms[j], terms[i] })
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		t := terms[n%len(terms)]
		if bm, err := seg.Postings(t.stream, t.text); bm == nil || err != nil {
			b.Fatalf("%q: %v", t.text, err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "lookups/s")
}

// BenchmarkHeld measures the Go heap that stays allocated (live-B) once
// the bundle's segment is open, and once its index snapshot is built from
// the bundle's records (the records themselves dropped).
func BenchmarkHeld(b *testing.B) {
	b.Run("Segment", func(b *testing.B) {
		path := mustBundleFile(b)
		var held int64
		for b.Loop() {
			before := liveHeap()
			seg, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			held = liveHeap() - before
			runtime.KeepAlive(seg)
			_ = seg.Close()
		}
		b.ReportMetric(float64(held), "live-B")
	})
	b.Run("Index", func(b *testing.B) {
		m, err := bundle.ReadManifest(bundle.Embedded())
		if err != nil {
			b.Skip(err)
		}
		var held int64
		for b.Loop() {
			before := liveHeap()
			recs, err := bundleRecords()
			if err != nil {
				b.Fatal(err)
			}
			snap, err := index.Build(recs, rappel.DatasetInfo{UpdatedAt: m.BuiltAt, Source: "bundle"})
			if err != nil {
				b.Fatal(err)
			}
			// Build keeps no reference to the records: they are garbage here.
			held = liveHeap() - before
			runtime.KeepAlive(snap)
		}
		b.ReportMetric(float64(held), "live-B")
	})
}

// liveHeap returns the bytes of heap objects alive after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
