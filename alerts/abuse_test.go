package alerts

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/kv/kvtest"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

// TestService_PendingExpiry runs the expiry of unconfirmed subscriptions
// on the node's Pebble store and on the fleet's PostgreSQL.
func TestService_PendingExpiry(t *testing.T) {
	t.Run("Pebble", func(t *testing.T) { testPendingExpiry(t, kvtest.OpenMem(t)) })
	t.Run("PostgreSQL", func(t *testing.T) { testPendingExpiry(t, mustShared(t, pgtest.DSN(t), "n1")) })
}

// testPendingExpiry: a link followed within PendingTTL confirms; after it,
// the link is a 404 saying it expired, Prune deletes the subscription and
// its tokens (and the ended allowances), and the confirmed one stays.
func testPendingExpiry(t *testing.T, st Store) {
	ctx := context.Background()
	clock := newFakeClock()
	smtp := smtptest.MustStart(t)
	svc := NewService(st)
	svc.Now, svc.Logger = clock.Now, slog.New(slog.DiscardHandler)
	late, err := svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("late@example.ca")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("prompt@example.ca")}); err != nil {
		t.Fatal(err)
	}
	links := confirmLinks(t, newTestSender(st, kvtest.OpenMem(t), smtp, clock.Now), smtp)
	if len(links) != 2 {
		t.Fatalf("%d confirmation links, want 2", len(links))
	}
	// Sent one after the other: which is first is random.
	lateLink, promptLink := links[0], links[1]
	if to := smtp.Messages()[0].To[0]; to != "late@example.ca" {
		lateLink, promptLink = promptLink, lateLink
	}
	clock.Add(svc.PendingTTL - time.Second)
	if res, err := svc.Confirm(ctx, promptLink, "ua"); err != nil || res.Status != rappel.SubActive {
		t.Fatalf("Confirm within the TTL = %+v, %v", res, err)
	}
	// No subscription has expired yet; the two addresses' confirmation
	// windows (a day) have ended.
	if subs, allowances, err := svc.Prune(ctx); subs != 0 || allowances != 2 || err != nil {
		t.Fatalf("Prune before the expiry = %d subscriptions, %d allowances, %v; want 0 and 2", subs, allowances, err)
	}
	clock.Add(time.Second)
	_, err = svc.Confirm(ctx, lateLink, "ua")
	if rappel.ErrorCode(err) != rappel.ENOTFOUND || !strings.Contains(rappel.ErrorMessage(err), "has expired: links work for 7 days") ||
		!strings.Contains(rappel.ErrorMessage(err), "Subscribe again") {
		t.Fatalf("Confirm after the TTL: %v", err)
	}
	clock.Add(time.Minute)
	subs, allowances, err := svc.Prune(ctx)
	if subs != 1 || allowances != 0 || err != nil {
		t.Fatalf("Prune = %d subscriptions, %d allowances, %v; want 1 and 0", subs, allowances, err)
	}
	for _, tok := range []string{lateLink, late.Token} {
		if _, _, err := st.SubscriptionByToken(ctx, HashToken(tok)); rappel.ErrorCode(err) != rappel.ENOTFOUND {
			t.Fatalf("token of the expired subscription: %v, want ENOTFOUND", err)
		}
	}
	// The deleted subscription's link says the same thing, in other words.
	_, err = svc.Confirm(ctx, lateLink, "ua")
	if rappel.ErrorCode(err) != rappel.ENOTFOUND || !strings.Contains(rappel.ErrorMessage(err), "expired (links work for 7 days)") {
		t.Fatalf("Confirm after the prune: %v", err)
	}
	var left []string
	st.ForEachSubscription(ctx, func(s *rappel.Subscription) error { left = append(left, s.Email+" "+s.Status); return nil })
	if len(left) != 1 || left[0] != "prompt@example.ca "+rappel.SubActive {
		t.Fatalf("subscriptions after the prune: %v", left)
	}
	// The confirmed link keeps answering as it did.
	if res, err := svc.Confirm(ctx, promptLink, "ua"); err != nil || res.Status != rappel.SubActive {
		t.Fatalf("used link after the TTL = %+v, %v", res, err)
	}
}

// TestRunner_Prunes: the runner's first pass, and then one pass every
// PruneInterval (an hour), deletes expired pending subscriptions.
func TestRunner_Prunes(t *testing.T) {
	ctx := context.Background()
	st, smtp := kvtest.OpenMem(t), smtptest.MustStart(t)
	r := newTestRunner(t, st, smtp)
	clock := newFakeClock()
	r.Service.Now, r.Service.PendingTTL = clock.Now, 30*time.Minute
	count := func() int {
		n := 0
		st.ForEachSubscription(ctx, func(*rappel.Subscription) error { n++; return nil })
		return n
	}
	pass := func() {
		t.Helper()
		before := r.passesDone()
		r.DataChanged(ctx, true)
		waitUntil(t, "a pass", func() bool { return r.passesDone() > before })
	}
	if _, err := r.Service.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("ana@example.ca")}); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Hour)
	if err := r.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	waitUntil(t, "the first pass", func() bool { return r.passesDone() >= 1 })
	if n := count(); n != 0 {
		t.Fatalf("%d subscriptions after the first pass, want 0", n)
	}
	// Another expires 40 minutes after the last prune: the passes within
	// the hour leave it, the first one after deletes it.
	if _, err := r.Service.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("bob@example.ca")}); err != nil {
		t.Fatal(err)
	}
	clock.Add(40 * time.Minute)
	pass()
	if n := count(); n != 1 {
		t.Fatalf("%d subscriptions after a pass within the prune interval, want 1", n)
	}
	clock.Add(20 * time.Minute)
	pass()
	if n := count(); n != 0 {
		t.Fatalf("%d subscriptions after the prune interval, want 0", n)
	}
}

