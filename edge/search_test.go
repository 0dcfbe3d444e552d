package edge

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
)

// corpusSize is how many generated records the search tests serve, besides
// the four relevance records: under MaxLimit, so one page holds any result.
const corpusSize = 420

// searchEnv is a real server over a real index.Catalog of the test corpus,
// with the corpus itself to check answers against.
type searchEnv struct {
	byID    map[string]*rappel.Record
	catalog *index.Catalog
	base    string
}

func mustSearchEnv(tb testing.TB, recs []*rappel.Record) *searchEnv {
	tb.Helper()
	e := &searchEnv{byID: map[string]*rappel.Record{}}
	for _, r := range recs {
		e.byID[r.RecordID] = r
	}
	e.catalog = MustCatalog(tb, cloneRecords(recs))
	s, _ := MustServer(tb, e.catalog)
	s.Logger = discardLogger()
	e.base = MustHTTP(tb, s.Handler()).URL
	return e
}

// recallPage is the body of a GET /recall answer.
type recallPage struct {
	EntityType string          `json:"entity_type"`
	Count      int             `json:"count"`
	Results    []rappel.Record `json:"results"`
	NextCursor *string         `json:"next_cursor"`
	Next       *string         `json:"next"`
	LeftOut    []string        `json:"left_out"`
	Optional   []string        `json:"optional"`
}

func (p recallPage) ids() []string {
	ids := make([]string, len(p.Results))
	for i, r := range p.Results {
		ids[i] = r.RecordID
	}
	return ids
}

// get sends GET /recall?query and returns the status and body, checking
// what every answer must be: JSON, and for an error {"detail": ...}.
func (e *searchEnv) get(tb testing.TB, query string) (int, []byte) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, e.base+"/recall?"+query, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("X-Gateway-Key", testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("%s: Content-Type %q", query, ct)
	}
	if !json.Valid(b) {
		tb.Fatalf("%s: body is not JSON: %s", query, b)
	}
	if resp.StatusCode != http.StatusOK {
		checkErrorBody(tb, resp.StatusCode, b)
	}
	return resp.StatusCode, b
}

// checkErrorBody checks an error body: {"detail": a sentence}, or for a 422
// {"detail": [items]} whose locs start with "query".
func checkErrorBody(tb testing.TB, status int, b []byte) {
	tb.Helper()
	var body struct{ Detail json.RawMessage }
	if err := json.Unmarshal(b, &body); err != nil || len(body.Detail) == 0 {
		tb.Fatalf("%d without detail: %s", status, b)
	}
	if status == http.StatusUnprocessableEntity {
		var items []rappel.Invalid
		if err := json.Unmarshal(body.Detail, &items); err != nil || len(items) == 0 {
			tb.Fatalf("422 detail is not a list of items: %s", b)
		}
		for _, it := range items {
			if len(it.Loc) != 2 || it.Loc[0] != "query" || it.Type == "" || it.Msg == "" {
				tb.Errorf("bad item %+v in %s", it, b)
			}
		}
		return
	}
	var sentence string
	if err := json.Unmarshal(body.Detail, &sentence); err != nil || !strings.HasSuffix(sentence, ".") {
		tb.Errorf("%d detail is not a sentence: %s", status, b)
	}
}

// page sends a query that must succeed and returns its page, checked.
func (e *searchEnv) page(tb testing.TB, v url.Values) recallPage {
	tb.Helper()
	status, b := e.get(tb, v.Encode())
	if status != http.StatusOK {
		tb.Fatalf("%s: status %d: %s", v.Encode(), status, b)
	}
	var p recallPage
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		tb.Fatalf("%s: %v: %s", v.Encode(), err, b)
	}
	switch {
	case p.EntityType != "recall":
		tb.Errorf("%s: entity_type %q", v.Encode(), p.EntityType)
	case (p.Next == nil) != (p.NextCursor == nil) || p.Next != nil && *p.Next != *p.NextCursor:
		tb.Errorf("%s: next %v and next_cursor %v differ", v.Encode(), p.Next, p.NextCursor)
	case p.Count < len(p.Results):
		tb.Errorf("%s: count %d below the page's %d results", v.Encode(), p.Count, len(p.Results))
	case p.NextCursor != nil && *p.NextCursor == "":
		tb.Errorf("%s: an empty next_cursor", v.Encode())
	}
	return p
}

