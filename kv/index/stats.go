package index

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
)

// statsField is one group_by field of GET /recall/stats: its values and,
// for each, the documents holding it, either as a bitmap or, for the year
// and month of event_date, as a range of documents (documents are in
// event_date order, so each year and month is one run of them).
type statsField struct {
	values []string
	docs   []*roaring.Bitmap // docs[i] holds values[i]; nil for range fields
	ranges [][2]int32        // documents [lo, hi) of values[i]; nil for bitmap fields
	// first is, for the category field, the document whose spelling
	// values[i] is: the newest with that category.
	first []int32
}

// count returns how many of the documents [0, hi) hold value i.
func (f *statsField) count(i, hi, n int) int {
	if f.ranges != nil {
		r := f.ranges[i]
		return max(0, min(hi, int(r[1]))-int(r[0]))
	}
	switch bm := f.docs[i]; {
	case hi >= n:
		return int(bm.GetCardinality())
	case hi <= 0:
		return 0
	default:
		return int(bm.Rank(uint32(hi - 1)))
	}
}

// filterStats are the group_by fields that share GET /recall's filter
// bitmaps, so that their counts are those of the filter by construction.
var filterStats = func() []string {
	var fields []string
	for _, f := range rappel.Filters {
		if !f.Free() {
			fields = append(fields, f.Field)
		}
	}
	return fields
}()

// ownStats are the group_by fields indexed for statistics alone, with the
// value (scalar fields) or values (list fields) each record holds.
var ownStats = []struct {
	field  string
	scalar func(r *rappel.Record) string
	list   func(r *rappel.Record) []string
}{
	{field: "alert_type", scalar: func(r *rappel.Record) string { return r.AlertType }},
	{field: "notification_type", scalar: func(r *rappel.Record) string { return r.NotificationType }},
	{field: "system", scalar: func(r *rappel.Record) string { return r.System }},
	{field: "vehicle_category", scalar: func(r *rappel.Record) string { return r.VehicleCategory }},
	{field: "vehicle_make", scalar: func(r *rappel.Record) string { return r.VehicleMake }},
	{field: "vehicle_model", scalar: func(r *rappel.Record) string { return r.VehicleModel }},
	{field: "place_of_origin", scalar: func(r *rappel.Record) string { return r.PlaceOfOrigin }},
	{field: "manufacturer", scalar: func(r *rappel.Record) string { return r.Manufacturer }},
	{field: "importer", scalar: func(r *rappel.Record) string { return r.Importer }},
	{field: "recalling_firm", scalar: func(r *rappel.Record) string { return r.RecallingFirm }},
	{field: "municipality", scalar: func(r *rappel.Record) string { return r.Municipality }},
	{field: "companies", list: func(r *rappel.Record) []string { return r.Companies }},
	{field: "distribution", list: func(r *rappel.Record) []string { return r.Distribution }},
}

// statsBuilder collects the statistics' own bitmaps, the spelling of each
// category and the runs of years and months while BuildOptions walks the
// documents in order.
type statsBuilder struct {
	own       map[string]map[string]*roaring.Bitmap
	catNames  map[string]string // CategoryKey → the newest record's spelling
	catFirst  map[string]int32  // CategoryKey → that record's document
	catSeen   map[string]struct{}
	doc       int32 // the document being added
	year      runs
	month     runs
	unitSum   []int64 // unitSum[i] is the units_affected of documents [0, i)
	withUnits *roaring.Bitmap
	oldest    string // the event_date of the last document added
	cover     coverBits
}

// runs are the values of consecutive documents, one range per value.
type runs struct {
	values []string
	ranges [][2]int32
}

func (r *runs) add(doc int32, v string) {
	if n := len(r.values); n > 0 && r.values[n-1] == v {
		r.ranges[n-1][1] = doc + 1
		return
	}
	r.values = append(r.values, v)
	r.ranges = append(r.ranges, [2]int32{doc, doc + 1})
}

