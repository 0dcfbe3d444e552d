package alerts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/kvtest"
	"github.com/rappel-ca/rappel/kv/postgres"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fleetNode is one edge node of a fleet: its own Pebble store with the
// records, and its own handle on the shared store.
type fleetNode struct {
	local  *kv.Store
	shared *postgres.Store
	svc    *Service
	m      *Matcher
	snd    *Sender
}

// mustShared opens a handle named node on the shared store at dsn.
func mustShared(tb testing.TB, dsn, node string) *postgres.Store {
	tb.Helper()
	s := postgres.NewStore(dsn)
	s.Node, s.Logger = node, slog.New(slog.DiscardHandler)
	if err := s.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func newFleetNode(tb testing.TB, dsn, name string, smtp *smtptest.Server, now func() time.Time, recs []*rappel.Record) *fleetNode {
	tb.Helper()
	n := &fleetNode{local: kvtest.OpenMem(tb), shared: mustShared(tb, dsn, name)}
	if err := n.local.PutRecords(context.Background(), recs); err != nil {
		tb.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	n.svc = NewService(n.shared)
	n.svc.Now, n.svc.Logger = now, quiet
	n.m = NewMatcher(index.Engine{})
	n.m.Subscriptions, n.m.Outbox, n.m.Records, n.m.Now, n.m.Logger = n.shared, n.shared, n.local, now, quiet
	n.snd = newTestSender(n.shared, n.local, smtp, now)
	n.snd.Node = name
	return n
}

// TestAlerts_Fleet runs three nodes on one shared store: subscriptions made,
// confirmed and ended on different nodes, every node's refresh finding the
// same new recalls and matching and sending them at the same time, and
// each alert delivered once.
func TestAlerts_Fleet(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	smtp := smtptest.MustStart(t)
	clock := newFakeClock()
	recs := []*rappel.Record{
		newRecord("hc-1", "Peanut cookies recalled", "peanut"),
		newRecord("hc-2", "Chocolate cookies recalled"),
		newRecord("hc-3", "Soup recalled for undeclared milk", "milk"),
	}
	var nodes []*fleetNode
	for _, name := range []string{"node-a", "node-b", "node-c"} {
		nodes = append(nodes, newFleetNode(t, dsn, name, smtp, clock.Now, recs))
	}
	a, b, c := nodes[0], nodes[1], nodes[2]

	// ana subscribes on A and confirms on B; bob and dan subscribe on A
	// and C with consent collected by the client; cat subscribes on B and
	// unsubscribes on C.
	if _, err := a.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("ana@example.ca"), Q: ptr("cookies")}); err != nil {
		t.Fatal(err)
	}
	links := confirmLinks(t, c.snd, smtp) // any node sends it
	if len(links) != 1 {
		t.Fatalf("%d confirmation e-mails, want 1", len(links))
	}
	if r, err := b.svc.Confirm(ctx, links[0], "ua"); err != nil || r.Status != rappel.SubActive {
		t.Fatalf("Confirm on another node = %+v, %v", r, err)
	}
	confirmations := len(smtp.Messages())
	for _, n := range nodes {
		n.svc.RequireConfirm = false
	}
	if _, err := a.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("bob@example.ca"), Filters: rappel.FilterValues{Allergen: "peanut"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("dan@example.ca"), Q: ptr("soup")}); err != nil {
		t.Fatal(err)
	}
	cat, err := b.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("cat@example.ca")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.svc.Unsubscribe(ctx, cat.Token); err != nil {
		t.Fatal(err)
	}

	// Every node's refresh found the three recalls (each node numbers its
	// own batches); all match, then all send, at once.
	all := func(fn func(i int, n *fleetNode) error) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, len(nodes))
		for i, n := range nodes {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = fn(i, n) }()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	written, sent := 0, 0
	for range 2 { // the second round finds nothing left to do
		all(func(i int, n *fleetNode) error {
			w, err := n.m.Match(ctx, uint64(3*i+1), []string{"hc-1", "hc-2", "hc-3"})
			mu.Lock()
			written += w
			mu.Unlock()
			return err
		})
		all(func(_ int, n *fleetNode) error {
			s, err := n.snd.SendDue(ctx)
			mu.Lock()
			sent += s
			mu.Unlock()
			return err
		})
	}
	// ana: hc-1 and hc-2; bob: hc-1; dan: hc-3; cat: nothing.
	if written != 4 {
		t.Fatalf("%d outbox rows written across the fleet, want 4", written)
	}
	got := map[string]int{}
	ids := map[string]bool{}
	alerts := smtp.Messages()[confirmations:]
	for _, m := range alerts {
		msg, err := mail.ReadMessage(strings.NewReader(m.Data))
		if err != nil {
			t.Fatal(err)
		}
		if id := msg.Header.Get("Message-Id"); ids[id] {
			t.Fatalf("Message-ID %s sent twice", id)
		} else {
			ids[id] = true
		}
		for _, r := range recs {
			if strings.Contains(m.Data, "alert-recall/"+r.RecordID) {
				got[m.To[0]+" "+r.RecordID]++
			}
		}
	}
	want := map[string]int{"ana@example.ca hc-1": 1, "ana@example.ca hc-2": 1, "bob@example.ca hc-1": 1, "dan@example.ca hc-3": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) || sent != len(alerts) {
		t.Fatalf("alerts delivered %v (%d messages, %d counted sent), want each of %v once", got, len(alerts), sent, want)
	}
}

