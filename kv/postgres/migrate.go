package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// migration is one step of the schema. Steps are applied in order, each in
// its own transaction with the version row, and never edited once
// released: a change is a new step.
type migration struct {
	Version int
	Name    string
	SQL     string
}

// migrations is the schema's history. Each file owns its tables' SQL.
var migrations = []migration{
	{Version: 1, Name: "api keys and quota counters", SQL: schemaKeys},
	{Version: 2, Name: "subscriptions and the alert outbox", SQL: schemaAlerts},
	{Version: 3, Name: "alert allowances, and tokens by subscription", SQL: schemaAllowances},
	{Version: 4, Name: "webhook endpoints and their outbox", SQL: schemaWebhooks},
	{Version: 5, Name: "the outbox of confirmation e-mails", SQL: schemaConfirmations},
	{Version: 6, Name: "the fleet's feed lease and publication log", SQL: schemaFleet},
	{Version: 7, Name: "the fleet plugins' signatures", SQL: schemaFleetSignatures},
	{Version: 8, Name: "watchlists, their items, key index and hits", SQL: schemaWatchlists},
	{Version: 9, Name: "the answers kept under Idempotency-Key", SQL: schemaIdempotency},
}

// SchemaVersion is the newest schema this package knows.
func SchemaVersion() int { return migrations[len(migrations)-1].Version }

// schemaVersion holds one row, id 1, with the version of the schema. It is
// the one table created outside the steps, so that it can say which steps
// ran; its row is also the lock that serializes migrations.
const schemaVersion = `CREATE TABLE IF NOT EXISTS schema_version (
	id         INT PRIMARY KEY,
	version    BIGINT NOT NULL,
	applied_at TIMESTAMPTZ NOT NULL
)`

// NewerSchemaError is Open's refusal of a database migrated by a newer
// rappel: this one would not know what the newer steps changed.
type NewerSchemaError struct {
	// Have is the database's version, Know this binary's newest.
	Have, Know int
}

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("the shared store's schema is version %d, newer than this rappel knows (%d); upgrade rappel", e.Have, e.Know)
}

// migrate applies the steps the database lacks, and refuses a database
// whose schema is newer than this binary knows. Concurrent starts of
// several nodes are serialized by a lock on the version row.
//
// Advisory locks would be the PostgreSQL habit, but CockroachDB has none;
// SELECT … FOR UPDATE on the version row works on both. Each step runs in
// the transaction holding that lock and moving the version, so a node that
// waited re-reads the version once the lock is free and skips what the
// other applied, and a step that fails leaves no half-applied schema.
// CockroachDB runs DDL inside a transaction too, with one difference: it
// completes schema changes after the commit, so a step there should stay
// to creating tables and indexes (as every step so far does) rather than
// rewriting existing rows in the same transaction.
func (s *Store) migrate(ctx context.Context) error {
	if err := s.createVersionTable(ctx); err != nil {
		return err
	}
	for {
		m, err := s.migrateStep(ctx)
		if err != nil {
			return err
		}
		if m == nil {
			return nil
		}
		s.logger().Info("migrated the shared store", "version", m.Version, "step", m.Name)
	}
}

// createVersionTable creates schema_version and its row when missing.
// Two PostgreSQL sessions running CREATE TABLE IF NOT EXISTS at once may
// both find the table missing, and the loser then fails on the catalog
// (23505 unique_violation, 42710 duplicate_object for the table's row
// type, or 42P07 duplicate_table); it tries again and finds the table.
func (s *Store) createVersionTable(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		_, err := s.pool.Exec(ctx, schemaVersion)
		if err == nil {
			_, err = s.pool.Exec(ctx, `INSERT INTO schema_version (id, version, applied_at)
				VALUES (1, 0, now()) ON CONFLICT (id) DO NOTHING`)
		}
		if err == nil {
			return nil
		}
		if c := sqlState(err); attempt < 5 && (c == "23505" || c == "42710" || c == "42P07" || retryable(err)) {
			continue
		}
		return fmt.Errorf("creating the schema version table: %w", err)
	}
}

// migrateStep locks the version row and applies the next step, and
// returns it; nil when the schema is up to date.
func (s *Store) migrateStep(ctx context.Context) (applied *migration, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		applied = nil // a retried transaction starts over
		var have int
		if err := tx.QueryRow(ctx, `SELECT version FROM schema_version WHERE id = 1 FOR UPDATE`).Scan(&have); err != nil {
			return fmt.Errorf("reading the schema version: %w", err)
		}
		know := SchemaVersion()
		if have > know {
			return &NewerSchemaError{Have: have, Know: know}
		}
		if have == know {
			return nil
		}
		m := migrations[have] // versions are 1, 2, …: step have+1
		if m.Version != have+1 {
			return fmt.Errorf("migrating: step %d is numbered %d", have+1, m.Version)
		}
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("migrating to version %d (%s): %w", m.Version, m.Name, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE schema_version SET version = $1, applied_at = now() WHERE id = 1`, m.Version); err != nil {
			return fmt.Errorf("migrating to version %d: recording it: %w", m.Version, err)
		}
		applied = &m
		return nil
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// inTx runs fn in a transaction, committing when it returns nil. A
// serialization failure or deadlock (CockroachDB reports contention as
// 40001, to be retried by the client) runs fn again, a few times.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	for attempt := 0; ; attempt++ {
		err := pgx.BeginFunc(ctx, s.pool, fn)
		if err == nil || attempt == 4 || !retryable(err) {
			return unreachable(err)
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(time.Duration(attempt+1) * 10 * time.Millisecond):
		}
	}
}

// retryable reports whether err is a serialization failure (40001) or a
// deadlock (40P01): the transaction lost a race and may simply run again.
func retryable(err error) bool {
	c := sqlState(err)
	return c == "40001" || c == "40P01"
}

// sqlState returns the SQLSTATE of a server error, "" for others.
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// defaultNode names this Store in claims: host, pid and a random suffix,
// so that two Stores in one process (nodes of a test fleet, or a restart
// reusing a pid) never take each other's claims for their own.
func defaultNode() string {
	h, err := os.Hostname()
	if err != nil {
		h = "node"
	}
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return h + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b[:])
}
