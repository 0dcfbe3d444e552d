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

// schemaIdempotency holds the entries of Idempotency-Key, one row per
// caller and key (rappel.IdempotentEntry): a claim in flight, then the
// answer to replay. The headers kept are a JSON object as TEXT, the body
// the bytes as written. created_at is indexed for the hourly deletion of
// the expired ones.
const schemaIdempotency = `
CREATE TABLE IF NOT EXISTS idempotency (
	id          TEXT PRIMARY KEY,
	fingerprint TEXT NOT NULL,
	claim       TEXT NOT NULL,
	created_at  TIMESTAMPTZ NOT NULL,
	done        BOOLEAN NOT NULL,
	status      INT NOT NULL,
	header      TEXT NOT NULL,
	body        BYTEA NOT NULL
);
CREATE INDEX IF NOT EXISTS idempotency_created ON idempotency (created_at);
`

var _ rappel.IdempotencyStore = (*Store)(nil)

// ClaimIdempotent inserts e, or takes the place of a stale entry, in one
// statement: the row's lock decides between two nodes claiming at once,
// and the loser reads the winner's row. A row released between the two
// statements is claimed again.
func (s *Store) ClaimIdempotent(ctx context.Context, e *rappel.IdempotentEntry, now time.Time) (*rappel.IdempotentEntry, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	header, err := json.Marshal(e.Header)
	if err != nil {
		return nil, fmt.Errorf("encoding idempotency entry: %w", err)
	}
	for attempt := 0; ; attempt++ {
		var claim string
		err := s.pool.QueryRow(ctx, `INSERT INTO idempotency (id, fingerprint, claim, created_at, done, status, header, body)
			VALUES ($1, $2, $3, $4, false, 0, $5, $6)
			ON CONFLICT (id) DO UPDATE SET fingerprint = excluded.fingerprint, claim = excluded.claim,
				created_at = excluded.created_at, done = false, status = 0, header = excluded.header, body = excluded.body
			WHERE (idempotency.done AND idempotency.created_at <= $7) OR (NOT idempotency.done AND idempotency.created_at <= $8)
			RETURNING claim`,
			e.ID, e.Fingerprint, e.Claim, e.CreatedAt.UTC(), string(header), nonNil(e.Body),
			now.Add(-rappel.IdempotencyTTL).UTC(), now.Add(-rappel.IdempotencyLease).UTC()).Scan(&claim)
		if err == nil {
			return nil, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("claiming an idempotency key: %w", err)
		}
		held, err := s.idempotentEntry(ctx, e.ID)
		if err != nil || held != nil || attempt == 2 {
			return held, err
		}
	}
}

// nonNil is b, or an empty slice for nil: the body column is NOT NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// idempotentEntry reads the entry id, nil when there is none.
func (s *Store) idempotentEntry(ctx context.Context, id string) (*rappel.IdempotentEntry, error) {
	e := &rappel.IdempotentEntry{ID: id}
	var header string
	err := s.pool.QueryRow(ctx, `SELECT fingerprint, claim, created_at, done, status, header, body FROM idempotency WHERE id = $1`, id).
		Scan(&e.Fingerprint, &e.Claim, &e.CreatedAt, &e.Done, &e.Status, &header, &e.Body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading idempotency entry: %w", err)
	}
	if err := json.Unmarshal([]byte(header), &e.Header); err != nil {
		return nil, fmt.Errorf("decoding idempotency entry: %w", err)
	}
	return e, nil
}

// FinishIdempotent stores e's answer while e.Claim holds its row.
func (s *Store) FinishIdempotent(ctx context.Context, e *rappel.IdempotentEntry) error {
	if s.pool == nil {
		return errNotOpen
	}
	header, err := json.Marshal(e.Header)
	if err != nil {
		return fmt.Errorf("encoding idempotency entry: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE idempotency SET done = true, status = $3, header = $4, body = $5 WHERE id = $1 AND claim = $2`,
		e.ID, e.Claim, e.Status, string(header), nonNil(e.Body)); err != nil {
		return fmt.Errorf("storing an idempotent answer: %w", err)
	}
	return nil
}

// ReleaseIdempotent deletes the row id while claim holds it.
func (s *Store) ReleaseIdempotent(ctx context.Context, id, claim string) error {
	if s.pool == nil {
		return errNotOpen
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM idempotency WHERE id = $1 AND claim = $2`, id, claim); err != nil {
		return fmt.Errorf("releasing an idempotency key: %w", err)
	}
	return nil
}

// DeleteIdempotentBefore deletes the rows created before t.
func (s *Store) DeleteIdempotentBefore(ctx context.Context, t time.Time) (int, error) {
	if s.pool == nil {
		return 0, errNotOpen
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency WHERE created_at < $1`, t.UTC())
	if err != nil {
		return 0, fmt.Errorf("deleting expired idempotency entries: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
