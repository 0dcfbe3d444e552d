package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// Outbox runs the rappel.Outbox contract. newStores returns two handles on
// one new, empty store, standing for two nodes sharing it (an
// implementation with one handle per store returns it twice; the claims
// still tell the nodes apart by name).
func Outbox(t *testing.T, newStores func(t *testing.T) (a, b rappel.Outbox)) {
	t0 := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	t.Run("CommitMatches", func(t *testing.T) {
		ctx := context.Background()
		a, b := newStores(t)
		un, err := a.UnmatchedRecords(ctx, []string{"hc-1", "hc-2", "hc-3"})
		if err != nil || !slices.Equal(un, []string{"hc-1", "hc-2", "hc-3"}) {
			t.Fatalf("UnmatchedRecords on an empty outbox = %v, %v", un, err)
		}
		rows := []*rappel.AlertRow{row("s1", "hc-1", 1, t0), row("s2", "hc-1", 1, t0), row("s1", "hc-2", 1, t0)}
		// hc-3 matched no subscription: it is marked all the same.
		if n, err := a.CommitMatches(ctx, []string{"hc-1", "hc-2", "hc-3"}, rows); err != nil || n != 3 {
			t.Fatalf("CommitMatches = %d, %v; want 3 rows", n, err)
		}
		un, err = b.UnmatchedRecords(ctx, []string{"hc-3", "hc-4", "hc-1"})
		if err != nil || !slices.Equal(un, []string{"hc-4"}) {
			t.Fatalf("UnmatchedRecords after the commit = %v, %v; want [hc-4]", un, err)
		}
		// Another node matching hc-1 (and new hc-4) later: hc-1 keeps the
		// first node's rows, even one for a subscription it lacked.
		late := []*rappel.AlertRow{row("s3", "hc-1", 9, t0), row("s1", "hc-1", 9, t0), row("s3", "hc-4", 9, t0)}
		if n, err := b.CommitMatches(ctx, []string{"hc-1", "hc-4"}, late); err != nil || n != 1 {
			t.Fatalf("CommitMatches of a matched record = %d, %v; want 1 row (hc-4's)", n, err)
		}
		got := claimAll(t, a, "n1", t0)
		if want := []string{"s1/hc-1@1", "s1/hc-2@1", "s2/hc-1@1", "s3/hc-4@9"}; !slices.Equal(keys(got), want) {
			t.Fatalf("rows %v, want %v", keys(got), want)
		}
	})
	t.Run("CommitMatchesRace", func(t *testing.T) {
		// Two nodes' refreshes found the same new recalls and matched them
		// at once: each (subscription, record) gets one row, and all rows of
		// a record come from one node's match.
		ctx := context.Background()
		a, b := newStores(t)
		records := []string{"hc-1", "hc-2", "hc-3", "hc-4", "hc-5", "hc-6"}
		var wg sync.WaitGroup
		written := make([]int, 2)
		errs := make([]error, 2)
		for i, st := range []rappel.Outbox{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var rows []*rappel.AlertRow
				for _, rec := range records {
					for s := range 5 {
						rows = append(rows, row(fmt.Sprintf("s%d", s), rec, uint64(i+1), t0))
					}
				}
				written[i], errs[i] = st.CommitMatches(ctx, records, rows)
			}()
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil || written[0]+written[1] != 30 {
			t.Fatalf("written %v, errors %v; want 30 rows in all", written, errs)
		}
		got := claimAll(t, a, "n1", t0)
		bySeq := map[string]uint64{}
		seen := map[string]bool{}
		for _, r := range got {
			k := r.Sub + "/" + r.Record
			if seen[k] {
				t.Fatalf("two rows for %s", k)
			}
			seen[k] = true
			if s, ok := bySeq[r.Record]; ok && s != r.Seq {
				t.Fatalf("%s has rows of both nodes' matches", r.Record)
			}
			bySeq[r.Record] = r.Seq
		}
		if len(got) != 30 {
			t.Fatalf("%d rows, want 30", len(got))
		}
	})
	t.Run("ClaimAlerts", func(t *testing.T) {
		ctx := context.Background()
		a, b := newStores(t)
		later := row("s0", "hc-9", 1, t0)
		later.NextAt = t0.Add(time.Hour)
		rows := []*rappel.AlertRow{later, row("s1", "hc-3", 2, t0), row("s1", "hc-1", 2, t0), row("s1", "hc-2", 2, t0),
			row("s1", "hc-4", 1, t0), row("s2", "hc-1", 2, t0), row("s2", "hc-2", 2, t0)}
		commit(t, a, rows)
		// limit 4: s1's batch 1 (one row) and batch 2 (three rows) fit;
		// s2's batch would be split, so it waits for the next claim.
		got, err := a.ClaimAlerts(ctx, "n1", t0, time.Minute, 4)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"s1/hc-4@1", "s1/hc-1@2", "s1/hc-2@2", "s1/hc-3@2"}; !slices.Equal(keys(got), want) {
			t.Fatalf("claimed %v, want %v (ordered by sub, seq, record; s2 not split)", keys(got), want)
		}
		for _, r := range got {
			if r.ClaimedBy != "n1" || !r.ClaimedUntil.Equal(t0.Add(time.Minute)) {
				t.Fatalf("claim of %s: %q until %v", r.Record, r.ClaimedBy, r.ClaimedUntil)
			}
		}
		// The other node gets what is left and due; a claim never returns
		// a row held by another.
		got2, err := b.ClaimAlerts(ctx, "n2", t0.Add(time.Second), time.Minute, 100)
		if err != nil || !slices.Equal(keys(got2), []string{"s2/hc-1@2", "s2/hc-2@2"}) {
			t.Fatalf("second claim %v, %v", keys(got2), err)
		}
		// Two hours on, every lease has expired and the later row is due:
		// groups are taken whole while they fit, and a group larger than
		// the limit is split rather than never sent.
		late := t0.Add(2 * time.Hour)
		for _, c := range []struct {
			limit int
			want  []string
		}{
			{1, []string{"s0/hc-9@1"}},
			{2, []string{"s1/hc-4@1"}},
			{2, []string{"s1/hc-1@2", "s1/hc-2@2"}},
		} {
			if got3, err := b.ClaimAlerts(ctx, "n2", late, time.Minute, c.limit); err != nil || !slices.Equal(keys(got3), c.want) {
				t.Fatalf("claim with limit %d: %v, %v; want %v", c.limit, keys(got3), err, c.want)
			}
		}
		if got4, err := a.ClaimAlerts(ctx, "n1", t0.Add(30*time.Second), time.Minute, 100); err != nil || len(got4) != 0 {
			t.Fatalf("claimed rows held by live claims: %v, %v", keys(got4), err)
		}
	})
	t.Run("ClaimAlertsConcurrent", func(t *testing.T) {
		ctx := context.Background()
		a, b := newStores(t)
		var rows []*rappel.AlertRow
		for s := range 40 {
			for r := range 3 {
				rows = append(rows, row(fmt.Sprintf("s%02d", s), fmt.Sprintf("hc-%d", r), 1, t0))
			}
		}
		commit(t, a, rows)
		var mu sync.Mutex
		var wg sync.WaitGroup
		claimed := map[string]string{}
		var failed error
		for i, st := range []rappel.Outbox{a, b, a, b} {
			node := fmt.Sprintf("n%d", i)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range len(rows) { // more claims than rows: claims that never run dry
					got, err := st.ClaimAlerts(ctx, node, t0, time.Minute, 7)
					mu.Lock()
					if err != nil {
						failed = err
					}
					for _, r := range got {
						k := r.Sub + "/" + r.Record
						if prev, ok := claimed[k]; ok {
							failed = fmt.Errorf("%s claimed by %s and %s", k, prev, node)
						}
						claimed[k] = node
					}
					mu.Unlock()
					if len(got) == 0 || err != nil {
						return
					}
				}
			}()
		}
		wg.Wait()
		if failed != nil || len(claimed) != len(rows) {
			t.Fatalf("claimed %d of %d rows: %v", len(claimed), len(rows), failed)
		}
	})
	t.Run("Recovery", func(t *testing.T) {
		ctx := context.Background()
		a, b := newStores(t)
		commit(t, a, []*rappel.AlertRow{row("s1", "hc-1", 1, t0), row("s1", "hc-2", 1, t0)})
		dead, err := a.ClaimAlerts(ctx, "n1", t0, time.Minute, 100)
		if err != nil || len(dead) != 2 {
			t.Fatalf("claim: %v, %v", keys(dead), err)
		}
		// n1 stalls (or dies); once its lease expires n2 recovers the rows.
		if got, _ := b.ClaimAlerts(ctx, "n2", t0.Add(59*time.Second), time.Minute, 100); len(got) != 0 {
			t.Fatalf("claimed before the lease expired: %v", keys(got))
		}
		got, err := b.ClaimAlerts(ctx, "n2", t0.Add(time.Minute), time.Minute, 100)
		if err != nil || len(got) != 2 {
			t.Fatalf("recovery claim: %v, %v", keys(got), err)
		}
		// The stale node's outcome is dropped; the recovering node's stands.
		for _, r := range dead {
			r.Status, r.Error = rappel.AlertFailed, "stale"
		}
		if n, err := a.UpdateAlerts(ctx, "n1", dead); err != nil || n != 0 {
			t.Fatalf("stale UpdateAlerts wrote %d rows, %v", n, err)
		}
		// Nor may a node pass off another's claim as its own.
		if n, err := a.UpdateAlerts(ctx, "n1", got); err != nil || n != 0 {
			t.Fatalf("UpdateAlerts of n2's claim by n1 wrote %d rows, %v", n, err)
		}
		sentAt := t0.Add(61 * time.Second)
		for _, r := range got {
			r.Status, r.SentAt, r.Attempts = rappel.AlertSent, sentAt, r.Attempts+1
		}
		if n, err := b.UpdateAlerts(ctx, "n2", got); err != nil || n != 2 {
			t.Fatalf("UpdateAlerts = %d, %v; want 2", n, err)
		}
		if again, _ := a.ClaimAlerts(ctx, "n1", t0.Add(time.Hour), time.Minute, 100); len(again) != 0 {
			t.Fatalf("sent rows claimed again: %v", keys(again))
		}
	})
	t.Run("UpdateAlerts", func(t *testing.T) {
		ctx := context.Background()
		a, b := newStores(t)
		commit(t, a, []*rappel.AlertRow{row("s1", "hc-1", 1, t0), row("s2", "hc-1", 1, t0)})
		got, err := a.ClaimAlerts(ctx, "n1", t0, time.Minute, 100)
		if err != nil || len(got) != 2 {
			t.Fatalf("claim: %v, %v", keys(got), err)
		}
		// A temporary failure: retried later, by any node. The claim is
		// recorded even though it expired, since no other node took it.
		retry := t0.Add(10 * time.Minute)
		got[0].Attempts, got[0].Error, got[0].NextAt = 1, "421 try later", retry
		if n, err := a.UpdateAlerts(ctx, "n1", got[:1]); err != nil || n != 1 {
			t.Fatalf("UpdateAlerts = %d, %v", n, err)
		}
		// Released unchanged (no time left to send it): due at once.
		if n, err := a.UpdateAlerts(ctx, "n1", got[1:]); err != nil || n != 1 {
			t.Fatalf("release = %d, %v", n, err)
		}
		now := t0.Add(2 * time.Minute)
		if got, _ := b.ClaimAlerts(ctx, "n2", now, time.Hour, 100); !slices.Equal(keys(got), []string{"s2/hc-1@1"}) {
			t.Fatalf("after the release: %v, want the released row only", keys(got))
		}
		back, err := b.ClaimAlerts(ctx, "n2", retry, time.Minute, 100)
		if err != nil || len(back) != 1 || back[0].Sub != "s1" || back[0].Attempts != 1 || back[0].Error != "421 try later" ||
			!back[0].NextAt.Equal(retry) || !back[0].CreatedAt.Equal(t0) || back[0].Status != rappel.AlertPending {
			t.Fatalf("the retried row reads back %+v, %v", back, err)
		}
	})
	t.Run("Prune", func(t *testing.T) {
		// Rows sent or failed before the cut go, with the marks written
		// before it; a pending row stays whatever its age, and a record
		// matched again after its mark went keeps its pending row.
		ctx := context.Background()
		a, b := newStores(t)
		commit(t, a, []*rappel.AlertRow{row("s1", "hc-1", 1, t0), row("s2", "hc-1", 1, t0), row("s1", "hc-2", 1, t0)})
		if _, err := a.CommitMatches(ctx, []string{"hc-3"}, nil); err != nil {
			t.Fatal(err)
		}
		got := claimAll(t, a, "n1", t0)
		if len(got) != 3 {
			t.Fatalf("claimed %v", keys(got))
		}
		got[0].Status, got[0].SentAt, got[0].Attempts = rappel.AlertSent, t0, 1                  // s1/hc-1
		got[2].Status, got[2].Error, got[2].Attempts = rappel.AlertFailed, "550 no such user", 1 // s2/hc-1
		if n, err := a.UpdateAlerts(ctx, "n1", got); err != nil || n != 3 {
			t.Fatalf("UpdateAlerts = %d, %v", n, err)
		}
		// Nothing was created or marked before t0.
		if rows, marks, err := b.PruneAlerts(ctx, t0); err != nil || rows != 0 || marks != 0 {
			t.Fatalf("PruneAlerts(t0) = %d, %d, %v; want nothing pruned", rows, marks, err)
		}
		if un, err := a.UnmatchedRecords(ctx, []string{"hc-1", "hc-2", "hc-3"}); err != nil || len(un) != 0 {
			t.Fatalf("UnmatchedRecords after a prune of nothing = %v, %v", un, err)
		}
		// The marks were written at the stores' clock, before this cut.
		cut := time.Now().Add(time.Hour)
		if rows, marks, err := b.PruneAlerts(ctx, cut); err != nil || rows != 2 || marks != 3 {
			t.Fatalf("PruneAlerts = %d rows, %d marks, %v; want 2 final rows and 3 marks", rows, marks, err)
		}
		if rows, marks, err := b.PruneAlerts(ctx, cut); err != nil || rows != 0 || marks != 0 {
			t.Fatalf("PruneAlerts again = %d, %d, %v; want nothing left to prune", rows, marks, err)
		}
		if un, err := a.UnmatchedRecords(ctx, []string{"hc-1", "hc-2", "hc-3"}); err != nil || !slices.Equal(un, []string{"hc-1", "hc-2", "hc-3"}) {
			t.Fatalf("UnmatchedRecords after the prune = %v, %v; want all three", un, err)
		}
		// hc-2 matched again: its pending row is kept as it is, not
		// doubled; it is still the one row due.
		if n, err := b.CommitMatches(ctx, []string{"hc-2"}, []*rappel.AlertRow{row("s1", "hc-2", 7, t0)}); err != nil || n != 0 {
			t.Fatalf("CommitMatches over a pending row = %d, %v; want 0 rows", n, err)
		}
		if got := claimAll(t, b, "n2", t0.Add(time.Hour)); !slices.Equal(keys(got), []string{"s1/hc-2@1"}) {
			t.Fatalf("rows after the prune %v, want the pending one", keys(got))
		}
	})
	t.Run("Canceled", func(t *testing.T) {
		a, _ := newStores(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := a.ClaimAlerts(ctx, "n1", t0, time.Minute, 10); err == nil {
			t.Fatal("ClaimAlerts with a canceled context succeeded")
		}
		if _, err := a.CommitMatches(ctx, []string{"hc-1"}, []*rappel.AlertRow{row("s1", "hc-1", 1, t0)}); err == nil {
			t.Fatal("CommitMatches with a canceled context succeeded")
		}
	})
}

