package alerts

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/kvtest"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

// TestWebhooks_Fleet: two nodes, each with its own Pebble store holding the
// same new recalls (fetched at different times, as each node's refresh
// stamps them), share endpoints and the webhook outbox in PostgreSQL. Both
// match the same refresh and both send at once: the receiver gets each
// (endpoint, event) once.
func TestWebhooks_Fleet(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	var mu sync.Mutex
	perID := map[string]int{}
	srv, pool, _ := tlsReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		perID[r.Header.Get("webhook-id")]++
		mu.Unlock()
	})
	quiet := slog.New(slog.DiscardHandler)
	type node struct {
		m *HookMatcher
		s *HookSender
	}
	var nodes []node
	for i, fetched := range []string{"2026-11-22T00:00:00Z", "2026-11-22T00:07:00Z"} {
		local := kvtest.OpenMem(t)
		var recs []*rappel.Record
		for _, id := range crashIDs {
			r := newRecord(id, "Recall "+id)
			r.FetchedAt = fetched
			recs = append(recs, r)
		}
		if err := local.PutRecords(ctx, recs); err != nil {
			t.Fatal(err)
		}
		shared := mustShared(t, dsn, fmt.Sprintf("n%d", i))
		m := NewHookMatcher(index.Engine{})
		m.Hooks, m.Outbox, m.Records, m.Logger = shared, shared, local, quiet
		s := NewHookSender()
		s.Outbox, s.Hooks, s.Logger, s.Node = shared, shared, quiet, fmt.Sprintf("n%d", i)
		s.Client.RootCAs, s.Client.AllowHTTPLoopback = pool, true
		s.ClaimLimit = 2 // several claims each, interleaved
		nodes = append(nodes, node{m, s})
	}
	svc := NewHookService(nodes[0].s.Hooks, nodes[0].s)
	for i := range 4 {
		u := fmt.Sprintf("%s/hook/%d", srv.URL, i)
		if _, err := svc.Create(ctx, fmt.Sprintf("k%d", i%2), &rappel.WebhookRequest{URL: &u}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev := &rappel.RecordEvents{Seq: 1, At: time.Now(), Created: crashIDs[:2], Updated: crashIDs[2:]}
			if _, err := n.m.Match(ctx, ev); err != nil {
				errs[i] = err
				return
			}
			_, errs[i] = n.s.SendDue(ctx)
		}()
	}
	wg.Wait()
	for _, n := range nodes {
		if _, err := n.s.SendDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for id, n := range perID {
		if n != 1 {
			t.Errorf("%s delivered %d times", id, n)
		}
	}
	if want := 4 * len(crashIDs); len(perID) != want {
		t.Fatalf("%d deliveries, want %d", len(perID), want)
	}
	if c0, c1 := nodes[0].s.Counts(), nodes[1].s.Counts(); c0.Delivered+c1.Delivered != int64(4*len(crashIDs)) {
		t.Fatalf("counts %+v and %+v", c0, c1)
	}
}
