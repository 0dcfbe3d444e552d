package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
)

// The searches admission is about: the most common words of the records
// ORed, as many as q allows, by relevance; and a cheap one.
var (
	expensiveQ      = strings.Join(strings.Fields("the and of to in for is on with by from at as be this that may not are product products recall recalled food contain contains due risk health canada distributed sold"), " OR ")
	expensiveSearch = "/recall?" + url.Values{"q": {expensiveQ}, "sort_by": {"relevance"}, "limit": {"1"}}.Encode()
	cheapSearch     = "/recall?" + url.Values{"q": {"listeria"}, "limit": {"5"}}.Encode()
	// expensivePhrasesQ is common phrases ORed: expensive in date order
	// too, which the export and the Atom feed use.
	expensivePhrasesQ = `"of the" OR "in the" OR "to the" OR "may contain" OR "for the" OR "on the" OR "due to" OR "has been" OR "with the" OR "from the" OR "at the" OR "by the" OR "is being" OR "may be" OR "of a" OR "in a"`
)

// gatedCatalog serves the bundle's segment, holding every search of
// expensiveQ in Search until the gate opens (or its context ends), to
// fill the pool of expensive searches at will. The estimate and the
// search itself are the real index's.
type gatedCatalog struct {
	*index.Catalog
	gate    chan struct{}
	entered chan struct{}
	// yielded counts the held searches that ran with the pool's
	// yielding context.
	yielded atomic.Int32
}

func (c *gatedCatalog) Snapshot() rappel.Snapshot {
	return gatedSnapshot{View: c.Current(), c: c}
}

type gatedSnapshot struct {
	*index.View
	c *gatedCatalog
}

func (g gatedSnapshot) Search(ctx context.Context, cq rappel.CheckedSearch) (*rappel.Page, error) {
	if q := cq.Search(); q.Query != nil && q.Query.String() == expensiveQ {
		if ctx.Value(yieldingKey{}) != nil {
			g.c.yielded.Add(1)
		}
		g.c.entered <- struct{}{}
		select {
		case <-g.c.gate:
		case <-ctx.Done():
		}
	}
	return g.View.Search(ctx, cq)
}

// mustGatedServer returns a server of the bundle's segment whose pool of
// expensive searches has one slot and a queue of one.
func mustGatedServer(t *testing.T) (*Server, *gatedCatalog, string) {
	t.Helper()
	inner := &index.Catalog{}
	inner.Swap(mustBundleSegment(t))
	c := &gatedCatalog{Catalog: inner, gate: make(chan struct{}), entered: make(chan struct{}, 8)}
	s, _ := MustServer(t, c)
	s.Logger = discardLogger()
	s.QueryBudget = time.Minute // the queue's own wait ends first
	s.ExpensiveSlots, s.ExpensiveQueue, s.ExpensiveWait = 1, 1, time.Minute
	return s, c, MustHTTP(t, s.Handler()).URL
}

// getWith sends GET base+path with the test key and returns the status,
// headers and body.
func getWith(t *testing.T, base, path string) (int, http.Header, string) {
	t.Helper()
	res, body := fetch(t, base+path, map[string]string{"X-Gateway-Key": testKey})
	return res.StatusCode, res.Header, body
}

// admissions is the count of expensive searches with outcome.
func admissions(s *Server, outcome string) float64 {
	var m dto.Metric
	_ = s.initMetrics().admitted.WithLabelValues(outcome).Write(&m)
	return m.GetCounter().GetValue()
}

// TestAdmission_ExpensiveSearchRunsInPool checks that the expensive search
// is estimated at many cost units and admitted to the pool, and that a
// cheap one costs 1 unit and is not.
func TestAdmission_ExpensiveSearchRunsInPool(t *testing.T) {
	inner := &index.Catalog{}
	inner.Swap(mustBundleSegment(t))
	s, _ := MustServer(t, inner)
	s.Logger = discardLogger()
	base := MustHTTP(t, s.Handler()).URL

	code, h, body := getWith(t, base, expensiveSearch)
	if code != http.StatusOK {
		t.Fatalf("expensive search: %d %.300s", code, body)
	}
	cost, _ := strconv.Atoi(h.Get("Search-Cost"))
	if cost < DefaultExpensiveCost {
		t.Errorf("expensive search: Search-Cost %q, want %d or more", h.Get("Search-Cost"), DefaultExpensiveCost)
	}
	if n := admissions(s, "admitted"); n != 1 {
		t.Errorf("expensive search: %v admitted to the pool, want 1", n)
	}
	code, h, body = getWith(t, base, cheapSearch)
	if code != http.StatusOK || h.Get("Search-Cost") != "1" {
		t.Errorf("cheap search: %d, Search-Cost %q, want 200 and 1: %.300s", code, h.Get("Search-Cost"), body)
	}
	if n := admissions(s, "admitted"); n != 1 {
		t.Errorf("after the cheap search: %v admitted to the pool, want still 1", n)
	}
}

