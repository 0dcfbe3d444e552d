// Package segment reads and writes index segments: immutable files that
// hold what the read index serves, laid out so that it is used where it
// lies, in a memory mapping of the file or in bytes embedded in the binary,
// and the Go heap holds nothing per record.
//
// A segment is written from a built index.Snapshot (WriteFile, Encode), so
// that it holds exactly the snapshot's bytes, document numbers, filter
// bitmaps and terms. It holds: the record_ids, in document order and in
// record_id order; each record's JSON, cut as the snapshot keeps it so that
// any language variant is spliced from one copy; the event and recall days
// and units_affected of every document, as fixed-width columns; every
// filter bitmap and every term's documents, as roaring bitmaps in their
// portable format, read in place; and the terms in a finite state
// transducer (vellum) mapping each to its documents.
//
// Open checks the whole file before anything is read from it: a checksum
// per section, then the structure of what the lookups rely on. A truncated
// or corrupt segment is an *Error naming the file and the section.
package segment

import (
	"bytes"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/vellum"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
)

// Section names, in the order they are written.
const (
	secIDs          = "ids"          // record_ids, in document order
	secIDOffs       = "ids.offs"     // u32 × (n+1)
	secIDOrder      = "ids.sorted"   // u32 × n: documents in record_id order
	secJSON         = "json"         // per document: prefix, en, fr, suffix
	secJSONOffs     = "json.offs"    // u32 × (4n+1)
	secEventDay     = "event_day"    // i32 × n
	secRecallDay    = "recall_day"   // i32 × n
	secUnits        = "units"        // i64 × n, index.NoUnits when absent
	secFilterKeys   = "filters.keys" // "field\x00value", ascending
	secFilterKeyOff = "filters.keys.offs"
	secFilters      = "filters"      // a bitmap per key
	secFilterOffs   = "filters.offs" // u32 × (keys+1)
	secTerms        = "terms.fst"    // "en\x00term" or "fr\x00term" → ordinal
	secPostings     = "postings"     // a bitmap per term
	secPostingOffs  = "postings.offs"
)

// sectionOrder is every section of a segment of this version.
var sectionOrder = []string{secIDs, secIDOffs, secIDOrder, secJSON, secJSONOffs, secEventDay, secRecallDay, secUnits,
	secFilterKeys, secFilterKeyOff, secFilters, secFilterOffs, secTerms, secPostings, secPostingOffs}

// Segment is an open segment. Its methods are safe for concurrent use.
// What they return that is not a copy (the columns, the bitmaps) lies in
// the segment's memory and must not be used after Close.
type Segment struct {
	file   string
	data   []byte
	unmap  func() error
	info   rappel.DatasetInfo
	digest [32]byte
	n      int

	ids       table    // record_id by document
	idOrder   []uint32 // documents in record_id order
	json      table    // four parts per document (index.DocJSON)
	eventDay  []int32
	recallDay []int32
	units     []int64

	filterKeys table // "field\x00value", ascending
	filters    []*roaring.Bitmap

	terms    *vellum.FST
	postings table
	// checked has bit i set once postings i passed validation, so that
	// each bitmap is validated once, on first use.
	checked []atomic.Uint64
}

// Open maps the segment file at path read-only and checks it. Close
// unmaps it.
func Open(path string) (*Segment, error) {
	data, unmap, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("opening segment: %w", err)
	}
	s, err := OpenBytes(path, data)
	if err != nil {
		_ = unmap()
		return nil, err
	}
	s.unmap = unmap
	return s, nil
}

// OpenBytes checks the segment in data, named name in errors, and reads it
// in place: data must not change while the segment is in use.
func OpenBytes(name string, data []byte) (*Segment, error) {
	h, err := parseHeader(name, data)
	if err != nil {
		return nil, err
	}
	if err := h.verify(name, data); err != nil {
		return nil, err
	}
	s := &Segment{file: name, data: data, info: h.info, digest: h.digest, n: h.info.Records}
	if err := s.load(h); err != nil {
		return nil, err
	}
	return s, nil
}

// Close releases the segment's memory mapping, if it has one. Nothing read
// from the segment in place may be used afterwards.
func (s *Segment) Close() error {
	unmap := s.unmap
	s.unmap = nil
	*s = Segment{file: s.file}
	if unmap == nil {
		return nil
	}
	if err := unmap(); err != nil {
		return fmt.Errorf("closing segment %s: %w", s.file, err)
	}
	return nil
}

// Len is the number of records.
func (s *Segment) Len() int { return s.n }

// Info is the dataset the segment was written from.
func (s *Segment) Info() rappel.DatasetInfo { return s.info }

// Digest is the SHA-256 of every record's JSON (both languages), each
// followed by a newline, in document order: the identity of the content.
func (s *Segment) Digest() [32]byte { return s.digest }

// RecordID returns the record_id of document doc.
func (s *Segment) RecordID(doc int32) string { return string(s.ids.at(int(doc))) }

// Doc returns the document of the record with id.
func (s *Segment) Doc(id string) (int32, bool) {
	i := sort.Search(len(s.idOrder), func(i int) bool { return string(s.ids.at(int(s.idOrder[i]))) >= id })
	if i == len(s.idOrder) || string(s.ids.at(int(s.idOrder[i]))) != id {
		return 0, false
	}
	return int32(s.idOrder[i]), true
}

// RecordJSON returns the JSON of the record with id in the variant for
// lang ("" for both languages): the bytes index.Snapshot.RecordJSON
// serves.
func (s *Segment) RecordJSON(id, lang string) ([]byte, bool) {
	doc, ok := s.Doc(id)
	if !ok {
		return nil, false
	}
	return s.AppendJSON(make([]byte, 0, s.json.offs[4*int(doc)+4]-s.json.offs[4*int(doc)]+16), doc, lang), true
}

