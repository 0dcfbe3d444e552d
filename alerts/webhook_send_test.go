package alerts

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// hookRig is a sender on a real store, posting to a real HTTPS receiver
// whose answer depends on the path, on a clock the test moves.
type hookRig struct {
	t     *testing.T
	store interface {
		rappel.WebhookStore
		rappel.WebhookOutbox
	}
	sender *HookSender
	svc    *HookService
	base   string
	now    time.Time

	mu   sync.Mutex
	hits map[string]int
}

func newHookRig(t *testing.T) *hookRig {
	g := &hookRig{t: t, store: kvtest.OpenMem(t), now: time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC), hits: map[string]int{}}
	srv, pool, _ := tlsReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.hits[r.URL.Path]++
		g.mu.Unlock()
		switch r.URL.Path {
		case "/gone":
			w.WriteHeader(http.StatusGone)
		case "/busy":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/ok":
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	g.base = srv.URL
	s := NewHookSender()
	s.Outbox, s.Hooks, s.Jitter, s.Logger = g.store, g.store, 0, slog.New(slog.DiscardHandler)
	s.Client.RootCAs, s.Client.AllowHTTPLoopback = pool, true
	s.Now = func() time.Time { return g.now }
	g.sender = s
	g.svc = NewHookService(g.store, s)
	g.svc.Now = s.Now
	t.Cleanup(g.svc.Close)
	return g
}

// hook registers an endpoint at path and queues one event for it.
func (g *hookRig) hook(path, record string) string {
	g.t.Helper()
	u := g.base + path
	w, err := g.svc.Create(context.Background(), "k1", &rappel.WebhookRequest{URL: &u})
	if err != nil {
		g.t.Fatal(err)
	}
	g.event(w.ID, record)
	return w.ID
}

func (g *hookRig) event(hook, record string) {
	g.t.Helper()
	// One event per endpoint: a key is matched once, whatever rows it has.
	key := rappel.EventRecallCreated + ":" + record + ":" + hook
	body, _ := json.Marshal(map[string]any{"type": rappel.EventRecallCreated, "data": map[string]any{"record": map[string]string{"record_id": record}}})
	d := &rappel.Delivery{Webhook: hook, Event: key, Payload: body,
		OutboxState: rappel.OutboxState{Seq: 1, Status: rappel.AlertPending, CreatedAt: g.now, NextAt: g.now}}
	if _, err := g.store.CommitEvents(context.Background(), []string{key}, []*rappel.Delivery{d}); err != nil {
		g.t.Fatal(err)
	}
}

func (g *hookRig) send() {
	g.t.Helper()
	if _, err := g.sender.SendDue(context.Background()); err != nil {
		g.t.Fatal(err)
	}
}

func (g *hookRig) get(id string) *rappel.WebhookView {
	g.t.Helper()
	v, err := g.svc.Get(context.Background(), "k1", id)
	if err != nil {
		g.t.Fatal(err)
	}
	return v
}

func (g *hookRig) hit(path string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hits[path]
}

// TestHookSender_Policy: a 410 disables its endpoint at once; a 429's
// Retry-After holds the retry back; a failing receiver is retried on the
// schedule until it runs out, and an endpoint failing for longer than
// DisableAfter is disabled, with the reason on its GET.
func TestHookSender_Policy(t *testing.T) {
	g := newHookRig(t)
	gone, _, down := g.hook("/gone", "hc-1"), g.hook("/busy", "hc-1"), g.hook("/down", "hc-1")
	g.send()
	if v := g.get(gone); v.Status != rappel.WebhookDisabled || !strings.Contains(v.DisabledReason, "410") || v.LastDelivery.StatusCode != 410 {
		t.Fatalf("after a 410: %+v", v)
	}
	if v := g.get(down); v.Status != rappel.WebhookEnabled || v.FailingSince == nil || !v.FailingSince.Equal(g.now) {
		t.Fatalf("after a 500: %+v", v)
	}
	// 5 s later the failed delivery is due again, the throttled one not.
	g.now = g.now.Add(6 * time.Second)
	g.send()
	if g.hit("/down") != 2 || g.hit("/busy") != 1 || g.hit("/gone") != 1 {
		t.Fatalf("hits %v; want /down retried after 5s, /busy held by its Retry-After", g.hits)
	}
	g.now = g.now.Add(time.Hour)
	g.send()
	if g.hit("/busy") != 2 {
		t.Fatalf("hits %v; want /busy retried after its hour", g.hits)
	}
	// Days pass: /down is tried once per step of the schedule, 8 times
	// in all, then given up; still enabled until 72 h of failures.
	for range 12 {
		g.now = g.now.Add(11 * time.Hour)
		g.send()
	}
	if n := g.hit("/down"); n != 1+len(DefaultRetrySchedule) {
		t.Fatalf("/down got %d attempts, want %d", n, 1+len(DefaultRetrySchedule))
	}
	// A new event, more than 3 days after the first failure: its first
	// failure disables the endpoint.
	g.event(down, "hc-2")
	g.send()
	v := g.get(down)
	if v.Status != rappel.WebhookDisabled || !strings.Contains(v.DisabledReason, "failed for more than 72h0m0s") {
		t.Fatalf("after days of failures: %+v", v)
	}
	// Nothing goes to a disabled endpoint.
	g.event(down, "hc-3")
	before := g.hit("/down")
	g.send()
	if g.hit("/down") != before {
		t.Fatal("a disabled endpoint got a delivery")
	}
	if c := g.sender.Counts(); c.Disabled != 2 || c.Delivered != 0 {
		t.Fatalf("counts %+v; want 2 endpoints disabled", c)
	}
}

