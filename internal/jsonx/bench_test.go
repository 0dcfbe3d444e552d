package jsonx

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rappel-ca/rappel"
)

// bundleLines returns the lines of the bundle's records and their size.
func bundleLines(b *testing.B) (lines [][]byte, size int64) {
	if _, err := os.Stat(filepath.Join(bundleDir, "records.ndjson.zst")); err != nil {
		b.Skipf("no bundle: %v", err)
	}
	eachLine(b, "records.ndjson.zst", func(_ int, line []byte) {
		lines = append(lines, bytes.Clone(line))
		size += int64(len(line))
	})
	return lines, size
}

// BenchmarkDecodeRecords decodes every record of the bundle with
// encoding/json and with jsonx (sonic), as the store, the bundle load and
// the plugin host (Strict) do.
func BenchmarkDecodeRecords(b *testing.B) {
	lines, size := bundleLines(b)
	for _, c := range []struct {
		name   string
		decode func([]byte, any) error
	}{
		{"encoding-json", json.Unmarshal},
		{"jsonx", Unmarshal},
		{"jsonx-strict", UnmarshalStrict},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for _, l := range lines {
					var r rappel.Record
					if err := c.decode(l, &r); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/record")
		})
	}
}

// BenchmarkEncodeRecords encodes every record of the bundle with
// encoding/json and with jsonx, as the store does.
func BenchmarkEncodeRecords(b *testing.B) {
	lines, size := bundleLines(b)
	recs := make([]*rappel.Record, len(lines))
	for i, l := range lines {
		recs[i] = new(rappel.Record)
		if err := json.Unmarshal(l, recs[i]); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		encode func(any) ([]byte, error)
	}{
		{"encoding-json", json.Marshal},
		{"jsonx", Marshal},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for _, r := range recs {
					if _, err := c.encode(r); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
		})
	}
}
