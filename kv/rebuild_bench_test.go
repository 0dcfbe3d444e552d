//go:build unix

package kv

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv/index"
)

// BenchmarkStore_ForEachRecord measures what a node does before it serves
// from a warm data dir: reading and decoding every record of the bundle
// from the store (Decode), and that followed by the read index's build
// (Rebuild, as `rappel serve` does). The bundled corpus when one is
// embedded, else the synthetic records of the other benchmarks. Besides the
// wall clock it reports the CPU time of the process (every thread, the
// garbage collector's too) per record, which a busy machine disturbs less.
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
	perRecord := func(b *testing.B, cpu time.Duration) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*n), "cpu-ns/record")
	}
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		cpu := cpuTime(b)
		for b.Loop() {
			readAll(b)
		}
		perRecord(b, cpuTime(b)-cpu)
	})
	b.Run("Rebuild", func(b *testing.B) {
		b.ReportAllocs()
		cpu := cpuTime(b)
		for b.Loop() {
			if _, err := index.Build(readAll(b), rappel.DatasetInfo{}); err != nil {
				b.Fatal(err)
			}
		}
		perRecord(b, cpuTime(b)-cpu)
	})
}

// cpuTime is the CPU time the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
