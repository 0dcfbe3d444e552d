package edge

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

// facetGroup is one value of a facet, or a group of GET /recall/stats.
type facetGroup struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// facetsPage is a GET /recall answer with facets.
type facetsPage struct {
	Count  int                     `json:"count"`
	Facets map[string][]facetGroup `json:"facets"`
}

// facetGroupBy is the group_by of GET /recall/stats each facet counts as.
var facetGroupBy = map[string]string{
	"recall_type": "recall_type", "recall_agency": "agency", "hazard_class": "hazard_class",
	"allergen": "allergen", "category": "category", "recall_status": "status", "year": "year",
}

// facetFilter returns v narrowed to the records holding value of facet,
// with the filter GET /recall has for it.
func facetFilter(v url.Values, facet, value string) url.Values {
	if facet == "year" {
		// The year within the request's own date range, if it has one.
		after, before := value+"-01-01", value+"-12-31"
		if a := v.Get("issued_after"); a > after {
			after = a
		}
		if b := v.Get("issued_before"); b != "" && b < before {
			before = b
		}
		return with(v, "issued_after", after, "issued_before", before)
	}
	return with(v, facet, value)
}

// getJSON sends GET target with the test key and decodes a 200's body
// into out, returning the body.
func (e *searchEnv) getJSON(tb testing.TB, target string, out any) []byte {
	tb.Helper()
	var raw json.RawMessage
	(&lookupEnv{base: e.base}).ok(tb, target, &raw)
	if err := json.Unmarshal(raw, out); err != nil {
		tb.Fatalf("%s: %v: %s", target, err, raw)
	}
	return raw
}

// facets sends GET /recall with v and every facet.
func (e *searchEnv) facets(tb testing.TB, v url.Values) facetsPage {
	tb.Helper()
	var p facetsPage
	e.getJSON(tb, "/recall?"+with(v, "facets", strings.Join(rappel.FacetFields, ","), "limit", "1").Encode(), &p)
	if len(p.Facets) != len(rappel.FacetFields) {
		tb.Fatalf("%s: facets %v", v.Encode(), p.Facets)
	}
	return p
}

// checkFacetsMatchStats checks that the facets of every record, and of
// the records of a period, are the groups of GET /recall/stats.
func checkFacetsMatchStats(t *testing.T, e *searchEnv) {
	t.Helper()
	for _, period := range []string{"all", "3y"} {
		for _, facet := range rappel.FacetFields {
			var st map[string]any
			raw := e.getJSON(t, "/recall/stats?period="+period+"&group_by="+facetGroupBy[facet], &st)
			var groups struct {
				IssuedAfter string       `json:"issued_after"`
				Total       int          `json:"total"`
				Groups      []facetGroup `json:"-"`
			}
			_ = json.Unmarshal(raw, &groups)
			var by map[string]json.RawMessage
			_ = json.Unmarshal(raw, &by)
			if err := json.Unmarshal(by["by_"+facetGroupBy[facet]], &groups.Groups); err != nil {
				t.Fatal(err)
			}
			v := url.Values{}
			if period != "all" {
				v.Set("issued_after", groups.IssuedAfter)
			}
			p := e.facets(t, v)
			if p.Count != groups.Total {
				t.Errorf("period %s: GET /recall counts %d, the statistics %d", period, p.Count, groups.Total)
			}
			if got := p.Facets[facet]; !slices.Equal(got, groups.Groups) {
				t.Errorf("period %s, facet %s:\n got %v\nwant %v (GET /recall/stats)", period, facet, got, groups.Groups)
			}
			if len(groups.Groups) == 0 && period == "all" {
				t.Errorf("facet %s has no value: the test checks nothing", facet)
			}
		}
	}
}

// checkFacetsMatchFilters checks that each value's count of the facets of
// v is what GET /recall counts with v and that value as a filter.
func checkFacetsMatchFilters(t *testing.T, e *searchEnv, v url.Values) {
	t.Helper()
	p := e.facets(t, v)
	for facet, groups := range p.Facets {
		total := 0
		for i, g := range groups {
			if n := e.count(t, facetFilter(v, facet, g.Value)); n != g.Count {
				t.Errorf("%s: facet %s value %q counts %d, GET /recall with it as a filter %d", v.Encode(), facet, g.Value, g.Count, n)
			}
			if i > 0 && (groups[i-1].Count < g.Count || groups[i-1].Count == g.Count && groups[i-1].Value >= g.Value) {
				t.Errorf("%s: facet %s is not by count, then value: %v", v.Encode(), facet, groups)
			}
			total += g.Count
		}
		// Every record has exactly one of these.
		if (facet == "recall_type" || facet == "recall_agency" || facet == "recall_status" || facet == "year") && total != p.Count {
			t.Errorf("%s: facet %s adds up to %d of %d matches", v.Encode(), facet, total, p.Count)
		}
	}
}

