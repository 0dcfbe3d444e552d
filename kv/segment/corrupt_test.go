package segment

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
)

// checkError fails unless err is an *Error about file and section whose
// message says want.
func checkError(t *testing.T, err error, file, section, want string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want an *Error", err, err)
	}
	if e.File != file || e.Section != section || !strings.Contains(e.Msg, want) {
		t.Fatalf("err = %q; want file %q, section %q, saying %q", err, file, section, want)
	}
	if !strings.Contains(err.Error(), file) {
		t.Fatalf("%q does not name the file", err)
	}
}

// smallSegment returns the bytes of a segment of every kind of section,
// and its header.
func smallSegment(t testing.TB, n int) ([]byte, *header) {
	t.Helper()
	b, err := Encode(func(w *Writer) (Meta, error) {
		fill(w, n)
		return Meta{Info: rappel.DatasetInfo{Records: n, Source: "test"}, Content: 7}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := parseHeader("small", b)
	if err != nil {
		t.Fatal(err)
	}
	return b, h
}

// fill writes n values into sections of every kind.
func fill(w *Writer, n int) {
	col := make([]int64, n)
	words := make([][]byte, n)
	bms := make([]*roaring.Bitmap, n)
	for i := range n {
		col[i] = int64(i * i)
		words[i] = []byte(strings.Repeat("w", i%7))
		bms[i] = roaring.BitmapOf(uint32(i), uint32(2*i+1))
	}
	w.Section("raw", []byte("some bytes"))
	WriteColumn(w, "col", col)
	w.Strings("words", "words.offs", n, func(i int) []byte { return words[i] })
	w.Bitmaps("bms", "bms.offs", n, func(i int) *roaring.Bitmap { return bms[i] })
}

func TestOpen_Truncated(t *testing.T) {
	b, h := smallSegment(t, 40)
	cuts := []int{0, 1, 7, 8, headerSize - 1, headerSize, h.size() - 1, h.size()}
	for _, s := range h.sections {
		cuts = append(cuts, int(s.off), int(s.off)+1, int(s.end())-1, int(s.end()))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		cuts = append(cuts, rng.IntN(len(b)))
	}
	for _, cut := range cuts {
		if cut < 0 || cut >= len(b) {
			continue
		}
		_, err := OpenBytes("cut.seg", b[:cut])
		want := "header"
		if cut >= h.size() {
			for _, s := range h.sections {
				if s.end() > uint64(cut) {
					want = s.name
					break
				}
			}
		}
		checkError(t, err, "cut.seg", want, "truncated")
	}
	t.Run("File", func(t *testing.T) {
		// Through a memory mapping, the error names the path.
		path := filepath.Join(t.TempDir(), "cut.seg")
		s := h.sections[len(h.sections)/2]
		if err := os.WriteFile(path, b[:s.off+s.len/2], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(path)
		checkError(t, err, path, s.name, "truncated")
	})
}

func TestOpen_Corrupt(t *testing.T) {
	b, h := smallSegment(t, 40)
	flip := func(i int) []byte {
		c := append([]byte(nil), b...)
		c[i] ^= 0x20
		return c
	}
	t.Run("Sections", func(t *testing.T) {
		for _, s := range h.sections {
			if s.len == 0 {
				continue
			}
			for _, i := range []uint64{s.off, s.off + s.len/2, s.end() - 1} {
				_, err := OpenBytes("flip.seg", flip(int(i)))
				checkError(t, err, "flip.seg", s.name, "checksum")
			}
		}
	})
	t.Run("Header", func(t *testing.T) {
		for i := len(magic); i < h.size(); i++ {
			_, err := OpenBytes("flip.seg", flip(i))
			var e *Error
			if !errors.As(err, &e) || e.Section != "header" {
				t.Fatalf("byte %d flipped: err = %v, want the header's", i, err)
			}
		}
	})
	t.Run("Magic", func(t *testing.T) {
		_, err := OpenBytes("flip.seg", flip(3))
		checkError(t, err, "flip.seg", "", "not a segment file")
		_, err = OpenBytes("text.txt", []byte("hello, this is text and not a segment at all"))
		checkError(t, err, "text.txt", "", "not a segment file")
	})
	t.Run("Padding", func(t *testing.T) {
		flipped := false
		for i, s := range h.sections[1:] {
			if prev := h.sections[i]; prev.end() < s.off {
				_, err := OpenBytes("flip.seg", flip(int(prev.end())))
				checkError(t, err, "flip.seg", s.name, "padding")
				flipped = true
			}
		}
		if !flipped {
			t.Fatal("no padding between sections to flip")
		}
	})
	t.Run("Version", func(t *testing.T) {
		c := append([]byte(nil), b...)
		binary.LittleEndian.PutUint32(c[offVersion:], Version+1)
		Reseal(c)
		_, err := OpenBytes("v2.seg", c)
		checkError(t, err, "v2.seg", "header", "format version 2")
	})
	t.Run("TrailingBytes", func(t *testing.T) {
		_, err := OpenBytes("long.seg", append(append([]byte(nil), b...), 0, 0, 0))
		checkError(t, err, "long.seg", "", "follow the end")
	})
}