func newStatsBuilder(n int) *statsBuilder {
	b := &statsBuilder{
		own:       map[string]map[string]*roaring.Bitmap{},
		catNames:  map[string]string{},
		catFirst:  map[string]int32{},
		catSeen:   map[string]struct{}{},
		unitSum:   make([]int64, 1, n+1),
		withUnits: roaring.New(),
		cover:     newCoverBits(),
	}
	for _, f := range ownStats {
		b.own[f.field] = map[string]*roaring.Bitmap{}
	}
	return b
}

// add indexes r as doc; documents come in order.
func (b *statsBuilder) add(doc int32, r *rappel.Record) {
	b.doc = doc
	for _, f := range ownStats {
		vals := b.own[f.field]
		if f.scalar != nil {
			addDoc(vals, f.scalar(r), doc)
			continue
		}
		for _, v := range f.list(r) {
			addDoc(vals, v, doc)
		}
	}
	b.category(r.Category)
	for _, c := range r.Categories {
		b.category(c)
	}
	// Documents sort by the event_date string, so the dates sharing a
	// prefix are consecutive whatever the string holds.
	b.year.add(doc, prefix(r.EventDate, 4))
	b.month.add(doc, prefix(r.EventDate, 7))
	b.oldest = r.EventDate
	units := b.unitSum[len(b.unitSum)-1]
	if r.UnitsAffected != nil && *r.UnitsAffected != noUnits { // as s.units has it
		units += int64(*r.UnitsAffected)
		b.withUnits.Add(uint32(doc))
	}
	b.unitSum = append(b.unitSum, units)
	b.cover.add(doc, rappel.CoverageOf(r))
}

// addDoc adds doc to the bitmap of value v, unless v is empty.
func addDoc(vals map[string]*roaring.Bitmap, v string, doc int32) {
	if v == "" {
		return
	}
	bm := vals[v]
	if bm == nil {
		bm = roaring.New()
		vals[v] = bm
	}
	bm.Add(uint32(doc))
}

func (b *statsBuilder) category(c string) {
	if _, seen := b.catSeen[c]; seen {
		return // folding allocates; the spellings are few
	}
	b.catSeen[c] = struct{}{}
	if k := CategoryKey(c); k != "" {
		if _, ok := b.catNames[k]; !ok {
			b.catNames[k] = c
			b.catFirst[k] = b.doc
		}
	}
}

func prefix(s string, n int) string {
	if len(s) < n {
		return s
	}
	return s[:n]
}

// finishStats makes the group_by fields of s from b and from the filter
// bitmaps, which must be complete.
func (s *Snapshot) finishStats(b *statsBuilder) {
	s.stats = map[string]*statsField{}
	fromMap := func(vals map[string]*roaring.Bitmap, name func(string) string) *statsField {
		f := &statsField{}
		for _, v := range slices.Sorted(maps.Keys(vals)) {
			f.values = append(f.values, name(v))
			f.docs = append(f.docs, vals[v])
		}
		return f
	}
	same := func(v string) string { return v }
	for _, field := range filterStats {
		s.stats[field] = fromMap(s.filters[field], same)
	}
	for field, vals := range b.own {
		for _, bm := range vals {
			bm.RunOptimize()
		}
		s.stats[field] = fromMap(vals, same)
	}
	// The category filter matches a record's category, its categories
	// and its French category, folded. The groups are the English values,
	// each counted with the filter's own bitmap, so that a group's count
	// is exactly what GET /recall?category=<value> counts.
	cats := map[string]*roaring.Bitmap{}
	for k := range b.catNames {
		if bm := s.filters[filterCategory][k]; bm != nil {
			cats[k] = bm
		}
	}
	s.stats["category"] = fromMap(cats, func(k string) string { return b.catNames[k] })
	// Which document each spelling is the newest record's, so that a view
	// of several parts names a group as one index of them all would.
	for _, k := range slices.Sorted(maps.Keys(cats)) {
		s.stats["category"].first = append(s.stats["category"].first, b.catFirst[k])
	}
	s.stats[rappel.GroupYear] = &statsField{values: b.year.values, ranges: b.year.ranges}
	s.stats[rappel.GroupMonth] = &statsField{values: b.month.values, ranges: b.month.ranges}
	b.withUnits.RunOptimize()
	s.unitSum, s.withUnits, s.oldest = b.unitSum, b.withUnits, b.oldest
	for _, bm := range b.cover {
		bm.RunOptimize()
	}
	s.cover = b.cover
	s.countCoverage()
}

