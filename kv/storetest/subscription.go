package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
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
		Search: rappel.AlertSearch{Q: "peanut cookies", Allergen: "peanut"}}
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
