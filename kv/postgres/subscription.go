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

// schemaConfirmations holds the confirmation e-mails still to send: an
// outbox as alert_outbox, whose rows CreatePending writes with their
// subscription, and which nothing matches.
var schemaConfirmations = outboxTables(confirmOutbox)

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
		return tx.SendBatch(ctx, subscriptionBatch(sub, body, tokenHashes)).Close()
	})
	if err != nil {
		return fmt.Errorf("storing subscription: %w", err)
	}
	return nil
}

// subscriptionBatch writes sub, encoded as body, and its token hashes.
func subscriptionBatch(sub *rappel.Subscription, body []byte, tokenHashes map[string][32]byte) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(upsertSubscription, sub.ID, sub.Status, string(body))
	for kind, h := range tokenHashes {
		b.Queue(upsertToken, h[:], sub.ID, kind)
	}
	return b
}

// insertConfirmation writes a confirmation row; a second write of one
// subscription's row changes nothing.
const insertConfirmation = `INSERT INTO alert_confirmations (sub, record, seq, status, attempts, next_at, created_at, error)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (sub, record) DO NOTHING`

// CreatePending stores sub, its token hashes, the use of allowance and
// row, when the allowance lets it through, in one transaction; see
// rappel.SubscriptionStore. The allowance's row lock orders the
// transactions counting one address, whichever nodes run them.
func (s *Store) CreatePending(ctx context.Context, sub *rappel.Subscription, tokenHashes map[string][32]byte, row *rappel.AlertRow, a *rappel.Allowance) (bool, error) {
	if s.pool == nil {
		return false, errNotOpen
	}
	body, err := json.Marshal(sub)
	if err != nil {
		return false, fmt.Errorf("encoding subscription: %w", err)
	}
	var queued bool
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		queued = true // a retried transaction starts over
		if err := tx.SendBatch(ctx, subscriptionBatch(sub, body, tokenHashes)).Close(); err != nil {
			return err
		}
		if a != nil {
			ok, _, err := countAllowance(ctx, tx, a)
			if err != nil {
				return err
			}
			queued = ok
		}
		if !queued {
			return nil
		}
		_, err := tx.Exec(ctx, insertConfirmation, row.Sub, row.Record, int64(row.Seq), row.Status, row.Attempts,
			row.NextAt.UTC(), row.CreatedAt.UTC(), row.Error)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("storing subscription: %w", err)
	}
	return queued, nil
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
	return countAllowance(ctx, s.pool, &rappel.Allowance{Name: name, Limit: limit, Now: now, End: end})
}

// countAllowance counts the use a with takeAllowance on q, the pool or a
// transaction, and reports whether it counted and when its window ends.
func countAllowance(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}, a *rappel.Allowance) (bool, time.Time, error) {
	var used int64
	var until time.Time
	if err := q.QueryRow(ctx, takeAllowance, a.Name, a.Now.UTC(), a.End.UTC(), int64(a.Limit)).Scan(&used, &until); err != nil {
		return false, time.Time{}, fmt.Errorf("counting allowance: %w", err)
	}
	return used <= int64(a.Limit), until.UTC(), nil
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
