package postgres

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

// wantUnreachable fails unless err is the one answer a client gets while
// the shared store cannot be reached: a 503 with Retry-After and the
// sentence that names it.
func wantUnreachable(t *testing.T, what string, err error) {
	t.Helper()
	var e *rappel.Error
	if !errors.As(err, &e) || e.Code != rappel.EUNAVAILABLE || e.RetryAfter != RetryAfter || !strings.Contains(e.Message, "shared store") {
		t.Fatalf("%s: %v (%#v), want the shared store's 503", what, err, e)
	}
}

// TestUnreachable_SlotsTaken: a database that refuses every new
// connection (too many connections, SQLSTATE 53300, as when the fleet's
// nodes hold every slot) makes a write fail with the shared store's 503,
// and the store works again once connections are let in.
func TestUnreachable_SlotsTaken(t *testing.T) {
	ctx := context.Background()
	u, _ := url.Parse(pgtest.DSN(t))
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	// Connection limits bind roles that are not superusers: the store
	// connects as one, owning its database.
	name := strings.TrimPrefix(u.Path, "/") + "_slots"
	exec(`CREATE ROLE ` + name + ` LOGIN`)
	exec(`CREATE DATABASE ` + name + ` OWNER ` + name)
	t.Cleanup(func() {
		conn.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
		conn.Exec(ctx, `DROP ROLE IF EXISTS `+name)
	})
	own := *u
	own.User, own.Path = url.User(name), "/"+name
	s := mustOpen(t, own.String())
	exec(`ALTER ROLE ` + name + ` CONNECTION LIMIT 0`)
	exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '` + name + `'`)
	s.pool.Reset() // the pool's connections are gone: the next query dials
	sub := &rappel.Subscription{ID: "s1", Email: "ana@example.ca", Lang: "en", Status: rappel.SubPending}
	err = s.CreateSubscription(ctx, sub, map[string][32]byte{"confirm": {1}})
	wantUnreachable(t, "subscribing with every connection slot refused", err)
	var e *rappel.Error
	if errors.As(err, &e); sqlState(e.Err) != "53300" {
		t.Fatalf("the cause is %v, want SQLSTATE 53300", e.Err)
	}
	exec(`ALTER ROLE ` + name + ` CONNECTION LIMIT -1`)
	if err := s.CreateSubscription(ctx, sub, map[string][32]byte{"confirm": {1}}); err != nil {
		t.Fatalf("subscribing once connections are let in again: %v", err)
	}
}

// TestUnreachable_Down: a shared store nobody answers at (the server
// stopped: connection refused) fails reads and writes the same way.
func TestUnreachable_Down(t *testing.T) {
	s := mustNew(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	cfg := s.pool.Config()
	host, port, _ := net.SplitHostPort(addr)
	cfg.ConnConfig.Host = host
	p, _ := strconv.Atoi(port)
	cfg.ConnConfig.Port = uint16(p)
	down, err := newPool(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	s.pool = down
	ctx := context.Background()
	_, err = s.Subscription(ctx, "s1")
	wantUnreachable(t, "reading a subscription with the server down", err)
	err = s.CreateSubscription(ctx, &rappel.Subscription{ID: "s1", Email: "ana@example.ca", Lang: "en", Status: rappel.SubPending}, map[string][32]byte{"confirm": {1}})
	wantUnreachable(t, "subscribing with the server down", err)
	// Another kind of failure stays what it is.
	if unreachable(errors.New("a constraint")).Error() != "a constraint" {
		t.Fatal("unreachable rewrote an error that is not one")
	}
}
