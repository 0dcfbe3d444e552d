package index

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/vellum"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/segment"
)

// SegmentContent is the version of what a snapshot's segment holds: the
// sections below and the analysis that made the terms (tokens, stems,
// folding). Any change to either is a new version, so that a node never
// reads terms made by other rules than its queries use: a segment of
// another version is rebuilt, not served.
const SegmentContent = 4

// Sections of a snapshot's segment. Columns are little-endian; tables are
// a blob and a column of offsets (segment.Table); bitmaps are roaring's
// portable format, used in place.
const (
	secIDs        = "ids"        // table: record_id by document
	secIDOrder    = "ids.sorted" // i32 × n: documents in record_id order
	secJSON       = "json"       // every record's JSON, as encoded keeps it
	secJSONOffs   = "json.offs"  // u32 × 5n: encoded.offs
	secEventDay   = "event_day"  // i32 × n
	secRecallDay  = "recall_day" // i32 × n
	secUnits      = "units"      // i64 × n, noUnits when absent
	secUnitSum    = "units.sum"  // i64 × (n+1): stats' running total
	secWithUnits  = "units.with" // bitmap: the documents with units
	secCoverage   = "coverage"   // bitmaps: coverBits, one per part
	secFilterKeys = "filters.keys"
	secFilters    = "filters" // bitmaps, one per "field\x00value" key
	secStatsKeys  = "stats.keys"
	secStats      = "stats"        // bitmaps, one per key (empty for ranges)
	secStatsRange = "stats.ranges" // i32 × 2 per key: [lo, hi), or -1s
	secStatsFirst = "stats.first"  // i32 per key: statsField.first, or -1
	secSummaries  = "summaries"    // table: sumParts strings per document
	secByRecall   = "recall.order" // i32 × n: documents by (recall_id, document)
	secTerms      = "terms.fst"    // "en\x00term" / "fr\x00term" → ordinal
	secPostDocs   = "post.docs"    // bitmaps, one per term
	secPostOffs   = "post.offs"    // table: per term, posting.offs as u32s
	secPostPos    = "post.pos"     // table: per term, posting.pos
	secDocLenEN   = "doclen.en"    // u32 × n
	secDocLenFR   = "doclen.fr"    // u32 × n
	secMeta       = "meta"         // JSON: segmentMeta
)

// offs names the offsets section of a table or bitmaps section.
func offs(sec string) string { return sec + ".offs" }

// orderSection names the section of a sort order's permutation.
func orderSection(ok orderKey) string {
	name := "order." + ok.sortBy
	if ok.asc {
		name += ".asc"
	}
	return name
}

// segmentMeta is what a segment holds that is not per document.
type segmentMeta struct {
	AvgLen [2]float64 `json:"avg_len"`
	Oldest string     `json:"oldest"`
}

// WriteSegment writes the snapshot as a segment file at path, under a
// temporary name first (segment.WriteFile).
func (s *Snapshot) WriteSegment(path string) error { return segment.WriteFile(path, s.fill, nil) }

// EncodeSegment returns the snapshot's segment, in memory.
func (s *Snapshot) EncodeSegment() ([]byte, error) { return segment.Encode(s.fill) }

// Digest is the SHA-256 of every record's JSON (both languages), each
// followed by a newline, in document order: the identity of the content.
func (s *Snapshot) Digest() [32]byte {
	if s.file != nil {
		return s.file.Meta().Digest
	}
	if s.streamed != nil {
		return s.streamed.digest
	}
	sum := sha256.New()
	var buf []byte
	for d := range int32(s.n) {
		buf = append(s.enc.appendDoc(buf[:0], d, ""), '\n')
		sum.Write(buf)
	}
	var out [32]byte
	sum.Sum(out[:0])
	return out
}