// with returns a copy of v with the pairs k1, v1, k2, v2... set.
func with(v url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// vals makes url.Values from pairs.
func vals(kv ...string) url.Values { return with(nil, kv...) }

// all returns the ids of every match of v, from one page of MaxLimit.
func (e *searchEnv) all(tb testing.TB, v url.Values) []string {
	tb.Helper()
	p := e.page(tb, with(v, "limit", strconv.Itoa(rappel.MaxLimit)))
	if p.Count != len(p.Results) || p.NextCursor != nil {
		tb.Fatalf("%s: count %d, %d results, next %v: the corpus outgrew one page", v.Encode(), p.Count, len(p.Results), p.NextCursor)
	}
	return p.ids()
}

// walk follows next_cursor from the first page of v with limit, returning
// every page's ids.
func (e *searchEnv) walk(tb testing.TB, v url.Values, limit int) [][]string {
	tb.Helper()
	var pages [][]string
	v = with(v, "limit", strconv.Itoa(limit))
	count := -1
	for {
		p := e.page(tb, v)
		if count >= 0 && p.Count != count {
			tb.Fatalf("count changed during a walk: %d then %d", count, p.Count)
		}
		count = p.Count
		pages = append(pages, p.ids())
		if p.NextCursor == nil {
			if len(p.Results) > limit {
				tb.Fatalf("a page of %d results for limit %d", len(p.Results), limit)
			}
			return pages
		}
		if len(p.Results) != limit {
			tb.Fatalf("a page of %d results with a next cursor, limit %d", len(p.Results), limit)
		}
		if len(pages) > 2*rappel.MaxLimit {
			tb.Fatal("the walk does not end")
		}
		v = with(v, "cursor", *p.NextCursor)
	}
}

func (e *searchEnv) count(tb testing.TB, v url.Values) int {
	tb.Helper()
	return e.page(tb, with(v, "limit", "1")).Count
}

// expect returns the ids of the corpus records keep accepts, in the order
// of sortBy and asc as docs/api.md defines it.
func (e *searchEnv) expect(keep func(*rappel.Record) bool, sortBy string, asc bool) []string {
	var recs []*rappel.Record
	for _, r := range e.byID {
		if keep == nil || keep(r) {
			recs = append(recs, r)
		}
	}
	slices.SortFunc(recs, func(a, b *rappel.Record) int { return compareRecords(a, b, sortBy, asc) })
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.RecordID
	}
	return ids
}

// compareRecords is the order of GET /recall, written from docs/api.md
// rather than from the index: the sort key in the asked direction, records
// without units_affected last both ways for value, ties on record_id.
func compareRecords(a, b *rappel.Record, sortBy string, asc bool) int {
	var c int
	switch sortBy {
	case rappel.SortPublished:
		c = strings.Compare(a.RecallDate, b.RecallDate)
	case rappel.SortValue:
		switch {
		case a.UnitsAffected == nil && b.UnitsAffected == nil:
		case a.UnitsAffected == nil:
			return 1
		case b.UnitsAffected == nil:
			return -1
		default:
			c = *a.UnitsAffected - *b.UnitsAffected
		}
	default:
		c = strings.Compare(a.EventDate, b.EventDate)
	}
	if c != 0 {
		if !asc {
			c = -c
		}
		return c
	}
	return strings.Compare(a.RecordID, b.RecordID)
}