// TestAlerts_FleetConfirmOncePerAddress: 21 subscribe requests for one
// address, spread over three nodes sharing PostgreSQL and written as
// people type it, send one confirmation e-mail; the window's end lets one
// more through. The nodes subscribe at once, and then all send at once,
// so that the requests race each other for the allowance and the senders
// for the rows.
func TestAlerts_FleetConfirmOncePerAddress(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	smtp := smtptest.MustStart(t)
	clock := newFakeClock()
	var nodes []*fleetNode
	for _, name := range []string{"n1", "n2", "n3"} {
		nodes = append(nodes, newFleetNode(t, dsn, name, smtp, clock.Now, nil))
	}
	all := func(fn func(n *fleetNode) error) {
		t.Helper()
		errs := make(chan error, len(nodes))
		for _, n := range nodes {
			go func() { errs <- fn(n) }()
		}
		for range nodes {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
	send := func() {
		t.Helper()
		all(func(n *fleetNode) error { _, err := n.snd.SendConfirmations(ctx); return err })
	}
	spellings := []string{"ana@example.ca", "Ana@Example.CA", "ANA+recalls@example.ca", "ana@EXAMPLE.ca"}
	for round := range 7 {
		all(func(n *fleetNode) error {
			res, err := n.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr(spellings[(round+len(n.snd.Node))%len(spellings)]), KeyID: "k1"})
			if err == nil && (res.Status != rappel.SubPending || len(res.Token) != 22) {
				err = fmt.Errorf("subscribe: %+v", res)
			}
			return err
		})
		clock.Add(time.Minute)
	}
	send()
	// Whichever spelling won the race was sent.
	if msgs := smtp.Messages(); len(msgs) != 1 || AddressKey(msgs[0].To[0]) != AddressKey("ana@example.ca") {
		t.Fatalf("%d confirmation e-mails (%+v), want 1", len(msgs), msgs)
	}
	// Another address is not held back by ana's.
	if _, err := nodes[1].svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("bob@example.ca")}); err != nil {
		t.Fatal(err)
	}
	clock.Add(24 * time.Hour)
	if _, err := nodes[2].svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("ana@example.ca")}); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes[0].svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("ana@example.ca")}); err != nil {
		t.Fatal(err)
	}
	send()
	if n := len(smtp.Messages()); n != 3 {
		t.Fatalf("%d e-mails, want 3: ana's first, bob's, and ana's of the next day", n)
	}
}

// TestService_KeyDailyCap: a key's subscriptions past its daily cap are a
// 429 *rappel.LimitError whatever the address, with the wait until the
// next UTC day; other keys, and the next day, are not held back. Counted
// by two nodes on one PostgreSQL.
func TestService_KeyDailyCap(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	smtp := smtptest.MustStart(t)
	clock := newFakeClock() // 04:00 UTC
	a, b := newFleetNode(t, dsn, "n1", smtp, clock.Now, nil), newFleetNode(t, dsn, "n2", smtp, clock.Now, nil)
	for _, n := range []*fleetNode{a, b} {
		n.svc.SubscriptionsPerKeyDay = 3
	}
	sub := func(n *fleetNode, email, key string) error {
		_, err := n.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr(email), KeyID: key})
		return err
	}
	for i, n := range []*fleetNode{a, b, a} {
		if err := sub(n, "u"+string(rune('a'+i))+"@example.ca", "k1"); err != nil {
			t.Fatal(err)
		}
	}
	err := sub(b, "new@example.ca", "k1")
	le, ok := err.(*rappel.LimitError)
	if !ok || rappel.ErrorCode(err) != rappel.ERATELIMIT || le.RetryAfter != 20*time.Hour ||
		rappel.ErrorMessage(err) != "Too many subscriptions: this API key may create 3 a day (UTC) and has created them today; new subscriptions are accepted again at 2026-11-23T00:00:00Z, in 72000 s (Retry-After)." {
		t.Fatalf("4th subscription: %#v", err)
	}
	// An invalid request is still told what is wrong first.
	if err := sub(a, "not an address", "k1"); rappel.ErrorCode(err) != rappel.EINVALID {
		t.Fatalf("invalid request over the cap: %v", err)
	}
	if err := sub(a, "ua@example.ca", "k2"); err != nil {
		t.Fatalf("another key: %v", err)
	}
	var n int
	a.shared.ForEachSubscription(ctx, func(*rappel.Subscription) error { n++; return nil })
	if n != 4 {
		t.Fatalf("%d subscriptions stored, want 4: a refused one is not stored", n)
	}
	clock.Add(20 * time.Hour)
	if err := sub(b, "new@example.ca", "k1"); err != nil {
		t.Fatalf("the next day: %v", err)
	}
}

// TestAddressKey: spellings of one inbox share a key; other addresses do
// not; the key holds no part of the address.
func TestAddressKey(t *testing.T) {
	ana := AddressKey("ana@example.ca")
	for _, same := range []string{"ANA@example.ca", "Ana+recalls@example.ca", "ana+@example.ca"} {
		if AddressKey(same) != ana {
			t.Errorf("%s counts apart from ana@example.ca", same)
		}
	}
	for _, other := range []string{"bob@example.ca", "an.a@example.ca", "ana@example.com", "+ana@example.ca"} {
		if AddressKey(other) == ana {
			t.Errorf("%s counts as ana@example.ca", other)
		}
	}
	if len(ana) != 64 || strings.Contains(ana, "ana") || strings.Contains(ana, "example") {
		t.Errorf("key %q", ana)
	}
}