// fill writes the snapshot's sections.
func (s *Snapshot) fill(w *segment.Writer) (segment.Meta, error) {
	n := s.n
	w.Strings(secIDs, offs(secIDs), s.ids.len(), s.ids.at)
	segment.WriteColumn(w, secIDOrder, s.idOrder)
	if err := s.writeJSON(w); err != nil {
		return segment.Meta{}, err
	}
	segment.WriteColumn(w, secJSONOffs, s.enc.offs)
	segment.WriteColumn(w, secEventDay, s.eventDay)
	segment.WriteColumn(w, secRecallDay, s.recallDay)
	segment.WriteColumn(w, secUnits, s.units)
	segment.WriteColumn(w, secUnitSum, s.unitSum)
	w.Bitmaps(secWithUnits, offs(secWithUnits), 1, func(int) *roaring.Bitmap { return s.withUnits })
	w.Bitmaps(secCoverage, offs(secCoverage), coverParts, func(i int) *roaring.Bitmap { return s.cover[i] })

	var keys []string
	var bms []*roaring.Bitmap
	for _, field := range slices.Sorted(maps.Keys(s.filters)) {
		vals := s.filters[field]
		for _, v := range slices.Sorted(maps.Keys(vals)) {
			keys, bms = append(keys, field+"\x00"+v), append(bms, vals[v])
		}
	}
	w.Strings(secFilterKeys, offs(secFilterKeys), len(keys), func(i int) []byte { return []byte(keys[i]) })
	w.Bitmaps(secFilters, offs(secFilters), len(bms), func(i int) *roaring.Bitmap { return bms[i] })

	keys, bms = keys[:0], bms[:0]
	var ranges, first []int32
	empty := roaring.New()
	for _, field := range slices.Sorted(maps.Keys(s.stats)) {
		f := s.stats[field]
		for i, v := range f.values {
			keys = append(keys, field+"\x00"+v)
			if f.ranges != nil {
				bms, ranges = append(bms, empty), append(ranges, f.ranges[i][0], f.ranges[i][1])
			} else {
				bms, ranges = append(bms, f.docs[i]), append(ranges, -1, -1)
			}
			if f.first != nil {
				first = append(first, f.first[i])
			} else {
				first = append(first, -1)
			}
		}
	}
	w.Strings(secStatsKeys, offs(secStatsKeys), len(keys), func(i int) []byte { return []byte(keys[i]) })
	w.Bitmaps(secStats, offs(secStats), len(bms), func(i int) *roaring.Bitmap { return bms[i] })
	segment.WriteColumn(w, secStatsRange, ranges)
	segment.WriteColumn(w, secStatsFirst, first)

	w.Strings(secSummaries, offs(secSummaries), s.summaries.len(), s.summaries.at)
	segment.WriteColumn(w, secByRecall, s.byRecall)
	for _, ok := range sortOrders {
		segment.WriteColumn(w, orderSection(ok), s.orders[ok])
	}
	segment.WriteColumn(w, secDocLenEN, s.text.docLen[streamEN])
	segment.WriteColumn(w, secDocLenFR, s.text.docLen[streamFR])
	if err := s.writeTerms(w); err != nil {
		return segment.Meta{}, err
	}
	meta, err := json.Marshal(segmentMeta{AvgLen: s.text.avgLen, Oldest: s.oldest})
	if err != nil {
		return segment.Meta{}, err
	}
	w.Section(secMeta, meta)
	info := s.info
	info.Records = n
	return segment.Meta{Info: info, Digest: s.Digest(), Content: SegmentContent}, nil
}

// writeTerms writes the term dictionary of both streams, each term mapped
// to its ordinal, and the terms' postings in that order.
func (s *Snapshot) writeTerms(w *segment.Writer) error {
	if s.text.runs != nil {
		return s.text.runs.write(w)
	}
	var ps []*posting
	w.Begin(secTerms)
	b, err := vellum.New(w, nil)
	if err != nil {
		return fmt.Errorf("building the term dictionary: %w", err)
	}
	var key []byte
	for _, stream := range []int{streamEN, streamFR} {
		m := s.text.postings[stream]
		for _, t := range slices.Sorted(maps.Keys(m)) {
			key = termKey(key[:0], stream, t)
			if err = b.Insert(key, uint64(len(ps))); err != nil {
				return fmt.Errorf("building the term dictionary: %w", err)
			}
			ps = append(ps, m[t])
		}
	}
	if err = b.Close(); err != nil {
		return fmt.Errorf("building the term dictionary: %w", err)
	}
	w.End()
	w.Bitmaps(secPostDocs, offs(secPostDocs), len(ps), func(i int) *roaring.Bitmap { return ps[i].docs })
	var buf []byte
	var offsBuf []uint32
	w.Strings(secPostOffs, offs(secPostOffs), len(ps), func(i int) []byte {
		buf = buf[:0]
		o := ps[i].offs
		if o == nil { // a streamed build's posting: lengths (posting.lens)
			offsBuf = ps[i].appendOffsets(offsBuf[:0])
			o = offsBuf
		}
		for _, o := range o {
			buf = append(buf, byte(o), byte(o>>8), byte(o>>16), byte(o>>24))
		}
		return buf
	})
	w.Strings(secPostPos, offs(secPostPos), len(ps), func(i int) []byte { return ps[i].pos })
	return nil
}

