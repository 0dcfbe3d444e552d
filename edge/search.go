package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/jsonstr"
)

// Names of GET /recall's date parameters, canonical name first, then its
// aliases (docs/api.md, "Searching").
var (
	issuedAfterNames  = []string{"issued_after", "date_from", "date_after"}
	issuedBeforeNames = []string{"issued_before", "date_to", "date_before"}
)

// recallParams are the query parameters GET /recall accepts.
var recallParams = slices.Concat(
	[]string{"q"}, rappel.FilterParams(),
	issuedAfterNames, issuedBeforeNames,
	[]string{"sort_by", "sort_order", "limit", "offset", "cursor", "lang", "typos", "prefix", "relax", "facets", "highlight"})

// filterParams are the query parameters filtersOf reads.
var filterParams = slices.DeleteFunc(slices.Clone(recallParams), func(name string) bool {
	return slices.Contains([]string{"sort_by", "sort_order", "limit", "offset", "cursor", "relax", "facets", "highlight"}, name)
})

// Sort values a client may send besides closing, which is recognised only
// to be refused with a 400 by the searcher (docs/api.md, "Searching"): a
// 422 should not suggest it.
var (
	sortKeys   = rappel.Vocabulary{rappel.SortDate, rappel.SortPublished, rappel.SortValue, rappel.SortRelevance}
	sortOrders = rappel.Vocabulary{"asc", "desc"}
	// typoModes, prefixModes and relaxModes are the values of typos,
	// prefix and relax.
	typoModes   = rappel.Vocabulary{"on", "off"}
	prefixModes = rappel.Vocabulary{"none", "last"}
	relaxModes  = rappel.Vocabulary{"on", "off"}
)

// searchRecalls answers GET /recall: it validates every parameter, reporting
// all bad ones in one 422, checks the search once (the searcher takes it
// checked), runs it within the query budget and writes the page, splicing
// the results' bytes as the snapshot encoded them.
func (s *Server) searchRecalls(w http.ResponseWriter, r *http.Request) error {
	q, err := searchOf(paramsOf(w))
	if err != nil {
		return err
	}
	buf := pageBufs.Get().(*[]byte)
	defer pageBufs.Put(buf)
	q.Buf = *buf
	checked, err := q.Checked()
	if err != nil {
		return err
	}
	// The budget runs from here: estimating, waiting for a slot and
	// searching all count against it.
	ctx, cancel := context.WithTimeout(r.Context(), s.QueryBudget)
	defer cancel()
	snap := s.Catalog.Snapshot()
	ctx, release, err := s.admitSearch(ctx, w, snap, checked, paidHere)
	if err != nil {
		return searchError(err)
	}
	defer release()
	ctx, span := startSearchSpan(ctx, q)
	page, err := snap.Search(ctx, checked)
	endSearchSpan(span, page, err)
	// Results in the request's buffer (the snapshot appended them to
	// q.Buf) are this request's alone until it returns.
	owned := page != nil && len(page.Results) > 0 && cap(q.Buf) > 0 && &page.Results[0] == &q.Buf[:1][0]
	if page != nil && cap(page.Results) <= maxPooledPage {
		*buf = page.Results[:0] // keep the larger buffer for the next request
	}
	if err != nil {
		return searchError(err)
	}
	writePage(w, r, page, pageETag(snap.Info(), r.URL.RawQuery), owned)
	return nil
}

// searchPayment says whether a search pays for itself when it is admitted.
type searchPayment int

const (
	// paidHere: the request pays the search's cost, and says it in the
	// Search-Cost header: GET /recall, its suggestions and Atom feed, an
	// export's first page.
	paidHere searchPayment = iota
	// paidBefore: a later page of an export, paid for with its first, so
	// that the rate limit never cuts an export whose status is sent.
	paidBefore
)

// admitSearch prices q on snap (when the snapshot can tell) and lets it
// run: a search paid here is charged to the key's limits, or without a key
// to the client address's (anonymous.go); an expensive one takes a slot
// of the pool, waiting in the queue when keyed, not at all without a key,
// and as long as its budget lasts for an export's later page. It returns the context the search
// runs in, which carries the estimate to the search and yields to other
// requests when it runs in the pool, and the release of the slot (a no-op
// for a search that took none).
func (s *Server) admitSearch(ctx context.Context, w http.ResponseWriter, snap rappel.Snapshot, q rappel.CheckedSearch, pay searchPayment) (context.Context, func(), error) {
	noSlot := func() {}
	ce, ok := snap.(rappel.CostEstimator)
	if !ok {
		return ctx, noSlot, nil
	}
	x := exchangeOf(w)
	if pay == paidHere && x != nil && x.key == nil {
		// The request's first unit, before the estimate: an address
		// whose bucket is empty costs no estimate, as a keyed request
		// over its limit costs none.
		if err := s.limitAnonymous(w, x.remote, 1, 0); err != nil {
			return ctx, nil, err
		}
	}
	ctx, cost, err := ce.SearchCost(ctx, q)
	if err != nil {
		return ctx, nil, err
	}
	mode := untilBudget // a later page of an export: its status is sent
	if pay == paidHere {
		if mode, err = s.payForSearch(w, x, cost); err != nil {
			return ctx, nil, err
		}
	}
	if !s.expensive(cost) {
		return ctx, noSlot, nil
	}
	release, err := s.acquire(ctx, w, cost, mode)
	if err != nil {
		return ctx, nil, err
	}
	return yielding{ctx}, release, nil
}

