package alerts

import (
	"context"
	"io"
	"log/slog"
	"mime/quotedprintable"
	"net/mail"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// fakeClock is the one fake: a clock tests move by hand.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *fakeClock) Now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Add(d time.Duration) { c.ns.Add(int64(d)) }

func newRecord(id, title string, allergens ...string) *rappel.Record {
	return &rappel.Record{RecordID: id, RecallID: strings.TrimPrefix(id, "hc-"), RecallType: rappel.TypeFood, Agency: rappel.AgencyCFIA,
		Status: rappel.StatusActive, EventDate: "2026-11-21", RecallDate: "2026-11-21", FetchedAt: "2026-11-22T00:00:00Z", Allergens: allergens,
		Translations: rappel.Translations{
			EN: &rappel.Translation{Title: title, HazardDescription: "May cause a serious allergic reaction.", WhatToDo: "Do not eat it.", URL: "https://recalls-rappels.canada.ca/en/alert-recall/" + id},
			FR: &rappel.Translation{Title: "FR " + title, HazardDescription: "Peut causer une réaction allergique grave.", WhatToDo: "Ne le mangez pas."},
		}}
}

type pipeline struct {
	st    *kv.Store
	svc   *Service
	m     *Matcher
	snd   *Sender
	clock *fakeClock
	smtp  *smtptest.Server
}

func newPipeline(tb testing.TB, st *kv.Store, smtp *smtptest.Server) *pipeline {
	p := &pipeline{st: st, clock: newFakeClock(), smtp: smtp}
	quiet := slog.New(slog.DiscardHandler)
	p.svc = NewService(st)
	p.svc.Now, p.svc.Logger = p.clock.Now, quiet
	p.m = NewMatcher(index.Engine{})
	p.m.Subscriptions, p.m.Outbox, p.m.Records, p.m.Now, p.m.Logger = st, st, st, p.clock.Now, quiet
	p.snd = newTestSender(st, st, smtp, p.clock.Now)
	return p
}

// newTestSender returns a sender of the alerts and confirmation e-mails
// of st, with the records of records, through smtp, on the clock now.
func newTestSender(st Store, records RecordSource, smtp *smtptest.Server, now func() time.Time) *Sender {
	s := NewSender()
	s.Outbox, s.Confirmations, s.Subscriptions, s.Records = st, st, st, records
	s.Now, s.Logger = now, slog.New(slog.DiscardHandler)
	s.Addr, s.From, s.PublicURL = smtp.Addr, "alerts@rappel.example.ca", "https://rappel.example.ca"
	s.Timeout = 5 * time.Second
	return s
}

// confirmLinks sends the confirmation e-mails due through snd and returns
// the confirmation tokens of all those smtp took, oldest first.
func confirmLinks(tb testing.TB, snd *Sender, smtp *smtptest.Server) []string {
	tb.Helper()
	if _, err := snd.SendConfirmations(context.Background()); err != nil {
		tb.Fatal(err)
	}
	var toks []string
	for _, m := range smtp.Messages() {
		if strings.HasPrefix(mailHeader(tb, m.Data, "Message-Id"), "<confirm.") {
			toks = append(toks, confirmToken(tb, m.Data))
		}
	}
	return toks
}

// mailHeader returns the header name of the e-mail data.
func mailHeader(tb testing.TB, data, name string) string {
	tb.Helper()
	m, err := mail.ReadMessage(strings.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	return m.Header.Get(name)
}

func ptr(s string) *string { return &s }

// queueOne subscribes email, active at once, and matches a new recall
// (hc-1) for it: one digest due.
func (p *pipeline) queueOne(tb testing.TB, email string) {
	tb.Helper()
	ctx := context.Background()
	p.svc.RequireConfirm = false
	if _, err := p.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr(email)}); err != nil {
		tb.Fatal(err)
	}
	p.st.PutRecords(ctx, []*rappel.Record{newRecord("hc-1", "Cookies")})
	if n, err := p.m.Match(ctx, 1, []string{"hc-1"}); n != 1 || err != nil {
		tb.Fatalf("Match = %d, %v", n, err)
	}
}

var unsubLink = regexp.MustCompile(`<https://rappel\.example\.ca/recall/alerts/unsubscribe\?token=([A-Za-z0-9_-]{22})>`)

