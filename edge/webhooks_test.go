package edge

import (
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
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
	if err := json.Unmarshal(body, &e); code != 422 || err != nil || len(e.Detail) != 2 {
		t.Fatalf("a malformed body: %d %s; want 422 for events and extra", code, body)
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
// and what is accepted is an https URL on a host that is not a refused
// literal address, with known events.
func FuzzWebhookBody(f *testing.F) {
	for _, s := range []string{
		`{"url":"https://hooks.example.ca/rappel","q":"listeria","events":["recall.created"]}`,
		`{"url":"https://10.0.0.1/","recall_agency":"CFIA","recall_type":"food","hazard_class":"class_1","allergen":"milk","category":"Dairy"}`,
		`{"url":"http://127.0.0.1:8080/hook","events":[]}`,
		`{"url":"https://[::ffff:169.254.169.254]/","events":null,"q":"\"a b\" -c OR d"}`,
		"{\"url\":\"https://x.ca/\xff\"}", `{"url":"https://x.ca/","q":"\ud800","colour":1}`,
		`{"url":"https://u:p@x.ca/#f"}`, `{"url":"https://[fe80::1%25eth0]:99999/"}`, `{"url":"https://[2002:7f00:1::]/"}`, `[]`, `{"url":1}`, `{"events":[1]}`, ``, `{"url":"https://x.ca/","q":"` + strings.Repeat("a", 600) + `"}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, loopback bool) {
		r, _ := http.NewRequest(http.MethodPost, "/recall/webhooks", strings.NewReader(string(body)))
		req, err := decodeWebhook(r)
		if err == nil {
			var u string
			var events []string
			u, _, events, err = req.Validate(loopback)
			if err == nil {
				if !strings.HasPrefix(u, "https://") && !(loopback && strings.HasPrefix(u, "http://")) {
					t.Fatalf("accepted %q", u)
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
// through the real router answers a closed port and a receiver that never
// answers with one and the same sentence, naming neither the address nor
// the port nor the cause, so that the route cannot tell an open port from
// a closed one; a receiver that answers shows its HTTP status. The cause
// is in the node's log, without the URL's query.
func TestWebhooks_TestRouteHidesCause(t *testing.T) {
	st := mustStore(t, lookupRecords())
	s, _ := MustServer(t, MustCatalog(t, lookupRecords()))
	s.Keys = planKeys{"rk_a": "a"}
	s.Plans = map[string]rappel.Plan{"a": {Name: "a", Rate: 1000, Burst: 1000, Monthly: 1_000_000}}
	var logged syncBuffer
	sender := alerts.NewHookSender()
	sender.Client.AllowHTTPLoopback, sender.Client.Timeout = true, time.Second
	sender.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	s.Webhooks = alerts.NewHookService(st, sender)
	base := MustHTTP(t, s.Handler()).URL

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

	test := func(url string) rappel.WebhookTestResult {
		t.Helper()
		resp, body := docRequest(t, base, docCase{"POST", "/recall/webhooks", `{"url":"` + url + `"}`, map[string]string{"X-Gateway-Key": "rk_a"}, 0})
		var created rappel.WebhookCreated
		if err := json.Unmarshal(body, &created); resp.StatusCode != http.StatusCreated || err != nil {
			t.Fatalf("POST %s: %d %s", url, resp.StatusCode, body)
		}
		resp, body = docRequest(t, base, docCase{"POST", "/recall/webhooks/" + created.ID + "/test", "", map[string]string{"X-Gateway-Key": "rk_a"}, 0})
		var res rappel.WebhookTestResult
		if err := json.Unmarshal(body, &res); resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("POST test of %s: %d %s", url, resp.StatusCode, body)
		}
		for _, leak := range []string{closedPort, silentPort, "127.0.0.1", "connect:", "i/o timeout", "Client.Timeout", "deadline exceeded", "tok=s3cret"} {
			if strings.Contains(string(body), leak) {
				t.Errorf("the test of %s answers %s, which names %q", url, body, leak)
			}
		}
		return res
	}
	refused := test("http://127.0.0.1:" + closedPort + "/hook?tok=s3cret")
	hung := test("http://127.0.0.1:" + silentPort + "/hook?tok=s3cret")
	if refused.OK || hung.OK || refused.StatusCode != 0 || refused.Error == "" || refused.Error != hung.Error {
		t.Fatalf("a closed port answers %+v, a silent one %+v; want the same failure", refused, hung)
	}
	if b := test(busy.URL + "/hook"); b.OK || b.StatusCode != http.StatusServiceUnavailable || !strings.Contains(b.Error, "503") {
		t.Fatalf("a receiver answering 503: %+v", b)
	}
	log := logged.String()
	if !strings.Contains(log, closedPort) || !strings.Contains(log, silentPort) || strings.Contains(log, "s3cret") {
		t.Fatalf("the node's log:\n%s\nwant both causes with their ports, without the query", log)
	}
}
