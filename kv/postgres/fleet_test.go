package postgres

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

// fleetRecord returns a valid record numbered i, as a refresh would put it.
func fleetRecord(tb testing.TB, i int) *rappel.Record {
	tb.Helper()
	r := &rappel.Record{
		RecordID: fmt.Sprintf("hc-%d", 70000+i), RecallID: fmt.Sprintf("RA-%d", 70000+i),
		RecallType: rappel.TypeFood, Agency: rappel.AgencyCFIA, Status: rappel.StatusActive,
		EventDate: "2026-11-20", RecallDate: "2026-11-21", FetchedAt: "2026-11-22T00:00:00Z",
		Allergens: []string{rappel.Allergens[i%len(rappel.Allergens)]},
		Translations: rappel.Translations{
			EN: &rappel.Translation{Title: fmt.Sprintf("Cookies %d recalled", i), WhatToDo: "Do not eat them."},
			FR: &rappel.Translation{Title: fmt.Sprintf("Rappel des biscuits %d", i)},
		},
	}
	if err := r.Validate(); err != nil {
		tb.Fatalf("fleetRecord(%d) is not valid: %v", i, err)
	}
	return r
}

// mustAcquire takes the lease for node, failing tb unless it gets it.
func mustAcquire(tb testing.TB, s *Store, node string, ttl time.Duration) rappel.Lease {
	tb.Helper()
	l, ok, err := s.AcquireLease(context.Background(), node, ttl)
	if err != nil || !ok {
		tb.Fatalf("AcquireLease(%s) = %+v, %v, %v; want it held", node, l, ok, err)
	}
	return l
}

// mustLatest returns the store's latest version.
func mustLatest(tb testing.TB, s *Store) int64 {
	tb.Helper()
	v, err := s.LatestVersion(context.Background())
	if err != nil {
		tb.Fatalf("LatestVersion: %v", err)
	}
	return v
}

// publication returns a publication by lease l putting records from..to-1.
func publication(tb testing.TB, l rappel.Lease, from, to int) *rappel.Publication {
	tb.Helper()
	p := &rappel.Publication{Node: l.Holder, Token: l.Token, Info: rappel.DatasetInfo{Source: "feeds", Records: to}}
	for i := from; i < to; i++ {
		p.Put = append(p.Put, fleetRecord(tb, i))
	}
	return p
}

// mustFenced publishes p, failing tb unless it is refused as fenced.
func mustFenced(tb testing.TB, s *Store, p *rappel.Publication, what string) error {
	tb.Helper()
	_, err := s.Publish(context.Background(), p)
	if !errors.Is(err, rappel.ErrFenced) {
		tb.Fatalf("Publish %s = %v; want ErrFenced", what, err)
	}
	return err
}

func TestStore_FeedLease(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a, b := mustOpen(t, dsn), mustOpen(t, dsn)
	// Long enough for the four calls before the sleep on a loaded machine.
	const ttl = time.Second

	la := mustAcquire(t, a, "a", ttl)
	if la.Holder != "a" || la.Token != 1 {
		t.Fatalf("first lease = %+v; want a's, token 1", la)
	}
	lb, ok, err := b.AcquireLease(ctx, "b", ttl)
	if err != nil || ok || lb.Holder != "a" || lb.Token != 1 || !lb.Expires.Equal(la.Expires) {
		t.Fatalf("b's AcquireLease while a holds it = %+v, %v, %v; want a's lease %+v, not ok", lb, ok, err, la)
	}
	if again := mustAcquire(t, a, "a", ttl); again.Token != 1 || again.Expires.Before(la.Expires) {
		t.Fatalf("a's AcquireLease of its own live lease = %+v; want token 1, expiring no sooner than %v", again, la.Expires)
	}
	if ok, err := a.RenewLease(ctx, "a", 1, ttl); err != nil || !ok {
		t.Fatalf("a's RenewLease = %v, %v; want renewed", ok, err)
	}

	time.Sleep(ttl + 100*time.Millisecond)
	lb = mustAcquire(t, b, "b", time.Minute)
	if lb.Token != 2 {
		t.Fatalf("b's lease after a's expired = %+v; want token 2", lb)
	}
	if ok, err := a.RenewLease(ctx, "a", 1, ttl); err != nil || ok {
		t.Fatalf("a's RenewLease under token 1 after b took it = %v, %v; want refused", ok, err)
	}
	before := mustLatest(t, a)
	err = mustFenced(t, a, publication(t, la, 0, 1), "by a under token 1")
	if want := "publishing refresh: the feed lease is no longer held by this node: b holds it under token 2"; err.Error() != want {
		t.Errorf("fenced Publish says %q; want %q", err, want)
	}
	if v := mustLatest(t, a); v != before {
		t.Fatalf("a fenced Publish moved the latest version from %d to %d", before, v)
	}
	if v, err := b.Publish(ctx, publication(t, lb, 0, 1)); err != nil || v != before+1 {
		t.Fatalf("b's Publish = %d, %v; want version %d", v, err, before+1)
	}
}