func TestAlerts_Flow(t *testing.T) {
	ctx := context.Background()
	p := newPipeline(t, kvtest.OpenMem(t), smtptest.MustStart(t))
	if _, err := p.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("ana@example.ca"), Q: ptr("cookies"), Filters: rappel.FilterValues{Allergen: "peanut"}, Lang: ptr("fr")}); err != nil {
		t.Fatal(err)
	}
	// Pending: nothing is matched before the confirmation.
	p.st.PutRecords(ctx, []*rappel.Record{newRecord("hc-1", "Cookies with undeclared peanut", "peanut")})
	if n, _ := p.m.Match(ctx, 1, []string{"hc-1"}); n != 0 {
		t.Fatalf("pending subscription matched %d", n)
	}
	links := confirmLinks(t, p.snd, p.smtp)
	if len(links) != 1 {
		t.Fatalf("%d confirmation e-mails, want 1", len(links))
	}
	if _, err := p.svc.Confirm(ctx, links[0], "ua"); err != nil {
		t.Fatal(err)
	}
	p.st.PutRecords(ctx, []*rappel.Record{
		newRecord("hc-2", "Chocolate cookies recalled: undeclared peanut", "peanut"),
		newRecord("hc-3", "Crackers recalled for undeclared milk", "milk"),
	})
	if n, err := p.m.Match(ctx, 2, []string{"hc-2", "hc-3"}); n != 1 || err != nil {
		t.Fatalf("Match = %d, %v", n, err)
	}
	if n, err := p.snd.SendDue(ctx); n != 1 || err != nil {
		t.Fatalf("SendDue = %d, %v", n, err)
	}
	if n, _ := p.snd.SendDue(ctx); n != 0 {
		t.Fatalf("sent %d more", n)
	}
	msgs := p.smtp.Messages()[1:] // after the confirmation
	if len(msgs) != 1 || msgs[0].To[0] != "ana@example.ca" {
		t.Fatalf("messages %+v", msgs)
	}
	m, err := mail.ReadMessage(strings.NewReader(msgs[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	h := m.Header
	lu := h.Get("List-Unsubscribe")
	sm := unsubLink.FindStringSubmatch(lu)
	if sm == nil || !strings.Contains(lu, "<mailto:alerts@rappel.example.ca?subject=unsubscribe") ||
		h.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" || h.Get("List-Id") == "" ||
		h.Get("Message-Id") != "<alert."+firstSubID(t, p.st)+".hc-2@rappel.example.ca>" || !strings.Contains(h.Get("Subject"), "Alerte") {
		t.Fatalf("headers %v", h)
	}
	if !strings.Contains(msgs[0].Data, "hc-2") || strings.Contains(msgs[0].Data, "hc-3") {
		t.Fatalf("body:\n%s", msgs[0].Data)
	}
	// One-click unsubscribe with the e-mail's own token.
	if _, err := p.svc.Unsubscribe(ctx, sm[1]); err != nil {
		t.Fatal(err)
	}
	p.st.PutRecords(ctx, []*rappel.Record{newRecord("hc-4", "Peanut cookies again", "peanut")})
	if n, _ := p.m.Match(ctx, 3, []string{"hc-4"}); n != 0 {
		t.Fatalf("unsubscribed matched %d", n)
	}
	if n, _ := p.snd.SendDue(ctx); n != 0 || len(p.smtp.Messages()) != 2 {
		t.Fatalf("sent %d after unsubscribing", n)
	}
}

func firstSubID(tb testing.TB, st *kv.Store) string {
	var id string
	st.ForEachSubscription(context.Background(), func(s *rappel.Subscription) error { id = s.ID; return nil })
	return id
}

func TestSender_Failures(t *testing.T) {
	ctx := context.Background()
	srv := smtptest.MustStart(t)
	p := newPipeline(t, kvtest.OpenMem(t), srv)
	p.svc.RequireConfirm = false
	p.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("bob@example.ca")})
	p.st.PutRecords(ctx, []*rappel.Record{newRecord("hc-1", "Cookies"), newRecord("hc-2", "Bread")})

	t.Run("Temporary", func(t *testing.T) {
		p.m.Match(ctx, 1, []string{"hc-1"})
		srv.SetDataReply("451 4.3.0 try again later")
		if n, err := p.snd.SendDue(ctx); n != 0 || err != nil {
			t.Fatalf("SendDue = %d, %v", n, err)
		}
		if n, _ := p.snd.SendDue(ctx); n != 0 {
			t.Fatal("retried before the backoff")
		}
		srv.SetDataReply("")
		p.clock.Add(p.snd.MinBackoff)
		if n, err := p.snd.SendDue(ctx); n != 1 || err != nil {
			t.Fatalf("SendDue after backoff = %d, %v", n, err)
		}
	})
	t.Run("ServerDown", func(t *testing.T) {
		p.m.Match(ctx, 2, []string{"hc-2"})
		addr := p.snd.Addr
		p.snd.Addr = "127.0.0.1:1"
		if n, err := p.snd.SendDue(ctx); n != 0 || err != nil {
			t.Fatalf("SendDue = %d, %v", n, err)
		}
		p.snd.Addr = addr
		p.clock.Add(time.Hour)
		if n, err := p.snd.SendDue(ctx); n != 1 || err != nil {
			t.Fatalf("SendDue after restart = %d, %v", n, err)
		}
	})
	t.Run("Permanent", func(t *testing.T) {
		p.st.PutRecords(ctx, []*rappel.Record{newRecord("hc-3", "Cheese")})
		p.m.Match(ctx, 3, []string{"hc-3"})
		srv.SetDataReply("554 5.7.1 rejected")
		if n, err := p.snd.SendDue(ctx); n != 0 || err != nil {
			t.Fatalf("SendDue = %d, %v", n, err)
		}
		srv.SetDataReply("")
		p.clock.Add(24 * time.Hour)
		if n, _ := p.snd.SendDue(ctx); n != 0 {
			t.Fatal("a refused alert was sent again")
		}
	})
	if got := len(srv.Messages()); got != 2 {
		t.Fatalf("%d messages, want 2", got)
	}
}

