package index

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
)

// View is what a catalog serves: a base snapshot, the records changed
// since the base was written as a small delta snapshot, and the base's
// documents those changes replaced or removed, hidden. It implements
// rappel.Snapshot and answers as one snapshot built from the same records
// would: the same pages byte for byte, cursors, scores, counts and sums.
//
// A page in a sort order is the merge of each part's page in that order
// (a cursor names a place in the order, not a document, so it means the
// same in both); relevance scores every match with the collection's
// figures (documents, average lengths, document frequencies) of base and
// delta together; statistics add the parts' counts and subtract the
// hidden documents'.
type View struct {
	base    *Snapshot
	delta   *Snapshot       // nil: the base alone
	deleted *roaring.Bitmap // hidden base documents
	info    rappel.DatasetInfo
	n       int
	// gen and seq are the store's change log position the view holds
	// every change up to, when positioned (Segments sets it).
	gen, seq   uint64
	positioned bool

	categories []string // folded categories of the visible records
	oldest     string
	total      [2]int64 // words in each text stream
	coverage   []rappel.YearCoverage
}

// NewView returns the view of base with delta's records over it, hiding
// the base documents in deleted (nil for none). delta may be nil when
// nothing is hidden; both must have been made with the same Options.
func NewView(base, delta *Snapshot, deleted *roaring.Bitmap, info rappel.DatasetInfo) *View {
	if deleted == nil {
		deleted = roaring.New()
	}
	if delta == nil && !deleted.IsEmpty() {
		delta = empty
	}
	v := &View{base: base, delta: delta, deleted: deleted, info: info, n: base.n}
	if delta == nil {
		v.info.Records = v.n
		v.categories, v.oldest = base.categories, base.oldest
		v.coverage = v.viewCoverage()
		return v
	}
	v.n = base.n - int(deleted.GetCardinality()) + delta.n
	v.info.Records = v.n
	v.total = base.text.total
	deleted.Iterate(func(d uint32) bool {
		for s := range v.total {
			v.total[s] -= int64(base.text.docLen[s][d])
		}
		return true
	})
	for s := range v.total {
		v.total[s] += delta.text.total[s]
	}
	cats := map[string]bool{}
	for k, bm := range base.filters[filterCategory] {
		if bm.GetCardinality() > bm.AndCardinality(deleted) {
			cats[k] = true
		}
	}
	for k := range delta.filters[filterCategory] {
		cats[k] = true
	}
	for k := range cats {
		v.categories = append(v.categories, k)
	}
	sort.Strings(v.categories)
	v.oldest = delta.oldest
	if last, ok := v.lastVisible(); ok {
		o := base.oldest
		if int(last) != base.n-1 {
			o = time.Unix(int64(base.eventDay[last])*86400, 0).UTC().Format(time.DateOnly)
		}
		if v.oldest == "" || o < v.oldest {
			v.oldest = o
		}
	}
	v.coverage = v.viewCoverage()
	return v
}

// lastVisible returns the last base document not hidden.
func (v *View) lastVisible() (int32, bool) {
	for d := int32(v.base.n) - 1; d >= 0; d-- {
		if !v.deleted.Contains(uint32(d)) {
			return d, true
		}
	}
	return 0, false
}

// Base, Delta and Deleted are the view's parts.
func (v *View) Base() *Snapshot          { return v.base }
func (v *View) Delta() *Snapshot         { return v.delta }
func (v *View) Deleted() *roaring.Bitmap { return v.deleted }

// Len is the number of records.
func (v *View) Len() int { return v.n }

// Info describes the dataset.
func (v *View) Info() rappel.DatasetInfo { return v.info }

// WithInfo returns the view with info in place of its own.
func (v *View) WithInfo(info rappel.DatasetInfo) *View {
	c := *v
	c.info = info
	c.info.Records = v.n
	return &c
}

// WithChangePos returns the view marked as holding every change of the
// store's change log up to seq in generation gen.
func (v *View) WithChangePos(gen, seq uint64) *View {
	c := *v
	c.gen, c.seq, c.positioned = gen, seq, true
	return &c
}

// ChangePos returns the position WithChangePos set; ok is false when none
// was. A client that reads the whole dataset from the view follows the
// change log from there, missing nothing (GET /recall/export).
func (v *View) ChangePos() (gen, seq uint64, ok bool) { return v.gen, v.seq, v.positioned }