// Stats answers GET /recall/stats. The period is a prefix of the document
// order, found as GET /recall finds issued_after; each group's count is a
// rank in its bitmap (or the overlap of its range), so the work grows with
// the number of values, not of records, except for sums, which visit the
// group's records that have units_affected.
func (s *Snapshot) Stats(ctx context.Context, q *rappel.StatsQuery) (*rappel.Stats, error) {
	f, err := s.statsField(ctx, q)
	if err != nil {
		return nil, err
	}
	n := s.n
	hi := n
	if q.Since != "" {
		hi = s.docsSince(q.Since)
	}
	out := &rappel.Stats{TotalInDB: n, Total: hi, Groups: make([]rappel.StatsGroup, 0, len(f.values))}
	if n > 0 {
		out.Oldest = s.oldest
	}
	sum := q.SumField != ""
	if sum {
		out.TotalSum = s.unitSum[hi]
	}
	for i, v := range f.values {
		g := rappel.StatsGroup{Value: v, Count: f.count(i, hi, n)}
		if g.Count == 0 {
			continue
		}
		if sum {
			g.Sum = s.groupSum(f, i, hi)
		}
		out.Groups = append(out.Groups, g)
	}
	sortGroups(out.Groups)
	return out, nil
}

// statsField checks q and returns the field it groups by.
func (s *Snapshot) statsField(ctx context.Context, q *rappel.StatsQuery) (*statsField, error) {
	f := s.stats[q.GroupBy]
	switch {
	case f == nil:
		return nil, rappel.Errorf(rappel.EINVALID, "The statistics cannot group by %q; group by one of %s.", q.GroupBy, rappel.StatsGroupFields)
	case q.SumField != "" && !rappel.StatsSumFields.Has(q.SumField):
		return nil, rappel.Errorf(rappel.EINVALID, "The statistics cannot sum %q; sum one of %s.", q.SumField, rappel.StatsSumFields)
	case q.Since != "" && !rappel.ValidDate(q.Since):
		return nil, rappel.Errorf(rappel.EINVALID, "The period start %q is not a YYYY-MM-DD date; give one.", q.Since)
	}
	if ctx.Err() != nil {
		return nil, timeoutError()
	}
	return f, nil
}

// sortGroups orders groups by count, largest first, then value.
func sortGroups(groups []rappel.StatsGroup) {
	slices.SortFunc(groups, func(a, b rappel.StatsGroup) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Value, b.Value)
	})
}

// docsSince returns the number of documents whose event_date is on or
// after since: the documents [0, it) are GET /recall's issued_after=since.
func (s *Snapshot) docsSince(since string) int {
	d := dayOf(since)
	return sort.Search(len(s.eventDay), func(i int) bool { return s.eventDay[i] < d })
}

// groupSum is the total units_affected of the documents [0, hi) holding
// value i of f.
func (s *Snapshot) groupSum(f *statsField, i, hi int) int64 {
	if f.ranges != nil {
		r := f.ranges[i]
		if int(r[0]) >= hi {
			return 0
		}
		return s.unitSum[min(hi, int(r[1]))] - s.unitSum[r[0]]
	}
	bm := f.docs[i]
	if !bm.Intersects(s.withUnits) {
		return 0
	}
	var total int64
	bm.Iterate(func(d uint32) bool {
		if int(d) >= hi {
			return false
		}
		if u := s.units[d]; u != noUnits {
			total += u
		}
		return true
	})
	return total
}
