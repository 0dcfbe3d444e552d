package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

// version reads the schema version of the database at dsn.
func version(tb testing.TB, dsn string) int {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, `SELECT version FROM schema_version WHERE id = 1`).Scan(&v); err != nil {
		tb.Fatal(err)
	}
	return v
}

func TestStore_Migrate(t *testing.T) {
	ctx := context.Background()
	t.Run("Fresh", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		s := mustOpen(t, dsn)
		if v := version(t, dsn); v != SchemaVersion() {
			t.Fatalf("schema version %d after Open, want %d", v, SchemaVersion())
		}
		// Every step's tables exist.
		for _, table := range []string{"api_keys", "api_key_changes", "key_usage"} {
			var n int
			if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
				t.Fatalf("table %s: %v", table, err)
			}
		}
	})
	t.Run("Reopen", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		s := mustOpen(t, dsn)
		if _, err := s.AddUsage(ctx, "2025-03", map[string]int64{"aaaaaaaaaaaa": 7}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		// A second Open applies nothing and keeps the data.
		s = mustOpen(t, dsn)
		got, err := s.LoadUsage(ctx, "2025-03")
		if err != nil || got["aaaaaaaaaaaa"] != 7 {
			t.Fatalf("after reopening: %v, %v", got, err)
		}
		if v := version(t, dsn); v != SchemaVersion() {
			t.Fatalf("schema version %d after reopening, want %d", v, SchemaVersion())
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		// Nodes of a fleet starting together on an empty database: each
		// step runs once (a second run of a CREATE TABLE would fail).
		dsn := pgtest.DSN(t)
		const nodes = 4
		errs := make([]error, nodes)
		var wg sync.WaitGroup
		for i := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := NewStore(dsn)
				s.Logger = nil
				errs[i] = s.Open(ctx)
				s.Close()
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("node %d: %v", i, err)
			}
		}
		if v := version(t, dsn); v != SchemaVersion() {
			t.Fatalf("schema version %d, want %d", v, SchemaVersion())
		}
		s := mustOpen(t, dsn)
		var changes int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM api_key_changes`).Scan(&changes); err != nil || changes != 1 {
			t.Fatalf("api_key_changes has %d rows (%v): a step ran twice", changes, err)
		}
	})
	t.Run("ErrNewer", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		s := mustOpen(t, dsn)
		newer := SchemaVersion() + 1
		if _, err := s.pool.Exec(ctx, `UPDATE schema_version SET version = $1`, newer); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = NewStore(dsn)
		err := s.Open(ctx)
		var ne *NewerSchemaError
		if !errors.As(err, &ne) || ne.Have != newer || ne.Know != SchemaVersion() {
			t.Fatalf("opening a newer schema: %v, want a NewerSchemaError", err)
		}
		want := fmt.Sprintf("the shared store's schema is version %d, newer than this rappel knows (%d); upgrade rappel", newer, SchemaVersion())
		if err.Error() != want {
			t.Fatalf("the refusal says %q, want %q", err, want)
		}
		if s.pool != nil {
			t.Fatal("a refused Open left the pool open")
		}
	})
	t.Run("StepsInOrder", func(t *testing.T) {
		for i, m := range migrations {
			if m.Version != i+1 || m.Name == "" {
				t.Fatalf("migration %d is numbered %d (%q): versions must be 1, 2, … in order", i, m.Version, m.Name)
			}
		}
	})
}