func TestStore_FeedLeaseExpiredOwnIsNewTerm(t *testing.T) {
	s := mustNew(t)
	const ttl = 200 * time.Millisecond
	old := mustAcquire(t, s, "a", ttl)
	time.Sleep(ttl + 100*time.Millisecond)
	mustFenced(t, s, publication(t, old, 0, 1), "under an expired lease")
	renewed := mustAcquire(t, s, "a", ttl)
	if renewed.Token != old.Token+1 {
		t.Fatalf("a's lease taken back after it expired = %+v; want token %d", renewed, old.Token+1)
	}
	mustFenced(t, s, publication(t, old, 0, 1), "under the previous term's token")
}

func TestStore_FeedLeaseRelease(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a, b := mustOpen(t, dsn), mustOpen(t, dsn)
	la := mustAcquire(t, a, "a", time.Hour)
	if err := b.ReleaseLease(ctx, "b", la.Token); err != nil {
		t.Fatalf("b's ReleaseLease of a lease it does not hold: %v", err)
	}
	if _, ok, _ := b.AcquireLease(ctx, "b", time.Hour); ok {
		t.Fatal("b released a's lease, and took it")
	}
	if err := a.ReleaseLease(ctx, "a", la.Token); err != nil {
		t.Fatalf("a's ReleaseLease: %v", err)
	}
	if lb := mustAcquire(t, b, "b", time.Hour); lb.Token != la.Token+1 {
		t.Fatalf("b's lease after a released it = %+v; want token %d", lb, la.Token+1)
	}
	if ok, err := a.RenewLease(ctx, "a", la.Token, time.Hour); err != nil || ok {
		t.Fatalf("a's RenewLease after releasing = %v, %v; want refused", ok, err)
	}
}

func TestStore_FeedLeaseRefusesNonsense(t *testing.T) {
	ctx := context.Background()
	s := mustNew(t)
	for _, c := range []struct {
		node string
		ttl  time.Duration
		want string
	}{
		{"", time.Minute, "acquiring the feed lease: the node is not named"},
		{"a", 0, "acquiring the feed lease: the lease's duration 0s is not positive"},
	} {
		if _, _, err := s.AcquireLease(ctx, c.node, c.ttl); err == nil || err.Error() != c.want {
			t.Errorf("AcquireLease(%q, %s) = %v; want %q", c.node, c.ttl, err, c.want)
		}
	}
	if _, err := s.Publications(ctx, 0, 0); err == nil {
		t.Error("Publications with limit 0 succeeded; want refused")
	}
	mustFenced(t, s, &rappel.Publication{Node: "a", Token: 1}, "before any lease")
}

func TestStore_Publications(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	leader, follower := mustOpen(t, dsn), mustOpen(t, dsn)
	l := mustAcquire(t, leader, "leader", time.Minute)
	if v := mustLatest(t, follower); v != 0 {
		t.Fatalf("LatestVersion of a new store = %d; want 0", v)
	}

	var sent []*rappel.Publication
	for i := 1; i <= 5; i++ {
		p := publication(t, l, 10*i, 10*i+i)
		p.Delete = []string{fmt.Sprintf("hc-%d", i)}
		p.Info.UpdatedAt = time.Date(2026, 11, 22, i, 0, 0, 0, time.UTC)
		v, err := leader.Publish(ctx, p)
		if err != nil || v != int64(i) || p.Version != v || p.Info.Version != v || p.At.IsZero() {
			t.Fatalf("Publish #%d = %d, %v (version %d, info version %d, at %v); want version %d set throughout", i, v, err, p.Version, p.Info.Version, p.At, i)
		}
		sent = append(sent, p)
	}

	got, err := follower.Publications(ctx, 0, 100)
	if err != nil {
		t.Fatalf("Publications: %v", err)
	}
	if len(got) != len(sent) {
		t.Fatalf("Publications returned %d; want %d", len(got), len(sent))
	}
	for i, p := range got {
		want := sent[i]
		if !p.At.Equal(want.At) {
			t.Errorf("publication %d at %v; want %v", i+1, p.At, want.At)
		}
		if !p.Info.UpdatedAt.Equal(want.Info.UpdatedAt) {
			t.Errorf("publication %d updated_at %v; want %v", i+1, p.Info.UpdatedAt, want.Info.UpdatedAt)
		}
		p.At, want.At, p.Info.UpdatedAt, want.Info.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("publication %d read back as %+v; want %+v", i+1, p, want)
		}
	}

	page, err := follower.Publications(ctx, 2, 2)
	if err != nil || len(page) != 2 || page[0].Version != 3 || page[1].Version != 4 {
		t.Fatalf("Publications(after 2, limit 2) = %d publications, %v; want versions 3 and 4", len(page), err)
	}
	if rest, err := follower.Publications(ctx, 5, 10); err != nil || len(rest) != 0 {
		t.Fatalf("Publications after the latest = %d, %v; want none", len(rest), err)
	}
	if v := mustLatest(t, follower); v != 5 {
		t.Fatalf("LatestVersion = %d; want 5", v)
	}
}