// TestSender_SendConfirmation: subscribing queues the confirmation
// e-mail, which the sender sends once, with a Message-ID of the
// subscription's; its link confirms; a subscription no longer pending, or
// whose link expired before it could be sent, drops its e-mail.
func TestSender_SendConfirmation(t *testing.T) {
	ctx := context.Background()
	srv := smtptest.MustStart(t)
	p := newPipeline(t, kvtest.OpenMem(t), srv)
	res, err := p.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("ana@example.ca")})
	if err != nil || res.Status != rappel.SubPending {
		t.Fatalf("Subscribe = %+v, %v", res, err)
	}
	if msgs := srv.Messages(); len(msgs) != 0 {
		t.Fatalf("%d messages before the sender ran", len(msgs))
	}
	if n, err := p.snd.SendConfirmations(ctx); n != 1 || err != nil {
		t.Fatalf("SendConfirmations = %d, %v", n, err)
	}
	if n, err := p.snd.SendConfirmations(ctx); n != 0 || err != nil {
		t.Fatalf("SendConfirmations again = %d, %v", n, err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 || mailHeader(t, msgs[0].Data, "Message-Id") != "<confirm."+firstSubID(t, p.st)+"@rappel.example.ca>" {
		t.Fatalf("messages %+v", msgs)
	}
	if r, err := p.svc.Confirm(ctx, confirmToken(t, msgs[0].Data), "ua"); err != nil || r.Status != rappel.SubActive {
		t.Fatalf("Confirm = %+v, %v", r, err)
	}
	// bob unsubscribes, with the answer's token, before his e-mail goes.
	bob, err := p.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("bob@example.ca")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.svc.Unsubscribe(ctx, bob.Token); err != nil {
		t.Fatal(err)
	}
	if n, err := p.snd.SendConfirmations(ctx); n != 0 || err != nil || len(srv.Messages()) != 1 {
		t.Fatalf("SendConfirmations for an unsubscribed address = %d, %v", n, err)
	}
	// cat's e-mail could not go out before her link expired.
	p.snd.PendingTTL = time.Hour
	if _, err := p.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("cat@example.ca")}); err != nil {
		t.Fatal(err)
	}
	p.clock.Add(time.Hour)
	if n, err := p.snd.SendConfirmations(ctx); n != 0 || err != nil || len(srv.Messages()) != 1 {
		t.Fatalf("SendConfirmations past the link's expiry = %d, %v", n, err)
	}
	p.clock.Add(48 * time.Hour)
	if n, err := p.snd.SendConfirmations(ctx); n != 0 || err != nil || len(srv.Messages()) != 1 {
		t.Fatalf("the expired e-mail was retried: %d, %v", n, err)
	}
}

// confirmToken returns the token of the confirmation link in the e-mail
// data (quoted-printable, as the sender writes it).
func confirmToken(tb testing.TB, data string) string {
	tb.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	body, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
	tok := regexp.MustCompile(`/recall/alerts/confirm\?token=([A-Za-z0-9_-]{22})`).FindStringSubmatch(string(body))
	if tok == nil {
		tb.Fatalf("no confirmation link in\n%s", data)
	}
	return tok[1]
}

func TestSender_Auth(t *testing.T) {
	ctx := context.Background()
	srv := smtptest.MustStart(t)
	p := newPipeline(t, kvtest.OpenMem(t), srv)
	p.snd.User, p.snd.Password = "rappel", "secret"
	p.queueOne(t, "ana@example.ca")
	if n, err := p.snd.SendDue(ctx); n != 1 || err != nil {
		t.Fatalf("SendDue = %d, %v", n, err)
	}
	if m := srv.Messages(); len(m) != 1 || m[0].Auth != "rappel" {
		t.Fatalf("messages %+v", m)
	}
}
