package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rappel-ca/rappel"
)

var _ rappel.SubscriptionStore = (*Store)(nil)

// schemaAllowances holds the allowances of TakeAllowance, one row per
// name, and indexes tokens by subscription so that deleting an expired
// subscription's tokens does not scan them all.
const schemaAllowances = `
CREATE TABLE IF NOT EXISTS alert_allowances (
	name  TEXT PRIMARY KEY,
	used  BIGINT NOT NULL,
	until TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS alert_tokens_sub ON alert_tokens (sub);
`

// subscriptionPage is how many subscriptions ForEachSubscription reads per
// query: the callback runs between pages, with no connection held.
var subscriptionPage = 1000

// upsertSubscription writes a subscription whole; like the Pebble store's
// Set, a second write of an id replaces the first.
const upsertSubscription = `INSERT INTO alert_subscriptions (id, status, body) VALUES ($1, $2, $3)
	ON CONFLICT (id) DO UPDATE SET status = excluded.status, body = excluded.body`

const upsertToken = `INSERT INTO alert_tokens (hash, sub, kind) VALUES ($1, $2, $3)
	ON CONFLICT (hash) DO UPDATE SET sub = excluded.sub, kind = excluded.kind`

// CreateSubscription stores sub and its token hashes in one transaction.
func (s *Store) CreateSubscription(ctx context.Context, sub *rappel.Subscription, tokenHashes map[string][32]byte) error {
	if s.pool == nil {
		return errNotOpen
	}
	body, err := json.Marshal(sub)
	if err != nil {
		return fmt.Errorf("encoding subscription: %w", err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(upsertSubscription, sub.ID, sub.Status, string(body))
		for kind, h := range tokenHashes {
			b.Queue(upsertToken, h[:], sub.ID, kind)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("storing subscription: %w", err)
	}
	return nil
}

// notFoundToken is the error of an unknown token, the Pebble store's.
func notFoundToken() error {
	return rappel.Errorf(rappel.ENOTFOUND, "No subscription has this token; check that the link was copied whole.")
}

// SubscriptionByToken returns the subscription of the token whose SHA-256
// is h and the token's kind, or an ENOTFOUND *rappel.Error.
func (s *Store) SubscriptionByToken(ctx context.Context, h [32]byte) (*rappel.Subscription, string, error) {
	if s.pool == nil {
		return nil, "", errNotOpen
	}
	var body []byte
	var kind string
	err := s.pool.QueryRow(ctx, `SELECT s.body, t.kind FROM alert_tokens t JOIN alert_subscriptions s ON s.id = t.sub
		WHERE t.hash = $1`, h[:]).Scan(&body, &kind)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, "", notFoundToken()
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading token: %w", err)
	}
	sub, err := decodeSubscription(body)
	if err != nil {
		return nil, "", err
	}
	return sub, kind, nil
}

// Subscription returns the subscription with id, or ENOTFOUND.
func (s *Store) Subscription(ctx context.Context, id string) (*rappel.Subscription, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	var body []byte
	err := s.pool.QueryRow(ctx, `SELECT body FROM alert_subscriptions WHERE id = $1`, id).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, rappel.Errorf(rappel.ENOTFOUND, "No subscription has id %q.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("reading subscription %s: %w", id, err)
	}
	return decodeSubscription(body)
}

// AddToken stores one more token for subscription id.
func (s *Store) AddToken(ctx context.Context, id, kind string, h [32]byte) error {
	if s.pool == nil {
		return errNotOpen
	}
	if _, err := s.pool.Exec(ctx, upsertToken, h[:], id, kind); err != nil {
		return fmt.Errorf("storing token: %w", err)
	}
	return nil
}

// PutSubscription replaces sub.
func (s *Store) PutSubscription(ctx context.Context, sub *rappel.Subscription) error {
	if s.pool == nil {
		return errNotOpen
	}
	body, err := json.Marshal(sub)
	if err != nil {
		return fmt.Errorf("encoding subscription: %w", err)
	}
	if _, err := s.pool.Exec(ctx, upsertSubscription, sub.ID, sub.Status, string(body)); err != nil {
		return fmt.Errorf("storing subscription: %w", err)
	}
	return nil
}

// ForEachSubscription calls fn for every subscription, a page at a time in
// id order (the database's collation, which may differ from the Pebble
// store's byte order; no caller depends on the order).
func (s *Store) ForEachSubscription(ctx context.Context, fn func(*rappel.Subscription) error) error {
	if s.pool == nil {
		return errNotOpen
	}
	var after *string
	for {
		q, args := `SELECT id, body FROM alert_subscriptions ORDER BY id LIMIT $1`, []any{subscriptionPage}
		if after != nil {
			q, args = `SELECT id, body FROM alert_subscriptions WHERE id > $2 ORDER BY id LIMIT $1`, append(args, *after)
		}
		rows, err := s.pool.Query(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("reading subscriptions: %w", err)
		}
		type entry struct {
			id   string
			body []byte
		}
		page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (entry, error) {
			var e entry
			return e, r.Scan(&e.id, &e.body)
		})
		if err != nil {
			return fmt.Errorf("reading subscriptions: %w", err)
		}
		for _, e := range page {
			sub, err := decodeSubscription(e.body)
			if err != nil {
				return err
			}
			if err := fn(sub); err != nil {
				return err
			}
		}
		if len(page) < subscriptionPage {
			return nil
		}
		after = &page[len(page)-1].id
	}
}

