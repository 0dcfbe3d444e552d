package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// DepthStore is a store of subscriptions with both e-mail outboxes and
// their counts for the metrics.
type DepthStore interface {
	ConfirmStore
	rappel.Outbox
	AlertDepth(ctx context.Context) (rappel.OutboxDepth, error)
	ConfirmDepth(ctx context.Context) (rappel.OutboxDepth, error)
}

// OutboxDepth runs the contract of AlertDepth and ConfirmDepth: pending
// rows counted as the e-mails the sender makes of them (one per
// subscription and batch), the same from either handle, through claims,
// retries, sends, failures and prunes. newStores returns two handles on
// one new, empty store, as Outbox's does.
func OutboxDepth(t *testing.T, newStores func(t *testing.T) (a, b DepthStore)) {
	t0 := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	t.Run("Alerts", func(t *testing.T) {
		ctx := context.Background()
		a, b := newStores(t)
		mustDepth(t, "an empty outbox", a.AlertDepth, rappel.OutboxDepth{})
		// Batch 1: three subscriptions, two recalls each; batch 2, an hour
		// later: one more recall for s1, and a row written sent already.
		var batch1 []*rappel.AlertRow
		for _, sub := range []string{"s1", "s2", "s3"} {
			batch1 = append(batch1, row(sub, "hc-1", 1, t0), row(sub, "hc-2", 1, t0))
		}
		commit(t, a, batch1)
		t1 := t0.Add(time.Hour)
		sent := row("s2", "hc-3", 2, t1)
		sent.Status, sent.SentAt = rappel.AlertSent, t1
		commit(t, b, []*rappel.AlertRow{row("s1", "hc-3", 2, t1), sent})
		want := rappel.OutboxDepth{Mails: 4, Rows: 7, Oldest: t0}
		mustDepth(t, "two batches", a.AlertDepth, want)
		mustDepth(t, "two batches, from the other handle", b.AlertDepth, want)

		// Claimed rows still wait; a retry still waits.
		got := claimAll(t, b, "n2", t1)
		mustDepth(t, "the rows claimed", a.AlertDepth, want)
		byGroup := map[string][]*rappel.AlertRow{}
		for _, r := range got {
			k := fmt.Sprintf("%s@%d", r.Sub, r.Seq)
			byGroup[k] = append(byGroup[k], r)
		}
		for _, r := range byGroup["s3@1"] {
			r.Attempts, r.Error, r.NextAt = 1, "451 4.3.0 try again later", t1.Add(30*time.Second)
		}
		for _, r := range byGroup["s1@1"] {
			r.Status, r.SentAt = rappel.AlertSent, t1
		}
		for _, r := range byGroup["s2@1"] {
			r.Status, r.Error = rappel.AlertFailed, "550 5.1.1 no such user"
		}
		if n, err := b.UpdateAlerts(ctx, "n2", got); n != len(got) || err != nil {
			t.Fatalf("UpdateAlerts = %d, %v; want %d", n, err, len(got))
		}
		want = rappel.OutboxDepth{Mails: 2, Rows: 3, Oldest: t0}
		mustDepth(t, "one e-mail sent, one failed, one deferred", a.AlertDepth, want)

		// A stale node's outcome is dropped: the count stays.
		stale := byGroup["s3@1"]
		for _, r := range stale {
			r.Status = rappel.AlertSent
		}
		if n, err := a.UpdateAlerts(ctx, "n1", stale); n != 0 || err != nil {
			t.Fatalf("UpdateAlerts by a node without the claim = %d, %v", n, err)
		}
		mustDepth(t, "a stale node's outcome", b.AlertDepth, want)

		// The oldest goes with its e-mail; the final rows' prune changes
		// nothing.
		got = claimAll(t, a, "n1", t1.Add(time.Minute))
		for _, r := range got {
			if r.Seq == 1 {
				r.Status, r.SentAt = rappel.AlertSent, t1.Add(time.Minute)
			}
		}
		if _, err := a.UpdateAlerts(ctx, "n1", got); err != nil {
			t.Fatal(err)
		}
		want = rappel.OutboxDepth{Mails: 1, Rows: 1, Oldest: t1}
		mustDepth(t, "batch 1 sent", b.AlertDepth, want)
		if rows, _, err := b.PruneAlerts(ctx, t1.Add(24*time.Hour)); rows != 7 || err != nil {
			t.Fatalf("PruneAlerts = %d, %v; want the 7 final rows", rows, err)
		}
		mustDepth(t, "after the prune", a.AlertDepth, want)
	})
	t.Run("Confirmations", func(t *testing.T) {
		ctx := context.Background()
		a, b := newStores(t)
		mustDepth(t, "an empty outbox", a.ConfirmDepth, rappel.OutboxDepth{})
		day := func(now time.Time) *rappel.Allowance {
			return &rappel.Allowance{Name: "confirm/ana", Limit: 1, Now: now, End: now.Add(24 * time.Hour)}
		}
		t1 := t0.Add(time.Minute)
		mustCreatePending(t, a, "c1", t0, day(t0), true)
		mustCreatePending(t, b, "c2", t1, day(t1), false) // the allowance spent: no e-mail
		mustCreatePending(t, b, "c3", t1, nil, true)
		mustCreatePending(t, a, "c4", t1.Add(time.Minute), nil, true)
		want := rappel.OutboxDepth{Mails: 3, Rows: 3, Oldest: t0}
		mustDepth(t, "three queued", a.ConfirmDepth, want)
		mustDepth(t, "three queued, from the other handle", b.ConfirmDepth, want)
		mustDepth(t, "the alerts' outbox", a.AlertDepth, rappel.OutboxDepth{})
		got, err := b.ClaimConfirmations(ctx, "n2", t1.Add(time.Minute), time.Minute, 10)
		if err != nil || len(got) != 3 {
			t.Fatalf("ClaimConfirmations = %d rows, %v", len(got), err)
		}
		for _, r := range got {
			switch r.Sub {
			case "c1":
				r.Status, r.SentAt = rappel.AlertSent, t1
			case "c3":
				r.Attempts, r.NextAt = 1, t1.Add(time.Hour)
			}
		}
		if n, err := b.UpdateConfirmations(ctx, "n2", got); n != 3 || err != nil {
			t.Fatalf("UpdateConfirmations = %d, %v", n, err)
		}
		mustDepth(t, "the oldest sent", a.ConfirmDepth, rappel.OutboxDepth{Mails: 2, Rows: 2, Oldest: t1})
	})
}

// mustDepth checks what count returns.
func mustDepth(tb testing.TB, when string, count func(context.Context) (rappel.OutboxDepth, error), want rappel.OutboxDepth) {
	tb.Helper()
	got, err := count(context.Background())
	if err != nil || got.Mails != want.Mails || got.Rows != want.Rows || !got.Oldest.Equal(want.Oldest) {
		tb.Fatalf("%s: depth = %+v, %v; want %+v", when, got, err, want)
	}
}

// FillAlertOutbox writes n rows into o's alert outbox in batches of 10,000,
// for the benchmarks of a depth's count: one row in pendingEvery pending
// and the rest sent (the rows the retention keeps), for 5,000
// subscriptions, each pending row an e-mail of its own.
func FillAlertOutbox(tb testing.TB, o rappel.Outbox, n, pendingEvery int) {
	tb.Helper()
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
		if _, err := o.CommitMatches(ctx, ids, rows); err != nil {
			tb.Fatal(err)
		}
	}
}
