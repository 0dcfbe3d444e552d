package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv/index"
)

// The real bundle, when the binary embeds one (`make bundle`), loaded once
// per test binary: building its snapshot takes seconds.
var realBundle struct {
	once     sync.Once
	manifest bundle.Manifest
	catalog  *index.Catalog
	err      error
}

// mustBundleCatalog returns a catalog of the embedded bundle's records, and
// its manifest, skipping when there is no bundle.
func mustBundleCatalog(tb testing.TB) (*index.Catalog, bundle.Manifest) {
	tb.Helper()
	b := &realBundle
	b.once.Do(func() {
		b.manifest, b.err = bundle.ReadManifest(bundle.Embedded())
		if b.err != nil {
			return
		}
		var recs []*rappel.Record
		if b.err = bundle.ReadRecords(bundle.Embedded(), func(r *rappel.Record) error {
			recs = append(recs, r)
			return nil
		}); b.err != nil {
			return
		}
		var snap *index.Snapshot
		if snap, b.err = index.Build(recs, rappel.DatasetInfo{UpdatedAt: b.manifest.BuiltAt, Source: "bundle"}); b.err == nil {
			b.catalog = &index.Catalog{}
			b.catalog.Swap(snap)
		}
	})
	switch {
	case errors.Is(b.err, bundle.ErrEmpty) && os.Getenv("RAPPEL_TEST_BUNDLE") == "":
		tb.Skip("no data bundle is embedded; run `make bundle` to test and benchmark against the real data")
	case b.err != nil:
		tb.Fatal(b.err)
	}
	return b.catalog, b.manifest
}

// idPage is a GET /recall page decoded no further than its record ids.
type idPage struct {
	Count   int `json:"count"`
	Results []struct {
		RecordID string `json:"record_id"`
	} `json:"results"`
	NextCursor *string `json:"next_cursor"`
}

// serveSearch sends GET /recall?query to h and decodes the page, failing
// on any other status.
func serveSearch(tb testing.TB, h http.Handler, query string) idPage {
	tb.Helper()
	r := httptest.NewRequest(http.MethodGet, "/recall?"+query, nil)
	r.Header.Set("X-Gateway-Key", testKey)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var p idPage
	if w.Code != http.StatusOK {
		tb.Fatalf("%s: status %d: %.300s", query, w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return p
}

// TestSearch_Bundle checks GET /recall against the real data: counts agree
// with the bundle's manifest, and a cursor walk of the whole dataset, far
// past the offset limit, visits every record once.
func TestSearch_Bundle(t *testing.T) {
	catalog, m := mustBundleCatalog(t)
	s, _ := MustServer(t, catalog)
	s.Logger = discardLogger()
	h := s.Handler()
	if p := serveSearch(t, h, ""); p.Count != m.Records {
		t.Fatalf("count %d, the manifest says %d", p.Count, m.Records)
	}
	for typ, n := range m.ByType {
		if p := serveSearch(t, h, "recall_type="+typ+"&limit=1"); p.Count != n {
			t.Errorf("%s: count %d, the manifest says %d", typ, p.Count, n)
		}
	}
	for _, q := range []string{"", "sort_by=published&sort_order=asc", "q=recalled+-salmonella"} {
		seen := map[string]bool{}
		query := q + "&limit=500"
		p := serveSearch(t, h, query)
		total := p.Count
		for {
			for _, r := range p.Results {
				if seen[r.RecordID] {
					t.Fatalf("%s: %s seen twice", q, r.RecordID)
				}
				seen[r.RecordID] = true
			}
			if p.NextCursor == nil {
				break
			}
			p = serveSearch(t, h, query+"&cursor="+*p.NextCursor)
		}
		if len(seen) != total || total <= rappel.MaxOffset {
			t.Errorf("%s: walked %d records of %d", q, len(seen), total)
		}
	}
	for _, pair := range [][2]string{{"sécurité", "securite"}, {"œufs", "oeufs"}, {"ÉLEVÉ", "eleve"}} {
		a := serveSearch(t, h, "limit=1&q="+url.QueryEscape(pair[0])).Count
		b := serveSearch(t, h, "limit=1&q="+url.QueryEscape(pair[1])).Count
		if a != b {
			t.Logf("accent folding: %s finds %d records, %s %d (see TestSearch_QueryText/AccentsBeforeStemming)", pair[0], a, pair[1], b)
		}
	}
}

// benchWriter is a ResponseWriter that keeps nothing, so that benchmarks
// measure the handler rather than a recorder's buffer.
type benchWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *benchWriter) Header() http.Header { return w.h }

func (w *benchWriter) WriteHeader(code int) { w.status = code }

func (w *benchWriter) Write(b []byte) (int, error) {
	w.n += len(b)
	return len(b), nil
}

// BenchmarkSearch serves GET /recall pages of 100 results from the real
// bundle through the whole handler (middlewares, router, key check,
// parameters, search, response), logs discarded.
func BenchmarkSearch(b *testing.B) {
	catalog, _ := mustBundleCatalog(b)
	s, _ := MustServer(b, catalog)
	s.Logger = discardLogger()
	h := s.Handler()
	second := serveSearch(b, h, "q=recalled&limit=100")
	shapes := []struct{ name, query string }{
		{"no_q", ""},
		{"one_filter", "recall_type=vehicle"},
		{"common_word", "q=recalled"},
		{"two_word_and", "q=pieces+metal"},
		{"or", "q=listeria+OR+salmonella"},
		{"phrase", "q=%22pieces+of+metal%22"},
		{"negation", "q=recalled+-salmonella"},
		{"q_filters_dates", "q=recalled&recall_type=food&issued_after=2005-01-01&issued_before=2020-12-31"},
		{"cursor_page", "q=recalled&cursor=" + *second.NextCursor},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			query := sh.query + "&limit=100"
			if p := serveSearch(b, h, query); len(p.Results) != 100 {
				b.Fatalf("%s: %d results, want a page of 100", query, len(p.Results))
			}
			r := httptest.NewRequest(http.MethodGet, "/recall?"+query, nil)
			r.Header.Set("X-Gateway-Key", testKey)
			w := &benchWriter{h: http.Header{}}
			b.ReportAllocs()
			var lat []time.Duration
			for b.Loop() {
				clear(w.h)
				w.status, w.n = 0, 0
				start := time.Now()
				h.ServeHTTP(w, r)
				lat = append(lat, time.Since(start))
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
			// Percentiles of the requests served: the targets are
			// p50 and p99, which a mean hides.
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.SetBytes(int64(w.n))
			b.ReportMetric(float64(w.n), "B/page")
		})
	}
}

