package kv

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/storetest"
)

// mustAlertStore opens a Store on an in-memory file system, closed when tb
// ends.
func mustAlertStore(tb testing.TB) *Store {
	tb.Helper()
	st := NewStore("alerts")
	st.FS = vfs.NewMem()
	st.Logger = slog.New(slog.DiscardHandler)
	if err := st.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

func TestStore_SubscriptionStore(t *testing.T) {
	storetest.SubscriptionStore(t, func(t *testing.T) (rappel.SubscriptionStore, rappel.SubscriptionStore) {
		st := mustAlertStore(t)
		return st, st
	})
}

func TestStore_Outbox(t *testing.T) {
	storetest.Outbox(t, func(t *testing.T) (rappel.Outbox, rappel.Outbox) {
		st := mustAlertStore(t)
		return st, st
	})
}

func TestStore_ConfirmOutbox(t *testing.T) {
	storetest.ConfirmOutbox(t, func(t *testing.T) (storetest.ConfirmStore, storetest.ConfirmStore) {
		st := mustAlertStore(t)
		return st, st
	})
}

// TestStore_CreatePendingDiskFull: on a full disk subscribing answers
// EUNAVAILABLE at once; once there is room again, the address's allowance
// has been spent on exactly one queued confirmation, whether the refused
// write landed late or not at all, and the row outlives a restart.
func TestStore_CreatePendingDiskFull(t *testing.T) {
	ctx := context.Background()
	full := storetest.DiskFull()
	s := openGuarded(t, full)
	t0 := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	pending := func(id string) (bool, error) {
		sub := &rappel.Subscription{ID: id, Email: "ana@example.ca", Status: rappel.SubPending, CreatedAt: t0}
		r := &rappel.AlertRow{Sub: id, Record: rappel.ConfirmRecord, OutboxState: rappel.OutboxState{Status: rappel.AlertPending, NextAt: t0, CreatedAt: t0}}
		return s.CreatePending(ctx, sub, map[string][32]byte{rappel.TokenConfirm: {1, byte(len(id))}}, r,
			&rappel.Allowance{Name: "confirm/ana", Limit: 1, Now: t0, End: t0.Add(24 * time.Hour)})
	}
	full.On()
	_, err := pending("c1")
	mustUnavailable(t, err, "no space left on device")
	full.Off()
	waitRecovered(t, s)
	if _, err := pending("c2"); err != nil {
		t.Fatal(err)
	}
	MustReopen(t, s)
	got, err := s.ClaimConfirmations(ctx, "n1", t0, time.Minute, 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("ClaimConfirmations after recovery and a restart = %d rows, %v; want 1", len(got), err)
	}
	if _, err := s.Subscription(ctx, got[0].Sub); err != nil {
		t.Fatalf("the queued row's subscription: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestStore_WebhookStore(t *testing.T) {
	storetest.WebhookStore(t, func(t *testing.T) (rappel.WebhookStore, rappel.WebhookStore) {
		st := mustAlertStore(t)
		return st, st
	})
}

func TestStore_WebhookOutbox(t *testing.T) {
	storetest.WebhookOutbox(t, func(t *testing.T) (rappel.WebhookOutbox, rappel.WebhookOutbox) {
		st := mustAlertStore(t)
		return st, st
	})
}