// Environment of a TestFleetHelperProcess child.
const (
	envFleetDSN  = "RAPPEL_ALERTS_FLEET_DSN"
	envFleetSMTP = "RAPPEL_ALERTS_FLEET_SMTP"
	envFleetKill = "RAPPEL_ALERTS_FLEET_KILL" // the accepted message to die after
)

// TestFleetHelperProcess is not a test: run by TestAlerts_FleetCrash as a
// child process, it is node A: it matches the crash recalls on the shared
// store, claims the outbox and sends it, killing itself with SIGKILL after
// the server accepted message $RAPPEL_ALERTS_FLEET_KILL.
func TestFleetHelperProcess(t *testing.T) {
	dsn := os.Getenv(envFleetDSN)
	if dsn == "" {
		t.Skip("run as a child process by TestAlerts_FleetCrash")
	}
	var recs []*rappel.Record
	for _, id := range crashIDs {
		recs = append(recs, newRecord(id, "Recall "+id))
	}
	smtp := &smtptest.Server{Addr: os.Getenv(envFleetSMTP)}
	n := newFleetNode(t, dsn, "node-a", smtp, time.Now, recs)
	ctx := context.Background()
	if _, err := n.m.Match(ctx, 1, crashIDs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var at, sent int
	fmt.Sscan(os.Getenv(envFleetKill), &at)
	n.snd.accepted = func() {
		if sent++; sent == at {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	if _, err := n.snd.SendDue(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}

// TestAlerts_FleetCrash kills node A (SIGKILL) in the middle of sending the
// outbox it claimed; node B's refresh then finds the recalls matched
// already, leaves A's claimed rows alone while A's lease runs, and once it
// expired sends the rest: every subscriber is reached, and only the message
// A's server accepted but A did not record goes out twice, with the same
// Message-ID.
func TestAlerts_FleetCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, kill := range []int{1, 7} {
		t.Run(fmt.Sprint(kill), func(t *testing.T) {
			ctx := context.Background()
			dsn := pgtest.DSN(t)
			smtp := smtptest.MustStart(t)
			var recs []*rappel.Record
			for _, id := range crashIDs {
				recs = append(recs, newRecord(id, "Recall "+id))
			}
			clock := newFakeClock()
			clock.ns.Store(time.Now().UnixNano())
			b := newFleetNode(t, dsn, "node-b", smtp, clock.Now, recs)
			b.svc.RequireConfirm = false
			for i := range crashSubs {
				if _, err := b.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr(fmt.Sprintf("u%d@example.ca", i))}); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestFleetHelperProcess$")
			cmd.Env = append(os.Environ(), envFleetDSN+"="+dsn, envFleetSMTP+"="+smtp.Addr, envFleetKill+"="+fmt.Sprint(kill))
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || !ee.Sys().(syscall.WaitStatus).Signaled() {
				t.Fatalf("node A was not killed: %v\n%s", err, out)
			}
			if got := len(smtp.Messages()); got != kill {
				t.Fatalf("node A got %d messages out before dying, want %d", got, kill)
			}
			if n, err := b.m.Match(ctx, 1, crashIDs); err != nil || n != 0 {
				t.Fatalf("node B matched %d rows of recalls node A matched (%v)", n, err)
			}
			if n, err := b.snd.SendDue(ctx); err != nil || n != 0 {
				t.Fatalf("node B sent %d digests under node A's live claims (%v)", n, err)
			}
			clock.ns.Store(time.Now().Add(b.snd.Lease).UnixNano()) // past A's claim, made after the clock was set
			if n, err := b.snd.SendDue(ctx); err != nil || n != crashSubs-kill+1 {
				t.Fatalf("node B recovered %d digests, want %d (%v)", n, crashSubs-kill+1, err)
			}
			perID := map[string]int{}
			for _, m := range smtp.Messages() {
				msg, err := mail.ReadMessage(strings.NewReader(m.Data))
				if err != nil {
					t.Fatal(err)
				}
				perID[msg.Header.Get("Message-Id")]++
			}
			dups := 0
			for _, n := range perID {
				dups += n - 1
			}
			if len(perID) != crashSubs || dups != 1 {
				t.Fatalf("%d subscribers reached (want %d), %d duplicates (want 1)", len(perID), crashSubs, dups)
			}
		})
	}
}

// TestSender_RecordWait: in a fleet a digest may name a recall another
// node matched and this node has not fetched yet. The sender waits for it
// (RecordWait), then sends without it.
func TestSender_RecordWait(t *testing.T) {
	ctx := context.Background()
	p := newPipeline(t, kvtest.OpenMem(t), smtptest.MustStart(t))
	p.snd.RecordWait = time.Hour
	p.svc.RequireConfirm = false
	if _, err := p.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("bob@example.ca")}); err != nil {
		t.Fatal(err)
	}
	sub := firstSubID(t, p.st)
	p.st.PutRecords(ctx, []*rappel.Record{newRecord("hc-1", "Cookies")})
	// Another node matched hc-1, hc-2 (batch 4) and hc-3 (batch 5).
	now := p.clock.Now()
	row := func(rec string, seq uint64) *rappel.AlertRow {
		return &rappel.AlertRow{Sub: sub, Record: rec, OutboxState: rappel.OutboxState{Seq: seq, Status: rappel.AlertPending, CreatedAt: now, NextAt: now}}
	}
	if n, err := p.st.CommitMatches(ctx, []string{"hc-1", "hc-2", "hc-3"}, []*rappel.AlertRow{row("hc-1", 4), row("hc-2", 4), row("hc-3", 5)}); n != 3 || err != nil {
		t.Fatalf("CommitMatches = %d, %v", n, err)
	}
	if n, err := p.snd.SendDue(ctx); n != 0 || err != nil || len(p.smtp.Messages()) != 0 {
		t.Fatalf("SendDue without the recalls = %d, %v; want nothing sent yet", n, err)
	}
	// hc-2 arrives with this node's next refresh: batch 4 goes out whole.
	p.st.PutRecords(ctx, []*rappel.Record{newRecord("hc-2", "Bread")})
	p.clock.Add(p.snd.MinBackoff)
	if n, err := p.snd.SendDue(ctx); n != 1 || err != nil {
		t.Fatalf("SendDue once hc-2 arrived = %d, %v", n, err)
	}
	if m := p.smtp.Messages(); len(m) != 1 || !strings.Contains(m[0].Data, "alert-recall/hc-1") || !strings.Contains(m[0].Data, "alert-recall/hc-2") {
		t.Fatalf("messages %+v", m)
	}
	// hc-3 never arrives (withdrawn): past the wait its digest is dropped,
	// with no e-mail and no retry.
	p.clock.Add(time.Hour)
	if n, err := p.snd.SendDue(ctx); n != 0 || err != nil || len(p.smtp.Messages()) != 1 {
		t.Fatalf("SendDue past the wait = %d, %v, %d messages", n, err, len(p.smtp.Messages()))
	}
	if rows, _ := p.st.ClaimAlerts(ctx, "n", p.clock.Now().Add(24*time.Hour), time.Minute, 100); len(rows) != 0 {
		t.Fatalf("rows still due: %+v", rows)
	}
}

