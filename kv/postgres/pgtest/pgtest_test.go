package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestDSN checks that each DSN is a working, empty database of its own.
func TestDSN(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.DSN(t), pgtest.DSN(t)
	if a == b {
		t.Fatalf("two calls returned the same database %s", a)
	}
	connA, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer connA.Close(ctx)
	if _, err := connA.Exec(ctx, `CREATE TABLE t (n BIGINT); INSERT INTO t VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	connB, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer connB.Close(ctx)
	var n int
	if err := connB.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("the second database has %d tables, want an empty one", n)
	}
	if err := connA.QueryRow(ctx, `SELECT n FROM t`).Scan(&n); err != nil || n != 7 {
		t.Fatalf("reading back from the first database: %d, %v", n, err)
	}
}