// TestAdmission_PrefixesORedRunInPool: eight two-letter prefixes ORed by
// relevance score every record for some 800 terms, most of a second of a
// core; they are priced from the terms the prefixes begin, hundreds of
// units, and so run in the pool (they were priced 7 units, under the
// pool's threshold, and ran beside everything else).
func TestAdmission_PrefixesORedRunInPool(t *testing.T) {
	inner := &index.Catalog{}
	inner.Swap(mustBundleSegment(t))
	s, _ := MustServer(t, inner)
	s.Logger = discardLogger()
	s.QueryBudget = time.Minute // the search is not the budget's test
	base := MustHTTP(t, s.Handler()).URL

	q := "re* OR co* OR pr* OR in* OR de* OR ca* OR pa* OR ma*"
	code, h, body := getWith(t, base, "/recall?"+url.Values{"q": {q}, "sort_by": {"relevance"}, "limit": {"10"}}.Encode())
	if code != http.StatusOK {
		t.Fatalf("eight prefixes ORed: %d %.300s", code, body)
	}
	if cost, _ := strconv.Atoi(h.Get("Search-Cost")); cost < 100 {
		t.Errorf("eight prefixes ORed by relevance: Search-Cost %q, want 100 or more", h.Get("Search-Cost"))
	}
	if n := admissions(s, "admitted"); n != 1 {
		t.Errorf("eight prefixes ORed by relevance: %v admitted to the pool, want 1", n)
	}
}

// TestAdmission_FullQueue fills the pool's one slot and its queue of one
// with expensive searches held in the index, and checks that the next
// one is a 503 with Retry-After and a sentence, while records by id,
// health, probes and cheap searches answer at once; once the held
// searches go on, both answer 200.
func TestAdmission_FullQueue(t *testing.T) {
	s, c, base := mustGatedServer(t)
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, _ = getWith(t, base, expensiveSearch)
		}()
		if i == 0 {
			<-c.entered // the first holds the slot
		}
	}
	for s.pool().queued.Load() != 1 { // the second waits in the queue
		time.Sleep(time.Millisecond)
	}

	code, h, body := getWith(t, base, expensiveSearch)
	if code != http.StatusServiceUnavailable {
		t.Fatalf("third expensive search: %d, want 503: %.300s", code, body)
	}
	var e struct{ Detail string }
	if err := json.Unmarshal([]byte(body), &e); err != nil || !strings.Contains(e.Detail, "too many expensive searches are running; retry in 60 s") || !strings.Contains(e.Detail, "narrow the search") {
		t.Errorf("503 body %q (%v), want the sentence saying why and what to do", body, err)
	}
	if h.Get("Retry-After") != "60" {
		t.Errorf("503 Retry-After %q, want 60 (the query budget, the longest a slot is held)", h.Get("Retry-After"))
	}
	for _, path := range []string{"/recall/" + bundleRecordID(t), "/health", "/livez", "/readyz", cheapSearch} {
		if code, _, body := getWith(t, base, path); code != http.StatusOK {
			t.Errorf("GET %s while the pool is full: %d %.200s", path, code, body)
		}
	}
	if n := admissions(s, "queue_full"); n != 1 {
		t.Errorf("%v searches refused for a full queue, want 1", n)
	}
	// The export and the Atom feed run the same search, admitted the
	// same way: neither gets around the pool, and their 503 is the
	// document's.
	d := mustOpenAPI(t)
	for _, path := range []string{
		"/recall/export?" + url.Values{"q": {expensivePhrasesQ}}.Encode(),
		"/recall/feed.atom?" + url.Values{"q": {expensivePhrasesQ}}.Encode(),
	} {
		c := docCase{"GET", path, "", map[string]string{"X-Gateway-Key": testKey}, http.StatusServiceUnavailable}
		resp, body := docRequest(t, base, c)
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("GET %s while the pool is full: %d, want 503: %.200s", path, resp.StatusCode, body)
			continue
		}
		checkDocumented(t, d, c, resp, body)
	}

	close(c.gate)
	wg.Wait()
	if codes[0] != http.StatusOK || codes[1] != http.StatusOK {
		t.Errorf("the held and the queued searches answered %v, want 200 and 200", codes)
	}
	if n := admissions(s, "queued"); n != 1 {
		t.Errorf("%v searches admitted from the queue, want 1", n)
	}
	if n := c.yielded.Load(); n != 2 {
		t.Errorf("%d of the 2 searches that ran in the pool had its yielding context", n)
	}
}