// BenchmarkSearch_Corpus serves two of BenchmarkSearch's shapes over the
// generated test corpus, for machines without a bundle.
func BenchmarkSearch_Corpus(b *testing.B) {
	s, _ := MustServer(b, MustCatalog(b, corpusRecords(corpusSize, 13)))
	s.Logger = discardLogger()
	h := s.Handler()
	for _, sh := range []struct{ name, query string }{{"no_q", "limit=100"}, {"common_word", "q=recalled&limit=100"}} {
		b.Run(sh.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, "/recall?"+sh.query, nil)
			r.Header.Set("X-Gateway-Key", testKey)
			w := &benchWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, r)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}

// writesRecorder is a recorder that also keeps the size of each Write.
type writesRecorder struct {
	*httptest.ResponseRecorder
	writes []int
}

func (w *writesRecorder) Write(b []byte) (int, error) {
	w.writes = append(w.writes, len(b))
	return w.ResponseRecorder.Write(b)
}

// TestSearch_PageEndsInItsBulkWrite checks that a page of the bundle
// reaches the connection in two writes, its few bytes of head and then the
// rest, results and tail together: net/http then sends it in as many
// system calls as a handler writing it whole, where a tail written apart
// costs one more (and a TCP segment, and a wake-up of the client). The body
// is the same either way: valid JSON ending with the cursor.
func TestSearch_PageEndsInItsBulkWrite(t *testing.T) {
	catalog, _ := mustBundleCatalog(t)
	s, _ := MustServer(t, catalog)
	s.Logger = discardLogger()
	h := s.Handler()
	for _, query := range []string{"", "q=recalled", "recall_type=vehicle&facets=recall_type"} {
		serveSearch(t, h, query) // fills the page buffers' pool
		r := httptest.NewRequest(http.MethodGet, "/recall?"+query, nil)
		r.Header.Set("X-Gateway-Key", testKey)
		w := &writesRecorder{ResponseRecorder: httptest.NewRecorder()}
		h.ServeHTTP(w, r)
		var p idPage
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Code != http.StatusOK {
			t.Fatalf("%q: %d %v", query, w.Code, err)
		}
		if len(w.writes) != 2 || w.writes[0] > 100 || !bytes.HasSuffix(w.Body.Bytes(), []byte("}")) {
			t.Errorf("%q: %d body bytes written as %v, want a short head then the rest in one write", query, w.Body.Len(), w.writes)
		}
	}
}
