package main

import (
	"net/url"

	"github.com/rappel-ca/rappel"
)

// Class is a query class of the comparison: one request every system
// answers. Path is the request URI (path and query); for the deep cursor
// class it is the search whose pages are walked, and the URI measured is
// each system's own cursor for page CursorDepth+1.
type Class struct {
	Name  string
	Label string
	Path  string
	// Deep marks the cursor class.
	Deep bool
	// Quick classes run in -quick mode.
	Quick bool
}

// CursorDepth is how many 100-result pages the deep cursor class walks
// before the page it measures (records 5,001 to 5,100).
const CursorDepth = 50

// Fixed query words. rareWord is a word a few dozen records of the bundle hold.
const (
	commonWord = "recalled"
	rareWord   = "shellfish"
	sampleVIN  = "4T1BB3EK5AU118081" // TOYOTA CAMRY 2010
)

// Samples are the record id and barcode the lookups ask for, picked from
// the data set being measured.
type Samples struct {
	RecordID string
	UPC      string // as printed in the record
}

// pickSamples picks, deterministically, the record in the middle of the
// data set (in record_id order, as the bundle is) and the first printed
// barcode that parses.
func pickSamples(recs []*rappel.Record) Samples {
	var s Samples
	if len(recs) > 0 {
		s.RecordID = recs[len(recs)/2].RecordID
	}
	for _, r := range recs {
		for _, p := range r.ProductList {
			if _, err := rappel.ParseGTIN(p.UPC); p.UPC != "" && err == nil {
				s.UPC = p.UPC
				return s
			}
		}
	}
	return s
}

// Classes returns the query set, as the issue lists it, with the
// GET /recall/{record_id} the physical-limit goal is about first.
func Classes(s Samples) []Class {
	q := func(v url.Values) string { return "/recall?" + v.Encode() }
	return []Class{
		{Name: "record", Label: "GET /recall/{record_id}", Path: "/recall/" + url.PathEscape(s.RecordID), Quick: true},
		{Name: "no_q", Label: "no q (100-result page)", Path: "/recall", Quick: true},
		{Name: "filter", Label: "filter only", Path: q(url.Values{"recall_type": {"vehicle"}})},
		{Name: "common_word", Label: "common word", Path: q(url.Values{"q": {commonWord}}), Quick: true},
		{Name: "rare_word", Label: "rare word", Path: q(url.Values{"q": {rareWord}})},
		{Name: "and", Label: "AND", Path: q(url.Values{"q": {"pieces metal"}})},
		{Name: "or", Label: "OR", Path: q(url.Values{"q": {"listeria OR salmonella"}})},
		{Name: "phrase", Label: "phrase", Path: q(url.Values{"q": {`"pieces of metal"`}}), Quick: true},
		{Name: "negation", Label: "negation", Path: q(url.Values{"q": {"recalled -salmonella"}})},
		{Name: "q_filters_dates", Label: "q + filters + date range", Path: q(url.Values{"q": {commonWord}, "recall_type": {"food"}, "issued_after": {"2005-01-01"}, "issued_before": {"2020-12-31"}})},
		{Name: "cursor_deep", Label: "deep cursor page (page 51)", Path: q(url.Values{"q": {commonWord}}), Deep: true},
		{Name: "stats", Label: "stats group_by", Path: "/recall/stats?" + url.Values{"group_by": {"recall_type"}, "period": {"all"}}.Encode(), Quick: true},
		{Name: "upc", Label: "UPC", Path: "/recall/upc?" + url.Values{"upc": {s.UPC}}.Encode()},
		{Name: "vin", Label: "VIN", Path: "/recall/vin?" + url.Values{"vin": {sampleVIN}}.Encode(), Quick: true},
	}
}