func TestFacets_Corpus(t *testing.T) {
	e := mustSearchEnv(t, corpusRecords(corpusSize, 21))
	checkFacetsMatchStats(t, e)
	for _, v := range []url.Values{
		{},
		vals("q", "cheese"),
		vals("q", "rappel OR recall", "recall_type", "food"),
		vals("q", "-salmonella", "issued_after", "2016-01-01", "issued_before", "2022-06-30"),
		vals("hazard_class", "class_1", "lang", "fr"),
		vals("q", "zzqxv"),
	} {
		checkFacetsMatchFilters(t, e, v)
	}
}

func TestFacets_Bundle(t *testing.T) {
	catalog, _ := mustBundleCatalog(t)
	s, _ := MustServer(t, catalog)
	s.Logger = discardLogger()
	e := &searchEnv{catalog: catalog, base: MustHTTP(t, s.Handler()).URL}
	checkFacetsMatchStats(t, e)
	for _, v := range []url.Values{vals("q", "listeria"), vals("q", "airbag", "recall_agency", "Transport Canada"), vals("q", "undeclared milk")} {
		checkFacetsMatchFilters(t, e, v)
	}
}

// TestFacets_Shape checks the facets member: only when asked, the fields
// in the order asked, an empty list for a field no match has, and the
// rest of the answer unchanged.
func TestFacets_Shape(t *testing.T) {
	e := mustSearchEnv(t, corpusRecords(60, 22))
	_, plain := e.get(t, "q=cheese&limit=3")
	if strings.Contains(string(plain), `"facets"`) {
		t.Fatalf("facets without asking: %s", plain)
	}
	_, with := e.get(t, "q=cheese&limit=3&facets=year,allergen")
	head, facets, ok := strings.Cut(string(with), `,"facets":`)
	if !ok || head+"}" != string(plain) {
		t.Fatalf("with facets the answer is not the same with facets added:\n%s\n%s", plain, with)
	}
	if !strings.HasPrefix(facets, `{"year":[`) || !strings.Contains(facets, `],"allergen":[`) {
		t.Errorf("facets not in the order asked: %s", facets)
	}
	_, none := e.get(t, "q=zzqxv&facets=category")
	if !strings.HasSuffix(string(none), `"facets":{"category":[]}}`) {
		t.Errorf("no match: %s", none)
	}
}

// TestFacets_BadInput checks the 422 sentences of bad facets and highlight
// values, all reported at once.
func TestFacets_BadInput(t *testing.T) {
	e := mustSearchEnv(t, corpusRecords(20, 23))
	for _, c := range []struct{ query, msg string }{
		{"facets=foo", "Query parameter 'facets' should be facet names separated by commas, not 'foo'; use 'category', 'recall_type', 'recall_agency', 'hazard_class', 'allergen', 'recall_status' or 'year'."},
		{"facets=year,recal_type", "Query parameter 'facets' should be facet names separated by commas, not 'recal_type'; did you mean 'recall_type'?"},
		{"facets=year&facets=category", "Query parameter 'facets' was given 2 times; give it once."},
		{"facets=year,year", "Query parameter 'facets' names 'year' twice; give each facet once."},
		{"facets=", "Query parameter 'facets' is empty; list one or more facets separated by commas, as in 'recall_type,year'."},
		{"highlight=maybe", "Query parameter 'highlight' should be 'true' or 'false', not 'maybe'."},
		{"highlight=ture", "Query parameter 'highlight' should be 'true' or 'false', not 'ture'; did you mean 'true'?"},
		{"highlights=true", "Query parameter 'highlights' is unknown; did you mean 'highlight'?"},
		{"facet=year", "Query parameter 'facet' is unknown; did you mean 'facets'?"},
	} {
		status, b := e.get(t, c.query)
		var body struct{ Detail []rappel.Invalid }
		if err := json.Unmarshal(b, &body); err != nil || status != http.StatusUnprocessableEntity || len(body.Detail) != 1 {
			t.Errorf("%s: status %d: %s", c.query, status, b)
			continue
		}
		if got := body.Detail[0].Msg; got != c.msg {
			t.Errorf("%s:\n got %q\nwant %q", c.query, got, c.msg)
		}
	}
	status, b := e.get(t, "facets=yaer&highlight=yes&limit=0")
	var body struct{ Detail []rappel.Invalid }
	if err := json.Unmarshal(b, &body); err != nil || status != http.StatusUnprocessableEntity || len(body.Detail) != 3 {
		t.Errorf("three bad parameters: status %d: %s", status, b)
	}
}