func TestStore_PublishConcurrent(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	nodes := []*Store{mustOpen(t, dsn), mustOpen(t, dsn)}
	l := mustAcquire(t, nodes[0], "leader", time.Minute)

	const n = 20
	pubs := make([]*rappel.Publication, n)
	for i := range pubs {
		pubs[i] = publication(t, l, i, i+1)
	}
	versions := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Two pools publish under one lease, so that the lock, not one
			// pool's connection limit, is what serializes them.
			versions[i], errs[i] = nodes[i%2].Publish(ctx, pubs[i])
		}()
	}
	wg.Wait()
	seen := make(map[int64]bool)
	for i, v := range versions {
		if errs[i] != nil {
			t.Fatalf("Publish #%d: %v", i, errs[i])
		}
		if seen[v] || v < 1 || v > n {
			t.Fatalf("versions %v; want 1..%d once each", versions, n)
		}
		seen[v] = true
	}
	got, err := nodes[1].Publications(ctx, 0, 100)
	if err != nil || len(got) != n {
		t.Fatalf("Publications = %d, %v; want %d", len(got), err, n)
	}
	for i, p := range got {
		if p.Version != int64(i+1) || p.Info.Version != p.Version || len(p.Put) != 1 {
			t.Fatalf("publication %d = version %d, info version %d, %d records; want version %d, one record", i, p.Version, p.Info.Version, len(p.Put), i+1)
		}
	}
}

func TestStore_PublishNotifies(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s := mustOpen(t, dsn)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting the listener: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "LISTEN "+feedChannel); err != nil {
		t.Fatalf("LISTEN: %v", err)
	}
	l := mustAcquire(t, s, "leader", time.Minute)
	v, err := s.Publish(ctx, publication(t, l, 0, 1))
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := conn.WaitForNotification(wctx)
	if err != nil {
		t.Fatalf("no notification of version %d: %v", v, err)
	}
	if n.Channel != feedChannel || n.Payload != strconv.FormatInt(v, 10) {
		t.Fatalf("notification %s %q; want %s %q", n.Channel, n.Payload, feedChannel, strconv.FormatInt(v, 10))
	}
}

// TestStore_FleetPluginSignature records a fleet plugin with its signature
// and one without: each reads back as it was written, the signature
// included, so that the next leader verifies what the last one verified.
func TestStore_FleetPluginSignature(t *testing.T) {
	s := mustNew(t)
	ctx := context.Background()
	l := mustAcquire(t, s, "a", time.Hour)
	signed := rappel.FleetPlugin{Source: "openfda", SHA256: "ab", Wasm: []byte("\x00asm"), Signature: []byte("untrusted comment: x\n"), Why: "added"}
	unsigned := rappel.FleetPlugin{Source: "vrdb", SHA256: "cd", Wasm: []byte("\x00asm"), Why: "swapped"}
	for _, p := range []rappel.FleetPlugin{signed, unsigned} {
		if err := s.PutFleetPlugin(ctx, "a", l.Token, p); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.FleetPlugins(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("FleetPlugins = %+v, %v", all, err)
	}
	if string(all[0].Signature) != string(signed.Signature) || all[1].Signature != nil {
		t.Fatalf("signatures read back: %q, %q", all[0].Signature, all[1].Signature)
	}
}
