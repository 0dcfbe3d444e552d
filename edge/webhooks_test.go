package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/idn"
	"github.com/rappel-ca/rappel/internal/logtest"
)

// TestWebhooks_Keys drives /recall/webhooks through the real router with
// two keys: each sees its own endpoints only, the other's answer 404 as
// if they did not exist, and a bad body is a 422 naming each field.
func TestWebhooks_Keys(t *testing.T) {
	st := mustStore(t, lookupRecords())
	s, _ := MustServer(t, MustCatalog(t, lookupRecords()))
	s.Keys = planKeys{"rk_a": "a", "rk_b": "b"}
	s.Plans = map[string]rappel.Plan{"a": {Name: "a", Rate: 1000, Burst: 1000, Monthly: 1_000_000}, "b": {Name: "b", Rate: 1000, Burst: 1000, Monthly: 1_000_000}}
	s.Webhooks = alerts.NewHookService(st, alerts.NewHookSender())
	base := MustHTTP(t, s.Handler()).URL
	do := func(method, path, key, body string) (int, []byte) {
		t.Helper()
		resp, b := docRequest(t, base, docCase{method, path, body, map[string]string{"X-Gateway-Key": key}, 0})
		return resp.StatusCode, b
	}
	code, body := do("POST", "/recall/webhooks", "rk_a", `{"url":"https://hooks.example.ca/a?t=1","q":"cheddar","category":"Dairy","events":["recall.archived"]}`)
	var created rappel.WebhookCreated
	if err := json.Unmarshal(body, &created); code != http.StatusCreated || err != nil || !strings.HasPrefix(created.Secret, "whsec_") {
		t.Fatalf("POST: %d %s", code, body)
	}
	id := created.ID
	if code, body := do("GET", "/recall/webhooks/"+id, "rk_a", ""); code != 200 || strings.Contains(string(body), "whsec_") {
		t.Fatalf("GET by its key: %d %s; want 200 without the secret", code, body)
	}
	for _, c := range []struct{ method, path string }{{"GET", "/recall/webhooks/" + id}, {"DELETE", "/recall/webhooks/" + id}, {"POST", "/recall/webhooks/" + id + "/test"}} {
		if code, body := do(c.method, c.path, "rk_b", ""); code != http.StatusNotFound {
			t.Errorf("%s %s by another key: %d %s; want 404", c.method, c.path, code, body)
		}
	}
	if code, body := do("GET", "/recall/webhooks", "rk_b", ""); code != 200 || string(body) != `{"webhooks":[]}` {
		t.Fatalf("the other key's list: %d %s", code, body)
	}
	code, body = do("POST", "/recall/webhooks", "rk_b", `{"url":"https://user:pw@hooks.example.ca/","recall_agency":"FDA","events":"recall.created","extra":1}`)
	var e struct {
		Detail []struct {
			Loc []any  `json:"loc"`
			Msg string `json:"msg"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(body, &e); code != 422 || err != nil || len(e.Detail) != 4 {
		t.Fatalf("a malformed body: %d %s; want one 422 for events, extra, url and recall_agency", code, body)
	}
	code, body = do("POST", "/recall/webhooks", "rk_b", `{"url":"https://user:pw@hooks.example.ca/","recall_agency":"FDA"}`)
	if err := json.Unmarshal(body, &e); code != 422 || err != nil || len(e.Detail) != 2 || !strings.Contains(e.Detail[0].Msg, "credentials") {
		t.Fatalf("bad values: %d %s; want 422 for url and recall_agency", code, body)
	}
	if code, _ := do("DELETE", "/recall/webhooks/"+id, "rk_a", ""); code != http.StatusNoContent {
		t.Fatalf("DELETE by its key: %d", code)
	}
	if code, _ := do("GET", "/recall/webhooks/"+id, "rk_a", ""); code != http.StatusNotFound {
		t.Fatalf("GET after DELETE: %d", code)
	}
}

// FuzzWebhookBody feeds POST /recall/webhooks's decoder and validation
// arbitrary bodies: they never panic, every refusal is a 4xx *rappel.Error,
// and what is accepted is an https URL on an ASCII host that is not a
// refused literal address, with known events.
func FuzzWebhookBody(f *testing.F) {
	for _, s := range []string{
		`{"url":"https://hooks.example.ca/rappel","q":"listeria","events":["recall.created"]}`,
		`{"url":"https://10.0.0.1/","recall_agency":"CFIA","recall_type":"food","hazard_class":"class_1","allergen":"milk","category":"Dairy"}`,
		`{"url":"http://127.0.0.1:8080/hook","events":[]}`,
		`{"url":"https://[::ffff:169.254.169.254]/","events":null,"q":"\"a b\" -c OR d"}`,
		"{\"url\":\"https://x.ca/\xff\"}", `{"url":"https://x.ca/","q":"\ud800","colour":1}`,
		`{"url":"https://u:p@x.ca/#f"}`, `{"url":"https://[fe80::1%25eth0]:99999/"}`, `{"url":"https://[2002:7f00:1::]/"}`, `[]`, `{"url":1}`, `{"events":[1]}`, ``, `{"url":"https://x.ca/","q":"` + strings.Repeat("a", 600) + `"}`,
		`{"url":"https://192.0.2.2/"}`, `{"url":"https://[::ffff:1.1.1.1]/"}`, `{"url":"https://b\u00fccher.ca/"}`, `{"url":"https://a\ud800.ca/"}`, `{"url":"https://2130706433/"}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, loopback bool) {
		r, _ := http.NewRequest(http.MethodPost, "/recall/webhooks", strings.NewReader(string(body)))
		req, err := decodeWebhook(r)
		if err == nil {
			var u string
			var events []string
			u, _, events, err = req.Validate(context.Background(), idn.Names{}, loopback)
			if err == nil {
				if !strings.HasPrefix(u, "https://") && !(loopback && strings.HasPrefix(u, "http://")) {
					t.Fatalf("accepted %q", u)
				}
				host := mustParseURL(t, u).Hostname()
				if strings.IndexFunc(host, func(r rune) bool { return r > unicode.MaxASCII }) >= 0 {
					t.Fatalf("accepted %q, whose host is not ASCII", u)
				}
				if a, err := netip.ParseAddr(host); err == nil && rappel.CheckWebhookAddress(a, loopback) != nil {
					t.Fatalf("accepted %q, on a refused address", u)
				}
				for _, e := range events {
					if !rappel.WebhookEvents.Has(e) {
						t.Fatalf("accepted event %q", e)
					}
				}
				return
			}
		}
		e, ok := err.(*rappel.Error)
		if !ok || (e.Code != rappel.EINVALID && e.Code != rappel.EBADREQUEST && e.Code != rappel.EMEDIATYPE) {
			t.Fatalf("refusal %v is not a 4xx *rappel.Error", err)
		}
	})
}