// row is a pending row due at t.
func row(sub, record string, seq uint64, t time.Time) *rappel.AlertRow {
	return &rappel.AlertRow{Sub: sub, Record: record, OutboxState: rappel.OutboxState{Seq: seq, Status: rappel.AlertPending, CreatedAt: t, NextAt: t}}
}

// commit writes rows, marking their records.
func commit(tb testing.TB, o rappel.Outbox, rows []*rappel.AlertRow) {
	tb.Helper()
	var recs []string
	for _, r := range rows {
		if !slices.Contains(recs, r.Record) {
			recs = append(recs, r.Record)
		}
	}
	if n, err := o.CommitMatches(context.Background(), recs, rows); err != nil || n != len(rows) {
		tb.Fatalf("CommitMatches = %d, %v; want %d", n, err, len(rows))
	}
}

// claimAll claims every row due at t, far in the future of any lease.
func claimAll(tb testing.TB, o rappel.Outbox, node string, t time.Time) []*rappel.AlertRow {
	tb.Helper()
	got, err := o.ClaimAlerts(context.Background(), node, t, time.Minute, 10_000)
	if err != nil {
		tb.Fatal(err)
	}
	return got
}

// keys names rows sub/record@seq, in their order.
func keys(rows []*rappel.AlertRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%s/%s@%d", r.Sub, r.Record, r.Seq)
	}
	return out
}