// termKey appends the dictionary key of term in stream to dst.
func termKey(dst []byte, stream int, term string) []byte {
	if stream == streamEN {
		dst = append(dst, "en\x00"...)
	} else {
		dst = append(dst, "fr\x00"...)
	}
	return append(dst, term...)
}

// OpenSegment opens the segment file at path (mapped read-only) as a
// snapshot. The snapshot reads the file in place; Close unmaps it.
func OpenSegment(path string, opts Options) (*Snapshot, error) {
	return openSegmentWith(segment.Open, path, opts)
}

// openSegmentWith opens the segment file at path with open, as a snapshot.
func openSegmentWith(open func(string) (*segment.File, error), path string, opts Options) (*Snapshot, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	s, err := fromFile(f, opts)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return s, nil
}

// openSegmentChecked is OpenSegment for a file checked in full before and
// unchanged since (checkstamp.go): only its header and directory, and the
// structure fromFile checks, are read; its bytes are the caller's to
// verify (Snapshot.file.Verify).
func openSegmentChecked(path string, opts Options) (*Snapshot, error) {
	return openSegmentWith(segment.OpenChecked, path, opts)
}

// openSegmentBytesChecked is openSegmentChecked for a segment in data.
func openSegmentBytesChecked(name string, data []byte, opts Options) (*Snapshot, error) {
	f, err := segment.OpenBytesChecked(name, data)
	if err != nil {
		return nil, err
	}
	return fromFile(f, opts)
}

// OpenSegmentBytes opens the segment in data, named name in errors, as a
// snapshot that reads data in place: data must not change.
func OpenSegmentBytes(name string, data []byte, opts Options) (*Snapshot, error) {
	f, err := segment.OpenBytes(name, data)
	if err != nil {
		return nil, err
	}
	return fromFile(f, opts)
}

// Close releases the segment a snapshot was opened from, if any. Nothing
// the snapshot holds may be used afterwards; a built snapshot has nothing
// to release.
func (s *Snapshot) Close() error {
	if s.file == nil {
		return nil
	}
	return s.file.Close()
}

// fromFile reads a snapshot from f, checking the structure of everything
// it relies on, so that a segment whose checksums hold but whose content
// a faulty writer made is refused rather than served wrong or panicking.
// The postings are checked when first used.
func fromFile(f *segment.File, opts Options) (*Snapshot, error) {
	meta := f.Meta()
	if meta.Content != SegmentContent {
		return nil, f.Fail("header", "content version %d; this build reads version %d only: the segment is rebuilt from the store", meta.Content, SegmentContent)
	}
	n := meta.Info.Records
	r := f.Reader()
	s := &Snapshot{info: meta.Info, n: n, file: f, cursorKey: opts.CursorKey}
	if s.cursorKey == nil {
		s.cursorKey = processKey
	}
	s.ids = readTable(r, secIDs, n)
	s.idOrder = segment.ReadColumn[int32](r, secIDOrder, n)
	s.enc.arena = r.Bytes(secJSON, 1, -1)
	s.enc.offs = segment.ReadColumn[uint32](r, secJSONOffs, 5*n)
	s.eventDay = segment.ReadColumn[int32](r, secEventDay, n)
	s.recallDay = segment.ReadColumn[int32](r, secRecallDay, n)
	s.units = segment.ReadColumn[int64](r, secUnits, n)
	s.unitSum = segment.ReadColumn[int64](r, secUnitSum, n+1)
	with := r.Bitmaps(secWithUnits, offs(secWithUnits), 1)
	cover := r.Bitmaps(secCoverage, offs(secCoverage), coverParts)
	s.summaries = readTable(r, secSummaries, sumParts*n)
	s.byRecall = segment.ReadColumn[int32](r, secByRecall, n)
	s.orders = map[orderKey][]int32{}
	for _, ok := range sortOrders {
		s.orders[ok] = segment.ReadColumn[int32](r, orderSection(ok), n)
	}
	var sm segmentMeta
	if b := r.Bytes(secMeta, 1, -1); r.Err() == nil {
		if err := json.Unmarshal(b, &sm); err != nil {
			r.Fail(secMeta, "corrupt: %v", err)
		}
	}
	if r.Err() != nil {
		return nil, r.Err()
	}
	s.oldest = sm.Oldest
	// Only now that the columns have shown n to be true: a damaged header
	// must not size an allocation.
	s.digests = make([]atomic.Uint64, 3*n)
	s.all = roaring.New()
	if n > 0 {
		s.all.AddRange(0, uint64(n))
	}
	if err := s.checkStructure(f); err != nil {
		return nil, err
	}
	var err error
	if s.withUnits, err = r.Bitmap(with.At(0), n); err != nil {
		return nil, f.Fail(secWithUnits, "corrupt: %v", err)
	}
	if s.filters, err = readFilters(r, n); err != nil {
		return nil, err
	}
	s.listCategories()
	if s.stats, err = readStats(r, n); err != nil {
		return nil, err
	}
	for i := range s.cover {
		if s.cover[i], err = r.Bitmap(cover.At(i), n); err != nil {
			return nil, f.Fail(secCoverage, "corrupt: %v", err)
		}
	}
	s.countCoverage()
	if s.text, err = readText(f, r, n, sm.AvgLen); err != nil {
		return nil, err
	}
	return s, nil
}

