package rappel

import (
	"encoding/json"
	"testing"
	"time"
)

// TestDelivery_Row checks that a delivery goes through the stores' outbox
// row and back whole, and that the row's JSON, which the Pebble store
// keeps, has the flat keys it had before OutboxState was split out.
func TestDelivery_Row(t *testing.T) {
	at := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	d := &Delivery{Webhook: "wh_1", Event: "recall.created:hc-1:abc", Payload: RawJSON(`{"type":"recall.created"}`),
		OutboxState: OutboxState{Seq: 3, Status: AlertSent, Attempts: 2, NextAt: at, CreatedAt: at, SentAt: at, Error: "e", ClaimedBy: "n1", ClaimedUntil: at}}
	r := d.Row()
	if r.Sub != d.Webhook || r.Record != d.Event || string(r.Payload) != string(d.Payload) || r.OutboxState != d.OutboxState {
		t.Fatalf("Row() = %+v, want the delivery's fields", r)
	}
	back := DeliveryOf(r)
	if back.Webhook != d.Webhook || back.Event != d.Event || string(back.Payload) != string(d.Payload) || back.OutboxState != d.OutboxState {
		t.Fatalf("DeliveryOf(Row()) = %+v, want %+v", back, d)
	}
	if DeliveryRows(nil) != nil || Deliveries(nil) != nil {
		t.Fatal("converting no rows yields rows")
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"sub":"wh_1","record":"recall.created:hc-1:abc","seq":3,"status":"sent","attempts":2,` +
		`"next_at":"2026-11-22T05:00:00Z","created_at":"2026-11-22T05:00:00Z","sent_at":"2026-11-22T05:00:00Z","error":"e",` +
		`"claimed_by":"n1","claimed_until":"2026-11-22T05:00:00Z","payload":{"type":"recall.created"}}`
	if string(b) != want {
		t.Fatalf("the stored row's JSON is\n%s\nwant\n%s", b, want)
	}
}
