package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/internal/logtest"
	"github.com/rappel-ca/rappel/internal/spantest"
)

// mustTracing returns the test binary's one SDK provider, exporting to
// memory, installed as the global provider as cmd/rappel does: the index's
// spans follow it. It is shared, so tests tell their spans apart by trace.
func mustTracing(tb testing.TB) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	tb.Helper()
	return spantest.Global()
}

// waitSpans returns the exported spans of the trace holding a span for
// which match is true, waiting for that span: a server span ends after the
// client has its response.
func waitSpans(tb testing.TB, exp *tracetest.InMemoryExporter, match func(tracetest.SpanStub) bool) tracetest.SpanStubs {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		all := exp.GetSpans()
		for _, s := range all {
			if !match(s) {
				continue
			}
			var out tracetest.SpanStubs
			for _, o := range all {
				if o.SpanContext.TraceID() == s.SpanContext.TraceID() {
					out = append(out, o)
				}
			}
			return out
		}
	}
	tb.Fatal("no matching span was exported")
	return nil
}

func hasAttr(key, value string) func(tracetest.SpanStub) bool {
	return func(s tracetest.SpanStub) bool {
		v := spantest.Attr(s, key)
		return v.Type() != attribute.INVALID && v.Emit() == value
	}
}

func spanNamed(tb testing.TB, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	tb.Helper()
	for _, s := range spans {
		if s.Name == name {
			return s
		}
	}
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
	}
	tb.Fatalf("no span %q among %q", name, names)
	return tracetest.SpanStub{}
}

// mustTracedServer serves the test records with tracing on.
func mustTracedServer(tb testing.TB) (*Server, string, *tracetest.InMemoryExporter, *logtest.Buffer) {
	tb.Helper()
	tp, exp := mustTracing(tb)
	s, logs := MustServer(tb, MustCatalog(tb, testRecords()))
	s.TracerProvider = tp
	return s, MustHTTP(tb, s.Handler()).URL, exp, logs
}

func TestTracing_ServerSpans(t *testing.T) {
	_, base, exp, _ := mustTracedServer(t)

	t.Run("SearchWithIndexQuery", func(t *testing.T) {
		res, _ := fetch(t, base+"/recall?q=cheddar&limit=5", map[string]string{"x-gateway-key": testKey, "X-Request-Id": "trace-search-1"})
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
		spans := waitSpans(t, exp, hasAttr("http.request.id", "trace-search-1"))
		srv := spanNamed(t, spans, "GET /recall")
		if srv.SpanKind != trace.SpanKindServer {
			t.Errorf("server span kind = %v", srv.SpanKind)
		}
		if v := spantest.Attr(srv, "http.route"); v.AsString() != "/recall" {
			t.Errorf("http.route = %q, want /recall", v.AsString())
		}
		if v := spantest.Attr(srv, "http.response.status_code"); v.AsInt64() != 200 {
			t.Errorf("http.response.status_code = %d, want 200", v.AsInt64())
		}
		q := spanNamed(t, spans, "index.Search")
		if q.Parent.SpanID() != srv.SpanContext.SpanID() {
			t.Errorf("index.Search's parent is %s, want the server span %s", q.Parent.SpanID(), srv.SpanContext.SpanID())
		}
		if v := spantest.Attr(q, "rappel.search.count"); v.AsInt64() != 1 {
			t.Errorf("rappel.search.count = %d, want 1 (one cheddar)", v.AsInt64())
		}
		if spantest.Attr(q, "rappel.search.q").Type() != attribute.INVALID {
			t.Error("the index span carries the query's words")
		}
	})

	names := []struct{ name, method, target, id, want string }{
		{"RecordPattern", http.MethodGet, "/recall/hc-73841", "trace-rec", "GET /recall/{record_id}"},
		{"NotFoundRecord", http.MethodGet, "/recall/no-such-record", "trace-rec404", "GET /recall/{record_id}"},
		{"Unmatched", http.MethodGet, "/no/such/path/" + strings.Repeat("x", 40), "trace-404", "GET unmatched"},
		{"UncleanPath", http.MethodGet, "/recall/../health", "trace-unclean", "GET unmatched"},
		{"InventedMethod", "BREW", "/health", "trace-brew", "_OTHER /health"},
		{"WrongMethod", http.MethodDelete, "/recall/hc-73841", "trace-405", "DELETE /recall/{record_id}"},
	}
	for _, tc := range names {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, base+tc.target, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Opaque = tc.target // keep /../ as sent
			req.Header.Set("x-gateway-key", testKey)
			req.Header.Set("X-Request-Id", tc.id)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			spans := waitSpans(t, exp, hasAttr("http.request.id", tc.id))
			if len(spans) != 1 || spans[0].Name != tc.want {
				var got []string
				for _, s := range spans {
					got = append(got, s.Name)
				}
				t.Fatalf("spans = %q, want one %q", got, tc.want)
			}
		})
	}
}

// TestTracing_Off checks that without a TracerProvider no server span is
// made, even with an SDK installed globally.
func TestTracing_Off(t *testing.T) {
	_, exp := mustTracing(t)
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	base := MustHTTP(t, s.Handler()).URL
	res, _ := fetch(t, base+"/recall/hc-73841", map[string]string{"x-gateway-key": testKey, "X-Request-Id": "trace-off-1"})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	// A traced request after it, on a traced server, bounds the wait.
	_, tbase, _, _ := mustTracedServer(t)
	fetch(t, tbase+"/health", map[string]string{"X-Request-Id": "trace-off-2"})
	waitSpans(t, exp, hasAttr("http.request.id", "trace-off-2"))
	for _, sp := range exp.GetSpans() {
		if spantest.Attr(sp, "http.request.id").AsString() == "trace-off-1" {
			t.Fatalf("span %q for a request to a server without tracing", sp.Name)
		}
	}
}

