package segment

import (
	"errors"
	"testing"
)

// FuzzOpen opens arbitrary bytes, and mutations of a small valid segment:
// an error is an *Error, and a segment that opens gives out every section
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
// mutation, so that the mutations reach the checks behind the checksums.
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
		Reseal(data)
		openAndUse(t, data)
	})
}

// openAndUse opens data and, when it opens, reads every section of it.
func openAndUse(t *testing.T, data []byte) {
	f, err := OpenBytes("fuzz", data)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.File != "fuzz" {
			t.Fatalf("err = %v (%T), want an *Error naming the segment", err, err)
		}
		return
	}
	r := f.Reader()
	_ = r.Bytes("raw", 1, -1)
	_ = ReadColumn[int64](r, "col", -1)
	words := r.Table("words", "words.offs", -1)
	for i := range words.Len() {
		_ = words.At(i)
	}
	bms := r.Bitmaps("bms", "bms.offs", -1)
	for i := range bms.Len() {
		if bm, err := Bitmap(bms.At(i), 1<<20); err == nil {
			bm.GetCardinality()
		}
	}
	if r.Err() != nil {
		var e *Error
		if !errors.As(r.Err(), &e) {
			t.Fatalf("err = %v (%T), want an *Error", r.Err(), r.Err())
		}
	}
}