// checkStructure checks the columns' orders, offsets and totals, unless f
// was opened prechecked: then the same bytes passed these checks when the
// file was first opened (checkstamp.go), and the start does not pay them
// again (at a million records, most of a warm start).
func (s *Snapshot) checkStructure(f *segment.File) error {
	if f.Prechecked() {
		return nil
	}
	checks := []struct {
		sec string
		err error
	}{
		{secIDOrder, s.checkIDOrder()},
		{secJSONOffs, checkAscending(s.enc.offs, len(s.enc.arena))},
		{secEventDay, s.checkEventDays()},
		{secUnitSum, s.checkUnitSum()},
		{secByRecall, s.checkByRecall()},
	}
	for _, c := range checks {
		if c.err != nil {
			return f.Fail(c.sec, "corrupt: %v", c.err)
		}
	}
	for _, ok := range sortOrders {
		if err := s.checkOrder(ok); err != nil {
			return f.Fail(orderSection(ok), "corrupt: %v", err)
		}
	}
	return nil
}

// readTable reads a table of want strings.
func readTable(r *segment.Reader, sec string, want int) table {
	t := r.Table(sec, offs(sec), want)
	return table{blob: t.Blob, offs: t.Offs}
}

// checkAscending checks that offs never decrease and end within size.
func checkAscending(offs []uint32, size int) error {
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			return fmt.Errorf("offset %d (%d) is below the one before it (%d)", i, offs[i], offs[i-1])
		}
	}
	if len(offs) > 0 && uint64(offs[len(offs)-1]) > uint64(size) {
		return fmt.Errorf("the last offset (%d) is past the %d bytes", offs[len(offs)-1], size)
	}
	return nil
}

// checkPerm checks that perm lists every document once, each before the
// next in cmp's order.
func (s *Snapshot) checkPerm(perm []int32, cmp func(a, b int32) int) error {
	for i, d := range perm {
		if d < 0 || int(d) >= s.n {
			return fmt.Errorf("entry %d is document %d of %d", i, d, s.n)
		}
		if i > 0 && cmp(perm[i-1], d) >= 0 {
			return fmt.Errorf("entry %d (document %d) does not come after the one before it", i, d)
		}
	}
	return nil
}

func (s *Snapshot) checkIDOrder() error {
	return s.checkPerm(s.idOrder, func(a, b int32) int { return strings.Compare(s.ids.view(int(a)), s.ids.view(int(b))) })
}

func (s *Snapshot) checkByRecall() error {
	return s.checkPerm(s.byRecall, func(a, b int32) int {
		return cmp.Or(strings.Compare(s.summaries.view(sumParts*int(a)), s.summaries.view(sumParts*int(b))), cmp.Compare(a, b))
	})
}

func (s *Snapshot) checkOrder(ok orderKey) error {
	return s.checkPerm(s.orders[ok], func(a, b int32) int {
		return compare(ok, s.key(ok.sortBy, a), s.ids.view(int(a)), s.key(ok.sortBy, b), s.ids.view(int(b)))
	})
}

// checkEventDays checks the document order: event days never increase.
func (s *Snapshot) checkEventDays() error {
	for i := 1; i < len(s.eventDay); i++ {
		if s.eventDay[i] > s.eventDay[i-1] {
			return fmt.Errorf("document %d is newer than the one before it", i)
		}
	}
	return nil
}