// TestTracing_NoSecrets sends an API key, an admin key, an e-mail address
// and alert tokens through a traced server, then looks for them in every
// exported span (name, attributes, events, status, resource) and in the
// logs.
func TestTracing_NoSecrets(t *testing.T) {
	tp, exp := mustTracing(t)
	const adminKey = "adm_secret_93f1c2"
	const email = "secret.subscriber@example.org"

	st := mustStore(t, testRecords())
	svc := alerts.NewService(st)
	svc.RequireConfirm = true
	svc.Now = stepClock()
	cc := newConfirmInbox(t, st)
	s, logs := MustServer(t, MustCatalog(t, testRecords()))
	svcLogs := &logtest.Buffer{}
	svc.Logger = slog.New(slog.NewJSONHandler(svcLogs, nil))
	s.Alerts = svc
	s.AdminKey = adminKey
	s.TracerProvider = tp
	base := MustHTTP(t, s.Handler()).URL

	key := map[string]string{"x-gateway-key": testKey, "Content-Type": "application/json", "X-Request-Id": "secret-1"}
	code, body, _ := do(t, http.MethodPost, base+"/recall/alerts/subscribe", `{"email":"`+email+`","q":"cheese"}`, key)
	if code != http.StatusOK {
		t.Fatalf("subscribe: %d %s", code, body)
	}
	var sub rappel.SubscribeResult
	if err := json.Unmarshal([]byte(body), &sub); err != nil || sub.Token == "" {
		t.Fatalf("subscribe answered %s (%v)", body, err)
	}
	links := cc.links(t)
	if len(links.confirm) != 1 || len(links.unsub) != 1 {
		t.Fatalf("confirmation links = %q %q", links.confirm, links.unsub)
	}
	secrets := []string{testKey, adminKey, email, url.QueryEscape(email), sub.Token}
	// The confirmation e-mail carries the tokens of the two links.
	for i, link := range []struct{ path, token string }{
		{"/recall/alerts/confirm", links.confirm[0]},
		{"/recall/alerts/unsubscribe", links.unsub[0]},
	} {
		secrets = append(secrets, link.token)
		id := fmt.Sprintf("secret-link-%d", i)
		res, body := fetch(t, base+link.path+"?token="+url.QueryEscape(link.token), map[string]string{"X-Request-Id": id})
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", link.path, res.StatusCode, body)
		}
		waitSpans(t, exp, hasAttr("http.request.id", id))
	}
	fetch(t, base+"/recall?q=cheese&key="+testKey, map[string]string{"x-gateway-key": testKey, "x-admin-key": adminKey, "X-Request-Id": "secret-2"})
	fetch(t, base+"/metrics", map[string]string{"x-admin-key": adminKey, "Authorization": "Bearer " + adminKey, "X-Request-Id": "secret-3"})
	for _, id := range []string{"secret-1", "secret-2", "secret-3"} {
		waitSpans(t, exp, hasAttr("http.request.id", id))
	}

	var n int
	for _, sp := range exp.GetSpans() {
		n++
		for _, txt := range spantest.Texts(sp) {
			for _, sec := range secrets {
				if strings.Contains(txt, sec) {
					t.Errorf("span %q holds the secret %q in %q", sp.Name, sec, txt)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no span exported")
	}
	for _, l := range []string{logs.String(), svcLogs.String()} {
		for _, sec := range secrets {
			if strings.Contains(l, sec) {
				t.Errorf("the logs hold the secret %q", sec)
			}
		}
	}
}

// TestTracing_AlertsContext subscribes through a traced server with a
// real sender: the request's trace holds no SMTP send, since the
// confirmation e-mail goes out after the answer, from the outbox, so that
// the answer's time does not say whether an e-mail went; the sender's
// pass then sends it in a trace of its own.
func TestTracing_AlertsContext(t *testing.T) {
	tp, exp := mustTracing(t)
	st := mustStore(t, testRecords())
	svc := alerts.NewService(st)
	svc.Logger, svc.Now = slog.New(slog.DiscardHandler), stepClock()
	inbox := newConfirmInbox(t, st)
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	s.Alerts, s.TracerProvider = svc, tp
	base := MustHTTP(t, s.Handler()).URL

	hdr := map[string]string{"x-gateway-key": testKey, "Content-Type": "application/json", "X-Request-Id": "alerts-ctx"}
	if code, body, _ := do(t, http.MethodPost, base+"/recall/alerts/subscribe", `{"email":"context@example.org"}`, hdr); code != http.StatusOK {
		t.Fatalf("subscribe: %d %s", code, body)
	}
	spans := waitSpans(t, exp, hasAttr("http.request.id", "alerts-ctx"))
	srv := spanNamed(t, spans, "POST /recall/alerts/subscribe")
	for _, sp := range spans {
		if sp.Name == "alerts.SMTPSend" {
			t.Fatalf("the subscribe request's trace holds an SMTP send")
		}
	}
	ctx, pass := tp.Tracer("test").Start(context.Background(), "test-pass")
	if n, err := inbox.snd.SendConfirmations(ctx); n != 1 || err != nil {
		t.Fatalf("SendConfirmations = %d, %v", n, err)
	}
	pass.End()
	if sends := spantest.Children(pass, "alerts.SMTPSend"); len(sends) != 1 || sends[0].SpanContext.TraceID() == srv.SpanContext.TraceID() {
		t.Errorf("%d SMTP sends under the sender's pass, want 1, in a trace of its own", len(sends))
	}
}