// TestAdmission_WaitExpires checks that a search that found no slot
// within the pool's wait is a 503, and one whose budget ends while it
// waits is a 504: the wait counts against the budget.
func TestAdmission_WaitExpires(t *testing.T) {
	s, c, base := mustGatedServer(t)
	done := make(chan int)
	go func() {
		code, _, _ := getWith(t, base, expensiveSearch)
		done <- code
	}()
	<-c.entered

	s.pool().wait = time.Millisecond
	if code, h, body := getWith(t, base, expensiveSearch); code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("search that waited past the pool's wait: %d, Retry-After %q, want 503 with one: %.200s", code, h.Get("Retry-After"), body)
	}
	s.pool().wait = time.Minute
	s.QueryBudget = time.Millisecond
	if code, _, body := getWith(t, base, expensiveSearch); code != http.StatusGatewayTimeout || !strings.Contains(body, "time budget") {
		t.Errorf("search whose budget ended in the queue: %d, want 504: %.200s", code, body)
	}
	if admissions(s, "wait_expired") != 1 || admissions(s, "timeout") != 1 {
		t.Errorf("outcomes wait_expired %v and timeout %v, want 1 and 1", admissions(s, "wait_expired"), admissions(s, "timeout"))
	}
	close(c.gate)
	// The held search's budget was a minute when it began.
	if code := <-done; code != http.StatusOK {
		t.Errorf("held search: %d", code)
	}
}

// TestAdmission_Timeout checks the 504 of a search past its budget through
// the router: the JSON sentence, never a 500. (That the index looks at
// the deadline every few hundred documents is kv/index's test.)
func TestAdmission_Timeout(t *testing.T) {
	inner := &index.Catalog{}
	inner.Swap(mustBundleSegment(t))
	s, _ := MustServer(t, inner)
	s.Logger = discardLogger()
	s.QueryBudget = time.Nanosecond
	base := MustHTTP(t, s.Handler()).URL
	for _, path := range []string{expensiveSearch, cheapSearch} {
		code, _, body := getWith(t, base, path)
		if code != http.StatusGatewayTimeout || !strings.Contains(body, "narrow it with a date range") {
			t.Errorf("GET %s with a spent budget: %d, want 504 with the sentence: %.200s", path, code, body)
		}
	}
}

