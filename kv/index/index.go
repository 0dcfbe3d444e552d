// Package index holds the read side of the service: an immutable in-memory
// Snapshot of every record, built once from the store and swapped in whole
// by a Catalog when the data changes.
//
// Documents are numbered in the default order of GET /recall (event_date
// newest first, then record_id), so that the default order is the natural
// order of every bitmap and a date range is a range of document numbers.
// A snapshot holds, per filter value, a roaring bitmap of documents; for
// every sort key, the documents in that order; an inverted text index with
// positions in an English and a French stream; and every record's JSON,
// encoded once, from which pages are spliced.
package index

import (
	"cmp"
	"crypto/rand"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cespare/xxhash/v2"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/jsonx"
	"github.com/rappel-ca/rappel/kv/segment"
)

// Snapshot is an immutable index of a set of records: a base built from
// the store, or a delta over one. A View of a snapshot (Snapshot.View)
// implements rappel.Snapshot.
//
// Everything it holds per record is a flat array: a column of numbers, a
// table of byte strings, a roaring bitmap. A snapshot built in memory
// (Build) holds them in the Go heap; one opened from a segment file
// (OpenSegment) holds them where the file is mapped, and the heap holds
// only what is per value (filter values, statistics groups), never per
// record. The same code answers from both.
type Snapshot struct {
	info    rappel.DatasetInfo
	n       int
	ids     table   // record_id by document
	idOrder []int32 // documents in record_id order
	enc     encoded

	all     *roaring.Bitmap
	filters map[string]map[string]*roaring.Bitmap // field → value → documents
	// categories lists the distinct category values, for suggestions.
	categories []string

	eventDay  []int32 // days since 1970-01-01, by document (descending)
	recallDay []int32
	units     []int64 // units_affected, or noUnits

	orders map[orderKey][]int32 // documents in each order; none for the document order
	text   *textIndex

	// Statistics (stats.go): the group_by fields, the running total of
	// units_affected by document, the documents that have it, and the
	// oldest event_date.
	stats     map[string]*statsField
	unitSum   []int64
	withUnits *roaring.Bitmap
	oldest    string
	// Coverage (coverage.go): the documents marked with each part of
	// rappel.CoverageOf, and the counts by year.
	cover    coverBits
	coverage []rappel.YearCoverage
	// Lookups (lookup.go): a summary per document (four strings), and the
	// documents in (recall_id, document) order.
	summaries table
	byRecall  []int32

	cursorKey []byte
	// digests holds the xxhash of each record variant's JSON, three per
	// document (see appendDoc), 0 until first asked for.
	digests []atomic.Uint64
	// file is the segment the snapshot is read from, nil for a built one.
	file *segment.File
	// streamed is, for a snapshot built from the store to be written as a
	// segment (streambuild.go), where its JSON is: enc holds only its
	// offsets.
	streamed *streamedJSON
}

// Options tune a snapshot.
type Options struct {
	// CursorKey signs cursors. Nodes that serve one client behind a load
	// balancer must share it; the default is random per process.
	CursorKey []byte
}

var processKey = func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}()

// Build indexes recs with default options. See BuildOptions.
func Build(recs []*rappel.Record, info rappel.DatasetInfo) (*Snapshot, error) {
	return BuildOptions(recs, info, Options{})
}

// BuildOptions indexes recs and returns their snapshot. recs is sorted in
// place into document order; the snapshot keeps no reference to the records.
// Records with the same record_id are an error.
func BuildOptions(recs []*rappel.Record, info rappel.DatasetInfo, opts Options) (*Snapshot, error) {
	sort.Slice(recs, func(i, j int) bool {
		return docBefore(recs[i].EventDate, recs[i].RecordID, recs[j].EventDate, recs[j].RecordID)
	})
	s, tb, sb := newBuild(len(recs), info, opts)
	for i, r := range recs {
		if err := s.enc.add(r); err != nil {
			return nil, err
		}
		s.addDoc(int32(i), r, sb)
		indexText(tb, int32(i), r)
	}
	if err := s.finishBuild(tb, sb); err != nil {
		return nil, err
	}
	return s, nil
}

// docBefore reports whether the record dated date1 with id1 comes before
// the one dated date2 with id2 in the document order: event_date newest
// first, then record_id.
func docBefore(date1, id1, date2, id2 string) bool {
	if date1 != date2 {
		return date1 > date2
	}
	return id1 < id2
}

