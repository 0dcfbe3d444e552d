package kv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/storetest"
)

// BenchmarkStore_ClaimDeliveriesFinal claims from a webhook outbox of
// 5,000 sent deliveries with 2 KiB payloads and nothing due: the cost each
// pass pays for the rows kept until the retention prunes them.
func BenchmarkStore_ClaimDeliveriesFinal(b *testing.B) {
	ctx := context.Background()
	s := MustOpenStore(b)
	t0 := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	payload := rappel.RawJSON(`{"type":"recall.created","data":{"title":"` + strings.Repeat("x", 2048) + `"}}`)
	const n = 5000
	keys := make([]string, n)
	rows := make([]*rappel.Delivery, n)
	for i := range n {
		keys[i] = fmt.Sprintf("recall.created:hc-%d:h", i)
		rows[i] = &rappel.Delivery{Webhook: "wh_1", Event: keys[i], Payload: payload,
			OutboxState: rappel.OutboxState{Seq: 1, Status: rappel.AlertSent, CreatedAt: t0, NextAt: t0, SentAt: t0}}
	}
	if _, err := s.CommitEvents(ctx, keys, rows); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		got, err := s.ClaimDeliveries(ctx, "n1", t0.Add(time.Hour), time.Minute, 200)
		if err != nil || len(got) != 0 {
			b.Fatalf("ClaimDeliveries = %d rows, %v", len(got), err)
		}
	}
}

// BenchmarkStore_AlertDepth reads the alert outbox's depth, as each scrape
// does, from an outbox of 100,000 rows of which 10,000 are pending (10,000
// e-mails): the count kept as the store writes.
func BenchmarkStore_AlertDepth(b *testing.B) {
	ctx := context.Background()
	s := MustOpenStore(b)
	storetest.FillAlertOutbox(b, s, 100_000, 10)
	if d, err := s.AlertDepth(ctx); err != nil || d.Rows != 10_000 {
		b.Fatalf("AlertDepth = %+v, %v", d, err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := s.AlertDepth(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStore_AlertDepthScan counts the same outbox by a scan, as the
// first read after Open does (and every read while the storage fails).
func BenchmarkStore_AlertDepthScan(b *testing.B) {
	ctx := context.Background()
	s := MustOpenStore(b)
	storetest.FillAlertOutbox(b, s, 100_000, 10)
	b.ResetTimer()
	for range b.N {
		s.depths.alerts.mu.Lock()
		s.depths.alerts.valid = false
		s.depths.alerts.mu.Unlock()
		if _, err := s.AlertDepth(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
