package segment

import (
	"bytes"
	"fmt"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/vellum"
)

// loader finds the sections of a checked header and reports, naming the
// section, what does not fit what the lookups rely on.
type loader struct {
	s    *Segment
	secs map[string]section
	err  error
}

// section returns the bytes of name, which must hold want units of size
// bytes (any whole number of units when want < 0).
func (l *loader) section(name string, size, want int) []byte {
	if l.err != nil {
		return nil
	}
	sec, ok := l.secs[name]
	switch {
	case !ok:
		l.fail(name, "missing: a segment of format version %d has it", Version)
	case want >= 0 && sec.len != uint64(size)*uint64(want):
		l.fail(name, "corrupt: %d bytes, want %d (%d × %d bytes)", sec.len, size*want, want, size)
	case sec.len%uint64(size) != 0:
		l.fail(name, "corrupt: %d bytes, not a whole number of %d-byte values", sec.len, size)
	default:
		return l.s.data[sec.off:sec.end():sec.end()]
	}
	return nil
}

// table returns the table of the blob and offsets sections, which must hold
// want strings (any number when want < 0).
func (l *loader) table(blob, offs string, want int) table {
	b := l.section(blob, 1, -1)
	if want >= 0 {
		want++ // the end of the last string
	}
	o := view[uint32](l.section(offs, 4, want))
	if l.err != nil {
		return table{}
	}
	t, err := newTable(b, o)
	if err != nil {
		l.fail(offs, "corrupt: %v", err)
	}
	return t
}

func (l *loader) fail(name, format string, args ...any) {
	if l.err == nil {
		l.err = l.s.fail(name, format, args...)
	}
}

// load reads the sections of s's checked header h in place and checks
// their structure: lengths, offsets within their blobs, the record_id order,
// the filter bitmaps and the term dictionary's size. The postings are
// checked on first use.
func (s *Segment) load(h *header) error {
	l := &loader{s: s, secs: map[string]section{}}
	for _, sec := range h.sections {
		l.secs[sec.name] = sec
	}
	n := s.n
	s.ids = l.table(secIDs, secIDOffs, n)
	s.idOrder = view[uint32](l.section(secIDOrder, 4, n))
	s.json = l.table(secJSON, secJSONOffs, 4*n)
	s.eventDay = view[int32](l.section(secEventDay, 4, n))
	s.recallDay = view[int32](l.section(secRecallDay, 4, n))
	s.units = view[int64](l.section(secUnits, 8, n))
	s.filterKeys = l.table(secFilterKeys, secFilterKeyOff, -1)
	filters := l.table(secFilters, secFilterOffs, max(s.filterKeys.len(), 0))
	terms := l.section(secTerms, 1, -1)
	if l.err != nil {
		return l.err
	}
	if err := s.checkIDOrder(); err != nil {
		l.fail(secIDOrder, "corrupt: %v", err)
	}
	s.loadFilters(l, filters)
	s.loadTerms(l, terms)
	return l.err
}

// checkIDOrder checks that idOrder lists documents by strictly ascending
// record_id: then each document is listed once, and Doc's binary search
// finds every record.
func (s *Segment) checkIDOrder() error {
	for i, d := range s.idOrder {
		if int(d) >= s.n {
			return fmt.Errorf("entry %d is document %d of %d", i, d, s.n)
		}
		if i > 0 && bytes.Compare(s.ids.at(int(s.idOrder[i-1])), s.ids.at(int(d))) >= 0 {
			return fmt.Errorf("entry %d (%q) does not come after the one before it", i, s.ids.at(int(d)))
		}
	}
	return nil
}

// loadFilters checks the filter keys' order and decodes every filter
// bitmap, in place: they are few, and every search uses some.
func (s *Segment) loadFilters(l *loader, t table) {
	for i := range s.filterKeys.len() {
		k := s.filterKeys.at(i)
		if f, v, ok := bytes.Cut(k, []byte{0}); !ok || len(f) == 0 || len(v) == 0 {
			l.fail(secFilterKeys, "corrupt: key %d (%q) is not a field and a value", i, k)
			return
		}
		if i > 0 && bytes.Compare(s.filterKeys.at(i-1), k) >= 0 {
			l.fail(secFilterKeys, "corrupt: key %d (%q) does not come after the one before it", i, k)
			return
		}
	}
	if !aligned(t) {
		l.fail(secFilterOffs, "corrupt: a bitmap does not start on an %d-byte boundary", align)
		return
	}
	s.filters = make([]*roaring.Bitmap, t.len())
	for i := range s.filters {
		bm, err := decodeBitmap(t.at(i), s.n)
		if err != nil {
			l.fail(secFilters, "corrupt: the bitmap of %q: %v", s.filterKeys.at(i), err)
			return
		}
		s.filters[i] = bm
	}
}

// loadTerms opens the term dictionary over its bytes, and checks that it
// has as many terms as there are postings.
func (s *Segment) loadTerms(l *loader, b []byte) {
	if l.err != nil {
		return
	}
	fst, err := loadFST(b)
	if err != nil {
		l.fail(secTerms, "corrupt: %v", err)
		return
	}
	if fst.Len() < 0 || fst.Len() > 1<<31 {
		l.fail(secTerms, "corrupt: it claims %d terms", fst.Len())
		return
	}
	s.terms = fst
	s.postings = l.table(secPostings, secPostingOffs, fst.Len())
	if l.err == nil && !aligned(s.postings) {
		l.fail(secPostingOffs, "corrupt: a bitmap does not start on an %d-byte boundary", align)
	}
	s.checked = make([]atomic.Uint64, (s.postings.len()+63)/64)
}

// loadFST opens a vellum FST over b without copying it, turning a panic on
// malformed bytes into an error.
func loadFST(b []byte) (fst *vellum.FST, err error) {
	defer func() {
		if r := recover(); r != nil {
			fst, err = nil, fmt.Errorf("malformed: %v", r)
		}
	}()
	return vellum.Load(b)
}

// aligned reports whether every string of t starts on an 8-byte boundary
// of its section, as a bitmap used in place must.
func aligned(t table) bool {
	for _, o := range t.offs {
		if o%align != 0 {
			return false
		}
	}
	return true
}
