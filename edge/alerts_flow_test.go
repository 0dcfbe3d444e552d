package edge

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/quotedprintable"
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/kv/index"
)

func flowRecord(id, title string, allergens ...string) *rappel.Record {
	return &rappel.Record{RecordID: id, RecallID: strings.TrimPrefix(id, "hc-"), RecallType: rappel.TypeFood, Agency: rappel.AgencyCFIA,
		Status: rappel.StatusActive, EventDate: "2026-11-21", RecallDate: "2026-11-21", FetchedAt: "2026-11-22T00:00:00Z", Allergens: allergens,
		Translations: rappel.Translations{EN: &rappel.Translation{Title: title, HazardDescription: "Allergic reaction.", WhatToDo: "Do not eat."}}}
}

// TestAlerts_FlowThroughRouter: subscribe → confirmation e-mail → confirm
// link → a refresh with a matching and a non-matching new recall → exactly
// one alert e-mail with the unsubscribe headers → one-click unsubscribe
// with the e-mail's link → the next refresh sends nothing. Real router,
// Pebble, refresh batches (ApplySource), SMTP server.
func TestAlerts_FlowThroughRouter(t *testing.T) {
	ctx := context.Background()
	ts, st, _ := mustAlertServer(t, true)
	smtp := smtptest.MustStart(t)
	quiet := slog.New(slog.DiscardHandler)
	snd := alerts.NewSender()
	snd.Outbox, snd.Confirmations, snd.Subscriptions, snd.Records, snd.Logger = st, st, st, st, quiet
	snd.Addr, snd.From, snd.PublicURL, snd.Timeout = smtp.Addr, "alerts@rappel.example.ca", ts.URL, 5*time.Second
	m := alerts.NewMatcher(index.Engine{})
	m.Subscriptions, m.Outbox, m.Records, m.Logger = st, st, st, quiet
	// The server's Service queues its confirmations for the real sender.
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	svc := alerts.NewService(st)
	svc.Logger = quiet
	s.Alerts = svc
	ts = MustHTTP(t, s.Handler())
	snd.PublicURL = ts.URL

	code, body, _ := do(t, "POST", ts.URL+"/recall/alerts/subscribe", `{"email":"ana@example.ca","q":"cookies","allergen":"peanut","lang":"en"}`, keyHdr)
	if code != 200 || !strings.Contains(body, "pending_confirmation") {
		t.Fatalf("subscribe: %d %s", code, body)
	}
	if _, err := snd.SendConfirmations(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := smtp.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d confirmation e-mails", len(msgs))
	}
	confirm := regexp.MustCompile(`http://[^\s]+/recall/alerts/confirm\?token=[A-Za-z0-9_-]{22}`).FindString(decodedBody(t, msgs[0].Data))
	if code, body, _ := do(t, "POST", confirm, "", nil); code != 200 || !strings.Contains(body, `"subscribed"`) {
		t.Fatalf("confirm %q: %d %s", confirm, code, body)
	}

	refresh := func(recs ...*rappel.Record) {
		t.Helper()
		var ids []string
		for _, r := range recs {
			ids = append(ids, r.RecordID)
		}
		err := st.ApplySource(ctx, &rappel.SourceChange{
			State:      rappel.SourceState{Feed: rappel.FeedState{Source: "hc"}},
			PutRecords: recs,
			NewRecalls: &rappel.NewRecalls{At: time.Now(), Source: "hc", RecordIDs: ids},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Drain(ctx, st); err != nil {
			t.Fatal(err)
		}
		if _, err := snd.SendDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	refresh(flowRecord("hc-900", "Cookies recalled: undeclared peanut", "peanut"), flowRecord("hc-901", "Bread recalled for mould"))
	msgs = smtp.Messages()
	if len(msgs) != 2 {
		t.Fatalf("%d e-mails after the refresh, want the confirmation and one alert", len(msgs))
	}
	alert, err := mail.ReadMessage(strings.NewReader(msgs[1].Data))
	if err != nil {
		t.Fatal(err)
	}
	lu := alert.Header.Get("List-Unsubscribe")
	link := regexp.MustCompile(`<(http://[^>]+/recall/alerts/unsubscribe\?token=[A-Za-z0-9_-]{22})>`).FindStringSubmatch(lu)
	if link == nil || alert.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" || alert.Header.Get("List-Id") == "" ||
		!strings.HasPrefix(alert.Header.Get("Message-Id"), "<alert.") {
		t.Fatalf("headers %v", alert.Header)
	}
	if !strings.Contains(msgs[1].Data, "hc-900") || strings.Contains(msgs[1].Data, "hc-901") {
		t.Fatalf("alert body:\n%s", msgs[1].Data)
	}
	// RFC 8058: the mail client POSTs List-Unsubscribe=One-Click to the link.
	code, body, _ = do(t, "POST", link[1], "List-Unsubscribe=One-Click", map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	var res rappel.UnsubscribeResult
	if json.Unmarshal([]byte(body), &res); code != 200 || res.Status != rappel.SubUnsubscribed {
		t.Fatalf("one-click: %d %s", code, body)
	}
	refresh(flowRecord("hc-902", "More cookies with peanut", "peanut"))
	if n := len(smtp.Messages()); n != 2 {
		t.Fatalf("%d e-mails after unsubscribing, want still 2", n)
	}
	if batches, _ := st.NewRecalls(ctx); len(batches) != 0 {
		t.Fatalf("%d batches left unacknowledged", len(batches))
	}
}

func decodedBody(tb testing.TB, data string) string {
	tb.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	b, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
	return string(b)
}