// payForSearch says a search's cost in the Search-Cost header and charges
// it, to the key's limits or, without a key, to the client address's (its
// first unit taken before the estimate). It returns how the search waits
// for a slot of the pool: in the queue for a keyed request, not at all for
// one without a key, which must not fill the queue keyed clients wait in.
func (s *Server) payForSearch(w http.ResponseWriter, x *exchange, cost int) (waitMode, error) {
	return s.payFor(w, x, cost, pricedSearch)
}

// payFor is payForSearch for what p names.
func (s *Server) payFor(w http.ResponseWriter, x *exchange, cost int, p priced) (waitMode, error) {
	w.Header()[headerSearchCost] = []string{strconv.Itoa(cost)}
	switch {
	case x != nil && x.key != nil:
		return queued, s.charge(w, x.key, cost, p)
	case x != nil:
		return noQueue, s.limitAnonymous(w, x.remote, cost-1, cost)
	}
	return noQueue, nil
}

// searchError is the client's error for what a search returned.
func searchError(err error) error {
	var ue *rappel.UnknownError
	if errors.As(err, &ue) {
		// A category no record has: the searcher names it, the
		// request says where it was.
		return rappel.Invalids(rappel.InvalidValue(rappel.QueryLoc(ue.Field), ue.Value, ue.Reason()))
	}
	if rappel.ErrorCode(err) == rappel.EINTERNAL && errors.Is(err, context.DeadlineExceeded) {
		// A searcher that let the context's error through: still the
		// client's 504, not a 500.
		err = rappel.QueryTimeout(err)
	}
	return err
}

// pageBufs recycles page buffers: a 100-record page is about 250 KB, and
// allocating one per request is what the garbage collector would otherwise
// spend its time on. Buffers above maxPooledPage (a 500-record page in both
// languages is about 1.3 MB) are left to the collector.
var pageBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

const maxPooledPage = 2 << 20

// searchOf validates GET /recall's parameters into a rappel.Search, one
// by one. The checks across them that are 400s (offset above 9500, cursor
// with sort_by=value or with offset, relevance without q, sort_by=closing)
// are the Search's own (Search.Check); a bad cursor and an unknown category
// only the searcher can tell.
func searchOf(p *params) (*rappel.Search, error) {
	q := filterEnums(p)
	q.Limit = p.int("limit", 1, rappel.MaxLimit, rappel.DefaultLimit)
	q.Offset = p.int("offset", 0, math.MaxInt, 0)
	q.Cursor, _ = p.str("cursor")
	if err := readText(p, q); err != nil {
		return nil, err
	}
	q.SortBy, q.Ascending = readSort(p)
	q.IssuedAfter, q.IssuedBefore = readDates(p)
	q.Facets = readFacets(p)
	q.Highlight = p.enum("highlight", rappel.Booleans) == "true"
	q.NoRelax = p.enum("relax", relaxModes) == "off"
	return q, p.err()
}

// filtersOf reads what selects the records of a search and the language
// of their bytes (filterParams), without paging or sort: GET /recall's
// Atom feed and its export take them as GET /recall does. Bad values are
// recorded in p, as searchOf records them.
func filtersOf(p *params) (*rappel.Search, error) {
	q := filterEnums(p)
	if err := readText(p, q); err != nil {
		return nil, err
	}
	q.IssuedAfter, q.IssuedBefore = readDates(p)
	// A feed or an export is the records that match, all words required:
	// leaving words out is for a person reading a page (Page.LeftOut).
	q.NoRelax = true
	return q, nil
}

// filterEnums reads the filters of a search (rappel.Filters) and lang;
// a free-text filter's value is kept as sent, the index folds it.
func filterEnums(p *params) *rappel.Search {
	q := &rappel.Search{}
	for i := range rappel.Filters {
		f := &rappel.Filters[i]
		if f.Free() {
			*f.Of(&q.FilterValues), _ = p.str(f.Param)
		} else {
			*f.Of(&q.FilterValues) = p.enum(f.Param, f.Vocab())
		}
	}
	q.Lang = p.enum("lang", rappel.Langs)
	return q
}

// readText reads q and how q matches (typos, prefix) into q.
func readText(p *params, q *rappel.Search) error {
	if v, ok := p.str("q"); ok && v != "" {
		parsed, err := rappel.ParseQuery(v)
		var qe *rappel.QueryError
		switch {
		case errors.As(err, &qe):
			p.invalid(qe.Item(rappel.QueryLoc("q"), v))
		case err != nil:
			return fmt.Errorf("parsing q: %w", err)
		}
		q.Query = parsed
	}
	q.NoTypos = p.enum("typos", typoModes) == "off"
	q.PrefixLast = p.enum("prefix", prefixModes) == "last"
	return nil
}