// TestHighlight_Router checks highlights through the router: marked and
// escaped in the JSON the client reads, in the language asked for, and
// absent unless asked.
func TestHighlight_Router(t *testing.T) {
	recs := testRecords()
	recs[2].Translations.EN.Title = `<script>alert("toys")</script> & 'stacking' toys recalled`
	e := mustSearchEnv(t, recs)
	_, plain := e.get(t, "q=toys")
	if _, off := e.get(t, "q=toys&highlight=false"); string(off) != string(plain) {
		t.Errorf("highlight=false changes the answer:\n%s\n%s", plain, off)
	}
	if strings.Contains(string(plain), "highlights") {
		t.Errorf("highlights without asking: %s", plain)
	}
	_, b := e.get(t, "q=toys&highlight=true")
	want := `,"highlights":{"en":{"title":"&lt;script&gt;alert(&#34;<em>toys</em>&#34;)&lt;/script&gt; &amp; &#39;stacking&#39; <em>toys</em> recalled"}}}`
	if !strings.Contains(string(b), want) {
		t.Errorf("q=toys&highlight=true:\n%s\nwant it to hold %s", b, want)
	}
	var p recallPage
	if err := json.Unmarshal(b, &p); err != nil || len(p.Results) != 1 || p.Results[0].RecordID != "hc-74012" {
		t.Fatalf("%v: %s", err, b)
	}
	_, b = e.get(t, "q=cheddar%20listeria&highlight=true&lang=fr")
	want = `"highlights":{"fr":{"title":"Rappel de <em>cheddar</em> vieilli de marque Laiterie Charlevoix en raison de <em>Listeria</em> monocytogenes","product":"Aged <em>cheddar</em> 200 g","hazard":"Les aliments contaminés par la bactérie <em>Listeria</em> monocytogenes peuvent sembler ne pas être avariés."}}}`
	if !strings.Contains(string(b), want) {
		t.Errorf("lang=fr:\n%s\nwant it to hold %s", b, want)
	}
	_, b = e.get(t, "recall_type=vehicle&highlight=true&facets=year")
	if !strings.Contains(string(b), `"highlights":{}}],`) || !strings.HasSuffix(string(b), `"facets":{"year":[{"value":"2025","count":1}]}}`) {
		t.Errorf("without q: %s", b)
	}
}

// BenchmarkFacets serves GET /recall pages of 100 results from the real
// bundle with every facet, with highlights, and with neither, through the
// whole handler.
func BenchmarkFacets(b *testing.B) {
	catalog, _ := mustBundleCatalog(b)
	s, _ := MustServer(b, catalog)
	s.Logger = discardLogger()
	h := s.Handler()
	all := "&facets=" + strings.Join(rappel.FacetFields, ",")
	for _, sh := range []struct{ name, query string }{
		{"no_q", ""}, {"no_q_facets", all},
		{"common_word", "q=recalled"}, {"common_word_facets", "q=recalled" + all},
		{"common_word_highlight", "q=recalled&highlight=true"},
		{"or_filter", "q=listeria+OR+salmonella&recall_type=food"}, {"or_filter_facets", "q=listeria+OR+salmonella&recall_type=food" + all},
		{"or_filter_highlight", "q=listeria+OR+salmonella&recall_type=food&highlight=true"},
	} {
		b.Run(sh.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, "/recall?"+sh.query+"&limit=100", nil)
			r.Header.Set("X-Gateway-Key", testKey)
			w := &benchWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				w.status, w.n = 0, 0
				h.ServeHTTP(w, r)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
			b.ReportMetric(float64(w.n), "B/page")
		})
	}
}
