package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// WebhookStore runs the rappel.WebhookStore contract.
func WebhookStore(t *testing.T, newStores func(t *testing.T) (a, b rappel.WebhookStore)) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	hook := func(id, key string, at time.Time) *rappel.Webhook {
		return &rappel.Webhook{ID: id, Key: key, URL: "https://hooks.example.ca/" + id, Events: []string{rappel.EventRecallCreated},
			Search: rappel.AlertSearch{Q: "cheese", FilterValues: rappel.FilterValues{Category: "Dairy"}}, Secret: "whsec_c2VjcmV0", Status: rappel.WebhookEnabled, CreatedAt: at}
	}
	t.Run("CRUD", func(t *testing.T) {
		a, b := newStores(t)
		for i, id := range []string{"w2", "w1", "w3"} {
			if err := a.CreateWebhook(ctx, hook(id, "k1", t0.Add(time.Duration(i)*time.Second)), 5); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.CreateWebhook(ctx, hook("x1", "k2", t0), 5); err != nil {
			t.Fatal(err)
		}
		got, err := b.Webhooks(ctx, "k1")
		if err != nil || len(got) != 3 || got[0].ID != "w2" || got[2].ID != "w3" {
			t.Fatalf("Webhooks(k1) = %v, %v; want w2, w1, w3 oldest first", got, err)
		}
		w, err := b.Webhook(ctx, "w1")
		if err != nil || w.Secret != "whsec_c2VjcmV0" || w.Search.Category != "Dairy" || w.Key != "k1" || !w.CreatedAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("Webhook(w1) = %+v, %v", w, err)
		}
		w.Status, w.DisabledReason, w.DisabledAt = rappel.WebhookDisabled, "gone", t0
		w.LastDelivery = &rappel.WebhookAttempt{At: t0, ID: "msg_1", Type: rappel.EventRecallCreated, StatusCode: 410}
		if err := b.PutWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
		w2, err := a.Webhook(ctx, "w1")
		if err != nil || w2.Status != rappel.WebhookDisabled || w2.LastDelivery == nil || w2.LastDelivery.StatusCode != 410 {
			t.Fatalf("after PutWebhook: %+v, %v", w2, err)
		}
		if err := a.DeleteWebhook(ctx, "w1"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Webhook(ctx, "w1"); rappel.ErrorCode(err) != rappel.ENOTFOUND {
			t.Fatalf("Webhook of a deleted endpoint: %v, want ENOTFOUND", err)
		}
		if err := b.DeleteWebhook(ctx, "w1"); rappel.ErrorCode(err) != rappel.ENOTFOUND {
			t.Fatalf("DeleteWebhook twice: %v, want ENOTFOUND", err)
		}
		// A delivery's outcome recorded after the delete must not bring
		// the endpoint back.
		if err := b.PutWebhook(ctx, w); rappel.ErrorCode(err) != rappel.ENOTFOUND {
			t.Fatalf("PutWebhook of a deleted endpoint: %v, want ENOTFOUND", err)
		}
		n := 0
		if err := a.ForEachWebhook(ctx, func(*rappel.Webhook) error { n++; return nil }); err != nil || n != 3 {
			t.Fatalf("ForEachWebhook saw %d, %v; want 3", n, err)
		}
	})
	t.Run("Cap", func(t *testing.T) {
		// Two nodes creating at once never pass the cap together.
		a, b := newStores(t)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			st := a
			if i%2 == 1 {
				st = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = st.CreateWebhook(ctx, hook(fmt.Sprintf("c%d", i), "k1", t0), 3)
			}()
		}
		wg.Wait()
		refused := 0
		for _, err := range errs {
			if strings.Contains(rappel.ErrorMessage(err), "the most one key may have") {
				refused++
			} else if err != nil {
				t.Fatal(err)
			}
		}
		got, err := a.Webhooks(ctx, "k1")
		if err != nil || len(got) != 3 || refused != 5 {
			t.Fatalf("%d endpoints, %d refused, %v; want 3 and 5", len(got), refused, err)
		}
	})
}

// WebhookOutbox runs the rappel.Outbox contract on the webhook outbox,
// and checks that rows keep their payload.
func WebhookOutbox(t *testing.T, newStores func(t *testing.T) (a, b rappel.WebhookOutbox)) {
	Outbox(t, func(t *testing.T) (rappel.Outbox, rappel.Outbox) {
		a, b := newStores(t)
		return webhookRows{a}, webhookRows{b}
	})
	t.Run("Payload", func(t *testing.T) {
		ctx := context.Background()
		a, b := newStores(t)
		t0 := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
		d := rappel.DeliveryOf(row("w1", "recall.created:hc-1:abc", 1, t0))
		d.Payload = json.RawMessage(`{"type":"recall.created","data":{"record":{"record_id":"hc-1"}}}`)
		if n, err := a.CommitEvents(ctx, []string{d.Event}, []*rappel.Delivery{d}); n != 1 || err != nil {
			t.Fatalf("CommitEvents = %d, %v", n, err)
		}
		got, err := b.ClaimDeliveries(ctx, "n1", t0, time.Minute, 10)
		if err != nil || len(got) != 1 || string(got[0].Payload) != string(d.Payload) {
			t.Fatalf("ClaimDeliveries = %v, %v; want the row with its payload", got, err)
		}
	})
}

// webhookRows is a rappel.WebhookOutbox seen as a rappel.Outbox, so that
// the Outbox suite runs on it.
type webhookRows struct{ rappel.WebhookOutbox }

func (w webhookRows) UnmatchedRecords(ctx context.Context, ids []string) ([]string, error) {
	return w.UnmatchedEvents(ctx, ids)
}

func (w webhookRows) CommitMatches(ctx context.Context, records []string, rows []*rappel.AlertRow) (int, error) {
	return w.CommitEvents(ctx, records, rappel.Deliveries(rows))
}

func (w webhookRows) ClaimAlerts(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*rappel.AlertRow, error) {
	ds, err := w.ClaimDeliveries(ctx, node, now, lease, limit)
	return rappel.DeliveryRows(ds), err
}

func (w webhookRows) UpdateAlerts(ctx context.Context, node string, rows []*rappel.AlertRow) (int, error) {
	return w.UpdateDeliveries(ctx, node, rappel.Deliveries(rows))
}

func (w webhookRows) PruneAlerts(ctx context.Context, before time.Time) (int, int, error) {
	return w.PruneDeliveries(ctx, before)
}
