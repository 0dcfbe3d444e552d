// Package postgres keeps the state a fleet of edge nodes must share —
// subscriptions and their tokens, the alert outbox, API keys and the plans'
// quota counters — in PostgreSQL or CockroachDB, over pgx. A single node
// keeps all of it in its own Pebble store (package kv); `rappel serve
// --shared-store postgres://…` selects this package instead, while records,
// indexes and feed state stay in each node's Pebble. The feed lease and the
// log of the leader's publications, which followers apply, live here too.
//
// The SQL is the subset both PostgreSQL and CockroachDB run; where they
// differ, the code says so next to the statement.
package postgres

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rappel-ca/rappel"
)

// Store is the shared state over one connection pool. Set the exported
// fields, then Open; Close when done.
type Store struct {
	// DSN is the database's URL (postgres://user@host:port/db?sslmode=…).
	DSN string
	// Node names this process in outbox claims, so that a node can tell its
	// own claims from another's; NewStore sets the host name, the pid and
	// a random suffix.
	Node string
	// Now is the clock; NewStore sets time.Now.
	Now func() time.Time
	// Logger receives the migrations applied; nil logs nothing.
	Logger *slog.Logger

	// MaxConns caps the connections this node opens to the shared store;
	// 0 is DefaultMaxConns.
	MaxConns int32

	pool *pool

	// keysMu guards the keys KeysByHash read last, at keysVersion of the
	// api_key_changes counter.
	keysMu      sync.Mutex
	keysVersion int64
	byHash      map[[sha256.Size]byte]*rappel.APIKey
}

// DefaultMaxConns is how many connections a node opens to the shared store
// at most unless told (--shared-store-max-conns): enough for its alert
// sender, webhook sender, usage writer, fleet node and the requests that
// write at once, few enough that a fleet of ten stays within PostgreSQL's
// default max_connections of 100 (docs/operations.md, "Sizing the shared
// store").
const DefaultMaxConns = 8

// NewStore returns a Store for dsn with defaults.
func NewStore(dsn string) *Store {
	return &Store{DSN: dsn, Node: defaultNode(), Now: time.Now, Logger: slog.Default()}
}

// Open connects and brings the schema up to date (migrate.go). It refuses a
// database whose schema is newer than this binary knows.
func (s *Store) Open(ctx context.Context) error {
	if s.DSN == "" {
		return errors.New("opening the shared store: no database URL")
	}
	cfg, err := pgxpool.ParseConfig(s.DSN)
	if err != nil {
		return fmt.Errorf("opening the shared store: the URL does not parse: %w", err)
	}
	cfg.MaxConns = DefaultMaxConns
	if s.MaxConns > 0 {
		cfg.MaxConns = s.MaxConns
	}
	p, err := newPool(ctx, cfg)
	if err != nil {
		return fmt.Errorf("opening the shared store: %w", err)
	}
	s.pool = p
	if err := s.migrate(ctx); err != nil {
		p.Close()
		s.pool = nil
		return err
	}
	return nil
}

// Close closes the pool; it is safe after a failed Open.
func (s *Store) Close() error {
	if s.pool != nil {
		s.pool.Close()
		s.pool = nil
	}
	return nil
}

// logger returns Logger, or a logger that drops everything when unset.
func (s *Store) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// now returns Now(), or the time when Now is unset.
func (s *Store) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// errNotOpen is returned by every method of a Store not (or no longer) open.
var errNotOpen = errors.New("the shared store is not open")