// TestSender_Canceled ends SendDue's context right after the server
// accepted the first digest, as shutdown does: that digest is recorded
// sent all the same, the claims of those not started are released, and the
// shutdown's last pass, in the same process, sends them at once.
func TestSender_Canceled(t *testing.T) {
	p := newPipeline(t, kvtest.OpenMem(t), smtptest.MustStart(t))
	p.svc.RequireConfirm = false
	for i := range 5 {
		if _, err := p.svc.Subscribe(context.Background(), &rappel.SubscribeRequest{Email: ptr(fmt.Sprintf("u%d@example.ca", i))}); err != nil {
			t.Fatal(err)
		}
	}
	p.st.PutRecords(context.Background(), []*rappel.Record{newRecord("hc-1", "Cookies")})
	if n, err := p.m.Match(context.Background(), 1, []string{"hc-1"}); n != 5 || err != nil {
		t.Fatalf("Match = %d, %v", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.snd.accepted = cancel
	if n, err := p.snd.SendDue(ctx); n != 1 || !errors.Is(err, context.Canceled) {
		t.Fatalf("SendDue = %d, %v; want 1 and context.Canceled", n, err)
	}
	p.snd.accepted = nil
	if n, err := p.snd.SendDue(context.Background()); n != 4 || err != nil {
		t.Fatalf("the last pass sent %d, %v; want the 4 left", n, err)
	}
	ids := map[string]bool{}
	for _, m := range p.smtp.Messages() {
		ids[m.To[0]] = true
	}
	if len(p.smtp.Messages()) != 5 || len(ids) != 5 {
		t.Fatalf("%d messages to %d addresses, want 5 to 5", len(p.smtp.Messages()), len(ids))
	}
}