func TestSearch_Filters(t *testing.T) {
	e := mustSearchEnv(t, corpusRecords(corpusSize, 1))
	catIs := func(name string) func(*rappel.Record) bool {
		key := index.CategoryKey(name)
		return func(r *rappel.Record) bool {
			cats := append([]string{r.Category}, r.Categories...)
			if r.Translations.FR != nil {
				cats = append(cats, r.Translations.FR.Category)
			}
			return slices.ContainsFunc(cats, func(c string) bool { return c != "" && index.CategoryKey(c) == key })
		}
	}
	type filter struct {
		v    url.Values
		keep func(*rappel.Record) bool
	}
	tests := map[string]filter{
		"None":         {vals(), nil},
		"EmptyQ":       {vals("q", ""), nil},
		"BlankQ":       {vals("q", "   "), nil},
		"EmptyCursor":  {vals("cursor", ""), nil},
		"EmptyCat":     {vals("category", ""), nil},
		"CategoryEN":   {vals("category", "Dairy"), catIs("Dairy")},
		"CategoryFR":   {vals("category", "produits LAITIERS"), catIs("Produits laitiers")},
		"CategoryOEUF": {vals("category", "oeufs"), catIs("Œufs")},
		"CategoryList": {vals("category", "Food"), catIs("Food")},
		"After":        {vals("issued_after", "2024-02-29"), func(r *rappel.Record) bool { return r.EventDate >= "2024-02-29" }},
		"Before":       {vals("issued_before", "2024-02-29"), func(r *rappel.Record) bool { return r.EventDate <= "2024-02-29" }},
		"Range": {vals("issued_after", "2016-03-01", "issued_before", "2019-06-11"),
			func(r *rappel.Record) bool { return r.EventDate >= "2016-03-01" && r.EventDate <= "2019-06-11" }},
		"OneDay": {vals("date_from", "2024-02-29", "date_to", "2024-02-29"),
			func(r *rappel.Record) bool { return r.EventDate == "2024-02-29" }},
		"Combined": {vals("recall_type", "food", "allergen", "milk", "issued_after", "2015-01-01", "hazard_class", "class_2"),
			func(r *rappel.Record) bool {
				return r.RecallType == "food" && slices.Contains(r.Allergens, "milk") && r.EventDate >= "2015-01-01" && r.HazardClass == "class_2"
			}},
		"QAndFilter": {vals("q", "quetzal", "recall_agency", "Health Canada"),
			func(r *rappel.Record) bool { return strings.HasPrefix(r.RecordID, "hc-990") }},
		"QAndOtherAgency": {vals("q", "quetzal", "recall_agency", "CFIA"), func(*rappel.Record) bool { return false }},
	}
	for _, alias := range issuedAfterNames {
		tests["Alias_"+alias] = filter{vals(alias, "2020-07-01"), func(r *rappel.Record) bool { return r.EventDate >= "2020-07-01" }}
	}
	for _, alias := range issuedBeforeNames {
		tests["Alias_"+alias] = filter{vals(alias, "2013-12-31"), func(r *rappel.Record) bool { return r.EventDate <= "2013-12-31" }}
	}
	for _, v := range rappel.RecallTypes {
		tests["Type_"+v] = filter{vals("recall_type", v), func(r *rappel.Record) bool { return r.RecallType == v }}
	}
	// Every agency the filter takes, those another test registered
	// included: the corpus has none of theirs, so they find nothing.
	for _, v := range rappel.KnownAgencies() {
		tests["Agency_"+v] = filter{vals("recall_agency", v), func(r *rappel.Record) bool { return r.Agency == v }}
	}
	for _, v := range rappel.HazardClasses {
		tests["Class_"+v] = filter{vals("hazard_class", v), func(r *rappel.Record) bool { return r.HazardClass == v }}
	}
	for _, v := range rappel.Allergens {
		tests["Allergen_"+v] = filter{vals("allergen", v), func(r *rappel.Record) bool { return slices.Contains(r.Allergens, v) }}
	}
	for _, name := range slices.Sorted(maps.Keys(tests)) {
		tt := tests[name]
		t.Run(name, func(t *testing.T) {
			want := e.expect(tt.keep, rappel.SortDate, false)
			got := e.all(t, tt.v)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: got %d records %v\nwant %d %v", tt.v.Encode(), len(got), got, len(want), want)
			}
		})
	}
	// The corpus must make those tests mean something.
	for _, v := range []url.Values{vals("category", "Dairy"), vals("allergen", "peanut"), vals("date_from", "2024-02-29", "date_to", "2024-02-29"),
		vals("recall_type", "cannabis"), vals("hazard_class", "class_3"), vals("recall_type", "food", "allergen", "milk", "hazard_class", "class_2")} {
		if e.count(t, v) == 0 {
			t.Errorf("the corpus has no record for %s", v.Encode())
		}
	}
}