// TestAdmission_ChargesUnits checks that a key's bucket and monthly quota
// are charged a search's cost in units, as RateLimit says, that a search
// costing more than the bucket holds is a 429 naming its cost, and that
// a cost above the burst is charged the burst.
func TestAdmission_ChargesUnits(t *testing.T) {
	e := mustKeyedEnv(t, "", march2025)
	inner := &index.Catalog{}
	inner.Swap(mustBundleSegment(t))
	e.s.Catalog = inner
	e.s.Plans = map[string]rappel.Plan{
		"units": {Name: "units", Rate: 1, Burst: 120, Monthly: 1000},
		"small": {Name: "small", Rate: 1, Burst: 5, Monthly: 1000},
	}
	e.url = MustHTTP(t, e.s.Handler()).URL
	key := e.issue(t, "units")

	code, h, detail := e.get(t, expensiveSearch, key)
	if code != http.StatusOK {
		t.Fatalf("expensive search: %d %s", code, detail)
	}
	cost, _ := strconv.Atoi(h.Get("Search-Cost"))
	if cost < DefaultExpensiveCost || cost > 120 {
		t.Fatalf("Search-Cost %q, want between %d and 120", h.Get("Search-Cost"), DefaultExpensiveCost)
	}
	left, used := 120-cost, cost
	if got, want := h.Get("RateLimit"), fmt.Sprintf(`"burst";r=%d;t=1, "monthly";r=%d;`, left, 1000-used); !strings.HasPrefix(got, want) {
		t.Errorf("after the expensive search: RateLimit %q, want it to begin %q", got, want)
	}
	code, h, _ = e.get(t, cheapSearch, key)
	if got, want := h.Get("RateLimit"), fmt.Sprintf(`"burst";r=%d;t=1, "monthly";r=%d;`, left-1, 1000-used-1); code != http.StatusOK || !strings.HasPrefix(got, want) {
		t.Errorf("after the cheap search: %d, RateLimit %q, want it to begin %q", code, got, want)
	}
	if left-1 < cost {
		code, h, detail = e.get(t, expensiveSearch, key)
		if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" || !strings.Contains(detail, fmt.Sprintf("this search costs %d units", cost)) {
			t.Errorf("expensive search on a bucket of %d: %d, Retry-After %q, %q; want a 429 naming the cost", left-1, code, h.Get("Retry-After"), detail)
		}
	}

	small := e.issue(t, "small")
	code, h, detail = e.get(t, expensiveSearch, small)
	if got := h.Get("RateLimit"); code != http.StatusOK || !strings.HasPrefix(got, `"burst";r=0;t=1, "monthly";r=995;`) {
		t.Errorf("expensive search on a burst of 5: %d, RateLimit %q, want 200 charged the whole burst: %s", code, got, detail)
	}
}

// bundleRecordID is the id of a record of the bundle.
func bundleRecordID(t *testing.T) string {
	t.Helper()
	snap := mustBundleSegment(t)
	q, err := (&rappel.Search{Limit: 1}).Checked()
	if err != nil {
		t.Fatal(err)
	}
	page, err := snap.View().Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var recs []struct {
		RecordID string `json:"record_id"`
	}
	if err := json.Unmarshal(page.Results, &recs); err != nil || len(recs) != 1 {
		t.Fatalf("first record: %v", err)
	}
	return recs[0].RecordID
}

// checkDocumented checks a response against the document, reporting a
// mismatch without stopping the test (a test holding searches in the
// index must still release them).
func checkDocumented(t *testing.T, d *openAPI, c docCase, resp *http.Response, body []byte) {
	t.Helper()
	name, _, _ := strings.Cut(c.target, "?")
	t.Run(name, func(t *testing.T) { d.checkResponse(t, c, resp, body) })
}

// TestAdmission_WaitModes checks the three ways a search waits for a slot
// when none is free: a keyed request queues, a request without a key is
// refused at once rather than fill the queue, and an export's later page
// waits past a full queue for as long as its budget lasts.
func TestAdmission_WaitModes(t *testing.T) {
	s, _, base := mustGatedServer(t)
	a := s.pool()
	a.slots <- struct{}{} // the one slot is taken
	a.queued.Store(a.queue)

	// Keyless: the Atom feed of an expensive search, with no key, is a
	// 503 at once, even with room in the queue.
	a.queued.Store(0)
	res, body := fetch(t, base+"/recall/feed.atom?"+url.Values{"q": {expensivePhrasesQ}}.Encode(), nil)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Errorf("keyless expensive Atom feed with the slot taken: %d (Retry-After %q), want 503 with Retry-After: %.200s", res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	if n := a.queued.Load(); n != 0 {
		t.Errorf("the keyless request left %d in the queue", n)
	}

	// Later page: the queue is full, yet it waits and gets the slot
	// once it frees.
	a.queued.Store(a.queue)
	got := make(chan error, 1)
	go func() {
		release, err := s.acquire(context.Background(), httptest.NewRecorder(), DefaultExpensiveCost, untilBudget)
		if err == nil {
			release()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a later page did not wait for the slot: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	<-a.slots // the slot frees
	if err := <-got; err != nil {
		t.Errorf("a later page after the slot freed: %v, want the slot", err)
	}

	// Its budget still bounds the wait: a 504, not a hang.
	a.slots <- struct{}{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.acquire(ctx, httptest.NewRecorder(), DefaultExpensiveCost, untilBudget); rappel.ErrorCode(err) != rappel.ETIMEOUT {
		t.Errorf("a later page whose budget ended: %v, want a timeout", err)
	}
	<-a.slots
	a.queued.Store(0)
}
