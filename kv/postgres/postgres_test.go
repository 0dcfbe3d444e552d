package postgres

import (
	"context"
	"log/slog"
	"testing"

	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// mustOpen opens a Store on dsn, closed when tb ends.
func mustOpen(tb testing.TB, dsn string) *Store {
	tb.Helper()
	s := NewStore(dsn)
	s.Logger = slog.New(slog.DiscardHandler)
	if err := s.Open(context.Background()); err != nil {
		tb.Fatalf("opening the shared store: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// mustNew opens a Store on a new database, closed when tb ends.
func mustNew(tb testing.TB) *Store {
	tb.Helper()
	return mustOpen(tb, pgtest.DSN(tb))
}