// TestWebhooks_TestRouteHidesCause: POST /recall/webhooks/{id}/test
// through the real router queues the test and answers at once, 202 with
// the pending event, whatever the receiver: a closed port and a receiver
// that never answers get the same answer, as promptly, and their outcome
// appears on GET /recall/webhooks/{id} at the same moment (the event's
// ready_at, never sooner: a refused connection fails in a millisecond, but
// the endpoint still shows it pending), in one and the same sentence that
// names neither address, port nor cause. A receiver that answers shows its
// HTTP status. The cause is in the node's log, without the URL's query.
func TestWebhooks_TestRouteHidesCause(t *testing.T) {
	var logged logtest.Buffer
	sender := alerts.NewHookSender()
	sender.Client.AllowHTTPLoopback, sender.Client.Timeout = true, time.Second
	sender.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	base, _ := webhookEnv(t, sender)

	// A closed port: listened on, then closed.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := strconv.Itoa(closed.Addr().(*net.TCPAddr).Port)
	closed.Close()
	// An open port that takes the connection and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			go func() { <-hold; c.Close() }()
		}
	}()
	silentPort := strconv.Itoa(silent.Addr().(*net.TCPAddr).Port)
	busy := MustHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))

	key := map[string]string{"X-Gateway-Key": "rk_a"}
	register := func(url string) string {
		t.Helper()
		resp, body := docRequest(t, base, docCase{"POST", "/recall/webhooks", `{"url":"` + url + `"}`, key, 0})
		var created rappel.WebhookCreated
		if err := json.Unmarshal(body, &created); resp.StatusCode != http.StatusCreated || err != nil {
			t.Fatalf("POST %s: %d %s", url, resp.StatusCode, body)
		}
		return created.ID
	}
	// test queues a test of endpoint id and returns the answer, its
	// fields' names and how long it took.
	test := func(id string) (rappel.WebhookTest, []string, time.Duration) {
		t.Helper()
		start := time.Now()
		resp, body := docRequest(t, base, docCase{"POST", "/recall/webhooks/" + id + "/test", "", key, 0})
		took := time.Since(start)
		var res rappel.WebhookTest
		var fields map[string]any
		if err := json.Unmarshal(body, &res); resp.StatusCode != http.StatusAccepted || err != nil || json.Unmarshal(body, &fields) != nil {
			t.Fatalf("POST test of %s: %d %s; want 202", id, resp.StatusCode, body)
		}
		if loc := resp.Header.Get("Location"); loc != "/recall/webhooks/"+id {
			t.Errorf("POST test of %s: Location %q", id, loc)
		}
		if res.State != rappel.TestPending || res.Type != rappel.EventWebhookTest || !strings.HasPrefix(res.ID, "msg_test_") {
			t.Errorf("POST test of %s: %s; want a pending webhook.test", id, body)
		}
		return res, slices.Sorted(maps.Keys(fields)), took
	}
	lastTest := func(id string) *rappel.WebhookTest {
		t.Helper()
		resp, body := docRequest(t, base, docCase{"GET", "/recall/webhooks/" + id, "", key, 0})
		var v rappel.WebhookView
		if err := json.Unmarshal(body, &v); resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("GET %s: %d %s", id, resp.StatusCode, body)
		}
		for _, leak := range []string{closedPort, silentPort, "127.0.0.1:", "connect:", "i/o timeout", "Client.Timeout", "deadline exceeded", "tok=s3cret"} {
			if v.LastTest != nil && strings.Contains(v.LastTest.Error, leak) {
				t.Errorf("GET %s: last_test %+v names %q", id, v.LastTest, leak)
			}
		}
		return v.LastTest
	}
	refusedID := register("http://127.0.0.1:" + closedPort + "/hook?tok=s3cret")
	hungID := register("http://127.0.0.1:" + silentPort + "/hook?tok=s3cret")
	busyID := register(busy.URL + "/hook")

	refused, refusedShape, refusedTook := test(refusedID)
	hung, hungShape, hungTook := test(hungID)
	if slices.Compare(refusedShape, hungShape) != 0 || refused.ReadyAt.Sub(refused.RequestedAt) != hung.ReadyAt.Sub(hung.RequestedAt) {
		t.Fatalf("a closed port answers %+v (%v), a silent one %+v (%v); want the same answer", refused, refusedShape, hung, hungShape)
	}
	for what, took := range map[string]time.Duration{"closed port": refusedTook, "silent port": hungTook} {
		if took > 500*time.Millisecond {
			t.Errorf("the test of the %s took %v to answer; want it queued at once", what, took)
		}
	}
	if again, _, _ := test(refusedID); again.ID != refused.ID {
		t.Errorf("a second test while one is pending queued %s; want the pending %s", again.ID, refused.ID)
	}
	// The closed port failed long ago; its outcome waits for ready_at.
	time.Sleep(200 * time.Millisecond)
	if lt := lastTest(refusedID); lt == nil || lt.State != rappel.TestPending || lt.ID != refused.ID {
		t.Fatalf("the closed port's last_test before its ready_at: %+v; want it pending", lt)
	}
	busyTest, _, _ := test(busyID)
	outcome := func(id string, want rappel.WebhookTest) (*rappel.WebhookTest, time.Time) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			lt := lastTest(id)
			if lt != nil && lt.State == rappel.TestDone {
				if lt.ID != want.ID {
					t.Fatalf("%s: the outcome of %s, want %s", id, lt.ID, want.ID)
				}
				return lt, time.Now()
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no outcome 10 s after the test: %+v", id, lt)
			}
		}
	}
	refusedOut, refusedAt := outcome(refusedID, refused)
	hungOut, hungAt := outcome(hungID, hung)
	if refusedOut.OK || hungOut.OK || refusedOut.StatusCode != 0 || refusedOut.Error == "" || refusedOut.Error != hungOut.Error {
		t.Fatalf("a closed port's outcome %+v, a silent one's %+v; want the same failure", refusedOut, hungOut)
	}
	// Each showed at its ready_at, not before, however soon it failed.
	for what, c := range map[string]struct {
		test rappel.WebhookTest
		at   time.Time
	}{"closed port": {refused, refusedAt}, "silent port": {hung, hungAt}} {
		if c.at.Before(c.test.ReadyAt) || c.at.Sub(c.test.ReadyAt) > time.Second {
			t.Errorf("the %s's outcome showed at %v, its ready_at is %v", what, c.at, c.test.ReadyAt)
		}
	}
	t.Logf("answers in %v (closed port) and %v (silent port); outcomes %v and %v after ready_at",
		refusedTook, hungTook, refusedAt.Sub(refused.ReadyAt), hungAt.Sub(hung.ReadyAt))
	if b, _ := outcome(busyID, busyTest); b.OK || b.StatusCode != http.StatusServiceUnavailable || !strings.Contains(b.Error, "503") {
		t.Fatalf("a receiver answering 503: %+v", b)
	}
	log := logged.String()
	if !strings.Contains(log, closedPort) || !strings.Contains(log, silentPort) || strings.Contains(log, "s3cret") {
		t.Fatalf("the node's log:\n%s\nwant both causes with their ports, without the query", log)
	}
}

