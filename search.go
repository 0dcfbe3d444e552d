package rappel

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Sort keys of GET /recall.
const (
	SortDate      = "date"      // event_date
	SortPublished = "published" // recall_date
	SortValue     = "value"     // units_affected, records without it last
	SortRelevance = "relevance" // BM25 score of q; needs q
	SortClosing   = "closing"   // recognised, refused: recalls have no closing date
)

// SortKeys are the sort_by values a client may send.
var SortKeys = Vocabulary{SortDate, SortPublished, SortValue, SortRelevance, SortClosing}

// Paging limits of GET /recall.
const (
	DefaultLimit = 100
	MaxLimit     = 500
	MaxOffset    = 9500
)

// Search is a validated GET /recall request.
type Search struct {
	Query *Query // nil: no q
	// FilterValues are the filters' values (Filters).
	FilterValues
	IssuedAfter  string // YYYY-MM-DD, inclusive; "" for none
	IssuedBefore string // YYYY-MM-DD, inclusive; "" for none
	SortBy       string // one of SortKeys except closing; "" means date
	Ascending    bool
	Limit        int
	Offset       int
	Cursor       string // opaque, from a previous Page
	Lang         string // "", en or fr: the variant of the records' bytes
	// NoTypos turns off the matching of misspelled words (typos=off).
	NoTypos bool
	// NoRelax keeps every word of q required even when together they
	// find nothing (relax=off); see Page.LeftOut.
	NoRelax bool
	// PrefixLast makes the last word of q a prefix too (prefix=last), for
	// search as you type.
	PrefixLast bool
	// Facets are the FacetFields to count the matches by, each once, in
	// the order of Page.Facets; nil for none.
	Facets []string
	// Highlight adds to each result the fragments of its title, product
	// and hazard text that q matches (docs/api.md, "Searching").
	Highlight bool
	// Buf, when its capacity suffices, holds Page.Results, so a caller can
	// reuse one buffer across searches instead of allocating a page each.
	Buf []byte
}

// Check refuses the searches that are valid parameter by parameter but
// cannot be served together (400s): sort_by=closing, relevance without q,
// a cursor with sort_by=value or with an offset, an offset above
// MaxOffset.
func (q *Search) Check() error {
	sortBy := q.SortBy
	if sortBy == "" {
		sortBy = SortDate
	}
	// others lists the sorts to use instead of except: those that apply,
	// relevance only with a q.
	others := func(except string) string {
		var keys []string
		for _, k := range SortKeys {
			if k != except && k != SortClosing && (k != SortRelevance || q.Query != nil) {
				keys = append(keys, k)
			}
		}
		return QuoteList(keys, "or")
	}
	switch {
	case sortBy == SortClosing:
		return BadRequest("query parameter 'sort_by' is 'closing', which does not apply to recalls: they have no closing date",
			"sort by "+others(SortClosing))
	case sortBy == SortRelevance && q.Query == nil:
		return BadRequest("query parameter 'sort_by' is 'relevance', which ranks records by how well they match q, and there is no q",
			"send a q, or sort by "+others(SortRelevance))
	case q.Cursor != "" && sortBy == SortValue:
		return BadRequest("query parameter 'cursor' cannot page a search sorted by 'value'",
			"page it with 'offset', or sort by 'date' or 'published' to use cursors")
	case q.Cursor != "" && q.Offset > 0:
		return BadRequest("query parameters 'cursor' and 'offset' were both given",
			"send only one: a cursor already says where the page starts")
	case q.Offset > MaxOffset:
		// Not the number itself: one too large for an int reads as
		// the largest int.
		return BadRequest(fmt.Sprintf("query parameter 'offset' is above %d", MaxOffset),
			"pass the next_cursor of each page as 'cursor' to page deeper")
	}
	return nil
}

// Page is one page of a search.
type Page struct {
	// Count is the number of records matching the whole search.
	Count int
	// Results is the page's records as a JSON array, spliced from bytes
	// encoded when the snapshot was built, in the language variant the
	// search asked for.
	Results []byte
	// N is the number of records in Results.
	N int
	// NextCursor continues after the last result; "" on the last page.
	NextCursor string
	// Corrections says which words of q matched other words than their
	// own: misspellings matched to the dictionary's words, words matched
	// split in two.
	Corrections []Correction
	// LeftOut are the words of q, as typed, that the search left out
	// because with them it found nothing: the page is what the rest
	// finds (docs/api.md, "When words find nothing together").
	LeftOut []string
	// Optional are the words of q, as typed, that a search sorted by
	// relevance made optional because together they found too little:
	// the page ranks first the records holding the most of them.
	Optional []string
	// Facets are the counts Search.Facets asked for, in its order.
	Facets []Facet
}

// Correction is a word of q and the index terms it was matched to.
type Correction struct {
	Word    string   `json:"word"`
	Matched []string `json:"matched"`
}

// CheckedSearch is a Search that Check accepted. Search.Checked is the
// only way to make one that is not the zero value (itself the empty
// search, which Check accepts), so a Searcher given one never checks it
// again: a search is validated once, where the request is read (README,
// "Searching").
type CheckedSearch struct {
	q *Search // a copy: the Search checked cannot change it afterwards
}