// TestHookService_Keys: an endpoint is seen by its key alone, the cap
// holds, and a bad body is a 422 with a sentence per field.
func TestHookService_Keys(t *testing.T) {
	g := newHookRig(t)
	ctx := context.Background()
	id := g.hook("/ok", "hc-1")
	if _, err := g.svc.Get(ctx, "k2", id); rappel.ErrorCode(err) != rappel.ENOTFOUND {
		t.Fatalf("another key's Get: %v, want ENOTFOUND", err)
	}
	if err := g.svc.Delete(ctx, "k2", id); rappel.ErrorCode(err) != rappel.ENOTFOUND {
		t.Fatalf("another key's Delete: %v, want ENOTFOUND", err)
	}
	if _, err := g.svc.Test(ctx, "k2", id); rappel.ErrorCode(err) != rappel.ENOTFOUND {
		t.Fatalf("another key's Test: %v, want ENOTFOUND", err)
	}
	if l, err := g.svc.List(ctx, "k2"); err != nil || len(l) != 0 {
		t.Fatalf("another key's List: %v, %v", l, err)
	}
	before := g.hit("/ok")
	res, err := g.svc.Test(ctx, "k1", id)
	if err != nil || res.State != rappel.TestPending || res.Type != rappel.EventWebhookTest || !res.ReadyAt.Equal(g.now.Add(g.sender.Client.Timeout+testSettle)) {
		t.Fatalf("Test = %+v, %v; want it pending for the client's timeout and a second", res, err)
	}
	if again, err := g.svc.Test(ctx, "k1", id); err != nil || again.ID != res.ID {
		t.Fatalf("a second Test while the first is pending: %+v, %v; want the first", again, err)
	}
	// The event is posted at once; its outcome waits for ReadyAt, which
	// Close cuts short: the endpoint keeps the test pending, and reads it
	// as cut off once it is well past its ReadyAt.
	for deadline := time.Now().Add(10 * time.Second); g.hit("/ok") == before; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the test event was not posted")
		}
	}
	g.svc.Close()
	if v := g.get(id); v.LastTest == nil || v.LastTest.ID != res.ID || v.LastTest.State != rappel.TestPending {
		t.Fatalf("last_test after Close: %+v; want it pending", v.LastTest)
	}
	g.now = res.ReadyAt.Add(testGrace)
	if v := g.get(id); v.LastTest == nil || v.LastTest.State != rappel.TestDone || v.LastTest.OK || v.LastTest.Error != testCutOff {
		t.Fatalf("last_test long after its ReadyAt: %+v; want it cut off", v.LastTest)
	}
	if next, err := g.svc.Test(ctx, "k1", id); err != nil || next.ID == res.ID {
		t.Fatalf("a Test after one was cut off: %+v, %v; want a new one", next, err)
	}
	g.svc.Max = 2
	u := g.base + "/ok"
	if _, err := g.svc.Create(ctx, "k1", &rappel.WebhookRequest{URL: &u}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.svc.Create(ctx, "k1", &rappel.WebhookRequest{URL: &u}); rappel.ErrorCode(err) != rappel.EBADREQUEST {
		t.Fatalf("a third endpoint: %v, want the cap's 400", err)
	}
	bad, typ, ev := "http://example.ca/hook", "boat", []string{"recall.deleted"}
	_, err = g.svc.Create(ctx, "k3", &rappel.WebhookRequest{URL: &bad, Filters: rappel.FilterValues{RecallType: typ}, Events: &ev})
	e, ok := err.(*rappel.Error)
	if !ok || e.Code != rappel.EINVALID || len(e.Items) != 3 {
		t.Fatalf("a bad body: %v; want 3 items", err)
	}
}
