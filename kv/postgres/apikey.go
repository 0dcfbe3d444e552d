package postgres

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rappel-ca/rappel"
)

// schemaKeys holds API keys (by SHA-256) and monthly quota counters.
//
// api_key_changes is a counter that every AddKey and RevokeKey moves in the
// transaction of its change, so that a node polling for revoked keys reads
// one row, not the key table, while nothing changes. key_usage holds the
// fleet's counts; nodes add to them (AddUsage), never overwrite them.
const schemaKeys = `
CREATE TABLE api_keys (
	hash       BYTEA PRIMARY KEY,
	id         TEXT NOT NULL UNIQUE,
	plan       TEXT NOT NULL,
	label      TEXT NOT NULL,
	created    TIMESTAMPTZ NOT NULL,
	revoked_at TIMESTAMPTZ
);
CREATE TABLE api_key_changes (
	id      INT PRIMARY KEY,
	version BIGINT NOT NULL
);
INSERT INTO api_key_changes (id, version) VALUES (1, 0);
CREATE TABLE key_usage (
	month    TEXT NOT NULL,
	key_id   TEXT NOT NULL,
	requests BIGINT NOT NULL,
	PRIMARY KEY (month, key_id)
);
`

var (
	_ rappel.KeyStore   = (*Store)(nil)
	_ rappel.QuotaStore = (*Store)(nil)
)

// bumpKeys moves the change counter in tx, telling every node's KeysByHash
// to read the keys again.
const bumpKeys = `UPDATE api_key_changes SET version = version + 1 WHERE id = 1`