func decodeSubscription(body []byte) (*rappel.Subscription, error) {
	sub := new(rappel.Subscription)
	if err := json.Unmarshal(body, sub); err != nil {
		return nil, fmt.Errorf("decoding subscription: %w", err)
	}
	return sub, nil
}

// DeletePendingBefore deletes the pending subscriptions created before t,
// and their tokens, in one transaction. The status is checked by the
// DELETE itself, so a subscription confirmed on another node meanwhile is
// kept.
func (s *Store) DeletePendingBefore(ctx context.Context, t time.Time) (int, error) {
	if s.pool == nil {
		return 0, errNotOpen
	}
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `DELETE FROM alert_subscriptions
			WHERE status = $1 AND (body->>'created_at')::TIMESTAMPTZ < $2 RETURNING id`, rappel.SubPending, t.UTC())
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		n = len(ids)
		if n == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, `DELETE FROM alert_tokens WHERE sub = ANY($1::TEXT[])`, ids)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("deleting expired subscriptions: %w", err)
	}
	return n, nil
}

// takeAllowance is TakeAllowance in one statement, atomic under the row's
// lock whichever node runs it: a window that ended is opened again with
// one use; inside a window, used grows up to limit+1, which stands for a
// use refused, so that the row returned says whether this one counted.
const takeAllowance = `INSERT INTO alert_allowances AS a (name, used, until) VALUES ($1, 1, $3)
	ON CONFLICT (name) DO UPDATE SET
		used  = CASE WHEN a.until <= $2 THEN 1 ELSE LEAST(a.used + 1, $4 + 1) END,
		until = CASE WHEN a.until <= $2 THEN excluded.until ELSE a.until END
	RETURNING used, until`

// TakeAllowance counts one use of the allowance name; see
// rappel.SubscriptionStore.
func (s *Store) TakeAllowance(ctx context.Context, name string, limit int, now, end time.Time) (bool, time.Time, error) {
	if s.pool == nil {
		return false, time.Time{}, errNotOpen
	}
	var used int64
	var until time.Time
	if err := s.pool.QueryRow(ctx, takeAllowance, name, now.UTC(), end.UTC(), int64(limit)).Scan(&used, &until); err != nil {
		return false, time.Time{}, fmt.Errorf("counting allowance: %w", err)
	}
	return used <= int64(limit), until.UTC(), nil
}

// DeleteAllowancesEnded deletes the allowances whose window ended at or
// before now.
func (s *Store) DeleteAllowancesEnded(ctx context.Context, now time.Time) (int, error) {
	if s.pool == nil {
		return 0, errNotOpen
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM alert_allowances WHERE until <= $1`, now.UTC())
	if err != nil {
		return 0, fmt.Errorf("deleting ended allowances: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