func TestSearch_Lang(t *testing.T) {
	e := mustSearchEnv(t, corpusRecords(corpusSize, 2))
	for _, lang := range []string{"", "en", "fr"} {
		t.Run("lang="+lang, func(t *testing.T) {
			v := vals("q", "recalled OR rappelé OR defect")
			if lang != "" {
				v.Set("lang", lang)
			}
			p := e.page(t, with(v, "limit", "500"))
			if p.Count == 0 {
				t.Fatal("no results")
			}
			for _, r := range p.Results {
				orig := e.byID[r.RecordID]
				en, fr := r.Translations.EN != nil, r.Translations.FR != nil
				wantEN := orig.Translations.EN != nil && lang != "fr"
				wantFR := orig.Translations.FR != nil && lang != "en"
				if en != wantEN || fr != wantFR {
					t.Fatalf("%s: en %v fr %v, want %v %v", r.RecordID, en, fr, wantEN, wantFR)
				}
			}
		})
	}
}

func TestSearch_Sort(t *testing.T) {
	e := mustSearchEnv(t, corpusRecords(corpusSize, 3))
	for _, sortBy := range []string{"", rappel.SortDate, rappel.SortPublished, rappel.SortValue} {
		for _, order := range []string{"", "desc", "asc"} {
			v := vals()
			if sortBy != "" {
				v.Set("sort_by", sortBy)
			}
			if order != "" {
				v.Set("sort_order", order)
			}
			t.Run(v.Encode(), func(t *testing.T) {
				want := e.expect(nil, cmp.Or(sortBy, rappel.SortDate), order == "asc")
				if got := e.all(t, v); !slices.Equal(got, want) {
					t.Fatalf("got %v\nwant %v", got, want)
				}
				// A filter keeps the order, whichever way the index
				// walks it.
				keep := func(r *rappel.Record) bool { return r.RecallType == rappel.TypeVehicle }
				want = e.expect(keep, cmp.Or(sortBy, rappel.SortDate), order == "asc")
				if got := e.all(t, with(v, "recall_type", "vehicle")); !slices.Equal(got, want) {
					t.Fatalf("vehicles: got %v\nwant %v", got, want)
				}
			})
		}
	}
	t.Run("UnitsLastBothWays", func(t *testing.T) {
		for _, order := range []string{"asc", "desc"} {
			ids := e.all(t, vals("sort_by", "value", "sort_order", order))
			seenNone := false
			for _, id := range ids {
				none := e.byID[id].UnitsAffected == nil
				if seenNone && !none {
					t.Fatalf("%s: %s has units after a record without", order, id)
				}
				seenNone = seenNone || none
			}
			if !seenNone || e.byID[ids[0]].UnitsAffected == nil {
				t.Fatalf("%s: the corpus needs records with and without units", order)
			}
		}
	})
	t.Run("TiesExist", func(t *testing.T) {
		ids := e.all(t, vals())
		ties := 0
		for i := 1; i < len(ids); i++ {
			if e.byID[ids[i]].EventDate == e.byID[ids[i-1]].EventDate {
				ties++
			}
		}
		if ties < 50 {
			t.Fatalf("only %d ties on event_date: the order test is weak", ties)
		}
	})
}