// newBuild starts the snapshot of n records, and the builders of its text
// index and statistics, for addDoc to add the records to in document
// order.
func newBuild(n int, info rappel.DatasetInfo, opts Options) (*Snapshot, *textBuilder, *statsBuilder) {
	s := &Snapshot{
		info:      info,
		n:         n,
		digests:   make([]atomic.Uint64, 3*n),
		ids:       newTable(n, 16*n),
		all:       roaring.New(),
		filters:   map[string]map[string]*roaring.Bitmap{},
		eventDay:  make([]int32, n),
		recallDay: make([]int32, n),
		units:     make([]int64, n),
		cursorKey: opts.CursorKey,

		summaries: newTable(4*n, 96*n),
	}
	if s.cursorKey == nil {
		s.cursorKey = processKey
	}
	s.info.Records = n
	if n > 0 {
		s.all.AddRange(0, uint64(n))
	}
	return s, newTextBuilder(newAnalyzer(), n), newStatsBuilder(n)
}

// addDoc indexes r as document doc, every part but its JSON, which the
// caller encodes (into memory, or out to a file as it comes), and its
// text (indexText), which a streamed build indexes beside.
func (s *Snapshot) addDoc(doc int32, r *rappel.Record, sb *statsBuilder) {
	s.ids.add(r.RecordID)
	s.eventDay[doc] = dayOf(r.EventDate)
	s.recallDay[doc] = dayOf(r.RecallDate)
	s.units[doc] = noUnits
	if r.UnitsAffected != nil {
		s.units[doc] = int64(*r.UnitsAffected)
	}
	s.addFilters(doc, r)
	sb.add(doc, r)
	s.addLookups(r)
}

// indexText adds the text of r, document doc, to tb.
func indexText(tb *textBuilder, doc int32, r *rappel.Record) {
	tb.startDoc(doc)
	indexRecord(tb, r)
}

// finishBuild makes what is worked out from every document: the orders,
// the text index, the statistics.
func (s *Snapshot) finishBuild(tb *textBuilder, sb *statsBuilder) error {
	n := s.n
	// The sorts are most of this step at a million records, and read
	// only the columns: the record_id and recall orders sort on a
	// goroutine of their own beside the sort orders.
	var sorts sync.WaitGroup
	sorts.Go(func() {
		s.idOrder = s.sortedDocs(func(a, b int32) int { return strings.Compare(s.ids.view(int(a)), s.ids.view(int(b))) })
		s.byRecall = s.sortedDocs(func(a, b int32) int {
			return cmp.Or(strings.Compare(s.summaries.view(4*int(a)), s.summaries.view(4*int(b))), cmp.Compare(a, b))
		})
	})
	s.text = tb.finish()
	for _, vals := range s.filters {
		for _, bm := range vals {
			bm.RunOptimize()
		}
	}
	s.listCategories()
	s.buildOrders()
	s.finishStats(sb)
	sorts.Wait()
	for i := 1; i < n; i++ {
		if a, b := s.idOrder[i-1], s.idOrder[i]; s.ids.view(int(a)) == s.ids.view(int(b)) {
			return fmt.Errorf("building snapshot: record_id %q appears twice", s.ids.view(int(a)))
		}
	}
	return nil
}

// sortedDocs returns every document, sorted by cmp.
func (s *Snapshot) sortedDocs(cmp func(a, b int32) int) []int32 {
	docs := make([]int32, s.n)
	for i := range docs {
		docs[i] = int32(i)
	}
	slices.SortFunc(docs, cmp)
	return docs
}

// listCategories lists the category values of the filter, for
// suggestions.
func (s *Snapshot) listCategories() {
	s.categories = nil
	for v := range s.filters[filterCategory] {
		s.categories = append(s.categories, v)
	}
	sort.Strings(s.categories)
}

// dayOf returns the days since 1970-01-01 of a YYYY-MM-DD date, or 0.
func dayOf(date string) int32 {
	t, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return 0
	}
	return int32(t.Unix() / 86400)
}

// filterCategory names the bitmaps of the category filter, which
// statistics and views treat apart from the others' (its values are
// folded, and one no record holds is an error). Every filter's bitmaps are
// under its rappel.Filter.Field.
const filterCategory = "category"

// addFilters adds doc to the bitmap of each value of r that a filter
// (rappel.Filters) matches, free-text values in CategoryKey's form.
func (s *Snapshot) addFilters(doc int32, r *rappel.Record) {
	add := func(field, value string) {
		if value == "" {
			return
		}
		vals := s.filters[field]
		if vals == nil {
			vals = map[string]*roaring.Bitmap{}
			s.filters[field] = vals
		}
		bm := vals[value]
		if bm == nil {
			bm = roaring.New()
			vals[value] = bm
		}
		bm.Add(uint32(doc))
	}
	for i := range rappel.Filters {
		f := &rappel.Filters[i]
		for _, v := range f.Values(r) {
			if f.Free() {
				v = CategoryKey(v)
			}
			add(f.Field, v)
		}
	}
}

