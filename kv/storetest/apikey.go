package storetest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// KeyStore runs the rappel.KeyStore contract. newStores returns two handles
// on one new, empty store.
func KeyStore(t *testing.T, newStores func(t *testing.T) (a, b rappel.KeyStore)) {
	ctx := context.Background()
	k, other := newStores(t)
	t.Run("Empty", func(t *testing.T) {
		m, err := k.KeysByHash(ctx)
		if err != nil || len(m) != 0 {
			t.Fatalf("a store never written: %v, %v", m, err)
		}
		keys, err := k.ListKeys(ctx)
		if err != nil || len(keys) != 0 {
			t.Fatalf("a store never written lists %v, %v", keys, err)
		}
	})
	t0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	key2, b := issue(t, k, rappel.PlanPro, "second", t0.Add(time.Hour))
	key1, a := issue(t, k, rappel.PlanFree, "first, with ünicode", t0)
	t.Run("ListKeys", func(t *testing.T) {
		keys, err := other.ListKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 2 || *keys[0] != *a || *keys[1] != *b {
			t.Fatalf("got %+v, want %+v then %+v", keys, a, b)
		}
	})
	t.Run("KeysByHash", func(t *testing.T) {
		// The other handle reads what the first wrote, as a node reads what
		// `rappel keys` or another node wrote.
		m, err := other.KeysByHash(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got1, got2 := m[sha(key1)], m[sha(key2)]
		if len(m) != 2 || got1 == nil || *got1 != *a || got2 == nil || *got2 != *b {
			t.Fatalf("got %v", m)
		}
		again, err := other.KeysByHash(ctx)
		if err != nil || again[sha(key1)] != got1 {
			t.Fatalf("an unchanged store read again gave a new map (%v): it should answer from memory", err)
		}
		key3, _ := issue(t, k, rappel.PlanFree, "third", t0)
		m, err = other.KeysByHash(ctx)
		if err != nil || len(m) != 3 || m[sha(key3)] == nil {
			t.Fatalf("after an add: %d keys, %v", len(m), err)
		}
	})
	t.Run("RevokeKey", func(t *testing.T) {
		// Read once so that the other handle holds the keys in memory: the
		// revocation must still reach it.
		if _, err := other.KeysByHash(ctx); err != nil {
			t.Fatal(err)
		}
		at := t0.Add(48 * time.Hour)
		got, err := k.RevokeKey(ctx, a.ID, at)
		if err != nil || !got.Revoked || !got.RevokedAt.Equal(at) || got.ID != a.ID || got.Plan != a.Plan {
			t.Fatalf("got %+v, %v", got, err)
		}
		again, err := other.RevokeKey(ctx, a.ID, at.Add(time.Hour))
		if err != nil || !again.Revoked || !again.RevokedAt.Equal(at) {
			t.Fatalf("revoking twice: %+v, %v", again, err)
		}
		m, err := other.KeysByHash(ctx)
		if err != nil || !m[sha(key1)].Revoked || !m[sha(key1)].RevokedAt.Equal(at) || m[sha(key2)].Revoked {
			t.Fatalf("the other handle after revoking: %v", err)
		}
		keys, err := k.ListKeys(ctx)
		if err != nil || len(keys) != 3 {
			t.Fatalf("listing after revoking: %d keys, %v", len(keys), err)
		}
		for _, got := range keys {
			if got.Revoked != (got.ID == a.ID) {
				t.Fatalf("listing after revoking %s: %+v", a.ID, got)
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := k.RevokeKey(ctx, "000000000000", t0); rappel.ErrorCode(err) != rappel.ENOTFOUND {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("ErrTaken", func(t *testing.T) {
		_, hash := rappel.NewKey()
		err := k.AddKey(ctx, hash, &rappel.APIKey{ID: b.ID, Plan: rappel.PlanFree, Created: t0})
		if rappel.ErrorCode(err) != rappel.EINVALID {
			t.Fatalf("an ID taken: %v", err)
		}
		m, err := other.KeysByHash(ctx)
		if err != nil || m[hash] != nil {
			t.Fatalf("a refused key was stored: %v", err)
		}
	})
}

// issue adds a new key of plan to k and returns it with its record.
func issue(tb testing.TB, k rappel.KeyStore, plan, label string, created time.Time) (string, *rappel.APIKey) {
	tb.Helper()
	key, hash := rappel.NewKey()
	a := &rappel.APIKey{ID: rappel.KeyID(hash), Plan: plan, Label: label, Created: created}
	if err := k.AddKey(context.Background(), hash, a); err != nil {
		tb.Fatal(err)
	}
	return key, a
}

func sha(key string) [sha256.Size]byte { return sha256.Sum256([]byte(key)) }

// QuotaStore runs the rappel.QuotaStore contract. newStores returns two
// handles on one new, empty store.
func QuotaStore(t *testing.T, newStores func(t *testing.T) (a, b rappel.QuotaStore)) {
	ctx := context.Background()
	const k1, k2, k3 = "aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"
	t.Run("AddUsage", func(t *testing.T) {
		a, b := newStores(t)
		mustAdd(t, a, "2025-03", map[string]int64{k1: 3, k2: 1 << 33, k3: 0}, map[string]int64{k1: 3, k2: 1 << 33, k3: 0})
		// The other node's requests add to the first's.
		mustAdd(t, b, "2025-03", map[string]int64{k1: 2}, map[string]int64{k1: 5})
		// A zero delta reads what the others added.
		mustAdd(t, a, "2025-03", map[string]int64{k1: 0, k2: 0}, map[string]int64{k1: 5, k2: 1 << 33})
		mustAdd(t, a, "2025-04", map[string]int64{k1: 1}, map[string]int64{k1: 1})
		got, err := b.LoadUsage(ctx, "2025-03")
		if err != nil || len(got) != 2 || got[k1] != 5 || got[k2] != 1<<33 {
			t.Fatalf("LoadUsage 2025-03: %v, %v (a key only read has no count)", got, err)
		}
		got, err = b.LoadUsage(ctx, "2025-05")
		if err != nil || len(got) != 0 {
			t.Fatalf("a month without counts: %v, %v", got, err)
		}
	})
	t.Run("ErrNegative", func(t *testing.T) {
		a, _ := newStores(t)
		mustAdd(t, a, "2025-03", map[string]int64{k1: 4}, map[string]int64{k1: 4})
		_, err := a.AddUsage(ctx, "2025-03", map[string]int64{k1: 1, k2: -1})
		if rappel.ErrorCode(err) != rappel.EINVALID {
			t.Fatalf("a negative delta: %v, want EINVALID", err)
		}
		got, err := a.LoadUsage(ctx, "2025-03")
		if err != nil || len(got) != 1 || got[k1] != 4 {
			t.Fatalf("a refused push changed the counts: %v, %v", got, err)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		// Nodes pushing at once never lose each other's requests.
		a, b := newStores(t)
		const workers, pushes = 4, 25
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			s := a
			if w%2 == 1 {
				s = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range pushes {
					// Both keys in both orders: pushes overlap.
					if _, err := s.AddUsage(ctx, "2025-03", map[string]int64{k1: 1, k2: 2}); err != nil {
						errs <- fmt.Errorf("worker %d: %w", w, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got, err := a.LoadUsage(ctx, "2025-03")
		if err != nil || got[k1] != workers*pushes || got[k2] != 2*workers*pushes {
			t.Fatalf("after %d pushes: %v, %v", workers*pushes, got, err)
		}
	})
}

func mustAdd(tb testing.TB, s rappel.QuotaStore, month string, deltas, want map[string]int64) {
	tb.Helper()
	got, err := s.AddUsage(context.Background(), month, deltas)
	if err != nil {
		tb.Fatalf("AddUsage(%s, %v): %v", month, deltas, err)
	}
	if len(got) != len(want) {
		tb.Fatalf("AddUsage(%s, %v) = %v, want %v", month, deltas, got, want)
	}
	for id, n := range want {
		if got[id] != n {
			tb.Fatalf("AddUsage(%s, %v) = %v, want %v", month, deltas, got, want)
		}
	}
}
