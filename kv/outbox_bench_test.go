package kv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
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

// alertOutboxOf fills s's alert outbox with n rows in batches of 10,000,
// one row in pendingEvery pending and the rest sent (the rows the
// retention keeps), for 5,000 subscriptions.
func alertOutboxOf(b *testing.B, s *Store, n, pendingEvery int) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	for chunk := 0; chunk < n; chunk += 10_000 {
		var ids []string
		var rows []*rappel.AlertRow
		for i := chunk; i < min(chunk+10_000, n); i++ {
			id := fmt.Sprintf("hc-%d", i)
			status := rappel.AlertSent
			if i%pendingEvery == 0 {
				status = rappel.AlertPending
			}
			ids = append(ids, id)
			rows = append(rows, &rappel.AlertRow{Sub: fmt.Sprintf("sub%05d", i%5000), Record: id,
				OutboxState: rappel.OutboxState{Seq: uint64(i / 5000), Status: status, CreatedAt: t0, NextAt: t0}})
		}
		if _, err := s.CommitMatches(ctx, ids, rows); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStore_AlertDepth reads the alert outbox's depth, as each scrape
// does, from an outbox of 100,000 rows of which 10,000 are pending (10,000
// e-mails): the count kept as the store writes.
func BenchmarkStore_AlertDepth(b *testing.B) {
	ctx := context.Background()
	s := MustOpenStore(b)
	alertOutboxOf(b, s, 100_000, 10)
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
	alertOutboxOf(b, s, 100_000, 10)
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
