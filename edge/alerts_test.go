package edge

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/kv"
)

// confirmCatcher keeps the confirmation links a Service would e-mail.
type confirmCatcher struct{ confirm, unsub []string }

func (c *confirmCatcher) SendConfirmation(_ context.Context, _ *rappel.Subscription, confirm, unsub string) error {
	c.confirm = append(c.confirm, confirm)
	c.unsub = append(c.unsub, unsub)
	return nil
}

// mustAlertServer serves the API with a real alerts.Service on a real
// Pebble store (in memory).
func mustAlertServer(tb testing.TB, confirm bool) (*httptest.Server, *kv.Store, *confirmCatcher) {
	tb.Helper()
	st := kv.NewStore("alerts")
	st.FS = vfs.NewMem()
	st.Logger = slog.New(slog.DiscardHandler)
	if err := st.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	svc := alerts.NewService(st)
	svc.RequireConfirm = confirm
	svc.Logger = slog.New(slog.DiscardHandler)
	svc.Now = stepClock()
	cc := &confirmCatcher{}
	svc.Confirmations = cc
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

var keyHdr = map[string]string{"x-gateway-key": testKey, "Content-Type": "application/json"}

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
		if strings.Contains(string(raw), res.Token) || strings.Contains(string(raw), cc.confirm[0]) {
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
		if code, _, _ := do(t, "GET", ts.URL+"/recall/alerts/confirm?token=AAAAAAAAAAAAAAAAAAAAAA", "", nil); code != 404 {
			t.Fatalf("status %d", code)
		}
		// An unsubscribe token does not confirm.
		if code, _, _ := do(t, "GET", ts.URL+"/recall/alerts/confirm?token="+res.Token, "", nil); code != 404 {
			t.Fatalf("status %d", code)
		}
	})
	t.Run("Confirm", func(t *testing.T) {
		for range 2 {
			code, body, _ := do(t, "GET", ts.URL+"/recall/alerts/confirm?token="+cc.confirm[0], "", map[string]string{"User-Agent": "test-browser"})
			if code != 200 || !strings.Contains(body, rappel.SubActive) {
				t.Fatalf("status %d: %s", code, body)
			}
		}
		var sub *rappel.Subscription
		st.ForEachSubscription(context.Background(), func(s *rappel.Subscription) error { sub = s; return nil })
		if sub.Status != rappel.SubActive || sub.Consent == nil || sub.Consent.Method != rappel.ConsentDoubleOptIn || sub.Consent.UserAgent != "test-browser" || sub.Consent.At.IsZero() {
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
		if code, body, _ := do(t, "GET", ts.URL+"/recall/alerts/unsubscribe?token="+res.Token, "", nil); code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		for _, tok := range []string{"nope", "AAAAAAAAAAAAAAAAAAAAAA", cc.confirm[0]} {
			if code, body, _ := do(t, "GET", ts.URL+"/recall/alerts/unsubscribe?token="+tok, "", nil); code != 404 {
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
	if code != 200 || !strings.Contains(body, `"status":"subscribed"`) || len(cc.confirm) != 0 {
		t.Fatalf("status %d: %s (%d confirmations)", code, body, len(cc.confirm))
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