// hit is a document of one of the view's parts.
type hit struct {
	s   *Snapshot
	doc int32
}

func (h hit) id() string { return h.s.ids.view(int(h.doc)) }

// before reports whether a comes before b in the document order: newer
// event_date first, then record_id.
func (a hit) before(b hit) bool {
	if da, db := a.s.eventDay[a.doc], b.s.eventDay[b.doc]; da != db {
		return da > db
	}
	return a.id() < b.id()
}

// find returns the visible document of the record with id.
func (v *View) find(id string) (hit, bool) {
	if v.delta != nil {
		if d, ok := v.delta.doc(id); ok {
			return hit{v.delta, d}, true
		}
	}
	d, ok := v.base.doc(id)
	if !ok || v.deleted.Contains(uint32(d)) {
		return hit{}, false
	}
	return hit{v.base, d}, true
}

// RecordJSON returns the JSON of the record with id in the variant for
// lang.
func (v *View) RecordJSON(id, lang string) ([]byte, bool) {
	b, _, ok := v.AppendRecordJSON(nil, id, lang)
	return b, ok
}

// AppendRecordJSON appends the JSON of the record with id in the variant
// for lang to dst, and the xxhash of what it appended. The bytes are
// copied out of the segment, so that what the caller holds never outlives
// the segment's mapping.
func (v *View) AppendRecordJSON(dst []byte, id, lang string) ([]byte, uint64, bool) {
	h, ok := v.find(id)
	if !ok {
		return dst, 0, false
	}
	b, digest := h.s.appendDoc(dst, h.doc, lang)
	return b, digest, true
}

// Record returns a decoded copy of the record with id.
func (v *View) Record(id string) (*rappel.Record, bool) {
	h, ok := v.find(id)
	if !ok {
		return nil, false
	}
	return h.s.Record(id)
}

// NewestByRecallID returns a decoded copy of the newest visible record
// whose recall_id is recallID.
func (v *View) NewestByRecallID(recallID string) (*rappel.Record, bool) {
	var best hit
	found := false
	if v.delta != nil {
		if d, ok := v.delta.newestOfRecall(recallID); ok {
			best, found = hit{v.delta, d}, true
		}
	}
	b := v.base
	rid := func(i int) string { return b.summaries.view(sumParts*int(b.byRecall[i]) + sumRecallID) }
	for i := sort.Search(len(b.byRecall), func(i int) bool { return rid(i) >= recallID }); i < len(b.byRecall) && rid(i) == recallID; i++ {
		if d := b.byRecall[i]; !v.deleted.Contains(uint32(d)) {
			if h := (hit{b, d}); !found || h.before(best) {
				best, found = h, true
			}
			break
		}
	}
	if !found {
		return nil, false
	}
	return best.s.Record(best.id())
}

// Summaries returns the summaries of the visible records with ids, in
// document order, each once.
func (v *View) Summaries(ids []string) []rappel.RecordSummary {
	hits := make([]hit, 0, len(ids))
	for _, id := range ids {
		if h, ok := v.find(id); ok {
			hits = append(hits, h)
		}
	}
	// Sorted, a record named twice is side by side with itself: dropping
	// it there costs nothing, where looking each hit up in those kept cost
	// the square of a vehicle's hundreds of recalls.
	slices.SortFunc(hits, func(a, b hit) int {
		switch {
		case a == b:
			return 0
		case a.before(b):
			return -1
		}
		return 1
	})
	hits = slices.Compact(hits)
	out := make([]rappel.RecordSummary, len(hits))
	for i, h := range hits {
		out[i] = h.s.summary(h.doc)
	}
	return out
}

// parts are the snapshots a search of the view looks in.
func (v *View) parts() []part {
	if v.delta == nil {
		return []part{{s: v.base}}
	}
	return []part{{s: v.base, hidden: v.deleted}, {s: v.delta}}
}

