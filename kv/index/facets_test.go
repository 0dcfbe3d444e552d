package index

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// facetsAndHighlights is a snapshot asked for every facet and for
// highlights with each search, so that sameAnswers compares them too.
type facetsAndHighlights struct{ rappel.Snapshot }

func (s facetsAndHighlights) Search(ctx context.Context, cq rappel.CheckedSearch) (*rappel.Page, error) {
	c := *cq.Search()
	c.Facets, c.Highlight = rappel.FacetFields, true
	q, err := c.Checked()
	if err != nil {
		return nil, err
	}
	return s.Snapshot.Search(ctx, q)
}

// TestFacets_Records checks the facets of searches over statsCorpus
// against counts made from the matching records themselves, with the
// statistics' category spellings.
func TestFacets_Records(t *testing.T) {
	recs := statsCorpus(600)
	s := mustBuild(t, cloneAll(recs))
	byID := map[string]*rappel.Record{}
	for _, r := range recs {
		byID[r.RecordID] = r
	}
	all := expectStats(recs, &rappel.StatsQuery{GroupBy: "category"})
	catName := map[string]string{}
	for _, g := range all.Groups {
		catName[CategoryKey(g.Value)] = g.Value
	}
	for _, q := range []*rappel.Search{
		{},
		{FilterValues: rappel.FilterValues{RecallType: rappel.TypeVehicle}},
		{IssuedAfter: "2001-03-04", FilterValues: rappel.FilterValues{Category: "dairy"}},
		{IssuedBefore: "2010-12-31", FilterValues: rappel.FilterValues{Allergen: "milk"}},
		{FilterValues: rappel.FilterValues{Agency: rappel.AgencyCFIA, HazardClass: "class_2"}},
		{IssuedAfter: "1999-01-01", IssuedBefore: "1999-12-31"},
	} {
		q.Facets = rappel.FacetFields
		page := search(t, s, q)
		matched, err := s.MatchIDs(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		var match []*rappel.Record
		for _, id := range matched {
			match = append(match, byID[id])
		}
		if len(page.Facets) != len(rappel.FacetFields) {
			t.Fatalf("%+v: %d facets", q, len(page.Facets))
		}
		for i, f := range page.Facets {
			field := facetStats[rappel.FacetFields[i]]
			var want []rappel.StatsGroup
			if field == rappel.GroupYear {
				want = expectStats(match, &rappel.StatsQuery{GroupBy: field}).Groups
			} else {
				want = expectFacet(match, field, catName)
			}
			if f.Field != rappel.FacetFields[i] || !reflect.DeepEqual(f.Groups, want) && len(want)+len(f.Groups) > 0 {
				t.Errorf("%+v: facet %s:\n got %v\nwant %v", q, f.Field, f.Groups, want)
			}
		}
	}
}

// expectFacet counts the values of field over recs, each group named as
// the statistics of every record name it.
func expectFacet(recs []*rappel.Record, field string, catName map[string]string) []rappel.StatsGroup {
	counts := map[string]int{}
	for _, r := range recs {
		for _, v := range recordValues(r, field, catName) {
			counts[v]++
		}
	}
	var out []rappel.StatsGroup
	for v, n := range counts {
		out = append(out, rappel.StatsGroup{Value: v, Count: n})
	}
	sortGroups(out)
	return out
}

// TestFacets_View checks that the facets and highlights of a view with a
// delta, built in memory, read from segments and made by WithChanges, are
// those of a snapshot rebuilt from the final records.
func TestFacets_View(t *testing.T) {
	final := mixedRecords()
	info := rappel.DatasetInfo{UpdatedAt: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC), Source: "feeds"}
	built := func(recs []*rappel.Record) *Snapshot {
		s, err := Build(cloneAll(recs), info)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	want := facetsAndHighlights{built(final).View()}
	base, delta, deleted := splitChange(t, final, 30, 25, 20)
	sameAnswers(t, want, facetsAndHighlights{NewView(base, delta, deleted, info)}, final, 11, 300)
	// The same parts read from their segments.
	var parts [2]*Snapshot
	for i, p := range []*Snapshot{base, delta} {
		var err error
		if parts[i], err = OpenSegmentBytes(fmt.Sprint("part ", i), mustSegmentBytes(t, p), Options{}); err != nil {
			t.Fatal(err)
		}
	}
	sameAnswers(t, want, facetsAndHighlights{NewView(parts[0], parts[1], deleted, info)}, final, 12, 200)

	// WithChanges over the base of the records as they were.
	var put []*rappel.Record
	var removed []string
	for i := range 60 {
		r := *final[i*3%len(final)]
		switch i % 3 {
		case 0:
			r.RecordID, r.RecallID = fmt.Sprintf("hc-new-%d", i), fmt.Sprintf("new-%d", i)
			r.Category = "A new category"
		case 1:
			r.EventDate = "2031-01-01"
			r.Allergens = append(slices.Clone(r.Allergens), "sesame")
		default:
			removed = append(removed, r.RecordID)
			continue
		}
		put = append(put, &r)
	}
	after := map[string]*rappel.Record{}
	for _, r := range final {
		after[r.RecordID] = r
	}
	for _, r := range put {
		after[r.RecordID] = r
	}
	for _, id := range removed {
		delete(after, id)
	}
	var rebuilt []*rappel.Record
	for _, r := range after {
		rebuilt = append(rebuilt, r)
	}
	v, err := WithChanges(built(final), cloneAll(put), removed, info, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameAnswers(t, facetsAndHighlights{built(rebuilt).View()}, facetsAndHighlights{v}, rebuilt, 13, 300)
}