// pagingQueries are the searches the paging tests walk, one per way the
// index pages (document order, a sorted permutation, sorted matches, BM25).
var pagingQueries = []url.Values{
	vals(),
	vals("sort_order", "asc"),
	vals("sort_by", "published"),
	vals("sort_by", "published", "sort_order", "asc", "recall_type", "food"),
	vals("q", "recalled", "sort_order", "asc"),
	vals("q", "recalled OR defect", "sort_by", "relevance"),
	vals("recall_type", "vehicle", "issued_after", "2015-01-01"),
	vals("q", "-salmonella", "lang", "fr"),
}

func TestSearch_Paging(t *testing.T) {
	e := mustSearchEnv(t, corpusRecords(corpusSize, 4))
	for _, v := range pagingQueries {
		t.Run(v.Encode(), func(t *testing.T) {
			whole := e.all(t, v)
			if len(whole) < 20 {
				t.Fatalf("only %d matches: a weak walk", len(whole))
			}
			if c := e.count(t, v); c != len(whole) {
				t.Fatalf("count %d, %d matches", c, len(whole))
			}
			pages := e.walk(t, v, 7)
			if walked := slices.Concat(pages...); !slices.Equal(walked, whole) {
				t.Fatalf("the walk visited %v\nwant %v", walked, whole)
			}
			// Offset windows are the walk's pages.
			for i, pg := range pages {
				got := e.page(t, with(v, "limit", "7", "offset", strconv.Itoa(7*i))).ids()
				if !slices.Equal(got, pg) {
					t.Fatalf("offset %d: %v, the walk's page %v", 7*i, got, pg)
				}
			}
			// Past the end: no results, the count still true.
			p := e.page(t, with(v, "offset", strconv.Itoa(len(whole))))
			if len(p.Results) != 0 || p.Count != len(whole) || p.NextCursor != nil {
				t.Fatalf("past the end: %d results, count %d, next %v", len(p.Results), p.Count, p.NextCursor)
			}
			// Limit and lang may change between pages of one walk.
			first := e.page(t, with(v, "limit", "3", "lang", "en"))
			next := e.page(t, with(v, "limit", "11", "lang", "fr", "cursor", *first.NextCursor))
			if got := append(first.ids(), next.ids()...); !slices.Equal(got, whole[:14]) {
				t.Fatalf("limit 3 then 11: %v, want %v", got, whole[:14])
			}
		})
	}
	t.Run("Value", func(t *testing.T) {
		// A value-sorted search pages by offset only: no cursor.
		v := vals("sort_by", "value", "limit", "50")
		whole := e.all(t, v)
		var got []string
		for off := 0; off < len(whole); off += 50 {
			p := e.page(t, with(v, "offset", strconv.Itoa(off)))
			if p.NextCursor != nil {
				t.Fatal("a value-sorted page has a next cursor")
			}
			got = append(got, p.ids()...)
		}
		if !slices.Equal(got, whole) {
			t.Fatalf("offset pages %v\nwant %v", got, whole)
		}
	})
	t.Run("DefaultLimit", func(t *testing.T) {
		p := e.page(t, vals())
		if len(p.Results) != rappel.DefaultLimit || p.NextCursor == nil || p.Count != len(e.byID) {
			t.Fatalf("%d results, next %v, count %d", len(p.Results), p.NextCursor, p.Count)
		}
	})
	t.Run("MaxOffset", func(t *testing.T) {
		p := e.page(t, vals("offset", strconv.Itoa(rappel.MaxOffset)))
		if len(p.Results) != 0 || p.Count != len(e.byID) {
			t.Fatalf("%d results, count %d", len(p.Results), p.Count)
		}
	})
}

