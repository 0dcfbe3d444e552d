package segment

import (
	"errors"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
)

// FuzzOpen opens arbitrary bytes, and mutations of a small valid segment:
// an error is an *Error, and a segment that opens answers every lookup
// without a panic.
func FuzzOpen(f *testing.F) {
	b, h := smallSegment(f, 4)
	f.Add(b)
	f.Add([]byte{})
	f.Add([]byte(magic))
	f.Add(b[:h.size()])
	for _, s := range h.sections {
		f.Add(b[:s.end()])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		openAndUse(t, data)
	})
}

// FuzzOpenResealed is FuzzOpen with every checksum recomputed after the
// mutation, so that the mutations reach the checks of structure behind
// the checksums: what a faulty writer, not a faulty disk, would make.
func FuzzOpenResealed(f *testing.F) {
	b, h := smallSegment(f, 4)
	f.Add(b)
	for _, s := range h.sections {
		if s.len > 0 {
			c := append([]byte(nil), b...)
			c[s.off+s.len/2] ^= 0x55
			f.Add(c)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = append([]byte(nil), data...) // the input must not change
		reseal(data)
		openAndUse(t, data)
	})
}

// openAndUse opens data and, when it opens, reads everything from it.
func openAndUse(t *testing.T, data []byte) {
	seg, err := OpenBytes("fuzz", data)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.File != "fuzz" {
			t.Fatalf("err = %v (%T), want an *Error naming the segment", err, err)
		}
		return
	}
	for d := range int32(seg.Len()) {
		id := seg.RecordID(d)
		if got, ok := seg.Doc(id); !ok || got != d {
			t.Fatalf("Doc(RecordID(%d)) = %d, %v", d, got, ok)
		}
		for _, lang := range []string{"", rappel.LangEN, rappel.LangFR} {
			seg.AppendJSON(nil, d, lang)
		}
		_, _, _ = seg.EventDays()[d], seg.RecallDays()[d], seg.Units()[d]
	}
	for _, field := range []string{"recall_type", "agency", "category", "allergen", "x"} {
		for _, v := range seg.FilterValues(field) {
			if bm, ok := seg.Filter(field, v); !ok || bm.GetCardinality() > uint64(seg.Len()) {
				t.Fatalf("filter %s=%q listed but not found", field, v)
			}
		}
	}
	for _, stream := range []int{index.StreamEN, index.StreamFR} {
		for _, term := range []string{"0", "00145", "brie", "chees", "fromag", "rappel", "l0", "hc", ""} {
			bm, err := seg.Postings(stream, term)
			var e *Error
			if err != nil && !errors.As(err, &e) {
				t.Fatalf("Postings: %v (%T)", err, err)
			}
			if bm != nil {
				bm.GetCardinality()
			}
		}
	}
}