// CategoryKey is the form category values are compared in: case and
// accents folded, spaces collapsed.
func CategoryKey(c string) string {
	return strings.Join(strings.Fields(fold(strings.ToLower(c))), " ")
}

// Len is the number of records.
func (s *Snapshot) Len() int { return s.n }

// doc returns the document of the record with id.
func (s *Snapshot) doc(id string) (int32, bool) {
	i := sort.Search(len(s.idOrder), func(i int) bool { return s.ids.view(int(s.idOrder[i])) >= id })
	if i == len(s.idOrder) || s.ids.view(int(s.idOrder[i])) != id {
		return 0, false
	}
	return s.idOrder[i], true
}

// Info describes the dataset the snapshot was built from.
func (s *Snapshot) Info() rappel.DatasetInfo { return s.info }

// RecordJSON returns the JSON of the record with id, spliced from the bytes
// encoded when the snapshot was built.
func (s *Snapshot) RecordJSON(id, lang string) ([]byte, bool) {
	b, _, ok := s.AppendRecordJSON(nil, id, lang)
	return b, ok
}

// AppendRecordJSON appends the JSON of the record with id in the variant
// for lang to dst, and the xxhash of what it appended.
func (s *Snapshot) AppendRecordJSON(dst []byte, id, lang string) ([]byte, uint64, bool) {
	doc, ok := s.doc(id)
	if !ok {
		return dst, 0, false
	}
	b, digest := s.appendDoc(dst, doc, lang)
	return b, digest, true
}

// appendDoc appends doc's JSON in the variant for lang to dst, growing dst
// once to the record's size rather than append by append, and returns the
// xxhash of the bytes appended. The hash is worked out the first time a
// variant is asked for and kept in s.digests: the bytes of a snapshot never
// change, so neither does it. A digest that happens to be 0 is recomputed
// each time, which is only slower.
func (s *Snapshot) appendDoc(dst []byte, doc int32, lang string) ([]byte, uint64) {
	start := len(dst)
	dst = s.enc.appendDoc(slices.Grow(dst, s.enc.size(doc)), doc, lang)
	slot := &s.digests[3*int(doc)+variantSlot(lang)]
	digest := slot.Load()
	if digest == 0 {
		digest = xxhash.Sum64(dst[start:])
		slot.Store(digest)
	}
	return dst, digest
}

// variantSlot numbers the variants of a record appendDoc makes: both
// languages (any lang but "en" and "fr"), English alone, French alone.
func variantSlot(lang string) int {
	switch lang {
	case rappel.LangEN:
		return 1
	case rappel.LangFR:
		return 2
	}
	return 0
}

// Record returns a decoded copy of the record with id.
func (s *Snapshot) Record(id string) (*rappel.Record, bool) {
	b, ok := s.RecordJSON(id, "")
	if !ok {
		return nil, false
	}
	var r rappel.Record
	if err := jsonx.Unmarshal(b, &r); err != nil {
		return nil, false
	}
	return &r, true
}

// View is the snapshot served alone: a view with no delta. Every search
// is answered by a View, so that one path serves a built snapshot, a
// segment and a base with its delta.
func (s *Snapshot) View() *View { return NewView(s, nil, nil, s.info) }

// Categories lists the distinct category values (folded) the snapshot holds.
func (s *Snapshot) Categories() []string { return s.categories }

// Catalog holds the current view and swaps it atomically. It implements
// rappel.Catalog. The zero value holds an empty snapshot; Segments keeps
// it in step with a store through segment files (segmentset.go).
type Catalog struct {
	// Options tune the snapshots Segments builds and opens.
	Options Options

	cur atomic.Pointer[View]
}

var empty, _ = Build(nil, rappel.DatasetInfo{})

var emptyView = NewView(empty, nil, nil, rappel.DatasetInfo{})

// Snapshot returns the current view, never nil.
func (c *Catalog) Snapshot() rappel.Snapshot { return c.Current() }

// Current returns the current view, never nil.
func (c *Catalog) Current() *View {
	if v := c.cur.Load(); v != nil {
		return v
	}
	return emptyView
}

// Swap makes s alone the current view; readers holding the old one keep
// it.
func (c *Catalog) Swap(s *Snapshot) { c.cur.Store(s.View()) }

// SwapView makes v the current view.
func (c *Catalog) SwapView(v *View) { c.cur.Store(v) }