// TestSearch_Body checks the exact bytes: the results are the records'
// bytes as the snapshot encoded them, spliced, not re-encoded.
func TestSearch_Body(t *testing.T) {
	e := mustSearchEnv(t, corpusRecords(corpusSize, 5))
	snap := e.catalog.Snapshot()
	splice := func(lang string, ids ...string) string {
		var parts []string
		for _, id := range ids {
			b, _ := snap.RecordJSON(id, lang)
			parts = append(parts, string(b))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	_, b := e.get(t, "q=quetzal&lang=en")
	want := `{"entity_type":"recall","count":4,"results":` + splice("en", "hc-99001", "hc-99002", "hc-99003", "hc-99004") +
		`,"next_cursor":null,"next":null}`
	if string(b) != want {
		t.Fatalf("body\n%s\nwant\n%s", b, want)
	}
	p := e.page(t, vals("q", "quetzal", "limit", "2"))
	_, b = e.get(t, "q=quetzal&limit=2")
	want = `{"entity_type":"recall","count":4,"results":` + splice("", "hc-99001", "hc-99002") +
		`,"next_cursor":"` + *p.NextCursor + `","next":"` + *p.NextCursor + `"}`
	if string(b) != want {
		t.Fatalf("body\n%s\nwant\n%s", b, want)
	}
	_, b = e.get(t, "q=nosuchwordanywhere")
	if want := `{"entity_type":"recall","count":0,"results":[],"next_cursor":null,"next":null}`; string(b) != want {
		t.Fatalf("body %s, want %s", b, want)
	}

	req, _ := http.NewRequest(http.MethodHead, e.base+"/recall?q=quetzal", nil)
	req.Header.Set("X-Gateway-Key", testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, get := e.get(t, "q=quetzal")
	if resp.StatusCode != 200 || resp.ContentLength != int64(len(get)) {
		t.Fatalf("HEAD: %d, Content-Length %d; GET body %d bytes", resp.StatusCode, resp.ContentLength, len(get))
	}
}

func TestAppendCursor(t *testing.T) {
	for in, want := range map[string]string{
		"":           `null`,
		"AQ-_9z":     `"AQ-_9z"`,
		`a"b\c`:      `"a\"b\\c"`,
		"é\x01<":     `"é\u0001\u003c"`,
		"\xff":       `"\ufffd"`,
		"plain+/=ok": `"plain+/=ok"`,
	} {
		if got := string(appendCursor(nil, in)); got != want {
			t.Errorf("appendCursor(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestSearch_Refresh walks half a search, swaps in a new snapshot, and
// finishes the walk: no record present in both snapshots is repeated or
// skipped, new records land where they sort, removed ones vanish.
func TestSearch_Refresh(t *testing.T) {
	for i, v := range []url.Values{
		vals(),
		vals("sort_order", "asc"),
		vals("sort_by", "published"),
		vals("sort_by", "published", "sort_order", "asc", "q", "recalled OR défaut"),
		vals("recall_type", "food", "issued_after", "2014-01-01"),
	} {
		t.Run(v.Encode(), func(t *testing.T) {
			old := corpusRecords(corpusSize, 6)
			e := mustSearchEnv(t, old)
			sortBy := cmp.Or(v.Get("sort_by"), rappel.SortDate)
			asc := v.Get("sort_order") == "asc"
			whole := e.all(t, v)

			// The first half of the walk.
			var visited []string
			p := e.page(t, with(v, "limit", "7"))
			for len(visited) < len(whole)/2 {
				visited = append(visited, p.ids()...)
				p = e.page(t, with(v, "limit", "7", "cursor", *p.NextCursor))
			}
			visited = append(visited, p.ids()...)
			cursor := *p.NextCursor
			last := e.byID[visited[len(visited)-1]]

			// The refresh: the cursor's own record and one record still
			// ahead are removed; new records are added before and after
			// the cursor's place, some tied with it.
			ahead := whole[len(visited)+3+i]
			removed := map[string]bool{last.RecordID: true, ahead: true}
			var recs []*rappel.Record
			for _, r := range old {
				if !removed[r.RecordID] {
					recs = append(recs, r)
				}
			}
			firstRec := e.byID[whole[0]]
			for j, tmpl := range []*rappel.Record{last, last, firstRec, e.byID[whole[len(whole)-1]], e.byID[whole[len(visited)+5]]} {
				c := *tmpl
				c.RecordID = []string{"hc-00001", "tc-9999999", "hc-50001", "hc-50002", "hc-50003"}[j]
				recs = append(recs, &c)
			}
			e.catalog.Swap(mustSnapshot(t, recs))
			newEnv := &searchEnv{byID: map[string]*rappel.Record{}}
			for _, r := range recs {
				newEnv.byID[r.RecordID] = r
			}

			// The rest of the walk, on the new snapshot.
			rest := slices.Concat(e.walk(t, with(v, "cursor", cursor), 7)...)
			seen := map[string]int{}
			for _, id := range append(slices.Clone(visited), rest...) {
				seen[id]++
			}
			for _, id := range whole {
				if _, still := newEnv.byID[id]; still && seen[id] != 1 {
					t.Errorf("%s (in both snapshots) seen %d times", id, seen[id])
				}
			}
			for _, id := range rest {
				if removed[id] {
					t.Errorf("removed record %s served after the refresh", id)
				}
			}
			// A new record shows up exactly when it sorts after the
			// cursor's place and matches.
			newMatches := e.all(t, v)
			for _, id := range []string{"hc-00001", "tc-9999999", "hc-50001", "hc-50002", "hc-50003"} {
				after := compareRecords(newEnv.byID[id], last, sortBy, asc) > 0
				want := 0
				if after && slices.Contains(newMatches, id) {
					want = 1
				}
				if seen[id] != want {
					t.Errorf("new record %s (after the cursor: %v) seen %d times, want %d", id, after, seen[id], want)
				}
			}
		})
	}
}

func mustSnapshot(tb testing.TB, recs []*rappel.Record) *index.Snapshot {
	tb.Helper()
	snap, err := index.Build(cloneRecords(recs), rappel.DatasetInfo{UpdatedAt: datasetTime, Source: "feeds"})
	if err != nil {
		tb.Fatal(err)
	}
	return snap
}

// TestSearch_RecallStatus follows CONTRIBUTING.md's recipe for a new
// filter through the real router: recall_status, one entry of
// rappel.Filters, keeps the records of one status in GET /recall, walks
// with cursors, is a facet that counts what it filters, and names the
// nearest value when misspelled.
func TestSearch_RecallStatus(t *testing.T) {
	e := mustSearchEnv(t, corpusRecords(corpusSize, 1))
	for _, st := range rappel.Statuses {
		v := vals("recall_status", st)
		want := e.expect(func(r *rappel.Record) bool { return r.Status == st }, rappel.SortDate, false)
		if len(want) == 0 {
			t.Fatalf("the corpus has no %s record: the test checks nothing", st)
		}
		if got := e.all(t, v); !slices.Equal(got, want) {
			t.Errorf("recall_status=%s: got %d records, want %d", st, len(got), len(want))
		}
		if got := slices.Concat(e.walk(t, v, 7)...); !slices.Equal(got, want) {
			t.Errorf("recall_status=%s walked with cursors: got %d records, want %d", st, len(got), len(want))
		}
		food := e.expect(func(r *rappel.Record) bool { return r.Status == st && r.RecallType == rappel.TypeFood }, rappel.SortDate, false)
		if got := e.all(t, with(v, "recall_type", rappel.TypeFood)); !slices.Equal(got, food) {
			t.Errorf("recall_status=%s&recall_type=food: got %d records, want %d", st, len(got), len(food))
		}
	}
	checkFacetsMatchFilters(t, e, vals())
	checkFacetsMatchFilters(t, e, vals("recall_status", rappel.StatusArchived))
	status, body := e.get(t, "recall_status=archive")
	if status != http.StatusUnprocessableEntity || !strings.Contains(string(body), "did you mean 'archived'") {
		t.Errorf("recall_status=archive: %d %s; want a 422 naming 'archived'", status, body)
	}
}
