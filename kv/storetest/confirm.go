package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// ConfirmStore is a store of subscriptions with its confirmation outbox.
type ConfirmStore interface {
	rappel.SubscriptionStore
	rappel.ConfirmOutbox
}

// ConfirmOutbox runs the rappel.ConfirmOutbox contract, with
// SubscriptionStore.CreatePending, which fills it. newStores returns two
// handles on one new, empty store, as Outbox's does.
func ConfirmOutbox(t *testing.T, newStores func(t *testing.T) (a, b ConfirmStore)) {
	t0 := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	t.Run("CreatePending", func(t *testing.T) {
		ctx := context.Background()
		a, b := newStores(t)
		day := func(now time.Time) *rappel.Allowance {
			return &rappel.Allowance{Name: "confirm/ana", Limit: 1, Now: now, End: now.Add(24 * time.Hour)}
		}
		// The first subscription of the day is queued; the second, on
		// another node, is stored without its e-mail; one with no
		// allowance to count is queued whatever.
		mustCreatePending(t, a, "c1", t0, day(t0), true)
		mustCreatePending(t, b, "c2", t0.Add(time.Minute), day(t0.Add(time.Minute)), false)
		mustCreatePending(t, b, "c3", t0.Add(time.Minute), nil, true)
		for _, id := range []string{"c1", "c2", "c3"} {
			got, kind, err := a.SubscriptionByToken(ctx, tokenHash("confirm-"+id))
			if err != nil || got.ID != id || got.Status != rappel.SubPending || kind != rappel.TokenConfirm {
				t.Fatalf("subscription %s by its token: %+v %q, %v", id, got, kind, err)
			}
		}
		// CreatePending and TakeAllowance count in one allowance.
		if ok, _, err := b.TakeAllowance(ctx, "confirm/ana", 1, t0.Add(time.Hour), t0.Add(25*time.Hour)); ok || err != nil {
			t.Fatalf("TakeAllowance after CreatePending spent it = %v, %v; want refused", ok, err)
		}
		// The next day the window has ended.
		mustCreatePending(t, a, "c4", t0.Add(24*time.Hour), day(t0.Add(24*time.Hour)), true)
		got, err := b.ClaimConfirmations(ctx, "n2", t0.Add(24*time.Hour), time.Minute, 10)
		if err != nil || !slices.Equal(keys(got), []string{"c1/confirm@0", "c3/confirm@0", "c4/confirm@0"}) {
			t.Fatalf("ClaimConfirmations = %v, %v; want the three queued", keys(got), err)
		}
	})
	t.Run("Retry", func(t *testing.T) {
		// A send that failed is recorded with its next attempt; the row is
		// due again then, on any node, with its attempts and error, and
		// once sent it is never claimed again.
		ctx := context.Background()
		a, b := newStores(t)
		mustCreatePending(t, a, "c1", t0, nil, true)
		got, err := a.ClaimConfirmations(ctx, "n1", t0, time.Minute, 10)
		if err != nil || len(got) != 1 || got[0].ClaimedBy != "n1" {
			t.Fatalf("ClaimConfirmations = %v, %v", keys(got), err)
		}
		if again, err := b.ClaimConfirmations(ctx, "n2", t0, time.Minute, 10); len(again) != 0 || err != nil {
			t.Fatalf("a claimed row claimed again: %v, %v", keys(again), err)
		}
		r := got[0]
		r.Attempts, r.Error, r.NextAt = 1, "451 4.3.0 try again later", t0.Add(30*time.Second)
		if n, err := a.UpdateConfirmations(ctx, "n1", got); n != 1 || err != nil {
			t.Fatalf("UpdateConfirmations = %d, %v", n, err)
		}
		if early, err := b.ClaimConfirmations(ctx, "n2", t0.Add(29*time.Second), time.Minute, 10); len(early) != 0 || err != nil {
			t.Fatalf("claimed before its next attempt: %v, %v", keys(early), err)
		}
		got, err = b.ClaimConfirmations(ctx, "n2", t0.Add(30*time.Second), time.Minute, 10)
		if err != nil || len(got) != 1 || got[0].Attempts != 1 || got[0].Error != r.Error || !got[0].CreatedAt.Equal(t0) {
			t.Fatalf("the retry's claim = %+v, %v", got, err)
		}
		got[0].Status, got[0].Error, got[0].SentAt = rappel.AlertSent, "", t0.Add(31*time.Second)
		if n, err := b.UpdateConfirmations(ctx, "n2", got); n != 1 || err != nil {
			t.Fatalf("UpdateConfirmations = %d, %v", n, err)
		}
		if after, err := a.ClaimConfirmations(ctx, "n1", t0.Add(48*time.Hour), time.Minute, 10); len(after) != 0 || err != nil {
			t.Fatalf("a sent row claimed: %v, %v", keys(after), err)
		}
	})
	t.Run("Prune", func(t *testing.T) {
		ctx := context.Background()
		a, b := newStores(t)
		for _, id := range []string{"old-sent", "old-pending", "new-sent"} {
			at := t0
			if id == "new-sent" {
				at = t0.Add(48 * time.Hour)
			}
			mustCreatePending(t, a, id, at, nil, true)
		}
		got, err := a.ClaimConfirmations(ctx, "n1", t0.Add(48*time.Hour), time.Minute, 10)
		if err != nil || len(got) != 3 {
			t.Fatalf("ClaimConfirmations = %v, %v", keys(got), err)
		}
		for _, r := range got {
			if r.Sub != "old-pending" {
				r.Status = rappel.AlertSent
			}
		}
		if n, err := a.UpdateConfirmations(ctx, "n1", got); n != 3 || err != nil {
			t.Fatalf("UpdateConfirmations = %d, %v", n, err)
		}
		if n, err := b.PruneConfirmations(ctx, t0.Add(time.Hour)); n != 1 || err != nil {
			t.Fatalf("PruneConfirmations = %d, %v; want the old sent row", n, err)
		}
		left, err := a.ClaimConfirmations(ctx, "n1", t0.Add(72*time.Hour), time.Minute, 10)
		if err != nil || !slices.Equal(keys(left), []string{"old-pending/confirm@0"}) {
			t.Fatalf("after the prune = %v, %v; the pending row stays", keys(left), err)
		}
	})
}

// mustCreatePending stores a pending subscription id made at now, with
// its confirmation row, counting allowance, and checks whether the row
// was queued.
func mustCreatePending(tb testing.TB, st rappel.SubscriptionStore, id string, now time.Time, allowance *rappel.Allowance, wantQueued bool) {
	tb.Helper()
	sub := &rappel.Subscription{ID: id, Email: "ana@example.ca", Status: rappel.SubPending, CreatedAt: now}
	hashes := map[string][32]byte{rappel.TokenConfirm: tokenHash("confirm-" + id), rappel.TokenUnsubscribe: tokenHash("unsub-" + id)}
	r := &rappel.AlertRow{Sub: id, Record: rappel.ConfirmRecord, OutboxState: rappel.OutboxState{Status: rappel.AlertPending, NextAt: now, CreatedAt: now}}
	queued, err := st.CreatePending(context.Background(), sub, hashes, r, allowance)
	if err != nil || queued != wantQueued {
		tb.Fatalf("CreatePending(%s) = %v, %v; want queued %v", id, queued, err, wantQueued)
	}
}
