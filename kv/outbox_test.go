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

func TestStore_OutboxDepth(t *testing.T) {
	storetest.OutboxDepth(t, func(t *testing.T) (storetest.DepthStore, storetest.DepthStore) {
		st := mustAlertStore(t)
		return st, st
	})
}

// TestStore_OutboxDepthDiskFull: a write of the outbox refused on a full
// disk may still land once there is room (the guard holds it): the
// e-mails counted then are those on disk, as a restart counts them, and
// the count follows the writes after it.
func TestStore_OutboxDepthDiskFull(t *testing.T) {
	ctx := context.Background()
	full := storetest.DiskFull()
	s := openGuarded(t, full)
	t.Cleanup(func() { s.Close() })
	t0 := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	var rows []*rappel.AlertRow
	for _, sub := range []string{"s1", "s2"} {
		for _, rec := range []string{"hc-1", "hc-2"} {
			rows = append(rows, &rappel.AlertRow{Sub: sub, Record: rec, OutboxState: rappel.OutboxState{Seq: 1, Status: rappel.AlertPending, CreatedAt: t0, NextAt: t0}})
		}
	}
	if _, err := s.CommitMatches(ctx, []string{"hc-1", "hc-2"}, rows); err != nil {
		t.Fatal(err)
	}
	depth := func(when string) rappel.OutboxDepth {
		t.Helper()
		d, err := s.AlertDepth(ctx)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		return d
	}
	if d := depth("before"); d.Mails != 2 || d.Rows != 4 {
		t.Fatalf("before the fault: %+v, want 2 e-mails of 4 rows", d)
	}
	claimed, err := s.ClaimAlerts(ctx, "n1", t0, time.Minute, 10)
	if err != nil || len(claimed) != 4 {
		t.Fatalf("ClaimAlerts = %d rows, %v", len(claimed), err)
	}
	for _, r := range claimed[:2] { // s1's e-mail
		r.Status, r.SentAt = rappel.AlertSent, t0
	}
	full.On()
	_, err = s.UpdateAlerts(ctx, "n1", claimed[:2])
	mustUnavailable(t, err, "no space left on device")
	during := depth("during the fault")
	full.Off()
	waitRecovered(t, s)
	after := depth("after recovery")
	MustReopen(t, s)
	if fresh := depth("after a restart"); fresh != after {
		t.Fatalf("after recovery %+v, after a restart %+v: the count kept is not what is on disk", after, fresh)
	}
	t.Logf("during the fault %+v, after recovery %+v", during, after)
	if after.Mails == 2 { // the refused write did not land: send s1's e-mail again
		if claimed, err = s.ClaimAlerts(ctx, "n1", t0, time.Minute, 10); err != nil {
			t.Fatal(err)
		}
		for _, r := range claimed {
			if r.Sub == "s1" {
				r.Status = rappel.AlertSent
			}
		}
		if _, err := s.UpdateAlerts(ctx, "n1", claimed); err != nil {
			t.Fatal(err)
		}
	}
	if d := depth("s1's e-mail sent"); d.Mails != 1 || d.Rows != 2 || !d.Oldest.Equal(t0) {
		t.Fatalf("with s2's e-mail left: %+v, want 1 e-mail of 2 rows", d)
	}
}

func TestStore_WatchlistStore(t *testing.T) {
	storetest.WatchlistStore(t, func(t *testing.T) (rappel.WatchlistStore, rappel.WatchlistStore) {
		st := mustAlertStore(t)
		return st, st
	})
}