// mustParseURL parses an accepted URL.
func mustParseURL(t *testing.T, v string) *url.URL {
	t.Helper()
	u, err := url.Parse(v)
	if err != nil {
		t.Fatalf("accepted %q, which does not parse: %v", v, err)
	}
	return u
}

// webhookEnv is the real router with a webhook service posting with
// sender on a real store, for the key rk_a: the server's URL, and a
// function sending a request with that key.
func webhookEnv(t *testing.T, sender *alerts.HookSender) (base string, do func(method, path, body string) (int, []byte)) {
	t.Helper()
	st := mustStore(t, lookupRecords())
	s, _ := MustServer(t, MustCatalog(t, lookupRecords()))
	s.Keys = planKeys{"rk_a": "a"}
	s.Plans = map[string]rappel.Plan{"a": {Name: "a", Rate: 1000, Burst: 1000, Monthly: 1_000_000}}
	hooks := alerts.NewHookService(st, sender)
	t.Cleanup(hooks.Close)
	s.Webhooks = hooks
	base = MustHTTP(t, s.Handler()).URL
	return base, func(method, path, body string) (int, []byte) {
		t.Helper()
		resp, b := docRequest(t, base, docCase{method, path, body, map[string]string{"X-Gateway-Key": "rk_a"}, 0})
		return resp.StatusCode, b
	}
}

