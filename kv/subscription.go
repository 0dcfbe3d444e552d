package kv

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/rappel-ca/rappel"
)

// Alert keys all live under a/ (see the key layout in the package doc):
// a/sub/<id> holds a subscription, a/tok/<SHA-256 of a token, 32 bytes>
// names the subscription and kind of a token, a/out/<sub>\x00<record> is an
// outbox row and a/matched/<record> marks a new recall as matched. (Stores
// written before records were marked one by one hold a/done/<seq> marks of
// whole batches, which nothing reads any more.) a/allow/<name> is an
// allowance of TakeAllowance. a/confirm/<sub>\x00confirm is the outbox row
// of a pending subscription's confirmation e-mail.
const (
	alertPrefix         = "a/"
	subPrefix           = alertPrefix + "sub/"
	tokenPrefix         = alertPrefix + "tok/"
	outboxPrefix        = alertPrefix + "out/"
	matchedRecordPrefix = alertPrefix + "matched/"
	allowancePrefix     = alertPrefix + "allow/"
	confirmPrefix       = alertPrefix + "confirm/"
)

var _ rappel.SubscriptionStore = (*Store)(nil)

// tokenRef is the value of a token key.
type tokenRef struct {
	Sub  string `json:"sub"`
	Kind string `json:"kind"`
}

func subKey(id string) []byte { return append([]byte(subPrefix), id...) }

func tokenKey(h [32]byte) []byte { return append([]byte(tokenPrefix), h[:]...) }

// CreateSubscription stores sub and its token hashes in one synced batch.
func (s *Store) CreateSubscription(ctx context.Context, sub *rappel.Subscription, tokenHashes map[string][32]byte) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	return s.write(func(b *pebble.Batch) error {
		if err := putSubscription(b, sub, tokenHashes); err != nil {
			return err
		}
		return s.db.commit(b, "storing subscription")
	})
}

// putSubscription adds sub and its token hashes to b.
func putSubscription(b *pebble.Batch, sub *rappel.Subscription, tokenHashes map[string][32]byte) error {
	if err := setValue(b, subKey(sub.ID), sub); err != nil {
		return fmt.Errorf("storing subscription: %w", err)
	}
	for kind, h := range tokenHashes {
		if err := setValue(b, tokenKey(h), tokenRef{Sub: sub.ID, Kind: kind}); err != nil {
			return fmt.Errorf("storing subscription token: %w", err)
		}
	}
	return nil
}

// CreatePending stores sub, its token hashes, the use of allowance and
// row, when the allowance lets it through, in one synced batch; see
// rappel.SubscriptionStore. allowanceMu keeps TakeAllowance and other
// CreatePendings from counting between the read and the commit.
func (s *Store) CreatePending(ctx context.Context, sub *rappel.Subscription, tokenHashes map[string][32]byte, row *rappel.AlertRow, a *rappel.Allowance) (bool, error) {
	if err := s.ready(ctx); err != nil {
		return false, err
	}
	return writeBatch(s, func(b *pebble.Batch) (bool, error) {
		if err := putSubscription(b, sub, tokenHashes); err != nil {
			return false, err
		}
		queued := true
		if a != nil {
			allowanceMu.Lock()
			defer allowanceMu.Unlock()
			next, ok, err := s.countAllowance(ctx, a)
			if err != nil {
				return false, err
			}
			if ok {
				if err := setValue(b, allowanceKey(a.Name), next); err != nil {
					return false, fmt.Errorf("storing allowance: %w", err)
				}
			}
			queued = ok
		}
		var written []rowChange // a new subscription's row: none was there
		if queued {
			if err := setValue(b, confirmOutbox.key(row.Sub, row.Record), storedAlert{AlertRow: *row}); err != nil {
				return false, fmt.Errorf("encoding %s: %w", confirmOutbox.what, err)
			}
			written = append(written, rowChange{now: row})
		}
		if err := s.commitOutbox(confirmOutbox, b, "storing subscription", written); err != nil {
			return false, err
		}
		return queued, nil
	})
}

// SubscriptionByToken returns the subscription of the token whose SHA-256
// is h and the token's kind, or an ENOTFOUND *rappel.Error.
func (s *Store) SubscriptionByToken(ctx context.Context, h [32]byte) (*rappel.Subscription, string, error) {
	var ref tokenRef
	found, err := s.getValue(ctx, tokenKey(h), &ref)
	if err != nil {
		return nil, "", fmt.Errorf("reading token: %w", err)
	}
	if !found {
		return nil, "", rappel.Errorf(rappel.ENOTFOUND, "No subscription has this token; check that the link was copied whole.")
	}
	sub := new(rappel.Subscription)
	found, err = s.getValue(ctx, subKey(ref.Sub), sub)
	if err != nil {
		return nil, "", fmt.Errorf("reading subscription %s: %w", ref.Sub, err)
	}
	if !found {
		return nil, "", rappel.Errorf(rappel.ENOTFOUND, "No subscription has this token; check that the link was copied whole.")
	}
	return sub, ref.Kind, nil
}

// PutSubscription replaces sub durably.
func (s *Store) PutSubscription(ctx context.Context, sub *rappel.Subscription) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	return s.putValue(subKey(sub.ID), sub, "subscription")
}

