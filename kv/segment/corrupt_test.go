package segment

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/kv/index"
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

// smallSegment returns the bytes of a segment of a few records, and its
// header.
func smallSegment(t testing.TB, n int) ([]byte, *header) {
	t.Helper()
	_, _, b := mustSegment(t, testRecords(n))
	h, err := parseHeader("small", b)
	if err != nil {
		t.Fatal(err)
	}
	return b, h
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
		reseal(c)
		_, err := OpenBytes("v2.seg", c)
		checkError(t, err, "v2.seg", "header", "format version 2")
	})
	t.Run("TrailingBytes", func(t *testing.T) {
		_, err := OpenBytes("long.seg", append(append([]byte(nil), b...), 0, 0, 0))
		checkError(t, err, "long.seg", "", "follow the end")
	})
}

// TestOpen_Malformed checks what a checksum cannot: sections whose bytes
// are whole but whose structure is wrong, as a faulty writer would make
// them, resealed with valid checksums.
func TestOpen_Malformed(t *testing.T) {
	b, h := smallSegment(t, 40)
	sec := map[string]section{}
	for _, s := range h.sections {
		sec[s.name] = s
	}
	for _, c := range []struct {
		name, section, want string
		change              func(c []byte)
	}{
		{"IDOrder", secIDOrder, "does not come after", func(c []byte) {
			o := c[sec[secIDOrder].off:]
			copy(o[:4], o[4:8]) // a document twice
		}},
		{"IDOrderRange", secIDOrder, "document", func(c []byte) {
			binary.LittleEndian.PutUint32(c[sec[secIDOrder].off:], 1<<30)
		}},
		{"JSONOffsets", secJSONOffs, "below the one before", func(c []byte) {
			binary.LittleEndian.PutUint32(c[sec[secJSONOffs].off+8:], 1<<30)
		}},
		{"IDsEnd", secIDOffs, "last offset", func(c []byte) {
			s := sec[secIDOffs]
			binary.LittleEndian.PutUint32(c[s.end()-4:], 1<<30)
		}},
		{"FilterKey", secFilterKeys, "not a field and a value", func(c []byte) {
			s := sec[secFilterKeys]
			for i := s.off; i < s.end(); i++ {
				if c[i] == 0 {
					c[i] = 'x'
					return
				}
			}
		}},
		{"FilterBitmap", secFilters, "bitmap", func(c []byte) {
			c[sec[secFilters].off] ^= 0xff // the cookie
		}},
		{"Terms", secTerms, "", func(c []byte) {
			s := sec[secTerms]
			for i := s.off; i < s.off+16; i++ {
				c[i] = 0xee
			}
		}},
		{"PostingsCount", secPostingOffs, "want", func(c []byte) {
			s := sec[secTerms]
			binary.LittleEndian.PutUint64(c[s.end()-16:], 3) // the term count
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := append([]byte(nil), b...)
			c.change(m)
			reseal(m)
			_, err := OpenBytes("bad.seg", m)
			checkError(t, err, "bad.seg", c.section, c.want)
		})
	}
	t.Run("Postings", func(t *testing.T) {
		// A malformed posting list is found when first used.
		m := append([]byte(nil), b...)
		m[sec[secPostings].off] ^= 0xff
		reseal(m)
		seg, err := OpenBytes("bad.seg", m)
		if err != nil {
			t.Fatal(err)
		}
		first, err := seg.terms.GetMinKey() // the first bitmap's term
		if err != nil {
			t.Fatal(err)
		}
		_, firstErr := seg.Postings(index.StreamEN, strings.TrimPrefix(string(first), "en\x00"))
		checkError(t, firstErr, "bad.seg", secPostings, "term")
	})
}

// reseal rewrites the checksums of the segment in b, of every section its
// directory lists and of the header, as a writer would have computed them
// for these bytes. Bytes too short or too garbled to hold a directory are
// left as they are.
func reseal(b []byte) {
	if len(b) < headerSize {
		return
	}
	le := binary.LittleEndian
	count := int(le.Uint32(b[offCount:]))
	if count > maxSections || len(b) < headerSize+count*entrySize {
		return
	}
	for i := range count {
		e := b[headerSize+i*entrySize:]
		off, n := le.Uint64(e[24:]), le.Uint64(e[32:])
		if off <= uint64(len(b)) && n <= uint64(len(b))-off {
			le.PutUint32(e[40:], crc32.Checksum(b[off:off+n], castagnoli))
		}
	}
	size := headerSize + count*entrySize
	le.PutUint32(b[offCRC:], headerCRC(b[:size]))
}
