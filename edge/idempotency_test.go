package edge

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// idemServer serves the API with the real alerts, webhook and watchlist
// services on st, keeping Idempotency-Key answers in st, for the keys
// rk_a and rk_b.
func idemServer(t *testing.T, st *kv.Store, withAlerts bool) (*Server, string) {
	t.Helper()
	s, _ := MustServer(t, MustCatalog(t, lookupRecords()))
	s.Keys = planKeys{"rk_a": "a", "rk_b": "b"}
	s.Plans = map[string]rappel.Plan{"a": {Name: "a", Rate: 1000, Burst: 1000, Monthly: 1_000_000}, "b": {Name: "b", Rate: 1000, Burst: 1000, Monthly: 1_000_000}}
	if withAlerts {
		svc := alerts.NewService(st)
		svc.Logger = slog.New(slog.DiscardHandler)
		s.Alerts = svc
	}
	hooks := alerts.NewHookService(st, alerts.NewHookSender())
	t.Cleanup(hooks.Close)
	s.Webhooks = hooks
	s.Watchlists = alerts.NewWatchService(st)
	s.Idempotency = st
	return s, MustHTTP(t, s.Handler()).URL
}

// idemPost sends a POST with the API key and, unless "", the
// Idempotency-Key idem.
func idemPost(t *testing.T, url, apiKey, idem, body string) (int, string, http.Header) {
	t.Helper()
	h := map[string]string{"x-gateway-key": apiKey, "Content-Type": "application/json"}
	if idem != "" {
		h[headerIdempotencyKey] = idem
	}
	return do(t, "POST", url, body, h)
}