// ForEachSubscription calls fn for every subscription in id order.
func (s *Store) ForEachSubscription(ctx context.Context, fn func(*rappel.Subscription) error) error {
	return scanValues(ctx, s, []byte(subPrefix), "subscription", fn)
}

// Subscription returns the subscription with id, or ENOTFOUND.
func (s *Store) Subscription(ctx context.Context, id string) (*rappel.Subscription, error) {
	sub := new(rappel.Subscription)
	found, err := s.getValue(ctx, subKey(id), sub)
	if err != nil {
		return nil, fmt.Errorf("reading subscription %s: %w", id, err)
	}
	if !found {
		return nil, rappel.Errorf(rappel.ENOTFOUND, "No subscription has id %q.", id)
	}
	return sub, nil
}

// AddToken stores one more token for subscription id, synced.
func (s *Store) AddToken(ctx context.Context, id, kind string, h [32]byte) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	return s.putValue(tokenKey(h), tokenRef{Sub: id, Kind: kind}, "token")
}

// DeletePendingBefore deletes the pending subscriptions created before t
// and every token naming them, in one synced batch. Tokens are keyed by
// hash, so finding a subscription's tokens is a scan of all of them; the
// pass runs rarely (the runner's prune interval) and is skipped when no
// subscription expired.
func (s *Store) DeletePendingBefore(ctx context.Context, t time.Time) (int, error) {
	doomed := map[string]bool{}
	err := s.ForEachSubscription(ctx, func(sub *rappel.Subscription) error {
		if sub.Status == rappel.SubPending && sub.CreatedAt.Before(t) {
			doomed[sub.ID] = true
		}
		return nil
	})
	if err != nil || len(doomed) == 0 {
		return 0, err
	}
	return writeBatch(s, func(b *pebble.Batch) (int, error) {
		for id := range doomed {
			if err := b.Delete(subKey(id), nil); err != nil {
				return 0, err
			}
		}
		err = s.scan(ctx, []byte(tokenPrefix), func(key, val []byte) error {
			var ref tokenRef
			if err := decodeValue(val, &ref); err != nil {
				return fmt.Errorf("decoding token: %w", err)
			}
			if doomed[ref.Sub] {
				return b.Delete(key, nil)
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		if err := s.db.commit(b, "deleting expired subscriptions"); err != nil {
			return 0, err
		}
		return len(doomed), nil
	})
}

// allowance is the value of an allowance key: the uses counted in the
// window that ends at Until.
type allowance struct {
	Used  int       `json:"used"`
	Until time.Time `json:"until"`
}

func allowanceKey(name string) []byte { return append([]byte(allowancePrefix), name...) }

// allowanceMu serializes TakeAllowance's read and write. A Pebble store
// has one process (the data dir is locked), so a lock in the process is
// the store's; it is one lock for every Store of the process because the
// step it guards is a read and a synced write, far shorter than anything
// that calls it waits for (an SMTP exchange).
var allowanceMu sync.Mutex

// TakeAllowance counts one use of the allowance name; see
// rappel.SubscriptionStore.
func (s *Store) TakeAllowance(ctx context.Context, name string, limit int, now, end time.Time) (bool, time.Time, error) {
	allowanceMu.Lock()
	defer allowanceMu.Unlock()
	a, ok, err := s.countAllowance(ctx, &rappel.Allowance{Name: name, Limit: limit, Now: now, End: end})
	if err != nil || !ok {
		return false, a.Until, err
	}
	if err := s.putValue(allowanceKey(name), a, "allowance"); err != nil {
		return false, time.Time{}, err
	}
	return true, a.Until, nil
}

// countAllowance reads the allowance of u and returns it with u counted,
// and ok, or as stored and not ok when its window is used up. The caller
// holds allowanceMu and writes it.
func (s *Store) countAllowance(ctx context.Context, u *rappel.Allowance) (a allowance, ok bool, err error) {
	found, err := s.getValue(ctx, allowanceKey(u.Name), &a)
	if err != nil {
		return allowance{}, false, fmt.Errorf("reading allowance: %w", err)
	}
	switch {
	case !found || !a.Until.After(u.Now):
		return allowance{Used: 1, Until: u.End.UTC()}, true, nil
	case a.Used < u.Limit:
		a.Used++
		return a, true, nil
	}
	return a, false, nil
}

// DeleteAllowancesEnded deletes the allowances whose window ended at or
// before now, in one synced batch.
func (s *Store) DeleteAllowancesEnded(ctx context.Context, now time.Time) (int, error) {
	allowanceMu.Lock()
	defer allowanceMu.Unlock()
	return writeBatch(s, func(b *pebble.Batch) (int, error) {
		n := 0
		err := s.scan(ctx, []byte(allowancePrefix), func(key, val []byte) error {
			var a allowance
			if err := decodeValue(val, &a); err != nil {
				return fmt.Errorf("decoding allowance: %w", err)
			}
			if a.Until.After(now) {
				return nil
			}
			n++
			return b.Delete(key, nil)
		})
		if err != nil {
			return 0, err
		}
		if err := s.db.commit(b, "deleting ended allowances"); err != nil {
			return 0, err
		}
		return n, nil
	})
}