// checkUnitSum checks the running total against the units.
func (s *Snapshot) checkUnitSum() error {
	if s.unitSum[0] != 0 {
		return fmt.Errorf("the total before the first document is %d", s.unitSum[0])
	}
	for i, u := range s.units {
		if u == noUnits {
			u = 0
		}
		if s.unitSum[i+1] != s.unitSum[i]+u {
			return fmt.Errorf("the total after document %d does not add up", i)
		}
	}
	return nil
}

// readKeys reads a table of "field\x00value" keys and its bitmaps, calling
// fn for each; sorted requires the keys to ascend.
func readKeys(r *segment.Reader, keySec, bmSec string, n int, sorted bool, fn func(i int, field, value string, bm *roaring.Bitmap)) error {
	keys := r.Table(keySec, offs(keySec), -1)
	bms := r.Bitmaps(bmSec, offs(bmSec), keys.Len())
	if r.Err() != nil {
		return r.Err()
	}
	for i := range keys.Len() {
		k := keys.At(i)
		f, v, ok := bytes.Cut(k, []byte{0})
		if !ok || len(f) == 0 {
			r.Fail(keySec, "corrupt: key %d (%q) is not a field and a value", i, k)
			return r.Err()
		}
		if sorted && i > 0 && bytes.Compare(keys.At(i-1), k) >= 0 {
			r.Fail(keySec, "corrupt: key %d (%q) does not come after the one before it", i, k)
			return r.Err()
		}
		bm, err := r.Bitmap(bms.At(i), n)
		if err != nil {
			r.Fail(bmSec, "corrupt: the bitmap of %q: %v", k, err)
			return r.Err()
		}
		fn(i, string(f), string(v), bm)
	}
	return nil
}

// readFilters reads the filter bitmaps: they are few, and every search
// uses some.
func readFilters(r *segment.Reader, n int) (map[string]map[string]*roaring.Bitmap, error) {
	out := map[string]map[string]*roaring.Bitmap{}
	err := readKeys(r, secFilterKeys, secFilters, n, true, func(_ int, field, value string, bm *roaring.Bitmap) {
		if out[field] == nil {
			out[field] = map[string]*roaring.Bitmap{}
		}
		out[field][value] = bm
	})
	return out, err
}

// readStats reads the statistics' groups, their bitmaps or ranges.
func readStats(r *segment.Reader, n int) (map[string]*statsField, error) {
	out := map[string]*statsField{}
	for _, f := range rappel.StatsGroupFields {
		out[f] = &statsField{} // a field no document has is still a field
	}
	var ranges, first []int32
	err := readKeys(r, secStatsKeys, secStats, n, false, func(i int, field, value string, bm *roaring.Bitmap) {
		if ranges == nil {
			ranges = segment.ReadColumn[int32](r, secStatsRange, -1)
			first = segment.ReadColumn[int32](r, secStatsFirst, len(ranges)/2)
		}
		if r.Err() != nil {
			return
		}
		if 2*i+1 >= len(ranges) {
			r.Fail(secStatsRange, "corrupt: %d values for more keys", len(ranges))
			return
		}
		if fd := first[i]; fd >= int32(n) || (fd >= 0) != (field == "category") {
			r.Fail(secStatsFirst, "corrupt: value %d of %q names document %d", i, field, fd)
			return
		}
		f := out[field]
		if f == nil {
			r.Fail(secStatsKeys, "corrupt: %q is not a field statistics group by", field)
			return
		}
		lo, hi := ranges[2*i], ranges[2*i+1]
		isRange := lo >= 0
		switch {
		case len(f.values) > 0 && isRange != (f.ranges != nil):
			r.Fail(secStatsRange, "corrupt: field %q mixes ranges and bitmaps", field)
			return
		case isRange && (hi < lo || int(hi) > n):
			r.Fail(secStatsRange, "corrupt: range [%d, %d) of %q past the %d documents", lo, hi, value, n)
			return
		}
		f.values = append(f.values, value)
		if first[i] >= 0 {
			f.first = append(f.first, first[i])
		}
		if isRange {
			f.ranges = append(f.ranges, [2]int32{lo, hi})
		} else {
			f.docs = append(f.docs, bm)
		}
	})
	if err == nil {
		err = r.Err()
	}
	return out, err
}