// readFacets returns the facets asked for, nil when none, recording an
// item naming the nearest facet for an unknown name.
func readFacets(p *params) []string {
	v, ok := p.str("facets")
	if !ok {
		return nil
	}
	names, err := rappel.ParseFacets(v)
	if fe := (*rappel.FacetsError)(nil); errors.As(err, &fe) {
		p.invalid(rappel.InvalidFacets(rappel.QueryLoc("facets"), v, fe))
	}
	return names
}

// readSort returns sort_by ("" for the default, date) and whether
// sort_order asks for ascending order (descending is the default).
func readSort(p *params) (sortBy string, asc bool) {
	if v, _ := p.str("sort_by"); v == rappel.SortClosing {
		sortBy = v
	} else {
		sortBy = p.enum("sort_by", sortKeys)
	}
	return sortBy, p.enum("sort_order", sortOrders) == "asc"
}

// readDates returns issued_after and issued_before, each under whichever of
// its names was given, recording a value_error when the range is empty.
func readDates(p *params) (after, before string) {
	afterName, beforeName := p.oneOf(issuedAfterNames...), p.oneOf(issuedBeforeNames...)
	if afterName != "" {
		after = p.date(afterName)
	}
	if beforeName != "" {
		before = p.date(beforeName)
	}
	if after != "" && before != "" && after > before { // YYYY-MM-DD compares as text
		p.invalid(rappel.InvalidValue(rappel.QueryLoc(afterName), after, rappel.Reason{
			Problem: "is " + rappel.Quote(after) + ", later than " + rappel.Quote(beforeName) + ", which is " + rappel.Quote(before) + ", so no recall can match",
			Fix:     "swap the two dates"}))
	}
	return after, before
}

// writePage writes the response of GET /recall:
//
//	{"entity_type":"recall","count":N,"results":[...],"next_cursor":C,"next":C}
//
// The results are the page's bytes as the snapshot spliced them, written as
// they are rather than copied into a new buffer; C is the cursor string, or
// null on the last page.
func writePage(w http.ResponseWriter, r *http.Request, page *rappel.Page, etag string, owned bool) {
	var headBuf [64]byte
	head := append(headBuf[:0], `{"entity_type":"recall","count":`...)
	head = strconv.AppendInt(head, int64(page.Count), 10)
	head = append(head, `,"results":`...)
	results := page.Results
	if len(results) == 0 {
		results = []byte("[]") // a searcher that found nothing may say so with no bytes
	}
	tail := make([]byte, 0, 32+2*len(page.NextCursor))
	if len(page.Corrections) > 0 {
		b, _ := json.Marshal(page.Corrections) // strings and lists of strings always encode
		tail = append(append(tail, `,"corrections":`...), b...)
	}
	if len(page.LeftOut) > 0 {
		b, _ := json.Marshal(page.LeftOut)
		tail = append(append(tail, `,"left_out":`...), b...)
	}
	if len(page.Optional) > 0 {
		b, _ := json.Marshal(page.Optional)
		tail = append(append(tail, `,"optional":`...), b...)
	}
	tail = append(tail, `,"next_cursor":`...)
	tail = appendCursor(tail, page.NextCursor)
	tail = append(tail, `,"next":`...)
	tail = appendCursor(tail, page.NextCursor)
	if page.Facets != nil {
		tail = appendFacets(tail, page.Facets)
	}
	tail = append(tail, '}')

	// The results, up to hundreds of kilobytes, are not copied into one
	// buffer. When they are the request's own (owned) with room after
	// them, the tail goes there, so that the body ends in the write of its
	// bulk: net/http then sends a page in as many system calls and TCP
	// segments as a bare handler writing it whole, where a tail written
	// apart costs one more of each (and a wake-up of the client).
	if owned && cap(results)-len(results) >= len(tail) {
		writeJSONTagged(w, r, http.StatusOK, etag, head, append(results, tail...))
		return
	}
	writeJSONTagged(w, r, http.StatusOK, etag, head, results, tail)
}

// appendFacets appends the facets member of GET /recall's response:
//
//	,"facets":{"recall_type":[{"value":"food","count":120},…],…}
func appendFacets(dst []byte, facets []rappel.Facet) []byte {
	dst = append(dst, `,"facets":{`...)
	for i, f := range facets {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonstr.Append(dst, f.Field)
		dst = append(dst, ':')
		dst = appendGroups(dst, f.Groups, false)
	}
	return append(dst, '}')
}

// appendCursor appends c as a JSON string, or null when c is empty.
// Cursors are base64url, which JSON needs no escape for, so the common case
// only adds quotes; anything else goes through encoding/json.
func appendCursor(dst []byte, c string) []byte {
	if c == "" {
		return append(dst, "null"...)
	}
	for i := 0; i < len(c); i++ {
		if !isBase64URL(c[i]) {
			b, _ := json.Marshal(c) // a string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, c...)
	return append(dst, '"')
}

func isBase64URL(b byte) bool {
	return 'A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '-' || b == '_'
}
