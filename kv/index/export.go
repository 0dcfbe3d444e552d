package index

import (
	"maps"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// What a snapshot holds, read in document order by writers of other forms
// of the index: the segment files of kv/segment are written through these,
// so that a segment holds exactly what the snapshot serves. Nothing they
// return may be changed.

// Text streams, for Postings.
const (
	StreamEN = streamEN
	StreamFR = streamFR
)

// NoUnits is DocValues' units of a record without units_affected.
const NoUnits = noUnits

// DocID returns the record_id of document doc.
func (s *Snapshot) DocID(doc int32) string { return s.ids[doc] }

// DocJSON returns document doc's JSON as the snapshot stores it: the bytes
// of its prefix, its English and French translation objects and its
// suffix, one after the other, and where in them the English object, the
// French object and the suffix start. AppendJSON splices a language
// variant from them.
func (s *Snapshot) DocJSON(doc int32) (b []byte, cuts [3]uint32) {
	o := s.enc.offs[5*doc : 5*doc+5]
	return s.enc.arena[o[0]:o[4]], [3]uint32{o[1] - o[0], o[2] - o[0], o[3] - o[0]}
}

// AppendJSON appends to dst the JSON, in the variant for lang ("" for both
// languages), of a record stored as DocJSON returns it: the bytes
// RecordJSON serves. cuts must be ascending and at most len(b).
func AppendJSON(dst, b []byte, cuts [3]uint32, lang string) []byte {
	e := encoded{arena: b, offs: []uint32{0, cuts[0], cuts[1], cuts[2], uint32(len(b))}}
	return e.appendDoc(dst, 0, lang)
}

// DocValues returns document doc's event_date and recall_date as days
// since 1970-01-01 (0 when unparsable), and its units_affected or NoUnits.
func (s *Snapshot) DocValues(doc int32) (eventDay, recallDay int32, units int64) {
	return s.eventDay[doc], s.recallDay[doc], s.units[doc]
}

// Filters calls fn for each value of each of GET /recall's filter fields
// (category values folded by CategoryKey) with the documents holding it,
// in field then value order.
func (s *Snapshot) Filters(fn func(field, value string, docs *roaring.Bitmap)) {
	for _, field := range slices.Sorted(maps.Keys(s.filters)) {
		vals := s.filters[field]
		for _, v := range slices.Sorted(maps.Keys(vals)) {
			fn(field, v, vals[v])
		}
	}
}

// Postings calls fn for each term of the text stream (StreamEN or
// StreamFR) with the documents holding it, in term order.
func (s *Snapshot) Postings(stream int, fn func(term string, docs *roaring.Bitmap)) {
	ps := s.text.postings[stream]
	for _, t := range slices.Sorted(maps.Keys(ps)) {
		fn(t, ps[t].docs)
	}
}