// AddKey stores k under hash. An ID (or hash) already taken is an EINVALID
// *rappel.Error.
func (s *Store) AddKey(ctx context.Context, hash [sha256.Size]byte, k *rappel.APIKey) error {
	if s.pool == nil {
		return errNotOpen
	}
	var revokedAt *time.Time
	if k.Revoked {
		t := k.RevokedAt.UTC()
		revokedAt = &t
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		// ON CONFLICT DO NOTHING covers both unique columns, hash and id.
		tag, err := tx.Exec(ctx, `INSERT INTO api_keys (hash, id, plan, label, created, revoked_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
			hash[:], k.ID, k.Plan, k.Label, k.Created.UTC(), revokedAt)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return rappel.Errorf(rappel.EINVALID, "A key with ID %s exists already; draw another key.", k.ID)
		}
		_, err = tx.Exec(ctx, bumpKeys)
		return err
	})
	if err != nil && rappel.ErrorCode(err) != rappel.EINVALID {
		return fmt.Errorf("storing key: %w", err)
	}
	return err
}

// keyColumns are the columns scanKey reads, in its order.
const keyColumns = `hash, id, plan, label, created, revoked_at`

// scanKey reads one row of keyColumns.
func scanKey(row pgx.Row) ([sha256.Size]byte, *rappel.APIKey, error) {
	var (
		h         [sha256.Size]byte
		hash      []byte
		a         rappel.APIKey
		revokedAt *time.Time
	)
	if err := row.Scan(&hash, &a.ID, &a.Plan, &a.Label, &a.Created, &revokedAt); err != nil {
		return h, nil, err
	}
	if len(hash) != sha256.Size {
		return h, nil, fmt.Errorf("key %s has a %d-byte hash, want %d", a.ID, len(hash), sha256.Size)
	}
	copy(h[:], hash)
	a.Created = a.Created.UTC()
	if revokedAt != nil {
		a.Revoked, a.RevokedAt = true, revokedAt.UTC()
	}
	return h, &a, nil
}

// ListKeys returns every key, oldest first (then by ID).
func (s *Store) ListKeys(ctx context.Context) ([]*rappel.APIKey, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	rows, err := s.pool.Query(ctx, `SELECT `+keyColumns+` FROM api_keys ORDER BY created, id`)
	if err != nil {
		return nil, fmt.Errorf("listing keys: %w", err)
	}
	defer rows.Close()
	var keys []*rappel.APIKey
	for rows.Next() {
		_, a, err := scanKey(rows)
		if err != nil {
			return nil, fmt.Errorf("listing keys: %w", err)
		}
		keys = append(keys, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing keys: %w", err)
	}
	return keys, nil
}

// RevokeKey marks the key with id revoked at at, and returns it. An
// unknown id is an ENOTFOUND *rappel.Error; a key revoked already keeps its
// first revocation time.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) (*rappel.APIKey, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	var a *rappel.APIKey
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		_, a, err = scanKey(tx.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1 FOR UPDATE`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return rappel.Errorf(rappel.ENOTFOUND, "No key has ID %s; `rappel keys list` shows the IDs.", id)
		}
		if err != nil || a.Revoked {
			return err
		}
		a.Revoked, a.RevokedAt = true, at.UTC()
		if _, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = $2 WHERE id = $1`, id, a.RevokedAt); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, bumpKeys)
		return err
	})
	if err != nil {
		if rappel.ErrorCode(err) == rappel.ENOTFOUND {
			return nil, err
		}
		return nil, fmt.Errorf("revoking key: %w", err)
	}
	return a, nil
}

// KeysByHash returns every key by hash. It reads the change counter first
// and, when it has not moved since the last call, returns the same map:
// the KeyService of every node calls this every few seconds, and a fleet
// at rest then costs the database one single-row read per node and
// interval.
//
// The counter is read before the keys, not in one snapshot with them: a
// change committed in between makes the keys newer than the counter says,
// and the next call, seeing the counter moved, reads them again. The keys
// can be ahead of the counter, never behind.
func (s *Store) KeysByHash(ctx context.Context) (map[[sha256.Size]byte]*rappel.APIKey, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	var version int64
	if err := s.pool.QueryRow(ctx, `SELECT version FROM api_key_changes WHERE id = 1`).Scan(&version); err != nil {
		return nil, fmt.Errorf("reading the keys' change counter: %w", err)
	}
	if s.byHash != nil && version == s.keysVersion {
		return s.byHash, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+keyColumns+` FROM api_keys`)
	if err != nil {
		return nil, fmt.Errorf("reading keys: %w", err)
	}
	defer rows.Close()
	byHash := map[[sha256.Size]byte]*rappel.APIKey{}
	for rows.Next() {
		h, a, err := scanKey(rows)
		if err != nil {
			return nil, fmt.Errorf("reading keys: %w", err)
		}
		byHash[h] = a
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading keys: %w", err)
	}
	s.byHash, s.keysVersion = byHash, version
	return byHash, nil
}

// LoadUsage returns the fleet's request counts of month by key ID.
func (s *Store) LoadUsage(ctx context.Context, month string) (map[string]int64, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	rows, err := s.pool.Query(ctx, `SELECT key_id, requests FROM key_usage WHERE month = $1`, month)
	if err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	counts := map[string]int64{}
	var id string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&id, &n}, func() error {
		counts[id] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	return counts, nil
}

// AddUsage adds deltas to the fleet's counts of month and returns the
// counts of the keys in deltas, in one transaction.
//
// The increments are one INSERT … ON CONFLICT DO UPDATE adding to the row,
// so concurrent nodes' pushes add up instead of overwriting each other.
// Rows are written in key order, so two nodes pushing overlapping keys lock
// them in the same order and do not deadlock; a serialization failure
// (CockroachDB's way of resolving contention) runs the transaction again.
func (s *Store) AddUsage(ctx context.Context, month string, deltas map[string]int64) (map[string]int64, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	ids := make([]string, 0, len(deltas))
	for id, d := range deltas {
		if d < 0 {
			return nil, rappel.Errorf(rappel.EINVALID, "The usage of key %s cannot shrink: its delta is %d; push only requests counted.", id, d)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var added []string
	var ns []int64
	for _, id := range ids {
		if d := deltas[id]; d > 0 {
			added, ns = append(added, id), append(ns, d)
		}
	}
	totals := make(map[string]int64, len(ids))
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		clear(totals)
		if len(added) > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO key_usage (month, key_id, requests)
				SELECT $1, k, n FROM unnest($2::TEXT[], $3::BIGINT[]) AS d (k, n) ORDER BY k
				ON CONFLICT (month, key_id) DO UPDATE SET requests = key_usage.requests + excluded.requests`,
				month, added, ns); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `SELECT key_id, requests FROM key_usage WHERE month = $1 AND key_id = ANY($2)`, month, ids)
		if err != nil {
			return err
		}
		var id string
		var n int64
		_, err = pgx.ForEachRow(rows, []any{&id, &n}, func() error {
			totals[id] = n
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("adding usage: %w", err)
	}
	for _, id := range ids {
		if _, ok := totals[id]; !ok {
			totals[id] = 0 // read-only key never counted anywhere
		}
	}
	return totals, nil
}
