package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// confirmInbox sends the confirmation e-mails a store holds through the
// real sender to an in-process SMTP server, as the alerts runner's pass
// does after a subscribe, and reads the tokens of their links back.
type confirmInbox struct {
	snd  *alerts.Sender
	smtp *smtptest.Server
}

// confirmLinks are the tokens of the confirmation e-mails' links, oldest
// e-mail first.
type confirmLinks struct{ confirm, unsub []string }

func newConfirmInbox(tb testing.TB, st alerts.Store) *confirmInbox {
	c := &confirmInbox{snd: alerts.NewSender(), smtp: smtptest.MustStart(tb)}
	c.snd.Outbox, c.snd.Confirmations, c.snd.Subscriptions, c.snd.Logger = st, st, st, slog.New(slog.DiscardHandler)
	c.snd.Addr, c.snd.From, c.snd.PublicURL, c.snd.Timeout = c.smtp.Addr, "alerts@rappel.example.ca", "https://rappel.example.ca", 5*time.Second
	return c
}

// links sends the confirmation e-mails due and returns the links of all
// those the SMTP server took.
func (c *confirmInbox) links(tb testing.TB) confirmLinks {
	tb.Helper()
	if _, err := c.snd.SendConfirmations(context.Background()); err != nil {
		tb.Fatal(err)
	}
	var l confirmLinks
	for _, m := range c.smtp.Messages() {
		msg, err := mail.ReadMessage(strings.NewReader(m.Data))
		if err != nil {
			tb.Fatal(err)
		}
		confirm := confirmTokenPattern.FindStringSubmatch(decodedBody(tb, m.Data))
		unsub := unsubscribeTokenPattern.FindStringSubmatch(msg.Header.Get("List-Unsubscribe"))
		if confirm == nil || unsub == nil {
			tb.Fatalf("no confirmation or unsubscribe link in\n%s", m.Data)
		}
		l.confirm, l.unsub = append(l.confirm, confirm[1]), append(l.unsub, unsub[1])
	}
	return l
}

var (
	confirmTokenPattern     = regexp.MustCompile(`/recall/alerts/confirm\?token=([A-Za-z0-9_-]{22})`)
	unsubscribeTokenPattern = regexp.MustCompile(`/recall/alerts/unsubscribe\?token=([A-Za-z0-9_-]{22})`)
)

// mustAlertServer serves the API with a real alerts.Service on a real
// Pebble store (in memory).
func mustAlertServer(tb testing.TB, confirm bool) (*httptest.Server, *kv.Store, *confirmInbox) {
	tb.Helper()
	st := kvtest.OpenMem(tb)
	svc := alerts.NewService(st)
	svc.RequireConfirm = confirm
	svc.Logger = slog.New(slog.DiscardHandler)
	svc.Now = stepClock()
	cc := newConfirmInbox(tb, st)
	s, _ := MustServer(tb, MustCatalog(tb, testRecords()))
	s.Alerts = svc
	return MustHTTP(tb, s.Handler()), st, cc
}

