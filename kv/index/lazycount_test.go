package index

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
)

// plainMatches is what q matches on s as plain set operations on whole
// bitmaps: each clause the union of its terms' documents, intersected
// with the filters, the dates and the other clauses, the exclusions taken
// out, one bitmap made at each step. It is the reference the searches'
// counts and pages are compared with, so that counting an OR or an
// exclusion from cardinalities, and paging without making the difference,
// answer as the sets do.
func plainMatches(t *testing.T, s *Snapshot, q *rappel.Search) *roaring.Bitmap {
	t.Helper()
	ctx := context.Background()
	exp, err := expand(ctx, []part{{s: s}}, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(exp.joins) > 0 {
		t.Fatalf("%v: words that join; the reference does not join them", q.Query)
	}
	out := s.all.Clone()
	for i := range rappel.Filters {
		f := &rappel.Filters[i]
		if v := *f.Of(&q.FilterValues); v != "" {
			bm := s.filters[f.Field][CategoryKey(v)]
			if !f.Free() {
				bm = s.filters[f.Field][v]
			}
			if bm == nil {
				return roaring.New()
			}
			out.And(bm)
		}
	}
	if q.IssuedAfter != "" || q.IssuedBefore != "" {
		out.And(s.dateRange(q.IssuedAfter, q.IssuedBefore))
	}
	for _, cl := range clauses(q) {
		union, searchable := roaring.New(), false
		for _, term := range cl.Terms {
			bm, err := s.text.termDocs(ctx, term, exp)
			if err != nil {
				t.Fatal(err)
			}
			if bm != nil {
				searchable = true
				union.Or(bm)
			}
		}
		switch {
		case !searchable:
		case cl.Exclude:
			out.AndNot(union)
		default:
			out.And(union)
		}
	}
	return out
}

// someValue returns the value of the filter field that most documents of
// s hold, so that a filter keeps many pages of matches.
func someValue(t *testing.T, s *Snapshot, field string) string {
	t.Helper()
	vals := s.filters[field]
	if len(vals) == 0 {
		t.Fatalf("no values of %s", field)
	}
	keys := slices.Sorted(maps.Keys(vals))
	return slices.MaxFunc(keys, func(a, b string) int {
		return cmp.Compare(vals[a].GetCardinality(), vals[b].GetCardinality())
	})
}

// TestSearch_CountsMatchPlainSets checks the counts and the pages of ORs,
// exclusions and phrases, alone, with filters and dates, by offset and by
// cursor, on the bundle built and as a segment, against plainMatches.
func TestSearch_CountsMatchPlainSets(t *testing.T) {
	for _, impl := range []struct {
		name string
		s    func(testing.TB) *Snapshot
	}{{"built", bundled}, {"segment", bundledSegment}} {
		t.Run(impl.name, func(t *testing.T) {
			s := impl.s(t)
			texts := []string{
				"listeria OR salmonella",
				"milk OR eggs OR peanuts",
				"recalled -salmonella",
				"food -milk -eggs",
				"listeria -cheese -salmonella",
				`"pieces of metal"`,
				`"may contain"`,
				`"may contain" -milk`,
				`listeria OR "pieces of metal"`,
				`salmonella OR listeria -cheese`,
				`cheese OR milk -listeria -salmonella`,
				`listeria OR qwxzvj`,
				`food OR recalled -milk`,
			}
			filters := []func(q *rappel.Search){
				func(*rappel.Search) {},
				func(q *rappel.Search) { q.RecallType = someValue(t, s, "recall_type") },
				func(q *rappel.Search) { q.Category = someValue(t, s, "category") },
				func(q *rappel.Search) { q.IssuedAfter = "2019-01-01" },
				func(q *rappel.Search) { q.Agency = someValue(t, s, "agency"); q.IssuedBefore = "2023-06-30" },
			}
			for _, text := range texts {
				for fi, filter := range filters {
					q := rappel.Search{Query: mustQuery(t, text), Limit: 20, NoRelax: true}
					filter(&q)
					want := plainMatches(t, s, &q).ToArray()
					if fi == 0 && len(want) < 60 && !strings.Contains(text, "qwxzvj") {
						t.Fatalf("%s: %d matches, too few to page through", text, len(want))
					}
					checkPages(t, s, q, want)
				}
			}
		})
	}
}

// checkPages pages through q by cursor (at most 5 pages) and by a few
// offsets, each page's count and records those of want, the documents
// matching, in document order (GET /recall's default order).
func checkPages(t *testing.T, s *Snapshot, q rappel.Search, want []uint32) {
	t.Helper()
	page := func(from int) []string {
		var out []string
		for _, d := range want[min(from, len(want)):min(from+q.Limit, len(want))] {
			out = append(out, s.ids.str(int(d)))
		}
		return out
	}
	at := 0
	for n := 0; n < 5; n++ {
		p := search(t, s, &q)
		if p.Count != len(want) {
			t.Fatalf("%v %+v: count %d, want %d", q.Query, q.FilterValues, p.Count, len(want))
		}
		if got, w := ids(t, p), page(at); !slices.Equal(got, w) {
			t.Fatalf("%v %+v, page %d: %v, want %v", q.Query, q.FilterValues, n, got, w)
		}
		at += q.Limit
		if p.NextCursor == "" {
			if at < len(want) {
				t.Fatalf("%v: no cursor after %d of %d", q.Query, at, len(want))
			}
			break
		}
		q.Cursor = p.NextCursor
	}
	q.Cursor = ""
	for _, off := range []int{1, 7, 95, len(want) - 3, len(want) + 5, rappel.MaxOffset} {
		if off < 0 || off > rappel.MaxOffset {
			continue
		}
		q.Offset = off
		p := search(t, s, &q)
		if got, w := ids(t, p), page(off); p.Count != len(want) || !slices.Equal(got, w) {
			t.Fatalf("%v offset %d: count %d, %v; want %d, %v", q.Query, off, p.Count, got, len(want), w)
		}
	}
}
