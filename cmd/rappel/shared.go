package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/fleet"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/postgres"
)

// sharedOpenTimeout bounds connecting to the shared store and migrating it
// at start: a node that cannot reach it should say so, not hang.
const sharedOpenTimeout = 30 * time.Second

// checkSharedStore reports what is wrong with a --shared-store URL, without
// repeating its password.
func checkSharedStore(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return fmt.Errorf("--shared-store is not a postgres:// URL; give one such as postgres://rappel@db.internal:5432/rappel?sslmode=verify-full (CockroachDB: port 26257)")
	}
	return nil
}

// redactURL returns raw with its password replaced by xxxxx, for logs.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// openShared connects to the fleet's shared store and brings its schema up
// to date; it refuses a schema newer than this binary knows.
func openShared(ctx context.Context, dsn string, maxConns int, log *slog.Logger) (*postgres.Store, error) {
	s := postgres.NewStore(dsn)
	s.Logger, s.MaxConns = log, int32(maxConns)
	octx, cancel := context.WithTimeout(ctx, sharedOpenTimeout)
	defer cancel()
	if err := s.Open(octx); err != nil {
		return nil, fmt.Errorf("opening the shared store %s: %w", redactURL(dsn), err)
	}
	return s, nil
}

// nodeState is where a node keeps the state a fleet shares: the data dir's
// Pebble stores alone, or the shared store (Shared non-nil).
type nodeState struct {
	Keys   rappel.KeyStore
	Quota  rappel.QuotaStore
	Shared *postgres.Store
}

// openNodeState opens the shared store when dsn is set; otherwise the keys
// are the data dir's key database and the counts the node's own store.
// closeState closes what it opened.
func openNodeState(ctx context.Context, dsn string, maxConns int, dataDir string, store *kv.Store, log *slog.Logger) (st nodeState, closeState func(), err error) {
	if dsn == "" {
		keys := kv.NewKeys(filepath.Join(dataDir, "keys"))
		keys.Logger = log
		return nodeState{Keys: keys, Quota: store}, func() {}, nil
	}
	shared, err := openShared(ctx, dsn, maxConns, log)
	if err != nil {
		return nodeState{}, nil, err
	}
	log.Info("fleet mode: keys, quotas, subscriptions and the alert outbox are in the shared store",
		"shared_store", redactURL(dsn), "max_conns", maxConns, "node", shared.Node, "schema_version", postgres.SchemaVersion())
	return nodeState{Keys: shared, Quota: shared, Shared: shared}, func() { shared.Close() }, nil
}

// fleetNode returns, for a node of a fleet (a shared store) running the
// feeds, its place in the fleet, whose followers tell listeners what they
// applied; a single node gets nil.
func (c *ServeCommand) fleetNode(shared *postgres.Store, store *kv.Store, listeners []rappel.ChangeListener, log *slog.Logger) *fleet.Node {
	if shared == nil || c.Feeds != "on" {
		return nil
	}
	return &fleet.Node{Name: shared.Node, Log: shared, Store: store, Listeners: listeners, Plugins: shared,
		// Every field Run would default is set here: /health reads them
		// from the start, concurrently with Run.
		LeaseTTL: c.FleetLease, Poll: fleet.DefaultPoll, Now: time.Now, Logger: log.With("component", "fleet")}
}

// runFleet runs node until the returned stop is called, which gives its
// lease up; nil runs nothing.
func runFleet(ctx context.Context, node *fleet.Node) (stop func()) {
	if node == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = node.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// startIdempotency keeps the answers of POSTs sent with an
// Idempotency-Key where the node keeps its subscriptions: in the shared
// store in a fleet, so that a retry reaching another node is replayed
// too, else in the node's store; and deletes the expired ones every hour
// until the returned stop is called.
func startIdempotency(ctx context.Context, srv *edge.Server, store *kv.Store, shared *postgres.Store) (stop func()) {
	srv.Idempotency = store
	if shared != nil {
		srv.Idempotency = shared
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.SweepIdempotency(ctx, edge.DefaultIdempotencySweep)
	}()
	return func() {
		cancel()
		<-done
	}
}
