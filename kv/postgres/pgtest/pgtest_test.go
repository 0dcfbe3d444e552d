package pgtest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
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

// TestStart checks a server started for a program rather than a test: its
// settings override pgtest's, it runs on the given CPU, its log reaches
// the given writer, and Stop ends it and removes its directory.
func TestStart(t *testing.T) {
	pgtest.DSN(t) // skips, or fails under RAPPEL_CI, without PostgreSQL
	var log bytes.Buffer
	c, err := pgtest.Start(pgtest.Options{
		Settings: []string{"work_mem=7MB"},
		CPU:      "0",
		Log:      &log,
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			c.Stop()
		}
	}()
	ctx := context.Background()
	if err := c.CreateDatabase("app"); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateDatabase(`x"; DROP DATABASE app; --`); err == nil {
		t.Fatal("CreateDatabase took a name that needs quoting")
	}
	conn, err := pgx.Connect(ctx, c.URL("app"))
	if err != nil {
		t.Fatal(err)
	}
	var workMem, fsync string
	if err := conn.QueryRow(ctx, `SELECT current_setting('work_mem'), current_setting('fsync')`).Scan(&workMem, &fsync); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if workMem != "7MB" || fsync != "off" {
		t.Errorf("work_mem %s, fsync %s; want the option's 7MB and pgtest's off", workMem, fsync)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.PID()))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^Cpus_allowed_list:\s+0$`).Match(status) {
		t.Errorf("the server is not pinned to CPU 0:\n%s", status)
	}
	dir := c.Dir
	stopped = true
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Stop the server's directory %s is still there: %v", dir, err)
	}
	if !strings.Contains(log.String(), "ready to accept connections") {
		t.Errorf("the log writer did not get the server's log: %q", log.String())
	}
}