// subscriptions counts the subscriptions st holds.
func subscriptions(t *testing.T, st *kv.Store) int {
	t.Helper()
	n := 0
	if err := st.ForEachSubscription(context.Background(), func(*rappel.Subscription) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestIdempotency_Subscribe: a subscribe retried with the same key
// creates one subscription and gets the first answer again, marked
// replayed, even re-encoded with other white space and after the node
// restarts on its store; the key with another body is a 422, the same key
// of another API key a request of its own.
func TestIdempotency_Subscribe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pebble")
	st := kvtest.OpenAt(t, path)
	_, base := idemServer(t, st, true)
	url := base + "/recall/alerts/subscribe"
	const body = `{"email":"ana@example.ca","q":"cookies","lang":"en"}`
	code, first, h := idemPost(t, url, "rk_a", "8e03978e-40d5-43e8-bc93-6894a57f9324", body)
	if code != 200 || !strings.Contains(first, `"pending_confirmation"`) || h.Get(headerReplayed) != "" {
		t.Fatalf("first subscribe: %d %s (replayed %q)", code, first, h.Get(headerReplayed))
	}
	for _, retry := range []string{body, "{\n  \"email\": \"ana@example.ca\", \"q\": \"cookies\",\n  \"lang\": \"en\"\n}"} {
		code, again, h := idemPost(t, url, "rk_a", `"8e03978e-40d5-43e8-bc93-6894a57f9324"`, retry)
		if code != 200 || again != first || h.Get(headerReplayed) != "true" || h.Get("Content-Type") != "application/json" {
			t.Fatalf("retry %q: %d %s (replayed %q, %s); want the first answer %s replayed", retry, code, again, h.Get(headerReplayed), h.Get("Content-Type"), first)
		}
	}
	if n := subscriptions(t, st); n != 1 {
		t.Fatalf("%d subscriptions after a subscribe and two retries, want 1", n)
	}
	code, other, _ := idemPost(t, url, "rk_a", "8e03978e-40d5-43e8-bc93-6894a57f9324", `{"email":"bob@example.ca","q":"cookies"}`)
	var e struct{ Detail []rappel.Invalid }
	if code != 422 || json.Unmarshal([]byte(other), &e) != nil || len(e.Detail) != 1 ||
		!strings.Contains(e.Detail[0].Msg, "send a new key for a new request") || e.Detail[0].Loc[0] != "header" || e.Detail[0].Loc[1] != headerIdempotencyKey {
		t.Fatalf("the key with another body: %d %s; want a 422 at the header", code, other)
	}
	if code, b, h := idemPost(t, url, "rk_b", "8e03978e-40d5-43e8-bc93-6894a57f9324", body); code != 200 || h.Get(headerReplayed) != "" || b == first {
		t.Fatalf("another API key with the same Idempotency-Key: %d %s (replayed %q); want a subscription of its own", code, b, h.Get(headerReplayed))
	}
	if code, _, _ := idemPost(t, url, "rk_a", "", body); code != 200 || subscriptions(t, st) != 3 {
		t.Fatalf("without a key: %d, %d subscriptions; want 200 and a third", code, subscriptions(t, st))
	}
	// The node restarts on its store: the answer is still there.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = kvtest.OpenAt(t, path)
	s, base := idemServer(t, st, true)
	code, again, h := idemPost(t, base+"/recall/alerts/subscribe", "rk_a", "8e03978e-40d5-43e8-bc93-6894a57f9324", body)
	if code != 200 || again != first || h.Get(headerReplayed) != "true" || subscriptions(t, st) != 3 {
		t.Fatalf("a retry after a restart: %d %s (replayed %q), %d subscriptions; want the first answer, 3", code, again, h.Get(headerReplayed), subscriptions(t, st))
	}
	_, metrics, _ := do(t, "GET", MustHTTP(t, s.MetricsHandler()).URL+"/metrics", "", nil)
	if !strings.Contains(metrics, `rappel_idempotent_requests_total{outcome="replayed"} 1`) {
		t.Errorf("the replay after the restart is not counted:\n%s", grepLines(metrics, "rappel_idempotent"))
	}
}

// TestIdempotency_NotKept: an answer a retry may change is not kept. A
// 503 (the node has no alerts) leaves the key free, and the retry, on a
// node that has them, subscribes; a 422 is kept, and replayed.
func TestIdempotency_NotKept(t *testing.T) {
	st := kvtest.Open(t)
	_, without := idemServer(t, st, false)
	_, with := idemServer(t, st, true)
	const body = `{"email":"ana@example.ca","q":"cookies"}`
	if code, b, _ := idemPost(t, without+"/recall/alerts/subscribe", "rk_a", "k-503", body); code != 503 {
		t.Fatalf("subscribe on a node without alerts: %d %s", code, b)
	}
	if code, b, h := idemPost(t, with+"/recall/alerts/subscribe", "rk_a", "k-503", body); code != 200 || h.Get(headerReplayed) != "" || subscriptions(t, st) != 1 {
		t.Fatalf("the retry on a node with alerts: %d %s (replayed %q); want it run", code, b, h.Get(headerReplayed))
	}
	const bad = `{"email":"not an address"}`
	code, first, _ := idemPost(t, with+"/recall/alerts/subscribe", "rk_a", "k-422", bad)
	if code != 422 {
		t.Fatalf("an invalid subscribe: %d %s", code, first)
	}
	if code, again, h := idemPost(t, with+"/recall/alerts/subscribe", "rk_a", "k-422", bad); code != 422 || again != first || h.Get(headerReplayed) != "true" {
		t.Fatalf("its retry: %d %s (replayed %q); want the 422 replayed", code, again, h.Get(headerReplayed))
	}
}

// gatedAlerts holds each Subscribe of the real service until release is
// closed, telling entered it began: a request in flight for as long as
// the test needs.
type gatedAlerts struct {
	rappel.Alerts
	entered chan struct{}
	release chan struct{}
}

func (g *gatedAlerts) Subscribe(ctx context.Context, req *rappel.SubscribeRequest) (*rappel.SubscribeResult, error) {
	g.entered <- struct{}{}
	<-g.release
	return g.Alerts.Subscribe(ctx, req)
}

// TestIdempotency_InFlight: a retry while the first request runs is a 409
// with Retry-After; once the first is answered, the retry gets its answer.
func TestIdempotency_InFlight(t *testing.T) {
	st := kvtest.Open(t)
	s, _ := idemServer(t, st, true)
	gate := &gatedAlerts{Alerts: s.Alerts, entered: make(chan struct{}, 1), release: make(chan struct{})}
	s.Alerts = gate
	base := MustHTTP(t, s.Handler()).URL
	const body = `{"email":"ana@example.ca","q":"cookies"}`
	var wg sync.WaitGroup
	var code int
	var first string
	wg.Add(1)
	go func() {
		defer wg.Done()
		code, first, _ = idemPost(t, base+"/recall/alerts/subscribe", "rk_a", "k-busy", body)
	}()
	<-gate.entered
	c, b, h := idemPost(t, base+"/recall/alerts/subscribe", "rk_a", "k-busy", body)
	if c != 409 || h.Get("Retry-After") != "1" || !strings.Contains(b, "still being processed") {
		t.Fatalf("a retry while the first runs: %d %s (Retry-After %q); want 409 with Retry-After", c, b, h.Get("Retry-After"))
	}
	close(gate.release)
	wg.Wait()
	if code != 200 {
		t.Fatalf("the first request: %d %s", code, first)
	}
	if c, again, h := idemPost(t, base+"/recall/alerts/subscribe", "rk_a", "k-busy", body); c != 200 || again != first || h.Get(headerReplayed) != "true" {
		t.Fatalf("the retry after the first's answer: %d %s (replayed %q)", c, again, h.Get(headerReplayed))
	}
	if n := subscriptions(t, st); n != 1 {
		t.Fatalf("%d subscriptions, want 1", n)
	}
}

// TestIdempotency_Malformed: a malformed key is a 400 saying what is wrong,
// and nothing is created.
func TestIdempotency_Malformed(t *testing.T) {
	st := kvtest.Open(t)
	_, base := idemServer(t, st, true)
	const body = `{"email":"ana@example.ca"}`
	for _, c := range []struct{ key, want string }{
		{`""`, "is empty"},
		{strings.Repeat("k", 256), "256 characters long"},
		{"caf\u00e9", "not visible ASCII"},
		{`"abc`, "does not close"},
		{`"a b"`, "holds a space"},
	} {
		code, b, _ := idemPost(t, base+"/recall/alerts/subscribe", "rk_a", c.key, body)
		if code != 400 || !strings.Contains(b, c.want) || !strings.Contains(b, "Idempotency-Key") {
			t.Errorf("key %q: %d %s; want a 400 saying %q", c.key, code, b, c.want)
		}
	}
	req, _ := http.NewRequest("POST", base+"/recall/alerts/subscribe", strings.NewReader(body))
	req.Header.Set("x-gateway-key", "rk_a")
	req.Header.Add(headerIdempotencyKey, "a")
	req.Header.Add(headerIdempotencyKey, "b")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 400 || !strings.Contains(string(b), "sent 2 times") {
		t.Errorf("two Idempotency-Key headers: %d %s", res.StatusCode, b)
	}
	if n := subscriptions(t, st); n != 0 {
		t.Errorf("%d subscriptions made by requests refused for their key", n)
	}
}

// TestIdempotency_WebhookAndWatchlist: a webhook registration and a
// watchlist creation retried with their keys make one endpoint and one
// list, and the retries get the first 201 with its Location.
func TestIdempotency_WebhookAndWatchlist(t *testing.T) {
	st := kvtest.Open(t)
	_, base := idemServer(t, st, true)
	for _, c := range []struct{ path, body string }{
		{"/recall/webhooks", `{"url":"https://hooks.example.ca/a","q":"cheddar"}`},
		{"/recall/watchlists", `{"name":"Store 12","items":[{"id":"sku-1","gtin":"0 42272 90583 6"}]}`},
	} {
		code, first, h1 := idemPost(t, base+c.path, "rk_a", "k-"+c.path, c.body)
		if code != 201 || h1.Get("Location") == "" {
			t.Fatalf("POST %s: %d %s", c.path, code, first)
		}
		code, again, h2 := idemPost(t, base+c.path, "rk_a", "k-"+c.path, c.body)
		if code != 201 || again != first || h2.Get("Location") != h1.Get("Location") || h2.Get(headerReplayed) != "true" {
			t.Fatalf("retry of POST %s: %d %s, Location %q (replayed %q); want %s at %s", c.path, code, again, h2.Get("Location"), h2.Get(headerReplayed), first, h1.Get("Location"))
		}
	}
	ctx := context.Background()
	if hooks, err := st.Webhooks(ctx, "key-a"); err != nil || len(hooks) != 1 {
		t.Fatalf("%d webhook endpoints (%v), want 1", len(hooks), err)
	}
	if lists, err := st.Watchlists(ctx, "key-a"); err != nil || len(lists) != 1 {
		t.Fatalf("%d watchlists (%v), want 1", len(lists), err)
	}
}

// TestIdempotency_Sweep: the sweep deletes the entries past the day, and
// keeps the others.
func TestIdempotency_Sweep(t *testing.T) {
	st := kvtest.Open(t)
	s, base := idemServer(t, st, true)
	if code, b, _ := idemPost(t, base+"/recall/alerts/subscribe", "rk_a", "k-old", `{"email":"ana@example.ca"}`); code != 200 {
		t.Fatalf("subscribe: %d %s", code, b)
	}
	s.Now = func() time.Time { return datasetTime.Add(rappel.IdempotencyTTL + time.Hour) }
	s.sweepIdempotency(context.Background())
	if n, err := st.DeleteIdempotentBefore(context.Background(), datasetTime.Add(48*time.Hour)); err != nil || n != 0 {
		t.Fatalf("after the sweep, %d entries were left to delete (%v), want 0", n, err)
	}
}
