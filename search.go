package rappel

import "context"

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
	Query        *Query // nil: no q
	Category     string
	RecallType   string
	Agency       string
	HazardClass  string
	Allergen     string
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
	// PrefixLast makes the last word of q a prefix too (prefix=last), for
	// search as you type.
	PrefixLast bool
	// Buf, when its capacity suffices, holds Page.Results, so a caller can
	// reuse one buffer across searches instead of allocating a page each.
	Buf []byte
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
}

// Correction is a word of q and the index terms it was matched to.
type Correction struct {
	Word    string   `json:"word"`
	Matched []string `json:"matched"`
}

// Searcher answers searches. Search returns an *Error: EBADREQUEST for a
// cursor that is malformed, tampered with or from another search, or for a
// search Search.Check refuses; EINVALID carrying an *UnknownError for a
// category no record has; ETIMEOUT when ctx ends first.
type Searcher interface {
	Search(ctx context.Context, s *Search) (*Page, error)
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
