package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// SubscriptionStore runs the rappel.SubscriptionStore contract. newStores
// returns two handles on one new, empty store: what one node writes, the
// other reads (subscribe on one node, unsubscribe on another).
// ForEachSubscription is checked over more subscriptions than fit in a page
// when the implementation reads by pages of at most 20.
func SubscriptionStore(t *testing.T, newStores func(t *testing.T) (a, b rappel.SubscriptionStore)) {
	ctx := context.Background()
	st, other := newStores(t)
	t0 := time.Date(2026, 11, 22, 4, 0, 0, 123456789, time.UTC)
	sub := &rappel.Subscription{ID: "sub-1", Email: "ana@example.ca", Lang: rappel.LangFR, Status: rappel.SubPending, CreatedAt: t0,
		Search: rappel.AlertSearch{Q: "peanut cookies", FilterValues: rappel.FilterValues{Allergen: "peanut"}}}
	confirm, unsub := tokenHash("confirm-1"), tokenHash("unsub-1")
	if err := st.CreateSubscription(ctx, sub, map[string][32]byte{rappel.TokenConfirm: confirm, rappel.TokenUnsubscribe: unsub}); err != nil {
		t.Fatalf("CreateSubscription: %v", err)
	}
	t.Run("Subscription", func(t *testing.T) {
		got, err := other.Subscription(ctx, sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameSub(t, got, sub)
	})
	t.Run("SubscriptionByToken", func(t *testing.T) {
		for kind, h := range map[string][32]byte{rappel.TokenConfirm: confirm, rappel.TokenUnsubscribe: unsub} {
			got, k, err := other.SubscriptionByToken(ctx, h)
			if err != nil || k != kind {
				t.Fatalf("token %s: kind %q, %v", kind, k, err)
			}
			sameSub(t, got, sub)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, _, err := other.SubscriptionByToken(ctx, tokenHash("nobody")); rappel.ErrorCode(err) != rappel.ENOTFOUND {
			t.Fatalf("unknown token: %v, want ENOTFOUND", err)
		}
		if _, err := other.Subscription(ctx, "nobody"); rappel.ErrorCode(err) != rappel.ENOTFOUND {
			t.Fatalf("unknown id: %v, want ENOTFOUND", err)
		}
	})
	t.Run("AddToken", func(t *testing.T) {
		h := tokenHash("unsub-2")
		if err := st.AddToken(ctx, sub.ID, rappel.TokenUnsubscribe, h); err != nil {
			t.Fatal(err)
		}
		got, k, err := other.SubscriptionByToken(ctx, h)
		if err != nil || k != rappel.TokenUnsubscribe || got.ID != sub.ID {
			t.Fatalf("added token: %+v, %q, %v", got, k, err)
		}
	})
	t.Run("PutSubscription", func(t *testing.T) {
		// Confirmed on one node, unsubscribed on the other: each reads the
		// other's write.
		got, _, err := other.SubscriptionByToken(ctx, confirm)
		if err != nil {
			t.Fatal(err)
		}
		got.Status = rappel.SubActive
		got.Consent = &rappel.Consent{Method: rappel.ConsentDoubleOptIn, At: t0.Add(time.Minute), RequestedAt: t0, UserAgent: "test"}
		if err := other.PutSubscription(ctx, got); err != nil {
			t.Fatal(err)
		}
		mine, _, err := st.SubscriptionByToken(ctx, unsub)
		if err != nil {
			t.Fatal(err)
		}
		sameSub(t, mine, got)
		mine.Status, mine.UnsubscribedAt = rappel.SubUnsubscribed, t0.Add(time.Hour)
		if err := st.PutSubscription(ctx, mine); err != nil {
			t.Fatal(err)
		}
		back, err := other.Subscription(ctx, sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameSub(t, back, mine)
	})
	t.Run("ForEachSubscription", func(t *testing.T) {
		want := map[string]bool{sub.ID: true}
		for i := range 45 {
			s := &rappel.Subscription{ID: fmt.Sprintf("sub-%03d", i+2), Email: fmt.Sprintf("u%d@example.ca", i), Status: rappel.SubActive, CreatedAt: t0}
			if err := st.CreateSubscription(ctx, s, nil); err != nil {
				t.Fatal(err)
			}
			want[s.ID] = true
		}
		seen := map[string]bool{}
		err := other.ForEachSubscription(ctx, func(s *rappel.Subscription) error {
			if seen[s.ID] || !want[s.ID] {
				return fmt.Errorf("%s seen twice, or never stored", s.ID)
			}
			seen[s.ID] = true
			return nil
		})
		if err != nil || len(seen) != len(want) {
			t.Fatalf("saw %d of %d subscriptions: %v", len(seen), len(want), err)
		}
		stop := errors.New("stop")
		n := 0
		err = other.ForEachSubscription(ctx, func(*rappel.Subscription) error { n++; return stop })
		if !errors.Is(err, stop) || n != 1 {
			t.Fatalf("fn's error: %v after %d calls; want it back after 1", err, n)
		}
	})
	t.Run("DeletePendingBefore", func(t *testing.T) {
		// Two pending subscriptions, one old enough to go; one active
		// and one unsubscribed as old, which stay.
		cutoff := t0.Add(7 * 24 * time.Hour)
		mk := func(id, status string, created time.Time) *rappel.Subscription {
			x := &rappel.Subscription{ID: id, Email: id + "@example.ca", Status: status, CreatedAt: created}
			h := map[string][32]byte{rappel.TokenConfirm: tokenHash(id + "-c"), rappel.TokenUnsubscribe: tokenHash(id + "-u")}
			if err := st.CreateSubscription(ctx, x, h); err != nil {
				t.Fatal(err)
			}
			return x
		}
		old := mk("pend-old", rappel.SubPending, cutoff.Add(-time.Millisecond))
		young := mk("pend-young", rappel.SubPending, cutoff)
		mk("act-old", rappel.SubActive, t0)
		mk("gone-old", rappel.SubUnsubscribed, t0)
		if err := st.AddToken(ctx, old.ID, rappel.TokenUnsubscribe, tokenHash("pend-old-u2")); err != nil {
			t.Fatal(err)
		}
		n, err := other.DeletePendingBefore(ctx, cutoff)
		if err != nil || n != 1 {
			t.Fatalf("DeletePendingBefore = %d, %v; want 1", n, err)
		}
		if _, err := st.Subscription(ctx, old.ID); rappel.ErrorCode(err) != rappel.ENOTFOUND {
			t.Fatalf("expired subscription: %v, want ENOTFOUND", err)
		}
		for _, tok := range []string{"pend-old-c", "pend-old-u", "pend-old-u2"} {
			if _, _, err := st.SubscriptionByToken(ctx, tokenHash(tok)); rappel.ErrorCode(err) != rappel.ENOTFOUND {
				t.Fatalf("token %s of the expired subscription: %v, want ENOTFOUND", tok, err)
			}
		}
		for _, id := range []string{young.ID, "act-old", "gone-old", sub.ID} {
			if _, _, err := st.SubscriptionByToken(ctx, tokenHash(id+"-u")); err != nil && id != sub.ID {
				t.Fatalf("token of %s: %v", id, err)
			}
			if _, err := st.Subscription(ctx, id); err != nil {
				t.Fatalf("%s: %v", id, err)
			}
		}
		if n, err := st.DeletePendingBefore(ctx, cutoff); err != nil || n != 0 {
			t.Fatalf("DeletePendingBefore again = %d, %v; want 0", n, err)
		}
	})
	t.Run("TakeAllowance", func(t *testing.T) {
		day := t0.Add(24 * time.Hour)
		take := func(s rappel.SubscriptionStore, name string, limit int, now, end time.Time, wantOK bool, wantUntil time.Time) {
			t.Helper()
			ok, until, err := s.TakeAllowance(ctx, name, limit, now, end)
			if err != nil || ok != wantOK || !until.Equal(wantUntil.Truncate(time.Microsecond)) && !until.Equal(wantUntil) {
				t.Fatalf("TakeAllowance(%s, %d, %s) = %v, %s, %v; want %v, %s", name, limit, now, ok, until, err, wantOK, wantUntil)
			}
		}
		// Two uses a window, counted by either handle.
		take(st, "n1", 2, t0, day, true, day)
		take(other, "n1", 2, t0.Add(time.Hour), t0.Add(25*time.Hour), true, day)
		take(st, "n1", 2, t0.Add(2*time.Hour), t0.Add(26*time.Hour), false, day)
		take(other, "n1", 2, day.Add(-time.Second), day.Add(day.Sub(t0)), false, day)
		// Names are independent.
		take(other, "n2", 1, t0, day, true, day)
		// The window ends: a new one opens with this use.
		take(other, "n1", 2, day, day.Add(24*time.Hour), true, day.Add(24*time.Hour))
	})
	t.Run("TakeAllowanceConcurrently", func(t *testing.T) {
		// Eight callers on two handles race for three uses.
		var wg sync.WaitGroup
		var granted atomic.Int32
		errs := make(chan error, 8)
		for i := range 8 {
			s := st
			if i%2 == 1 {
				s = other
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, _, err := s.TakeAllowance(ctx, "race", 3, t0, t0.Add(time.Hour))
				if err != nil {
					errs <- err
				}
				if ok {
					granted.Add(1)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if g := granted.Load(); g != 3 {
			t.Fatalf("%d of 8 racing uses granted, want 3", g)
		}
	})
	t.Run("DeleteAllowancesEnded", func(t *testing.T) {
		// n1's window ends two days after t0, n2's and race's before.
		n, err := other.DeleteAllowancesEnded(ctx, t0.Add(24*time.Hour))
		if err != nil || n != 2 {
			t.Fatalf("DeleteAllowancesEnded = %d, %v; want 2", n, err)
		}
		// n2 starts over: its window ended and was deleted.
		if ok, _, err := st.TakeAllowance(ctx, "n2", 1, t0.Add(time.Hour), t0.Add(2*time.Hour)); !ok || err != nil {
			t.Fatalf("n2 after its deletion: %v, %v", ok, err)
		}
		// n1's window is still open: its count is kept.
		if ok, _, err := st.TakeAllowance(ctx, "n1", 1, t0.Add(30*time.Hour), t0.Add(50*time.Hour)); ok || err != nil {
			t.Fatalf("n1 was reset: %v, %v", ok, err)
		}
	})
	t.Run("Canceled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := other.Subscription(cctx, sub.ID); err == nil {
			t.Fatal("a canceled context read a subscription")
		}
	})
}

func tokenHash(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// sameSub compares subscriptions by their JSON, which is what both stores
// keep (times to the nanosecond).
func sameSub(tb testing.TB, got, want *rappel.Subscription) {
	tb.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		tb.Fatalf("got  %s\nwant %s", g, w)
	}
}
