package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
	"github.com/rappel-ca/rappel/kv/storetest"
)

func TestStore_SubscriptionStore(t *testing.T) {
	// Pages of 20, so that the suite's 46 subscriptions take three.
	defer func(n int) { subscriptionPage = n }(subscriptionPage)
	subscriptionPage = 20
	storetest.SubscriptionStore(t, func(t *testing.T) (rappel.SubscriptionStore, rappel.SubscriptionStore) {
		dsn := pgtest.DSN(t)
		return mustOpen(t, dsn), mustOpen(t, dsn)
	})
}

func TestStore_ConfirmOutbox(t *testing.T) {
	storetest.ConfirmOutbox(t, func(t *testing.T) (storetest.ConfirmStore, storetest.ConfirmStore) {
		dsn := pgtest.DSN(t)
		return mustOpen(t, dsn), mustOpen(t, dsn)
	})
}

func TestStore_Outbox(t *testing.T) {
	storetest.Outbox(t, func(t *testing.T) (rappel.Outbox, rappel.Outbox) {
		dsn := pgtest.DSN(t)
		return mustOpen(t, dsn), mustOpen(t, dsn)
	})
}

// TestStore_PendingAlerts counts the fleet's pending rows, for the outbox
// gauge: rows written by one node, one of them sent by another.
func TestStore_PendingAlerts(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a, b := mustOpen(t, dsn), mustOpen(t, dsn)
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	var rows []*rappel.AlertRow
	for _, rec := range []string{"hc-1", "hc-2", "hc-3"} {
		rows = append(rows, &rappel.AlertRow{Sub: "s1", Record: rec, OutboxState: rappel.OutboxState{Seq: 1, Status: rappel.AlertPending, CreatedAt: now, NextAt: now}})
	}
	if n, err := a.CommitMatches(ctx, []string{"hc-1", "hc-2", "hc-3"}, rows); n != 3 || err != nil {
		t.Fatalf("CommitMatches = %d, %v", n, err)
	}
	claimed, err := b.ClaimAlerts(ctx, "n2", now, time.Minute, 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimAlerts = %d rows, %v", len(claimed), err)
	}
	claimed[0].Status, claimed[0].SentAt = rappel.AlertSent, now
	if n, err := b.UpdateAlerts(ctx, "n2", claimed); n != 1 || err != nil {
		t.Fatalf("UpdateAlerts = %d, %v", n, err)
	}
	if n, err := a.PendingAlerts(ctx); n != 2 || err != nil {
		t.Fatalf("PendingAlerts = %d, %v; want 2", n, err)
	}
}