// Checked returns q as a CheckedSearch when Check accepts it, and Check's
// 400 otherwise.
func (q *Search) Checked() (CheckedSearch, error) {
	if err := q.Check(); err != nil {
		return CheckedSearch{}, err
	}
	c := *q
	return CheckedSearch{q: &c}, nil
}

// Search returns the search that was checked. A searcher reads it and
// does not change it; every call returns the same pointer, so that it may
// key what one search computes for the next step of the same search
// (CostEstimator).
func (c CheckedSearch) Search() *Search {
	if c.q == nil {
		return &emptySearch
	}
	return c.q
}

// emptySearch is the search of the zero CheckedSearch.
var emptySearch Search

// Searcher answers searches. Search returns an *Error: EBADREQUEST for a
// cursor that is malformed, tampered with or from another search;
// EINVALID carrying an *UnknownError for a category no record has;
// ETIMEOUT when ctx ends first.
type Searcher interface {
	Search(ctx context.Context, s CheckedSearch) (*Page, error)
}

// Suggestions are what GET /recall/suggest proposes for a q being typed:
// words that complete (or correct) its last word, each with the number of
// records GET /recall would find for it, and the records that match best.
type Suggestions struct {
	Terms   []SuggestedTerm   `json:"terms"`
	Recalls []SuggestedRecall `json:"recalls"`
}

// SuggestedTerm is a word and how many records hold it.
type SuggestedTerm struct {
	Term  string `json:"term"`
	Count int    `json:"count"`
}

// SuggestedRecall is a record that matches what is typed, by its title in
// the language asked for (English when none, or when the record has none).
type SuggestedRecall struct {
	RecordID string `json:"record_id"`
	Title    string `json:"title"`
}

// Limits of GET /recall/suggest.
const (
	DefaultSuggest = 8
	MaxSuggest     = 20
)

// Suggester answers GET /recall/suggest: q is what has been typed so far,
// its last word being completed; lang is "", en or fr.
type Suggester interface {
	Suggest(ctx context.Context, q, lang string, limit int) (*Suggestions, error)
}

// FacetFields are the fields GET /recall counts its matches by when asked
// with facets: each filter under its Param (recall_agency is the record's
// agency), and year the year of event_date. The counts are
// those of GET /recall/stats for the same records (docs/api.md, "Searching").
var FacetFields = append(Vocabulary(FilterParams()), GroupYear)

// Booleans are the values of a switch parameter such as highlight.
var Booleans = Vocabulary{"true", "false"}

// Facet is the counts of one facet field over every record a search
// matches: Groups as GET /recall/stats orders them, by count descending,
// then value, without Sum.
type Facet struct {
	Field  string
	Groups []StatsGroup
}

// FacetsError says why a facets value was refused: Unknown is a name that
// is not one of FacetFields (an enum item naming the nearest), "" for a
// value that is wrong otherwise (Reason).
type FacetsError struct {
	Reason
	Unknown string
}

func (e *FacetsError) Error() string {
	if e.Unknown != "" {
		return "unknown facet " + Quote(e.Unknown)
	}
	return "facets " + e.Reason.String()
}

// facetsForm is the fix of a facets value that is not a list of names.
const facetsForm = "list one or more facets separated by commas, as in 'recall_type,year'"

// ParseFacets reads the facets parameter of GET /recall: names of
// FacetFields separated by commas, spaces around them ignored, each at most
// once. It returns the names in the order given; errors are *FacetsError.
func ParseFacets(s string) ([]string, error) {
	var names []string
	for part := range strings.SplitSeq(s, ",") {
		name := strings.TrimSpace(part)
		switch {
		case name == "" && strings.TrimSpace(s) == "":
			return nil, &FacetsError{Reason: Reason{Problem: "is empty", Fix: facetsForm}}
		case name == "":
			return nil, &FacetsError{Reason: Reason{Problem: "is " + Quote(s) + ", which has an empty name between commas", Fix: facetsForm}}
		case !FacetFields.Has(name):
			return nil, &FacetsError{Unknown: name}
		case slices.Contains(names, name):
			return nil, &FacetsError{Reason: Reason{Problem: "names " + Quote(name) + " twice", Fix: "give each facet once"}}
		}
		names = append(names, name)
	}
	return names, nil
}

// InvalidFacets is the item of a facets value ParseFacets refused with
// err, at loc: an unknown name is an enum item naming the nearest facet.
func InvalidFacets(loc []any, input string, err *FacetsError) Invalid {
	if err.Unknown != "" {
		return InvalidEnumOf(loc, err.Unknown, FacetFields, "facet names separated by commas", "")
	}
	return InvalidValue(loc, input, err.Reason)
}

// CostEstimator is a Searcher that can tell what a search will cost
// before running it, in cost units: 1 is a search of a word or two, and a
// search reading n times as many postings and documents costs n (docs/api.md,
// "Limits"). The context returned carries what the estimate computed to
// the Search of the same CheckedSearch that follows, which then does not
// compute it again.
type CostEstimator interface {
	SearchCost(ctx context.Context, s CheckedSearch) (context.Context, int, error)
}
