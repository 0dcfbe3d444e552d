package rappel

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseFacets(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    []string
		unknown string
		problem string
	}{
		{in: "recall_type", want: []string{"recall_type"}},
		{in: "year, category ,allergen", want: []string{"year", "category", "allergen"}},
		{in: "recall_type,recall_agency,hazard_class,allergen,category,recall_status,year", want: []string{"recall_type", "recall_agency", "hazard_class", "allergen", "category", "recall_status", "year"}},
		{in: "", problem: "is empty"},
		{in: " ", problem: "is empty"},
		{in: "year,", problem: "empty name"},
		{in: "year,,category", problem: "empty name"},
		{in: "year,year", problem: "names 'year' twice"},
		{in: "foo", unknown: "foo"},
		{in: "year,agency", unknown: "agency"},
		{in: "Year", unknown: "Year"},
	} {
		got, err := ParseFacets(c.in)
		var fe *FacetsError
		switch {
		case c.want != nil:
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("ParseFacets(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
		case !errors.As(err, &fe):
			t.Errorf("ParseFacets(%q) = %v, %v; want a *FacetsError", c.in, got, err)
		case fe.Unknown != c.unknown || !strings.Contains(fe.Problem, c.problem):
			t.Errorf("ParseFacets(%q): unknown %q, problem %q; want %q, %q", c.in, fe.Unknown, fe.Problem, c.unknown, c.problem)
		}
	}
}

func TestInvalidFacets(t *testing.T) {
	for _, c := range []struct{ in, typ, msg string }{
		{"recal_type", ItemEnum, "Query parameter 'facets' should be facet names separated by commas, not 'recal_type'; did you mean 'recall_type'?"},
		{"foo", ItemEnum, "Query parameter 'facets' should be facet names separated by commas, not 'foo'; use 'category', 'recall_type', 'recall_agency', 'hazard_class', 'allergen', 'recall_status' or 'year'."},
		{"year,year", ItemValue, "Query parameter 'facets' names 'year' twice; give each facet once."},
		{"year,", ItemValue, "Query parameter 'facets' is 'year,', which has an empty name between commas; list one or more facets separated by commas, as in 'recall_type,year'."},
	} {
		_, err := ParseFacets(c.in)
		var fe *FacetsError
		if !errors.As(err, &fe) {
			t.Fatalf("ParseFacets(%q) = %v", c.in, err)
		}
		it := InvalidFacets(QueryLoc("facets"), c.in, fe)
		if it.Type != c.typ || it.Msg != c.msg {
			t.Errorf("facets=%s: %s %q\nwant %s %q", c.in, it.Type, it.Msg, c.typ, c.msg)
		}
	}
}

func FuzzParseFacets(f *testing.F) {
	for _, s := range []string{"year", "recall_type,year", "", ",", "year,,", "year,year", "ye ar", "\xffyear", strings.Repeat("year,", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := ParseFacets(s)
		if err != nil {
			var fe *FacetsError
			if !errors.As(err, &fe) || (fe.Unknown == "" && (fe.Problem == "" || fe.Fix == "")) {
				t.Fatalf("ParseFacets(%q) = %v: not a *FacetsError with a reason or a name", s, err)
			}
			if it := InvalidFacets(QueryLoc("facets"), s, fe); it.Msg == "" || len(it.Msg) > 1000 {
				t.Fatalf("ParseFacets(%q): item message %q", s, it.Msg)
			}
			return
		}
		if len(names) == 0 || len(names) > len(FacetFields) {
			t.Fatalf("ParseFacets(%q) = %v", s, names)
		}
		for i, n := range names {
			if !FacetFields.Has(n) || slices.Contains(names[:i], n) {
				t.Fatalf("ParseFacets(%q) = %v: %q unknown or repeated", s, names, n)
			}
		}
	})
}

// TestCheckedSearch checks that a search reaches a searcher only checked:
// Checked refuses what Check refuses, with Check's 400 and no search; what
// it accepts is a copy, which changing the Search afterwards leaves as it
// was checked; and the zero CheckedSearch is the empty search, which
// Check accepts.
func TestCheckedSearch(t *testing.T) {
	for name, q := range map[string]Search{
		"Closing":      {SortBy: SortClosing},
		"RelevanceNoQ": {SortBy: SortRelevance},
		"CursorValue":  {Cursor: "c", SortBy: SortValue},
		"CursorOffset": {Cursor: "c", Offset: 5},
		"DeepOffset":   {Offset: MaxOffset + 1},
	} {
		c, err := q.Checked()
		if ErrorCode(err) != EBADREQUEST || err.Error() != q.Check().Error() || !reflect.DeepEqual(*c.Search(), Search{}) {
			t.Errorf("%s: Checked() = %+v, %v; want Check's 400 and the empty search", name, *c.Search(), err)
		}
	}
	q := &Search{Query: &Query{}, SortBy: SortRelevance, Limit: 7}
	c, err := q.Checked()
	if err != nil {
		t.Fatal(err)
	}
	q.Query, q.Cursor, q.Offset = nil, "c", MaxOffset+1
	if got := c.Search(); got.Query == nil || got.Cursor != "" || got.Offset != 0 || got.Limit != 7 || got == q {
		t.Errorf("the checked search changed with the Search it was made from: %+v", *got)
	}
	if c.Search() != c.Search() {
		t.Error("a CheckedSearch gives a new search at each call; the estimate and the search of it must see the same one")
	}
	if err := (CheckedSearch{}).Search().Check(); err != nil {
		t.Errorf("the zero CheckedSearch is a search Check refuses: %v", err)
	}
}