// corpus returns the collection figures of base and delta together, with
// document frequencies memoized for one query.
func (v *View) corpus() corpus {
	if v.delta == nil {
		return v.base.text.corpus() // the base's own figures, computed when it was built
	}
	cs := corpus{docs: v.n}
	for s := range cs.avgLen {
		if v.n > 0 {
			cs.avgLen[s] = float64(v.total[s]) / float64(v.n)
		}
	}
	type key struct {
		stream int
		term   string
	}
	memo := map[key]int{}
	// The scorer gives the posting of the part being scored; the view
	// needs the term's frequency in both, so it asks by the term itself.
	cs.dfTerm = func(stream int, term string) int {
		k := key{stream, term}
		if n, ok := memo[k]; ok {
			return n
		}
		n := 0
		if p, _ := v.base.text.post(stream, term); p != nil {
			n += p.df() - int(p.docs.AndCardinality(v.deleted))
		}
		if p, _ := v.delta.text.post(stream, term); p != nil {
			n += p.df()
		}
		memo[k] = n
		return n
	}
	return cs
}

// hasCategory reports whether a visible record has the folded category k.
func (v *View) hasCategory(k string) bool {
	i := sort.SearchStrings(v.categories, k)
	return i < len(v.categories) && v.categories[i] == k
}

// Stats answers GET /recall/stats: each part's counts and sums, less the
// hidden documents'.
func (v *View) Stats(ctx context.Context, q *rappel.StatsQuery) (*rappel.Stats, error) {
	if v.delta == nil {
		return v.base.Stats(ctx, q)
	}
	fb, err := v.base.statsField(ctx, q)
	if err != nil {
		return nil, err
	}
	b, d := v.base, v.delta
	fd := d.stats[q.GroupBy]
	hiB, hiD := b.n, d.n
	if q.Since != "" {
		hiB, hiD = b.docsSince(q.Since), d.docsSince(q.Since)
	}
	hidden := v.deleted.Clone()
	hidden.RemoveRange(uint64(hiB), uint64(max(b.n, hiB))+1)
	out := &rappel.Stats{TotalInDB: v.n, Total: hiB - int(hidden.GetCardinality()) + hiD, Oldest: v.oldest}
	sum := q.SumField != ""
	if sum {
		out.TotalSum = b.unitSum[hiB] - b.unitsOf(hidden) + d.unitSum[hiD]
	}
	m := v.mergeGroups(q.GroupBy)
	for i := range fd.values {
		var units int64
		if sum {
			units = d.groupSum(fd, i, hiD)
		}
		m.add(fd, d, i, fd.count(i, hiD, d.n), units)
	}
	for i := range fb.values {
		count := fb.count(i, hiB, b.n)
		var units int64
		if sum {
			units = b.groupSum(fb, i, hiB)
		}
		if !hidden.IsEmpty() {
			gone := fb.hidden(i, hidden)
			count -= int(gone.GetCardinality())
			if sum {
				units -= b.unitsOf(gone)
			}
		}
		m.add(fb, b, i, count, units)
	}
	out.Groups = m.result()
	return out, nil
}

// hidden returns the documents of hidden that hold value i of f.
func (f *statsField) hidden(i int, hidden *roaring.Bitmap) *roaring.Bitmap {
	if f.ranges != nil {
		r := roaring.New()
		r.AddRange(uint64(f.ranges[i][0]), uint64(f.ranges[i][1]))
		return roaring.And(r, hidden)
	}
	return roaring.And(f.docs[i], hidden)
}

// unitsOf is the total units_affected of docs.
func (s *Snapshot) unitsOf(docs *roaring.Bitmap) int64 {
	var total int64
	docs.Iterate(func(d uint32) bool {
		if u := s.units[d]; u != noUnits {
			total += u
		}
		return true
	})
	return total
}

// WithChanges returns the view of base with the records of put added (or
// replacing base's with the same record_id) and those of removed hidden,
// the delta built in memory: what Segments makes of a refresh, without
// files.
func WithChanges(base *Snapshot, put []*rappel.Record, removed []string, info rappel.DatasetInfo, opts Options) (*View, error) {
	deleted := roaring.New()
	for _, r := range put {
		if d, ok := base.doc(r.RecordID); ok {
			deleted.Add(uint32(d))
		}
	}
	for _, id := range removed {
		if d, ok := base.doc(id); ok {
			deleted.Add(uint32(d))
		}
	}
	delta, err := BuildOptions(slices.Clone(put), info, opts)
	if err != nil {
		return nil, err
	}
	return NewView(base, delta, deleted, info), nil
}