// itemsOf decodes a 422's items.
func itemsOf(t *testing.T, body []byte) []rappel.Invalid {
	t.Helper()
	var e struct {
		Detail []rappel.Invalid `json:"detail"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return e.Detail
}

// TestWebhooks_RefusedAddresses registers, through the real router, URLs
// on addresses no webhook may reach: the IPv4 documentation and 6to4
// relay blocks, the IPv6 documentation block, 6to4 and IPv4-mapped forms
// (of a public address too, as docs/api.md promises). Each is a 422 whose
// sentence names the address, its block and what to give instead.
func TestWebhooks_RefusedAddresses(t *testing.T) {
	_, do := webhookEnv(t, alerts.NewHookSender())
	for url, want := range map[string]string{
		"https://192.0.2.2/":                              "192.0.2.2 is in 192.0.2.0/24 (documentation, TEST-NET-1), which a webhook may not reach; give a public address or a host name.",
		"https://203.0.113.1/hook":                        "203.0.113.1 is in 203.0.113.0/24 (documentation, TEST-NET-3)",
		"https://192.88.99.1/":                            "192.88.99.1 is in 192.88.99.0/24 (deprecated 6to4 relay anycast)",
		"https://198.18.0.1:8443/":                        "198.18.0.1 is in 198.18.0.0/15 (benchmarking)",
		"https://[2001:db8::1]/":                          "2001:db8::1 is in 2001:db8::/32 (documentation)",
		"https://[2002:c000:202::1]/":                     "2002:c000:202::1 is in 2002::/16 (6to4), a form of the IPv4 address 192.0.2.2, which is in 192.0.2.0/24 (documentation, TEST-NET-1)",
		"https://[::ffff:1.1.1.1]/":                       "::ffff:1.1.1.1 is in ::ffff:0.0.0.0/96 (IPv4-mapped), a form of the IPv4 address 1.1.1.1,",
		"https://[::ffff:192.0.2.2]/":                     "a form of the IPv4 address 192.0.2.2, which is in 192.0.2.0/24",
		"https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/": "is in 2001::/32 (Teredo), a form of the IPv4 address 192.0.2.45",
		"https://[3fff::1]/":                              "3fff::1 is in 3fff::/20 (documentation)",
		"https://[5f00::1]/":                              "5f00::1 is in 5f00::/16 (segment routing (SRv6) SIDs)",
		"https://2130706433/":                             "which is neither a host name nor an IPv4 address written a.b.c.d",
	} {
		code, body := do("POST", "/recall/webhooks", `{"url":"`+url+`"}`)
		items := itemsOf(t, body)
		if code != http.StatusUnprocessableEntity || len(items) != 1 || !strings.Contains(items[0].Msg, want) {
			t.Errorf("POST %s: %d %s; want a 422 saying %q", url, code, body, want)
		}
	}
	if code, body := do("POST", "/recall/webhooks", `{"url":"https://1.1.1.1/hook"}`); code != http.StatusCreated {
		t.Fatalf("a public address: %d %s", code, body)
	}
}

// TestWebhooks_Filters checks, through the real router, that an endpoint's
// filters are validated as GET /recall validates its parameters: a
// category no record has is a 422 there and here, in the same words (but
// for where it is), and a category GET /recall takes is taken here; and
// that a URL whose host is not ASCII, holds a bidi control or U+FFFD is a
// 422 asking for the A-label form (a lone surrogate escape is refused by
// the decoder, naming it); and that every problem of a body comes in one
// 422, an unknown field's among them.
func TestWebhooks_Filters(t *testing.T) {
	base, do := webhookEnv(t, alerts.NewHookSender())
	resp, body := docRequest(t, base, docCase{"GET", "/recall?category=Nonexistentcat", "", map[string]string{"X-Gateway-Key": "rk_a"}, 0})
	search := itemsOf(t, body)
	if resp.StatusCode != http.StatusUnprocessableEntity || len(search) != 1 {
		t.Fatalf("GET /recall?category=Nonexistentcat: %d %s", resp.StatusCode, body)
	}
	code, body := do("POST", "/recall/webhooks", `{"url":"https://hooks.example.ca/","category":"Nonexistentcat"}`)
	hook := itemsOf(t, body)
	if code != http.StatusUnprocessableEntity || len(hook) != 1 || fmt.Sprint(hook[0].Loc) != "[body category]" ||
		strings.TrimPrefix(hook[0].Msg, "Body field 'category'") != strings.TrimPrefix(search[0].Msg, "Query parameter 'category'") {
		t.Fatalf("POST with category Nonexistentcat: %d %s; want GET /recall's item %+v at the body field", code, body, search[0])
	}
	// Every problem of the body at once, the category's among them.
	code, body = do("POST", "/recall/webhooks", `{"url":"https://192.0.2.2/","category":"Nonexistentcat","recall_type":"boats"}`)
	if items := itemsOf(t, body); code != http.StatusUnprocessableEntity || len(items) != 3 {
		t.Fatalf("three bad fields: %d %s; want three items", code, body)
	}
	// An unknown field hides none of the others.
	code, body = do("POST", "/recall/webhooks", `{"url":"https://192.0.2.2/","colour":"red","recall_type":"boats"}`)
	if items := itemsOf(t, body); code != http.StatusUnprocessableEntity || len(items) != 3 {
		t.Fatalf("an unknown field and two bad ones: %d %s; want three items", code, body)
	}
	if code, body := do("POST", "/recall/webhooks", `{"url":"https://hooks.example.ca/","category":"  dairy "}`); code != http.StatusCreated {
		t.Fatalf("a category GET /recall takes: %d %s", code, body)
	}
	for url, want := range map[string]string{
		`https://b\u00fccher.ca/rappel`:      "has the host name 'bücher.ca', which is not ASCII; send the host name in its A-label (xn--) form, in ASCII; did you mean 'https://xn--bcher-kva.ca/rappel'?",
		`https://hooks\u202eac.example.ca/`:  "holds U+202E (right-to-left override, an invisible format character) at byte 5; send the host name in its A-label (xn--) form",
		`https://hooks\ud800.example.ca/`:    "holds the escape '\\ud800' at byte 13, half of a surrogate pair without its other half",
		"https://hooks\uFFFD.example.ca/":    "holds U+FFFD, the replacement character, at byte 5",
		`https://b%C3%BCcher.ca/`:            "has the host name 'bücher.ca', which is not ASCII",
		`https://hooks.example.ca/\u202egpj`: "holds U+202E (right-to-left override, an invisible format character) at byte 25; remove it, or percent-encode it",
	} {
		code, body := do("POST", "/recall/webhooks", `{"url":"`+url+`"}`)
		items := itemsOf(t, body)
		if code != http.StatusUnprocessableEntity || len(items) != 1 || !strings.Contains(items[0].Msg, want) {
			t.Errorf("POST %s: %d %s; want a 422 saying %q", url, code, body, want)
		}
	}
}
