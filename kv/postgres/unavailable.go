package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rappel-ca/rappel"
)

// While the shared store cannot be reached (the server down or
// restarting, the network cut, every connection slot taken), whatever
// needs it fails the same way, by one rule: a rappel.Error a client sees
// as a 503 with Retry-After and a sentence that names the shared store,
// rather than an internal error. Reads that a node keeps in memory (API
// keys, once read) go on being served.

// RetryAfter is how long a client is asked to wait while the shared store
// cannot be reached: about the time a restarting PostgreSQL takes.
const RetryAfter = 5 * time.Second

// errUnreachable is the sentence of every such failure.
const errUnreachable = "This node's fleet keeps its API keys, quotas, subscriptions, webhooks and alerts in a shared store (PostgreSQL), which cannot be reached just now, so the request was not carried out; retry in 5 s (Retry-After)."

// unreachable returns err as the client should see it: the rule above for
// a failure to reach the shared store, err itself otherwise.
func unreachable(err error) error {
	if err == nil || !isUnreachable(err) {
		return err
	}
	var e *rappel.Error
	if errors.As(err, &e) {
		return err
	}
	return &rappel.Error{Code: rappel.EUNAVAILABLE, Message: errUnreachable, Err: err, RetryAfter: RetryAfter}
}

// isUnreachable reports whether err says the shared store could not be
// reached or dropped the connection, rather than refusing the request:
// no connection could be made, the server is out of connection slots
// (53300) or shutting down (57P01–57P03), the connection broke (class 08,
// an I/O error), or waiting for a connection timed out.
func isUnreachable(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	switch c := sqlState(err); {
	case errors.As(err, &ce), errors.As(err, &ne), pgconn.Timeout(err):
		return true
	case c == "53300" || c == "57P01" || c == "57P02" || c == "57P03" || len(c) == 5 && c[:2] == "08":
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, context.DeadlineExceeded):
		return true
	}
	return false
}

// newPool opens a pool of cfg.
func newPool(ctx context.Context, cfg *pgxpool.Config) (*pool, error) {
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &pool{p}, nil
}

// pool is the connection pool as the store uses it: each query's error
// goes through unreachable, at this one place.
type pool struct{ *pgxpool.Pool }

func (p *pool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := p.Pool.Exec(ctx, sql, args...)
	return tag, unreachable(err)
}

func (p *pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := p.Pool.Query(ctx, sql, args...)
	return rows, unreachable(err)
}

func (p *pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return row{p.Pool.QueryRow(ctx, sql, args...)}
}

func (p *pool) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := p.Pool.Begin(ctx)
	return tx, unreachable(err)
}

type row struct{ pgx.Row }

func (r row) Scan(dest ...any) error { return unreachable(r.Row.Scan(dest...)) }
