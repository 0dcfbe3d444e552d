package alerts

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// TestRunner_DeadReceiver: one endpoint's receiver takes every request and
// never answers; another answers at once. After a refresh, the e-mail
// alert and every delivery to the working receiver arrive while the dead
// receiver still holds its first request: neither the e-mail alerts nor
// another endpoint wait behind it.
func TestRunner_DeadReceiver(t *testing.T) {
	ctx := context.Background()
	st, smtp := kvtest.OpenMem(t), smtptest.MustStart(t)
	release := make(chan struct{})
	var deadHits, deadReturned atomic.Int64
	delivered := make(chan string, 16)
	srv, pool, _ := tlsReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/dead" {
			deadHits.Add(1)
			defer deadReturned.Add(1)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		delivered <- r.Header.Get("webhook-id")
	})
	// Registered after the receiver, so run before its Close, which waits
	// for the hanging request.
	t.Cleanup(func() { close(release) })
	r, err := NewRunner(Config{Confirm: true, SMTPAddr: smtp.Addr, SMTPFrom: "alerts@rappel.example.ca", PublicURL: "https://rappel.example.ca",
		Interval: time.Hour, Lease: 20 * time.Minute, FlushTimeout: time.Second, // the last flush finds the dead receiver again
		Webhooks: HookConfig{AllowHTTPLoopback: true, RootCAs: pool, Timeout: 10 * time.Minute}},
		st, st, index.Engine{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	sub := subscribeConfirmed(t, r, smtp, "ana@example.ca", "cookies")
	for _, path := range []string{"/dead", "/ok"} {
		u := srv.URL + path
		if _, err := r.Hooks.Create(ctx, "k1", &rappel.WebhookRequest{URL: &u}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	waitUntil(t, "the first passes", func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.passes >= 1 && r.hookPasses >= 1 })

	recs := []*rappel.Record{newRecord("hc-9", "Cookies recalled for undeclared peanut", "peanut"), newRecord("hc-10", "Bread recalled"), newRecord("hc-11", "Cookies recalled for glass")}
	ids := []string{"hc-9", "hc-10", "hc-11"}
	err = st.ApplySource(ctx, &rappel.SourceChange{
		State:      rappel.SourceState{Feed: rappel.FeedState{Source: "hc"}},
		PutRecords: recs,
		NewRecalls: &rappel.NewRecalls{At: time.Now().UTC(), Source: "hc", RecordIDs: ids},
		Events:     &rappel.RecordEvents{At: time.Now().UTC(), Source: "hc", Created: ids},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.DataChanged(ctx, true); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range recs {
		select {
		case id := <-delivered:
			seen[id] = true
		case <-time.After(time.Minute):
			t.Fatalf("the working receiver got %d deliveries of %d", len(seen), len(recs))
		}
	}
	if len(seen) != len(recs) {
		t.Fatalf("the working receiver got %d distinct deliveries, want %d", len(seen), len(recs))
	}
	waitUntil(t, "the alert e-mail", func() bool { return len(alertIDs(t, smtp)) > 0 })
	if ids := alertIDs(t, smtp); len(ids) != 1 || !strings.HasPrefix(ids[0], "<alert."+sub+".") {
		t.Fatalf("alerts %v", ids)
	}
	waitUntil(t, "the dead receiver's request", func() bool { return deadHits.Load() >= 1 })
	if h, ret := deadHits.Load(), deadReturned.Load(); h != 1 || ret != 0 {
		t.Fatalf("dead receiver: %d requests, %d answered; want 1 still hanging", h, ret)
	}
}

// TestHookSender_DownReceiverOncePerPass: a receiver failing with a 500 is
// posted to once per pass, whatever number of deliveries it has due, and
// the deliveries put off behind the failed one count no attempt: they are
// given up only after as many failed posts of their own as the schedule
// allows. The working endpoint gets all of its own.
func TestHookSender_DownReceiverOncePerPass(t *testing.T) {
	g := newHookRig(t)
	g.sender.Schedule = []time.Duration{time.Minute, time.Minute}
	down := g.hook("/down", "hc-1")
	g.event(down, "hc-2")
	g.event(down, "hc-3")
	ok := g.hook("/ok", "hc-1")
	g.event(ok, "hc-2")
	g.send()
	if g.hit("/down") != 1 || g.hit("/ok") != 2 {
		t.Fatalf("first pass: hits %v; want /down once, /ok twice", g.hits)
	}
	// Each later pass posts once to /down: the first delivery uses up its
	// schedule (1 + 2 posts) and is given up; only then is the next
	// delivery posted, and it starts with no attempt counted.
	for pass := 2; pass <= 9; pass++ {
		g.now = g.now.Add(2 * time.Minute)
		g.send()
		if n := g.hit("/down"); n != pass {
			t.Fatalf("pass %d: /down got %d posts, want one per pass", pass, n)
		}
	}
	if c := g.sender.Counts(); c.Failed != 3 {
		t.Fatalf("counts %+v; want the 3 deliveries given up after 3 posts each", c)
	}
	g.now = g.now.Add(2 * time.Minute)
	g.send()
	if n := g.hit("/down"); n != 9 {
		t.Fatalf("/down got %d posts after its deliveries were given up, want 9", n)
	}
}

// TestRunner_PrunesOutbox: once an alert is sent, the runner's prune keeps
// its row and its recall's mark for the retention, then deletes both; the
// pending subscriptions' prune runs on the same tick.
func TestRunner_PrunesOutbox(t *testing.T) {
	ctx := context.Background()
	st, smtp := kvtest.OpenMem(t), smtptest.MustStart(t)
	r, err := NewRunner(Config{Confirm: true, SMTPAddr: smtp.Addr, SMTPFrom: "alerts@rappel.example.ca", PublicURL: "https://rappel.example.ca",
		Interval: time.Hour, OutboxRetention: MinOutboxRetention}, st, st, index.Engine{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	subscribeConfirmed(t, r, smtp, "ana@example.ca", "cookies")
	applyRefresh(t, st, newRecord("hc-9", "Cookies recalled for undeclared peanut", "peanut"))
	if err := r.pass(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(alertIDs(t, smtp)); n != 1 {
		t.Fatalf("%d alerts sent, want 1", n)
	}
	if left, err := st.UnmatchedRecords(ctx, []string{"hc-9"}); err != nil || len(left) != 0 {
		t.Fatalf("hc-9 unmatched after the pass: %v, %v", left, err)
	}
	// A day on: within the retention, the next prune keeps both.
	now := time.Now()
	r.Service.Now = func() time.Time { return now.Add(24 * time.Hour) }
	if err := r.prune(ctx); err != nil {
		t.Fatal(err)
	}
	if left, err := st.UnmatchedRecords(ctx, []string{"hc-9"}); err != nil || len(left) != 0 {
		t.Fatalf("hc-9's mark pruned within the retention: %v, %v", left, err)
	}
	// Past the retention: the sent row and the mark go.
	r.Service.Now = func() time.Time { return now.Add(MinOutboxRetention + 2*time.Hour) }
	if err := r.prune(ctx); err != nil {
		t.Fatal(err)
	}
	if left, err := st.UnmatchedRecords(ctx, []string{"hc-9"}); err != nil || len(left) != 1 {
		t.Fatalf("hc-9's mark after the retention: unmatched %v, %v; want it pruned", left, err)
	}
	if rows, marks, err := st.PruneAlerts(ctx, now.Add(365*24*time.Hour)); err != nil || rows != 0 || marks != 0 {
		t.Fatalf("left after the runner's prune: %d rows, %d marks, %v; want none", rows, marks, err)
	}
}
