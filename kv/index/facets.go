package index

import (
	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
)

// facetStats names, for each facet of GET /recall, the statistics field
// whose groups it counts: a facet's value and count are those of GET
// /recall/stats for the same records, and its count is what GET /recall
// counts with that value as a filter (the statistics of the filter fields
// share the filters' bitmaps).
var facetStats = func() map[string]string {
	m := map[string]string{rappel.GroupYear: rappel.GroupYear}
	for _, f := range rappel.Filters {
		m[f.Param] = f.Field
	}
	return m
}()

// matchCount returns how many documents of match hold value i of f: the
// overlap of two bitmaps, or for a range field (documents are in
// event_date order, so a year is one run of them) the difference of two
// ranks.
func (f *statsField) matchCount(i int, match *roaring.Bitmap) int {
	if f.ranges == nil {
		return int(f.docs[i].AndCardinality(match))
	}
	lo, hi := f.ranges[i][0], f.ranges[i][1]
	if lo >= hi {
		return 0
	}
	n := match.Rank(uint32(hi - 1))
	if lo > 0 {
		n -= match.Rank(uint32(lo - 1))
	}
	return int(n)
}

// facets counts the matches ms of the view's parts by each facet q asks
// for, hidden documents already left out. A value's count is the sum of
// the parts', named as View.Stats names it.
func (v *View) facets(q *rappel.Search, ms []partMatches) []rappel.Facet {
	out := make([]rappel.Facet, 0, len(q.Facets))
	for _, name := range q.Facets {
		field := facetStats[name]
		m := v.mergeGroups(field)
		// The newest part first: a category is named as its newest
		// record spells it.
		for i := len(ms) - 1; i >= 0; i-- {
			p := ms[i]
			f := p.s.stats[field]
			if f == nil {
				continue
			}
			for j := range f.values {
				m.add(f, p.s, j, f.matchCount(j, p.m), 0)
			}
		}
		out = append(out, rappel.Facet{Field: name, Groups: m.result()})
	}
	return out
}

// groupMerge adds up the groups of one statistics field over a view's
// parts, so that they are what one snapshot of the visible records would
// have: a value's count and sum are the sum of the parts' (each part's
// already without its hidden documents), and a category is named as its
// newest visible record spells it.
type groupMerge struct {
	v        *View
	category bool
	groups   map[string]*mergedGroup
	order    []string
}

type mergedGroup struct {
	rappel.StatsGroup
	first hit // for a category: the record its spelling is from
	named bool
}

func (v *View) mergeGroups(field string) *groupMerge {
	return &groupMerge{v: v, category: field == "category", groups: map[string]*mergedGroup{}}
}

// add adds count documents and units of value i of f, a field of the part
// s.
func (m *groupMerge) add(f *statsField, s *Snapshot, i int, count int, units int64) {
	k := f.values[i]
	if m.category {
		k = CategoryKey(k)
	}
	g := m.groups[k]
	if g == nil {
		g = &mergedGroup{}
		m.groups[k] = g
		m.order = append(m.order, k)
	}
	g.Count += count
	g.Sum += units
	// A category is named as its newest record spells it; a spelling
	// whose record is hidden names it only when no other does.
	switch {
	case f.first == nil:
		g.Value = f.values[i]
	case s == m.v.base && m.v.deleted.Contains(uint32(f.first[i])):
		if g.Value == "" {
			g.Value = f.values[i]
		}
	default:
		if h := (hit{s, f.first[i]}); !g.named || h.before(g.first) {
			g.Value, g.first, g.named = f.values[i], h, true
		}
	}
}

// result returns the groups holding a document, in the statistics' order.
func (m *groupMerge) result() []rappel.StatsGroup {
	out := make([]rappel.StatsGroup, 0, len(m.order))
	for _, k := range m.order {
		if g := m.groups[k]; g.Count > 0 {
			out = append(out, g.StatsGroup)
		}
	}
	sortGroups(out)
	return out
}
