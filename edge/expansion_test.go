package edge

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel/kv/index"
)

// Queries whose words the index expands, as an attacker sends them: one
// word as long as q allows, and as many misspelled long words as it
// holds (docs/api.md, "Limits").
var (
	longWordQ   = strings.Repeat("x", 512)
	misspelledQ = strings.TrimSpace(strings.Repeat("xqzlisteriaxq ", 30))
)

// bundleServer serves the bundle's segment with a budget of budget.
func bundleServer(t *testing.T, budget time.Duration) (*Server, string) {
	t.Helper()
	inner := &index.Catalog{}
	inner.Swap(mustBundleSegment(t))
	s, _ := MustServer(t, inner)
	s.Logger = discardLogger()
	s.QueryBudget = budget
	return s, MustHTTP(t, s.Handler()).URL
}

// TestExpansion_LongWordIsNotExpanded: a word longer than any word is
// matched by its own forms, never corrected or split, so that it costs
// what any word costs and is answered, not cut at the budget (it kept a
// core busy for over a minute, far past its 504). Here the budget is
// short enough that correcting it would miss it.
func TestExpansion_LongWordIsNotExpanded(t *testing.T) {
	_, base := bundleServer(t, 500*time.Millisecond)
	for _, path := range []string{
		"/recall?" + url.Values{"q": {longWordQ}}.Encode(),
		"/recall?" + url.Values{"q": {longWordQ}, "prefix": {"last"}}.Encode(),
		"/recall/suggest?" + url.Values{"q": {longWordQ}}.Encode(),
	} {
		code, h, body := getWith(t, base, path)
		if code != http.StatusOK || h.Get("Search-Cost") != "1" {
			t.Errorf("%.60s…: %d, Search-Cost %q, want 200 and 1: %.300s", path, code, h.Get("Search-Cost"), body)
		}
	}
}

// TestExpansion_PricedAndAdmitted: thirty misspelled words cost what
// correcting them costs, and so run in the pool of expensive searches
// and pay their units, on GET /recall, its suggestions and the Atom feed
// (they were priced 1 and ran outside it, with no key on the Atom feed).
func TestExpansion_PricedAndAdmitted(t *testing.T) {
	s, base := bundleServer(t, time.Minute)
	for i, path := range []string{
		"/recall?" + url.Values{"q": {misspelledQ}}.Encode(),
		"/recall/suggest?" + url.Values{"q": {misspelledQ}}.Encode(),
		"/recall/feed.atom?" + url.Values{"q": {misspelledQ}}.Encode(),
	} {
		code, h, body := getWith(t, base, path)
		cost, _ := strconv.Atoi(h.Get("Search-Cost"))
		if code != http.StatusOK || cost < DefaultExpensiveCost {
			t.Errorf("%.40s…: %d, Search-Cost %q, want 200 and %d or more: %.300s", path, code, h.Get("Search-Cost"), DefaultExpensiveCost, body)
		}
		if n := admissions(s, "admitted"); n != float64(i+1) {
			t.Errorf("%.40s…: %v searches admitted to the pool, want %d", path, n, i+1)
		}
	}
}

// TestExpansion_AnonymousLimitedPerAddress: searches without a key (the
// Atom feed) spend the client address's bucket in cost units: once it is
// empty, a 429 with Retry-After and a sentence, while another address,
// and keyed requests, still get answers.
func TestExpansion_AnonymousLimitedPerAddress(t *testing.T) {
	s, base := bundleServer(t, time.Minute)
	s.AnonymousPlan.Name, s.AnonymousPlan.Rate, s.AnonymousPlan.Burst = "anonymous", 0.001, 20
	feed := "/recall/feed.atom?" + url.Values{"q": {misspelledQ}}.Encode()
	res, body := exchangeHTTP(t, "GET", base+feed, false, nil)
	cost, _ := strconv.Atoi(res.Header.Get("Search-Cost"))
	if res.StatusCode != http.StatusOK || cost < 2 {
		t.Fatalf("first feed: %d, Search-Cost %q: %.300s", res.StatusCode, res.Header.Get("Search-Cost"), body)
	}
	// The bucket of 20 units holds less than another such search once
	// the first took its cost (all of it, at most the burst).
	refused := false
	for range 20 / min(cost, 20) {
		res, body = exchangeHTTP(t, "GET", base+feed, false, nil)
		if res.StatusCode == http.StatusTooManyRequests {
			refused = true
			break
		}
	}
	if !refused {
		t.Fatalf("after %d units from one address: %d, want 429", 20, res.StatusCode)
	}
	if res.Header.Get("Retry-After") == "" || !strings.Contains(body, "without an API key from this address") {
		t.Errorf("429: Retry-After %q, %s", res.Header.Get("Retry-After"), body)
	}
	// Once the bucket holds less than a unit, a request is refused before
	// its search is estimated: no Search-Cost.
	cheapFeed := "/recall/feed.atom?" + url.Values{"q": {"listeria"}}.Encode()
	for range 30 {
		res, body = exchangeHTTP(t, "GET", base+cheapFeed, false, nil)
		if res.StatusCode == http.StatusTooManyRequests && strings.Contains(body, "a request costs 1 unit") {
			break
		}
	}
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Search-Cost") != "" {
		t.Errorf("an empty bucket: %d, Search-Cost %q: %s; want a 429 before the estimate", res.StatusCode, res.Header.Get("Search-Cost"), body)
	}
	// A keyed search from the same address is the key's to limit.
	if code, _, body := getWith(t, base, cheapSearch); code != http.StatusOK {
		t.Errorf("keyed search from the same address: %d %s", code, body)
	}
	// Another address has a bucket of its own.
	if err := s.limitAnonymous(httptest.NewRecorder(), "192.0.2.7:5000", 1, 0); err != nil {
		t.Errorf("another address: %v", err)
	}
}