// AppendJSON appends the JSON of document doc in the variant for lang to
// dst.
func (s *Segment) AppendJSON(dst []byte, doc int32, lang string) []byte {
	i := 4 * int(doc)
	o := s.json.offs[i : i+5]
	cuts := [3]uint32{o[1] - o[0], o[2] - o[0], o[3] - o[0]}
	return index.AppendJSON(dst, s.json.span(i, i+4), cuts, lang)
}

// EventDays returns the event_date of every document as days since
// 1970-01-01, descending: the documents' order.
func (s *Segment) EventDays() []int32 { return s.eventDay }

// RecallDays returns the recall_date of every document as days since
// 1970-01-01.
func (s *Segment) RecallDays() []int32 { return s.recallDay }

// Units returns the units_affected of every document, index.NoUnits for
// a record without.
func (s *Segment) Units() []int64 { return s.units }

// Filter returns the documents whose field (a filter field of GET
// /recall) holds value; category values are folded by index.CategoryKey.
// The bitmap is shared: it must not be changed.
func (s *Segment) Filter(field, value string) (*roaring.Bitmap, bool) {
	i, ok := s.filterKey(field, value)
	if !ok {
		return nil, false
	}
	return s.filters[i], true
}

// filterKey returns the ordinal of field's value.
func (s *Segment) filterKey(field, value string) (int, bool) {
	n := s.filterKeys.len()
	cmp := func(i int) int { return compareKey(s.filterKeys.at(i), field, value) }
	i := sort.Search(n, func(i int) bool { return cmp(i) >= 0 })
	return i, i < n && cmp(i) == 0
}

// compareKey compares the key k with field+"\x00"+value, without building
// the latter.
func compareKey(k []byte, field, value string) int {
	f, v, _ := bytes.Cut(k, []byte{0})
	if c := bytes.Compare(f, []byte(field)); c != 0 {
		return c
	}
	return bytes.Compare(v, []byte(value))
}

// FilterValues returns the values of field that some document holds, in
// ascending order.
func (s *Segment) FilterValues(field string) []string {
	n := s.filterKeys.len()
	i := sort.Search(n, func(i int) bool { return compareKey(s.filterKeys.at(i), field, "") >= 0 })
	var out []string
	for ; i < n; i++ {
		f, v, _ := bytes.Cut(s.filterKeys.at(i), []byte{0})
		if string(f) != field {
			break
		}
		out = append(out, string(v))
	}
	return out
}

// Terms is the number of terms in both text streams.
func (s *Segment) Terms() int { return s.postings.len() }

// Postings returns the documents holding term in the text stream
// (index.StreamEN or index.StreamFR), or nil when no document does. The
// bitmap lies in the segment; it may be changed (a change copies what it
// touches). The error reports a malformed term dictionary or bitmap.
func (s *Segment) Postings(stream int, term string) (*roaring.Bitmap, error) {
	var buf [64]byte
	key, ok := termKey(buf[:0], stream, term)
	if !ok {
		return nil, nil
	}
	ord, found, err := s.termOrdinal(key)
	if err != nil || !found {
		return nil, err
	}
	if ord >= uint64(s.postings.len()) {
		return nil, s.fail(secTerms, "term %q maps to postings %d of %d", term, ord, s.postings.len())
	}
	i := int(ord)
	word, bit := &s.checked[i/64], uint64(1)<<(i%64)
	var bm *roaring.Bitmap
	if word.Load()&bit != 0 {
		bm = roaring.New()
		_, err = bm.FromBuffer(s.postings.at(i))
	} else {
		bm, err = decodeBitmap(s.postings.at(i), s.n)
	}
	if err != nil {
		return nil, s.fail(secPostings, "the documents of term %q: %v", term, err)
	}
	word.Or(bit)
	return bm, nil
}

// termKey appends the dictionary key of term in stream to dst.
func termKey(dst []byte, stream int, term string) ([]byte, bool) {
	switch stream {
	case index.StreamEN:
		dst = append(dst, "en\x00"...)
	case index.StreamFR:
		dst = append(dst, "fr\x00"...)
	default:
		return nil, false
	}
	return append(dst, term...), true
}

// termOrdinal looks key up in the term dictionary. The dictionary's
// checksum was verified, but a lookup does not trust its structure
// further: vellum indexes the bytes as they say, so a malformed dictionary
// is an error rather than a panic.
func (s *Segment) termOrdinal(key []byte) (ord uint64, found bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			ord, found, err = 0, false, s.fail(secTerms, "malformed term dictionary: %v", r)
		}
	}()
	ord, found, err = s.terms.Get(key)
	if err != nil {
		err = s.fail(secTerms, "malformed term dictionary: %v", err)
	}
	return ord, found, err
}

func (s *Segment) fail(sec, format string, args ...any) error {
	return &Error{File: s.file, Section: sec, Msg: fmt.Sprintf(format, args...)}
}

// decodeBitmap reads the portable roaring bitmap at the start of b in
// place and checks that it is well formed and holds documents below n.
func decodeBitmap(b []byte, n int) (*roaring.Bitmap, error) {
	bm := roaring.New()
	if _, err := bm.FromBuffer(b); err != nil {
		return nil, err
	}
	if err := bm.Validate(); err != nil {
		return nil, err
	}
	if !bm.IsEmpty() && uint64(bm.Maximum()) >= uint64(n) {
		return nil, fmt.Errorf("it holds document %d of %d", bm.Maximum(), n)
	}
	return bm, nil
}
