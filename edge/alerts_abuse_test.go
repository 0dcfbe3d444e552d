package edge

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// abuseServer is the API with a real alerts.Service on a real Pebble
// store, sending its confirmations through the real sender to an
// in-process SMTP server, on a clock the test moves.
type abuseServer struct {
	ts   *httptest.Server
	st   *kv.Store
	svc  *alerts.Service
	snd  *alerts.Sender
	smtp *smtptest.Server
	ns   atomic.Int64
}

// mails sends the confirmation e-mails due, as the runner's pass does
// after the answer, and returns every e-mail the SMTP server took.
func (a *abuseServer) mails(tb testing.TB) []smtptest.Message {
	tb.Helper()
	if _, err := a.snd.SendConfirmations(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return a.smtp.Messages()
}

func (a *abuseServer) now() time.Time      { return time.Unix(0, a.ns.Load()).UTC() }
func (a *abuseServer) add(d time.Duration) { a.ns.Add(int64(d)) }

func mustAbuseServer(tb testing.TB) *abuseServer {
	tb.Helper()
	a := &abuseServer{smtp: smtptest.MustStart(tb)}
	a.ns.Store(time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC).UnixNano())
	a.st = kvtest.OpenMem(tb)
	quiet := slog.New(slog.DiscardHandler)
	a.snd = alerts.NewSender()
	a.snd.Outbox, a.snd.Confirmations, a.snd.Subscriptions, a.snd.Records = a.st, a.st, a.st, a.st
	a.snd.Now, a.snd.Logger = a.now, quiet
	a.snd.Addr, a.snd.From, a.snd.PublicURL, a.snd.Timeout = a.smtp.Addr, "alerts@rappel.example.ca", "https://rappel.example.ca", 5*time.Second
	a.svc = alerts.NewService(a.st)
	a.svc.Now, a.svc.Logger = a.now, quiet
	s, _ := MustServer(tb, MustCatalog(tb, testRecords()))
	s.Alerts = a.svc
	a.ts = MustHTTP(tb, s.Handler())
	return a
}

// TestAlerts_ConfirmOncePerAddress: 21 subscribe requests for one address
// send one confirmation e-mail, and their 21 answers are the same: status,
// headers and body, but for the fresh unsubscribe token each carries. The
// next day's request sends one more.
func TestAlerts_ConfirmOncePerAddress(t *testing.T) {
	a := mustAbuseServer(t)
	url := a.ts.URL + "/recall/alerts/subscribe"
	token := regexp.MustCompile(`[A-Za-z0-9_-]{22}`)
	var first string
	var firstHdr http.Header
	for i := range 21 {
		code, body, h := do(t, "POST", url, `{"email":"ana@example.ca","q":"peanut"}`, keyHdr)
		if code != 200 {
			t.Fatalf("subscribe %d: %d %s", i, code, body)
		}
		masked := token.ReplaceAllString(body, "TOKEN")
		for _, k := range []string{"Date", "X-Request-Id"} {
			h.Del(k)
		}
		if i == 0 {
			first, firstHdr = masked, h
			var res subscribed
			if err := json.Unmarshal([]byte(body), &res); err != nil || res.Status != rappel.SubPending || res.Token != res.UnsubscribeToken {
				t.Fatalf("first answer %s: %v", body, err)
			}
			continue
		}
		if masked != first || !sameHeader(h, firstHdr) {
			t.Fatalf("answer %d differs from the first:\n%d %v %s\nfirst: %v %s", i, code, h, masked, firstHdr, first)
		}
		a.add(time.Minute)
	}
	if msgs := a.mails(t); len(msgs) != 1 || msgs[0].To[0] != "ana@example.ca" {
		t.Fatalf("%d confirmation e-mails, want 1: %+v", len(msgs), msgs)
	}
	var n int
	a.st.ForEachSubscription(context.Background(), func(*rappel.Subscription) error { n++; return nil })
	if n != 21 {
		t.Fatalf("%d subscriptions stored, want 21", n)
	}
	a.add(24 * time.Hour)
	if code, body, _ := do(t, "POST", url, `{"email":"ana@example.ca","q":"peanut"}`, keyHdr); code != 200 || len(a.mails(t)) != 2 {
		t.Fatalf("the next day: %d %s, %d e-mails", code, body, len(a.mails(t)))
	}
}

func sameHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestAlerts_KeyDailyCap: past its daily cap a key gets a 429 with
// Retry-After until the next UTC day, whatever the address; before it and
// the next day, subscriptions are accepted.
func TestAlerts_KeyDailyCap(t *testing.T) {
	a := mustAbuseServer(t)
	a.svc.SubscriptionsPerKeyDay = 3
	url := a.ts.URL + "/recall/alerts/subscribe"
	for _, email := range []string{"a@example.ca", "b@example.ca", "c@example.ca"} {
		if code, body, _ := do(t, "POST", url, `{"email":"`+email+`"}`, keyHdr); code != 200 {
			t.Fatalf("%s: %d %s", email, code, body)
		}
	}
	for _, email := range []string{"d@example.ca", "a@example.ca"} {
		code, body, h := do(t, "POST", url, `{"email":"`+email+`"}`, keyHdr)
		var eb struct{ Detail string }
		json.Unmarshal([]byte(body), &eb)
		// 04:00 UTC: 20 hours to the next day.
		if code != 429 || h.Get("Retry-After") != strconv.Itoa(20*3600) || !strings.HasPrefix(h.Get("Content-Type"), "application/json") ||
			eb.Detail != "Too many subscriptions: this API key may create 3 a day (UTC) and has created them today; new subscriptions are accepted again at 2026-11-23T00:00:00Z, in 72000 s (Retry-After)." {
			t.Fatalf("%s over the cap: %d %v %s", email, code, h, body)
		}
	}
	if len(a.mails(t)) != 3 {
		t.Fatalf("%d e-mails, want 3", len(a.mails(t)))
	}
	a.add(20 * time.Hour)
	if code, body, _ := do(t, "POST", url, `{"email":"d@example.ca"}`, keyHdr); code != 200 {
		t.Fatalf("the next day: %d %s", code, body)
	}
}

// TestAlerts_IDN: an address with an internationalized domain reaches
// SMTP's RCPT TO, and the e-mail's To, as its A-label; a domain that is
// not a valid IDN is a 422 naming the field and the problem.
func TestAlerts_IDN(t *testing.T) {
	a := mustAbuseServer(t)
	url := a.ts.URL + "/recall/alerts/subscribe"
	if code, body, _ := do(t, "POST", url, `{"email":"ana@Bücher.example.ca"}`, keyHdr); code != 200 {
		t.Fatalf("subscribe: %d %s", code, body)
	}
	msgs := a.mails(t)
	if len(msgs) != 1 || len(msgs[0].To) != 1 || msgs[0].To[0] != "ana@xn--bcher-kva.example.ca" ||
		!strings.Contains(msgs[0].Data, "To: <ana@xn--bcher-kva.example.ca>") {
		t.Fatalf("messages %+v", msgs)
	}
	// The same address typed as its A-label is the same address: no second
	// e-mail within the day.
	if code, body, _ := do(t, "POST", url, `{"email":"ana@xn--bcher-kva.example.ca"}`, keyHdr); code != 200 || len(a.mails(t)) != 1 {
		t.Fatalf("A-label: %d %s, %d e-mails", code, body, len(a.mails(t)))
	}
	code, body, _ := do(t, "POST", url, `{"email":"ana@xn--zz.example.ca"}`, keyHdr)
	var eb struct{ Detail []rappel.Invalid }
	if err := json.Unmarshal([]byte(body), &eb); err != nil || code != 422 || len(eb.Detail) != 1 || eb.Detail[0].Loc[1] != "email" ||
		!strings.HasPrefix(eb.Detail[0].Msg, "Body field 'email' has the domain 'xn--zz.example.ca', which is not a valid internationalized domain name") {
		t.Fatalf("invalid IDN: %d %s", code, body)
	}
}

// TestAlerts_ConfirmExpired: a week after subscribing, the confirmation
// link is a 404 saying it expired, to a JSON GET and to the page's POST;
// a browser's GET still gets the page, which changes nothing.
func TestAlerts_ConfirmExpired(t *testing.T) {
	a := mustAbuseServer(t)
	if code, body, _ := do(t, "POST", a.ts.URL+"/recall/alerts/subscribe", `{"email":"ana@example.ca"}`, keyHdr); code != 200 {
		t.Fatalf("subscribe: %d %s", code, body)
	}
	link := regexp.MustCompile(`/recall/alerts/confirm\?token=[A-Za-z0-9_-]{22}`).FindString(decodedBody(t, a.mails(t)[0].Data))
	a.add(7 * 24 * time.Hour)
	if code, body, h := do(t, "GET", a.ts.URL+link, "", map[string]string{"Accept": "text/html"}); code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("browser GET: %d %s", code, body)
	}
	for _, m := range []string{"GET", "POST"} {
		code, body, _ := do(t, m, a.ts.URL+link, "", jsonAccept)
		var eb struct{ Detail string }
		if json.Unmarshal([]byte(body), &eb); code != 404 ||
			eb.Detail != "This confirmation link has expired: links work for 7 days after subscribing. Subscribe again to get a new link." {
			t.Fatalf("%s after a week: %d %s", m, code, body)
		}
	}
	var status string
	a.st.ForEachSubscription(context.Background(), func(s *rappel.Subscription) error { status = s.Status; return nil })
	if status != rappel.SubPending {
		t.Fatalf("status %s, want %s", status, rappel.SubPending)
	}
}