// segmentText is the text index as a segment holds it.
type segmentText struct {
	file  *segment.File
	n     int
	terms *vellum.FST
	docs  segment.Table
	offs  segment.Table
	pos   segment.Table
	// checked has bit i set once posting i passed its checks, so that each
	// is checked once, on first use.
	checked []atomic.Uint64
}

func readText(f *segment.File, r *segment.Reader, n int, avg [2]float64) (*textIndex, error) {
	ix := &textIndex{an: newAnalyzer(), docs: n, avgLen: avg}
	ix.an.frozen.Store(true)
	ix.docLen[streamEN] = segment.ReadColumn[uint32](r, secDocLenEN, n)
	ix.docLen[streamFR] = segment.ReadColumn[uint32](r, secDocLenFR, n)
	for s := range ix.docLen {
		ix.total[s] = sumLen(ix.docLen[s])
	}
	b := r.Bytes(secTerms, 1, -1)
	if r.Err() != nil {
		return nil, r.Err()
	}
	fst, err := segment.LoadFST(b)
	if err != nil {
		r.Fail(secTerms, "corrupt: %v", err)
		return nil, r.Err()
	}
	if fst.Len() < 0 || fst.Len() > 1<<31 {
		r.Fail(secTerms, "corrupt: it claims %d terms", fst.Len())
		return nil, r.Err()
	}
	t := &segmentText{file: f, n: n, terms: fst}
	t.docs = r.Bitmaps(secPostDocs, offs(secPostDocs), fst.Len())
	t.offs = r.Table(secPostOffs, offs(secPostOffs), fst.Len())
	t.pos = r.Table(secPostPos, offs(secPostPos), fst.Len())
	if r.Err() != nil {
		return nil, r.Err()
	}
	t.checked = make([]atomic.Uint64, (fst.Len()+63)/64)
	ix.seg = t
	return ix, nil
}

// posting returns the posting of term in stream, or nil. A posting is
// checked on first use: a malformed one is an error, never a wrong answer.
func (t *segmentText) posting(stream int, term string) (*posting, error) {
	var buf [64]byte
	key := termKey(buf[:0], stream, term)
	ord, found, err := segment.FSTGet(t.terms, key)
	if err != nil {
		return nil, t.fail(secTerms, "the term dictionary: %v", err)
	}
	if !found {
		return nil, nil
	}
	if ord >= uint64(t.docs.Len()) {
		return nil, t.fail(secTerms, "term %q maps to posting %d of %d", term, ord, t.docs.Len())
	}
	i := int(ord)
	word, bit := &t.checked[i/64], uint64(1)<<(i%64)
	if word.Load()&bit != 0 {
		return &posting{docs: segment.TrustedBitmap(t.docs.At(i)), offs: segment.Column[uint32](t.offs.At(i)), pos: t.pos.At(i)}, nil
	}
	p, err := t.check(i)
	if err != nil {
		return nil, err
	}
	word.Or(bit)
	return p, nil
}

// check reads posting i and checks it whole: its documents, one offset per
// document and one at the end, ascending within its positions, and each
// document's positions whole uvarints.
func (t *segmentText) check(i int) (*posting, error) {
	docs, err := segment.Bitmap(t.docs.At(i), t.n)
	if err != nil {
		return nil, t.fail(secPostDocs, "posting %d: %v", i, err)
	}
	ob := t.offs.At(i)
	if len(ob)%4 != 0 {
		return nil, t.fail(secPostOffs, "posting %d: %d bytes, not whole offsets", i, len(ob))
	}
	p := &posting{docs: docs, offs: segment.Column[uint32](ob), pos: t.pos.At(i)}
	if len(p.offs) != int(docs.GetCardinality())+1 || p.offs[0] != 0 || int(p.offs[len(p.offs)-1]) != len(p.pos) {
		return nil, t.fail(secPostOffs, "posting %d: %d offsets for %d documents and %d bytes", i, len(p.offs), docs.GetCardinality(), len(p.pos))
	}
	for j := 1; j < len(p.offs); j++ {
		if p.offs[j] <= p.offs[j-1] || int(p.offs[j]) > len(p.pos) || p.pos[p.offs[j]-1] >= 0x80 {
			return nil, t.fail(secPostPos, "posting %d: the positions of its document %d are malformed", i, j-1)
		}
	}
	return p, nil
}

func (t *segmentText) fail(sec, format string, args ...any) error {
	if t.file == nil {
		return fmt.Errorf("segment: section %q: %s", sec, fmt.Sprintf(format, args...))
	}
	return t.file.Fail(sec, format, args...)
}
