package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// IdempotencyStore runs the rappel.IdempotencyStore contract. a and b are
// two handles on one store (two nodes of a fleet, or one store twice).
func IdempotencyStore(t *testing.T, newStores func(t *testing.T) (a, b rappel.IdempotencyStore)) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	entry := func(id, claim string, at time.Time) *rappel.IdempotentEntry {
		return &rappel.IdempotentEntry{ID: rappel.IdempotencyID("key-1", id), Fingerprint: rappel.IdempotencyFingerprint("POST", "/recall/webhooks", "", []byte(`{}`)),
			Claim: claim, CreatedAt: at}
	}
	claim := func(t *testing.T, s rappel.IdempotencyStore, e *rappel.IdempotentEntry, now time.Time) *rappel.IdempotentEntry {
		t.Helper()
		held, err := s.ClaimIdempotent(ctx, e, now)
		if err != nil {
			t.Fatal(err)
		}
		return held
	}
	t.Run("ClaimFinishReplay", func(t *testing.T) {
		a, b := newStores(t)
		e := entry("k", "c1", t0)
		if held := claim(t, a, e, t0); held != nil {
			t.Fatalf("the first claim found %+v", held)
		}
		held := claim(t, b, entry("k", "c2", t0.Add(time.Second)), t0.Add(time.Second))
		if held == nil || held.Done || held.Claim != "c1" || held.Fingerprint != e.Fingerprint {
			t.Fatalf("a claim while the first is in flight found %+v, want c1's claim in flight", held)
		}
		done := *e
		done.Status, done.Header, done.Body = 201, map[string]string{"Content-Type": "application/json", "Location": "/recall/webhooks/wh1"}, []byte(`{"id":"wh1"}`)
		if err := a.FinishIdempotent(ctx, &done); err != nil {
			t.Fatal(err)
		}
		now := t0.Add(rappel.IdempotencyTTL - time.Second)
		held = claim(t, b, entry("k", "c3", now), now)
		if held == nil || !held.Done || held.Status != 201 || string(held.Body) != `{"id":"wh1"}` ||
			held.Header["Location"] != "/recall/webhooks/wh1" || held.Header["Content-Type"] != "application/json" || !held.CreatedAt.Equal(t0) {
			t.Fatalf("a retry within the day found %+v, want the answer stored", held)
		}
	})
	t.Run("Expiry", func(t *testing.T) {
		a, b := newStores(t)
		e := entry("k", "c1", t0)
		claim(t, a, e, t0)
		// A claim in flight past its lease is a request that died.
		later := t0.Add(rappel.IdempotencyLease)
		if held := claim(t, b, entry("k", "c2", later), later); held != nil {
			t.Fatalf("a claim past the lease of the first found %+v, want it taken over", held)
		}
		// The first request ends late: its answer is not stored over c2's claim.
		stale := *e
		stale.Status = 200
		if err := a.FinishIdempotent(ctx, &stale); err != nil {
			t.Fatal(err)
		}
		if err := a.ReleaseIdempotent(ctx, e.ID, "c1"); err != nil {
			t.Fatal(err)
		}
		held := claim(t, a, entry("k", "c3", later), later)
		if held == nil || held.Claim != "c2" || held.Done {
			t.Fatalf("after the first request's late finish and release: %+v, want c2's claim intact", held)
		}
		c2 := entry("k", "c2", later)
		c2.Status = 200
		if err := b.FinishIdempotent(ctx, c2); err != nil {
			t.Fatal(err)
		}
		// An answer past the day is forgotten.
		day := later.Add(rappel.IdempotencyTTL)
		if held := claim(t, a, entry("k", "c4", day), day); held != nil {
			t.Fatalf("a claim a day after the answer found %+v, want it replaced", held)
		}
	})
	t.Run("Release", func(t *testing.T) {
		a, b := newStores(t)
		e := entry("k", "c1", t0)
		claim(t, a, e, t0)
		if err := b.ReleaseIdempotent(ctx, e.ID, "other"); err != nil {
			t.Fatal(err)
		}
		if held := claim(t, b, entry("k", "c2", t0), t0); held == nil || held.Claim != "c1" {
			t.Fatalf("a release by another claim removed c1's: %+v", held)
		}
		if err := b.ReleaseIdempotent(ctx, e.ID, "c1"); err != nil {
			t.Fatal(err)
		}
		if held := claim(t, b, entry("k", "c2", t0), t0); held != nil {
			t.Fatalf("after its release, the key is still held: %+v", held)
		}
		if err := a.ReleaseIdempotent(ctx, "no-such-id", "c1"); err != nil {
			t.Fatalf("releasing an entry that is not there: %v", err)
		}
	})
	t.Run("DeleteBefore", func(t *testing.T) {
		a, b := newStores(t)
		for i := range 5 {
			e := entry(fmt.Sprint("k", i), "c", t0.Add(time.Duration(i)*time.Hour))
			claim(t, a, e, e.CreatedAt)
			e.Status = 200
			if err := a.FinishIdempotent(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		n, err := b.DeleteIdempotentBefore(ctx, t0.Add(2*time.Hour))
		if err != nil || n != 2 {
			t.Fatalf("DeleteIdempotentBefore(+2h) = %d, %v; want 2", n, err)
		}
		for i := range 5 {
			now := t0.Add(5 * time.Hour)
			held := claim(t, b, entry(fmt.Sprint("k", i), "new", now), now)
			if (held == nil) != (i < 2) {
				t.Errorf("entry %d after deleting those before +2h: %+v", i, held)
			}
		}
		if n, err := b.DeleteIdempotentBefore(ctx, t0); err != nil || n != 0 {
			t.Fatalf("DeleteIdempotentBefore with nothing to delete = %d, %v", n, err)
		}
	})
	t.Run("ConcurrentClaims", func(t *testing.T) {
		a, b := newStores(t)
		const n = 8
		var wg sync.WaitGroup
		won := make(chan string, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := a
				if i%2 == 1 {
					s = b
				}
				c := fmt.Sprint("c", i)
				held, err := s.ClaimIdempotent(ctx, entry("k", c, t0), t0)
				if err != nil {
					t.Error(err)
					return
				}
				if held == nil {
					won <- c
				} else if held.Claim == c {
					t.Errorf("claim %s found itself held", c)
				}
			}()
		}
		wg.Wait()
		close(won)
		var winners []string
		for c := range won {
			winners = append(winners, c)
		}
		if len(winners) != 1 {
			t.Fatalf("%d claims at once: %v won, want one", n, winners)
		}
	})
}