func do(tb testing.TB, method, url, body string, hdr map[string]string) (int, string, http.Header) {
	tb.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

var (
	keyHdr     = map[string]string{"x-gateway-key": testKey, "Content-Type": "application/json"}
	jsonAccept = map[string]string{"Accept": "application/json"}
)

func TestServer_Subscribe(t *testing.T) {
	ts, st, cc := mustAlertServer(t, true)
	url := ts.URL + "/recall/alerts/subscribe"

	t.Run("OK", func(t *testing.T) {
		code, body, _ := do(t, "POST", url, `{"email":"Ana@Example.CA","q":"listeria OR salmonella","agency":"CFIA","allergen":null,"lang":"fr"}`, keyHdr)
		if code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
		var res rappel.SubscribeResult
		if err := json.Unmarshal([]byte(body), &res); err != nil {
			t.Fatal(err)
		}
		if res.Status != rappel.SubPending || len(res.Token) != 22 {
			t.Fatalf("got %+v", res)
		}
		var subs []*rappel.Subscription
		st.ForEachSubscription(context.Background(), func(s *rappel.Subscription) error { subs = append(subs, s); return nil })
		if len(subs) != 1 || subs[0].Email != "Ana@example.ca" || subs[0].Search.Agency != "CFIA" || subs[0].Lang != "fr" {
			t.Fatalf("stored %+v", subs)
		}
		raw, _ := json.Marshal(subs[0])
		if strings.Contains(string(raw), res.Token) || strings.Contains(string(raw), cc.links(t).confirm[0]) {
			t.Fatal("a token is stored in clear")
		}
	})
	t.Run("SameAnswerWhenAlreadySubscribed", func(t *testing.T) {
		b := `{"email":"bob@example.ca"}`
		_, first, _ := do(t, "POST", url, b, keyHdr)
		_, second, _ := do(t, "POST", url, b, keyHdr)
		var r1, r2 map[string]any
		json.Unmarshal([]byte(first), &r1)
		json.Unmarshal([]byte(second), &r2)
		if r1["status"] != r2["status"] || len(r1) != len(r2) || r1["token"] == r2["token"] {
			t.Fatalf("answers differ in shape: %s vs %s", first, second)
		}
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		if code, body, _ := do(t, "POST", url, `{"email":"a@example.ca"}`, nil); code != 403 {
			t.Fatalf("status %d: %s", code, body)
		}
	})
	t.Run("ErrMethod", func(t *testing.T) {
		if code, _, h := do(t, "GET", url, "", keyHdr); code != 405 || h.Get("Allow") != "POST" {
			t.Fatalf("status %d allow %q", code, h.Get("Allow"))
		}
	})
	for _, tc := range []struct{ name, body, typ, field, msg string }{
		{"Missing", `{}`, "missing", "email", ""},
		{"NotMailbox", `{"email":"Ana <ana@example.ca>"}`, "value_error", "email", ""},
		{"NoDomainDot", `{"email":"ana@localhost"}`, "value_error", "email", ""},
		{"Empty", `{"email":""}`, "value_error", "email", ""},
		{"HeaderInjection", `{"email":"a@example.ca\r\nBcc: x@example.com"}`, "value_error", "email", "control character"},
		{"NULInQ", `{"email":"a@example.ca","q":"milk\u0000"}`, "value_error", "q", "control character"},
		{"LFInLang", `{"email":"a@example.ca","lang":"en\n"}`, "value_error", "lang", ""},
		{"Vocabulary", `{"email":"a@example.ca","agency":"CFIAA"}`, "enum", "agency", "did you mean 'CFIA'"},
		{"RecallType", `{"email":"a@example.ca","recall_type":"vehicule"}`, "enum", "recall_type", "did you mean 'vehicle'"},
		{"BadQ", `{"email":"a@example.ca","q":"\"unclosed"}`, "value_error", "q", "unclosed"},
		{"LongQ", `{"email":"a@example.ca","q":"` + strings.Repeat("a", 600) + `"}`, "string_too_long", "q", ""},
		{"LongEmail", `{"email":"` + strings.Repeat("a", 300) + `@example.ca"}`, "string_too_long", "email", ""},
		{"Unknown", `{"email":"a@example.ca","agncy":"CFIA"}`, "extra_forbidden", "agncy", "did you mean 'agency'"},
		{"NotString", `{"email":42}`, "value_error", "email", ""},
		{"JSON", `{"email":`, "json_invalid", "", ""},
		{"NotObject", `["a@example.ca"]`, "json_invalid", "", ""},
	} {
		t.Run("ErrInvalid/"+tc.name, func(t *testing.T) {
			code, body, _ := do(t, "POST", url, tc.body, keyHdr)
			if code != 422 {
				t.Fatalf("status %d: %s", code, body)
			}
			var eb struct{ Detail []rappel.Invalid }
			if err := json.Unmarshal([]byte(body), &eb); err != nil || len(eb.Detail) == 0 {
				t.Fatalf("body %s: %v", body, err)
			}
			it := eb.Detail[0]
			if it.Type != tc.typ || it.Loc[0] != "body" || (tc.field != "" && (len(it.Loc) < 2 || it.Loc[1] != tc.field)) || !strings.Contains(it.Msg, tc.msg) {
				t.Fatalf("item %+v", it)
			}
		})
	}
}

func TestServer_ConfirmUnsubscribe(t *testing.T) {
	ts, st, cc := mustAlertServer(t, true)
	_, body, _ := do(t, "POST", ts.URL+"/recall/alerts/subscribe", `{"email":"ana@example.ca","recall_type":"food"}`, keyHdr)
	var res rappel.SubscribeResult
	json.Unmarshal([]byte(body), &res)
	status := func() string {
		var s string
		st.ForEachSubscription(context.Background(), func(sub *rappel.Subscription) error { s = sub.Status; return nil })
		return s
	}

	t.Run("ConfirmUnknown", func(t *testing.T) {
		if code, _, _ := do(t, "GET", ts.URL+"/recall/alerts/confirm?token=AAAAAAAAAAAAAAAAAAAAAA", "", jsonAccept); code != 404 {
			t.Fatalf("status %d", code)
		}
		// An unsubscribe token does not confirm.
		if code, _, _ := do(t, "GET", ts.URL+"/recall/alerts/confirm?token="+res.Token, "", jsonAccept); code != 404 {
			t.Fatalf("status %d", code)
		}
	})
	t.Run("Confirm", func(t *testing.T) {
		for range 2 {
			code, body, _ := do(t, "GET", ts.URL+"/recall/alerts/confirm?token="+cc.links(t).confirm[0], "", map[string]string{"User-Agent": "test-client", "Accept": "application/json"})
			if code != 200 || !strings.Contains(body, rappel.SubActive) {
				t.Fatalf("status %d: %s", code, body)
			}
		}
		var sub *rappel.Subscription
		st.ForEachSubscription(context.Background(), func(s *rappel.Subscription) error { sub = s; return nil })
		if sub.Status != rappel.SubActive || sub.Consent == nil || sub.Consent.Method != rappel.ConsentDoubleOptIn || sub.Consent.UserAgent != "test-client" || sub.Consent.At.IsZero() {
			t.Fatalf("stored %+v %+v", sub, sub.Consent)
		}
	})
	t.Run("HTMLPageDoesNotUnsubscribe", func(t *testing.T) {
		code, body, h := do(t, "GET", ts.URL+"/recall/alerts/unsubscribe?token="+res.Token, "", map[string]string{"Accept": "text/html,application/xhtml+xml"})
		if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(body, `method="post"`) || !strings.Contains(body, "Se désabonner") {
			t.Fatalf("status %d: %s", code, body)
		}
		if s := status(); s != rappel.SubActive {
			t.Fatalf("status %s after the page", s)
		}
	})
	t.Run("OneClickPOST", func(t *testing.T) {
		for range 2 {
			code, body, _ := do(t, "POST", ts.URL+"/recall/alerts/unsubscribe?token="+res.Token, "List-Unsubscribe=One-Click",
				map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
			if code != 200 || !strings.Contains(body, rappel.SubUnsubscribed) {
				t.Fatalf("status %d: %s", code, body)
			}
		}
		if s := status(); s != rappel.SubUnsubscribed {
			t.Fatalf("status %s", s)
		}
	})
	t.Run("GETJSONUsedToken", func(t *testing.T) {
		if code, body, _ := do(t, "GET", ts.URL+"/recall/alerts/unsubscribe?token="+res.Token, "", jsonAccept); code != 200 || !strings.Contains(body, rappel.SubUnsubscribed) {
			t.Fatalf("status %d: %s", code, body)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		for _, tok := range []string{"nope", "AAAAAAAAAAAAAAAAAAAAAA", cc.links(t).confirm[0]} {
			if code, body, _ := do(t, "GET", ts.URL+"/recall/alerts/unsubscribe?token="+tok, "", jsonAccept); code != 404 {
				t.Fatalf("%s: status %d: %s", tok, code, body)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		if code, _, _ := do(t, "GET", ts.URL+"/recall/alerts/unsubscribe", "", nil); code != 422 {
			t.Fatalf("status %d", code)
		}
		if code, _, _ := do(t, "GET", ts.URL+"/recall/alerts/unsubscribe?token=a&x=1", "", nil); code != 422 {
			t.Fatalf("status %d", code)
		}
	})
}

func TestServer_SubscribeWithoutConfirm(t *testing.T) {
	ts, st, cc := mustAlertServer(t, false)
	code, body, _ := do(t, "POST", ts.URL+"/recall/alerts/subscribe", `{"email":"ana@example.ca"}`, keyHdr)
	if code != 200 || !strings.Contains(body, `"status":"subscribed"`) || len(cc.links(t).confirm) != 0 {
		t.Fatalf("status %d: %s (%d confirmations)", code, body, len(cc.links(t).confirm))
	}
	var sub *rappel.Subscription
	st.ForEachSubscription(context.Background(), func(s *rappel.Subscription) error { sub = s; return nil })
	if sub.Status != rappel.SubActive || sub.Consent.Method != rappel.ConsentIntegrator {
		t.Fatalf("stored %+v", sub)
	}
}

func TestServer_AlertsUnavailable(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	ts := MustHTTP(t, s.Handler())
	if code, _, _ := do(t, "POST", ts.URL+"/recall/alerts/subscribe", `{"email":"a@example.ca"}`, keyHdr); code != 503 {
		t.Fatalf("status %d", code)
	}
}

// TestAlerts_OnlyOnPurpose: the links of the e-mails change a subscription
// only when a person or an API client means it. A link checker or mail
// scanner (HEAD, Accept */* or none) and a browser get the page whose
// button POSTs; HEAD never acts, whatever it accepts; a client asking for
// JSON confirms or unsubscribes with a GET; the button's POST does.
func TestAlerts_OnlyOnPurpose(t *testing.T) {
	ts, st, cc := mustAlertServer(t, true)
	_, body, _ := do(t, "POST", ts.URL+"/recall/alerts/subscribe", `{"email":"ana@example.ca","recall_type":"food"}`, keyHdr)
	var sub rappel.SubscribeResult
	if err := json.Unmarshal([]byte(body), &sub); err != nil || len(cc.links(t).confirm) != 1 {
		t.Fatalf("subscribe: %s (%d links)", body, len(cc.links(t).confirm))
	}
	status := func() string {
		var s string
		st.ForEachSubscription(context.Background(), func(x *rappel.Subscription) error { s = x.Status; return nil })
		return s
	}
	confirm := ts.URL + "/recall/alerts/confirm?token=" + cc.links(t).confirm[0]
	unsub := ts.URL + "/recall/alerts/unsubscribe?token=" + sub.Token
	machines := []struct {
		method string
		hdr    map[string]string
	}{
		{"HEAD", nil},
		{"HEAD", map[string]string{"Accept": "*/*"}},
		{"HEAD", map[string]string{"Accept": "application/json"}},
		{"GET", nil},
		{"GET", map[string]string{"Accept": "*/*"}},
		{"GET", map[string]string{"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}},
		{"GET", map[string]string{"Accept": "application/json, text/html"}},
		{"GET", map[string]string{"Accept": "application/json;q=0, */*"}},
		{"GET", map[string]string{"Accept": "text/plain"}},
	}
	page := func(t *testing.T, what string, code int, body string, h http.Header, method, form string) {
		t.Helper()
		if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || h.Get("Cache-Control") != "no-store" ||
			h.Get("Referrer-Policy") != "no-referrer" || !strings.HasPrefix(h.Get("Content-Security-Policy"), "default-src 'none'; form-action 'self'") {
			t.Fatalf("%s: %d %v", what, code, h)
		}
		if method == "GET" && (!strings.Contains(body, `<form method="post" action="?token=`) || !strings.Contains(body, form)) {
			t.Fatalf("%s: %s", what, body)
		}
		if method == "HEAD" && body != "" {
			t.Fatalf("%s: a body to HEAD: %s", what, body)
		}
	}
	for _, m := range machines {
		what := fmt.Sprintf("%s %v", m.method, m.hdr)
		code, body, h := do(t, m.method, confirm, "", m.hdr)
		page(t, "confirm: "+what, code, body, h, m.method, "Confirm / Confirmer")
		code, body, h = do(t, m.method, unsub, "", m.hdr)
		page(t, "unsubscribe: "+what, code, body, h, m.method, "Se désabonner")
		if s := status(); s != rappel.SubPending {
			t.Fatalf("%s: status %s, want %s", what, s, rappel.SubPending)
		}
	}

	// The confirmation page's button.
	code, body, h := do(t, "POST", confirm, "", map[string]string{"Accept": "text/html", "Content-Type": "application/x-www-form-urlencoded", "User-Agent": "a-browser"})
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(body, "Abonnement confirmé") || status() != rappel.SubActive {
		t.Fatalf("POST confirm: %d %s, status %s", code, body, status())
	}
	var stored *rappel.Subscription
	st.ForEachSubscription(context.Background(), func(x *rappel.Subscription) error { stored = x; return nil })
	if stored.Consent == nil || stored.Consent.Method != rappel.ConsentDoubleOptIn || stored.Consent.UserAgent != "a-browser" {
		t.Fatalf("consent %+v", stored.Consent)
	}
	// Again, as an API client: the used token answers as the first time.
	if code, body, _ := do(t, "POST", confirm, "", nil); code != 200 || !strings.Contains(body, `"status":"subscribed"`) {
		t.Fatalf("POST confirm again: %d %s", code, body)
	}
	for _, m := range machines {
		do(t, m.method, unsub, "", m.hdr)
	}
	if s := status(); s != rappel.SubActive {
		t.Fatalf("status %s after the link checkers, want %s", s, rappel.SubActive)
	}
	// A client asking for JSON (a +json type is JSON too) unsubscribes
	// with a GET.
	if code, body, _ := do(t, "GET", unsub, "", map[string]string{"Accept": "application/problem+json, */*;q=0.1"}); code != 200 ||
		!strings.Contains(body, rappel.SubUnsubscribed) || status() != rappel.SubUnsubscribed {
		t.Fatalf("GET unsubscribe as JSON: %d %s, status %s", code, body, status())
	}
}

// TestAlerts_SubscribeMediaType: the subscribe body is read as JSON only
// when labelled JSON, or not labelled at all; anything else is a 415
// sentence naming the Content-Type to send.
func TestAlerts_SubscribeMediaType(t *testing.T) {
	ts, _, _ := mustAlertServer(t, true)
	url := ts.URL + "/recall/alerts/subscribe"
	for i, tc := range []struct {
		ct   string
		want int
	}{
		{"application/json", 200},
		{"application/json; charset=utf-8", 200},
		{"Application/JSON; Charset=\"UTF-8\"", 200},
		{"application/merge-patch+json", 200},
		{"", 200},
		{"application/x-www-form-urlencoded", 415},
		{"text/plain;charset=UTF-8", 415},
		{"multipart/form-data; boundary=x", 415},
		{"application/json; charset=iso-8859-1", 415},
		{"application/json; version=2", 415},
		{"application/jsonp", 415},
		{"text/json", 415},
		{"json", 415},
		{"application/json;", 200},
		{"application/json; charset", 415},
	} {
		hdr := map[string]string{"x-gateway-key": testKey}
		if tc.ct != "" {
			hdr["Content-Type"] = tc.ct
		}
		code, body, _ := do(t, "POST", url, fmt.Sprintf(`{"email":"ana%d@example.ca"}`, i), hdr)
		if code != tc.want {
			t.Errorf("Content-Type %q: %d %s, want %d", tc.ct, code, body, tc.want)
			continue
		}
		if code == 415 {
			want := fmt.Sprintf(`{"detail":"The body is sent as %s, which this endpoint does not read; send it as JSON, with the header 'Content-Type: application/json'."}`,
				rappel.Quote(tc.ct))
			if body != want {
				t.Errorf("Content-Type %q: %s, want %s", tc.ct, body, want)
			}
		}
	}
}

// TestAlerts_SubscribeEmailChars: through the router, an address with an
// invisible or broken character is a 422 naming it and its place.
func TestAlerts_SubscribeEmailChars(t *testing.T) {
	ts, _, _ := mustAlertServer(t, true)
	url := ts.URL + "/recall/alerts/subscribe"
	for _, tc := range []struct{ body, want string }{
		{`{"email":"ana\u202e@example.ca"}`, "Body field 'email' holds U+202E (right-to-left override, an invisible format character) at byte 3; remove it: type the address again rather than pasting it."},
		{`{"email":"ana\u200b@example.ca"}`, "U+200B (zero-width space"},
		{`{"email":"ana@example.ca\ufeff"}`, "U+FEFF (zero-width no-break space, or byte order mark, an invisible format character) at byte 14"},
		{`{"email":"ana\ud800@example.ca"}`, `Body field 'email' holds the escape '\ud800' at byte 3, half of a surrogate pair`},
		{`{"email":"ana\ufffd@example.ca"}`, "holds U+FFFD, the replacement character, at byte 3"},
		{`{"email":"ana\u0007@example.ca"}`, "holds a control character (U+0007) at byte 3; remove it."},
	} {
		wantValueError(t, url, tc.body, tc.want)
	}
}

// wantValueError posts body to url and checks that the answer is a 422 of
// one value_error whose message holds want.
func wantValueError(tb testing.TB, url, body, want string) {
	tb.Helper()
	code, got, _ := do(tb, "POST", url, body, keyHdr)
	var eb struct{ Detail []rappel.Invalid }
	if err := json.Unmarshal([]byte(got), &eb); code != 422 || err != nil || len(eb.Detail) != 1 ||
		eb.Detail[0].Type != rappel.ItemValue || !strings.Contains(eb.Detail[0].Msg, want) {
		tb.Errorf("%q: %d %s, want %q", body, code, got, want)
	}
}

// TestAlerts_SubscribeEveryProblem: through the router, one 422 lists
// every problem of a subscribe body at once: an unknown field and a value
// of the wrong type no longer hide the other fields' items, and a field
// is reported once.
func TestAlerts_SubscribeEveryProblem(t *testing.T) {
	ts, _, _ := mustAlertServer(t, true)
	url := ts.URL + "/recall/alerts/subscribe"
	for _, tc := range []struct {
		body string
		want []string // the items, as field:type
	}{
		{`{"email":"not an address","lang":"de","colour":"red"}`, []string{"colour:extra_forbidden", "email:value_error", "lang:enum"}},
		{`{"agncy":"CFIA"}`, []string{"agncy:extra_forbidden", "email:missing"}},
		{`{"email":42,"allergen":"peanuts"}`, []string{"email:value_error", "allergen:enum"}},
		{`{"email":"a@example.ca","q":"milk \ud800","lang":"xx"}`, []string{"q:value_error", "lang:enum"}},
	} {
		code, body, _ := do(t, "POST", url, tc.body, keyHdr)
		var eb struct{ Detail []rappel.Invalid }
		if err := json.Unmarshal([]byte(body), &eb); code != 422 || err != nil {
			t.Fatalf("%s: %d %s", tc.body, code, body)
		}
		var got []string
		for _, it := range eb.Detail {
			got = append(got, fmt.Sprint(it.Loc[1])+":"+it.Type)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: items %v, want %v\n%s", tc.body, got, tc.want, body)
		}
	}
}

// TestAlerts_SubscribeNotText: a string field holding bytes that are not
// UTF-8, or an escaped half of a surrogate pair, which JSON decoding would
// quietly turn into U+FFFD, is a 422 naming the field, the byte or escape,
// and its place in the value; an address at an IP address is a 422 saying
// so.
func TestAlerts_SubscribeNotText(t *testing.T) {
	ts, st, _ := mustAlertServer(t, true)
	url := ts.URL + "/recall/alerts/subscribe"
	for _, tc := range []struct{ body, want string }{
		{"{\"email\":\"a@example.ca\",\"q\":\"milk\xff\"}",
			"Body field 'q' holds the byte 0xFF at byte 4, which is not UTF-8 text; send the text encoded as UTF-8."},
		{"{\"email\":\"a@example.ca\",\"q\":\"\\u00e9\xc3(\"}", "Body field 'q' holds the byte 0xC3 at byte 2, which is not UTF-8 text"},
		{`{"email":"a@example.ca","q":"a\udc00"}`,
			`Body field 'q' holds the escape '\udc00' at byte 1, half of a surrogate pair without its other half; send the character as UTF-8, or escape it with both halves of its pair, such as '\ud83d\ude00'.`},
		{`{"email":"a@example.ca","lang":"\ud83dfr"}`, `Body field 'lang' holds the escape '\ud83d' at byte 0`},
		{"{\"email\":\"ana\xff@example.ca\"}", "Body field 'email' holds the byte 0xFF at byte 3, which is not UTF-8 text"},
		{`{"email":"a@127.0.0.1"}`, "Body field 'email' has an IP address as its domain ('127.0.0.1'); send an address at a domain name, such as 'name@example.ca': alerts are not e-mailed to IP addresses."},
		{`{"email":"a@[IPv6:2001:db8::1]"}`, "Body field 'email' has an IP address as its domain ('[IPv6:2001:db8::1]')"},
	} {
		wantValueError(t, url, tc.body, tc.want)
	}
	// A real U+FFFD and a whole surrogate pair are text.
	if code, body, _ := do(t, "POST", url, `{"email":"a@example.ca","q":"milk \ufffd \ud83d\ude00 `+"\ufffd"+`"}`, keyHdr); code != 200 {
		t.Fatalf("whole characters: %d %s", code, body)
	}
	n := 0
	st.ForEachSubscription(context.Background(), func(*rappel.Subscription) error { n++; return nil })
	if n != 1 {
		t.Fatalf("%d subscriptions stored, want the one accepted", n)
	}
}

func TestAsksJSON(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                                        false,
		"*/*":                                     false,
		"text/html":                               false,
		"application/json":                        true,
		"Application/JSON; charset=utf-8":         true,
		"application/vnd.api+json":                true,
		"application/json, text/plain, */*":       true,
		"application/json, text/html":             false,
		"text/html;q=0, application/json":         true,
		"application/json;q=0":                    false,
		"application/json;q=0.000":                false,
		"application/json;q=0.001":                true,
		"application/xhtml+xml, application/json": false,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := asksJSON(r); got != want {
			t.Errorf("asksJSON(%q) = %v, want %v", accept, got, want)
		}
	}
}
