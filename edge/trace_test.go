package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

var (
	tracingOnce     sync.Once
	tracingProvider *sdktrace.TracerProvider
	tracingExporter *tracetest.InMemoryExporter
)

// mustTracing returns the test binary's one SDK provider, exporting
// synchronously to memory, installed as the global provider as cmd/rappel
// does. It is shared: the packages' tracers follow the first global
// provider only, so tests tell their spans apart by trace id.
func mustTracing(tb testing.TB) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	tb.Helper()
	tracingOnce.Do(func() {
		tracingExporter = tracetest.NewInMemoryExporter()
		tracingProvider = sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracingExporter))
		otel.SetTracerProvider(tracingProvider)
	})
	return tracingProvider, tracingExporter
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

func attrOf(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

func hasAttr(key, value string) func(tracetest.SpanStub) bool {
	return func(s tracetest.SpanStub) bool {
		v, ok := attrOf(s, key)
		return ok && v.Emit() == value
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
func mustTracedServer(tb testing.TB) (*Server, string, *tracetest.InMemoryExporter, *syncBuffer) {
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
		if v, _ := attrOf(srv, "http.route"); v.AsString() != "/recall" {
			t.Errorf("http.route = %q, want /recall", v.AsString())
		}
		if v, _ := attrOf(srv, "http.response.status_code"); v.AsInt64() != 200 {
			t.Errorf("http.response.status_code = %d, want 200", v.AsInt64())
		}
		q := spanNamed(t, spans, "index.Search")
		if q.Parent.SpanID() != srv.SpanContext.SpanID() {
			t.Errorf("index.Search's parent is %s, want the server span %s", q.Parent.SpanID(), srv.SpanContext.SpanID())
		}
		if v, _ := attrOf(q, "rappel.search.count"); v.AsInt64() != 1 {
			t.Errorf("rappel.search.count = %d, want 1 (one cheddar)", v.AsInt64())
		}
		if _, ok := attrOf(q, "rappel.search.q"); ok {
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
		if v, ok := attrOf(sp, "http.request.id"); ok && v.AsString() == "trace-off-1" {
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

	st := kv.NewStore("alerts")
	st.FS = vfs.NewMem()
	st.Logger = slog.New(slog.DiscardHandler)
	if err := st.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := alerts.NewService(st)
	svc.RequireConfirm = true
	svc.Now = stepClock()
	cc := &confirmCatcher{}
	svc.Confirmations = cc
	s, logs := MustServer(t, MustCatalog(t, testRecords()))
	svcLogs := &syncBuffer{}
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
	if len(cc.confirm) != 1 || len(cc.unsub) != 1 {
		t.Fatalf("confirmation links = %q %q", cc.confirm, cc.unsub)
	}
	secrets := []string{testKey, adminKey, email, url.QueryEscape(email), sub.Token}
	// The Service hands its mailer the tokens of the two links.
	for i, link := range []struct{ path, token string }{
		{"/recall/alerts/confirm", cc.confirm[0]},
		{"/recall/alerts/unsubscribe", cc.unsub[0]},
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
		var texts []string
		texts = append(texts, sp.Name, sp.Status.Description)
		for _, a := range sp.Attributes {
			texts = append(texts, string(a.Key), a.Value.Emit())
		}
		for _, e := range sp.Events {
			texts = append(texts, e.Name)
			for _, a := range e.Attributes {
				texts = append(texts, string(a.Key), a.Value.Emit())
			}
		}
		for _, a := range sp.Resource.Attributes() {
			texts = append(texts, a.Value.Emit())
		}
		for _, txt := range texts {
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

// TestTracing_PluginAndPebble runs a real plugin and a real Pebble write
// under a parent span and finds their child spans.
func TestTracing_PluginAndPebble(t *testing.T) {
	tp, exp := mustTracing(t)
	ctx, root := tp.Tracer("test").Start(context.Background(), "test-root")

	st := kv.NewStore(t.TempDir())
	st.Logger = slog.New(slog.DiscardHandler)
	if err := st.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.PutRecords(ctx, testRecords()); err != nil {
		t.Fatal(err)
	}

	h := plugins.NewHost()
	h.InProcess = true
	h.Timeout = time.Minute
	h.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := h.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	p, err := h.Load(ctx, "probe", plugintest.Build(t, "./plugins/testdata/guests/probe"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(ctx, fstest.MapFS{"input.txt": {Data: []byte("hello")}}); err != nil {
		t.Fatal(err)
	}
	root.End()

	spans := waitSpans(t, exp, func(s tracetest.SpanStub) bool { return s.SpanContext.SpanID() == root.SpanContext().SpanID() })
	w := spanNamed(t, spans, "kv.PutRecords")
	if w.Parent.SpanID() != root.SpanContext().SpanID() {
		t.Error("kv.PutRecords is not a child of the caller's span")
	}
	if v, _ := attrOf(w, "rappel.kv.batch_ops"); v.AsInt64() < int64(len(testRecords())) {
		t.Errorf("rappel.kv.batch_ops = %d, want at least one per record", v.AsInt64())
	}
	run := spanNamed(t, spans, "plugins.Run")
	if run.Parent.SpanID() != root.SpanContext().SpanID() {
		t.Error("plugins.Run is not a child of the caller's span")
	}
	if v, _ := attrOf(run, "rappel.plugin.name"); v.AsString() != "probe" {
		t.Errorf("rappel.plugin.name = %q", v.AsString())
	}
	if v, _ := attrOf(run, "rappel.plugin.version"); v.AsString() != p.SHA256 {
		t.Errorf("rappel.plugin.version = %q, want the module's SHA-256 %s", v.AsString(), p.SHA256)
	}
	if v, _ := attrOf(run, "rappel.plugin.records"); v.AsInt64() != 1 {
		t.Errorf("rappel.plugin.records = %d, want 1", v.AsInt64())
	}
}

// TestTracing_SMTPSend subscribes through a traced server whose alerts
// send real confirmation e-mails to an SMTP server: each send is a child
// span of the request, and a refusal quoting the address leaves it out of
// the span and the logs.
func TestTracing_SMTPSend(t *testing.T) {
	tp, exp := mustTracing(t)
	st := kv.NewStore("smtp")
	st.FS = vfs.NewMem()
	st.Logger = slog.New(slog.DiscardHandler)
	if err := st.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	smtp := smtptest.MustStart(t)
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	snd := alerts.NewSender()
	snd.Outbox, snd.Subscriptions, snd.Records, snd.Logger = st, st, st, logger
	snd.Addr, snd.From, snd.PublicURL, snd.Timeout = smtp.Addr, "alerts@rappel.example.ca", "http://rappel.example.ca", 5*time.Second
	svc := alerts.NewService(st)
	svc.RequireConfirm, svc.Logger, svc.Confirmations = true, logger, snd
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	s.Alerts, s.TracerProvider = svc, tp
	base := MustHTTP(t, s.Handler()).URL

	subscribe := func(email, id string) tracetest.SpanStubs {
		t.Helper()
		hdr := map[string]string{"x-gateway-key": testKey, "Content-Type": "application/json", "X-Request-Id": id}
		if code, body, _ := do(t, http.MethodPost, base+"/recall/alerts/subscribe", `{"email":"`+email+`"}`, hdr); code != http.StatusOK {
			t.Fatalf("subscribe: %d %s", code, body)
		}
		spans := waitSpans(t, exp, hasAttr("http.request.id", id))
		srv := spanNamed(t, spans, "POST /recall/alerts/subscribe")
		send := spanNamed(t, spans, "alerts.SMTPSend")
		if send.Parent.SpanID() != srv.SpanContext.SpanID() || send.SpanKind != trace.SpanKindClient {
			t.Errorf("alerts.SMTPSend: parent %s kind %v, want a client child of the request", send.Parent.SpanID(), send.SpanKind)
		}
		return spans
	}

	ok := subscribe("first.subscriber@example.org", "smtp-ok")
	if n := len(smtp.Messages()); n != 1 {
		t.Fatalf("%d e-mails, want the confirmation", n)
	}
	if sp := spanNamed(t, ok, "alerts.SMTPSend"); sp.Status.Code == codes.Error {
		t.Errorf("a delivered e-mail's span has status %v", sp.Status)
	}

	const refused = "refused.subscriber@example.org"
	smtp.SetDataReply("554 5.7.1 <" + refused + ">: recipient refused")
	bad := subscribe(refused, "smtp-refused")
	sp := spanNamed(t, bad, "alerts.SMTPSend")
	if sp.Status.Code != codes.Error || !strings.Contains(sp.Status.Description, "recipient refused") {
		t.Errorf("refused send's status = %+v, want an error quoting the reply", sp.Status)
	}
	for _, s := range append(ok, bad...) {
		texts := []string{s.Name, s.Status.Description}
		for _, a := range s.Attributes {
			texts = append(texts, a.Value.Emit())
		}
		for _, e := range s.Events {
			for _, a := range e.Attributes {
				texts = append(texts, a.Value.Emit())
			}
		}
		for _, txt := range texts {
			if strings.Contains(txt, "@example.org") {
				t.Errorf("span %q holds an address: %q", s.Name, txt)
			}
		}
	}
	if l := logs.String(); strings.Contains(l, "@example.org") || !strings.Contains(l, "recipient refused") {
		t.Errorf("logs hold an address, or not the refusal:\n%s", l)
	}
}

// TestTracing_FeedFetch fetches from a real upstream with a token in the
// URL's query: the fetch span names the URL without it, also on failure.
func TestTracing_FeedFetch(t *testing.T) {
	tp, exp := mustTracing(t)
	up := MustHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gone" {
			http.Error(w, "gone", http.StatusGone)
			return
		}
		io.WriteString(w, `{"recalls":[]}`)
	}))
	const token = "feedtoken_5a9e"
	f := feeds.NewFetcher()
	f.Retries, f.Logger = 0, slog.New(slog.DiscardHandler)
	ctx, root := tp.Tracer("test").Start(context.Background(), "test-fetch")
	if _, err := f.Get(ctx, up.URL+"/recalls.json?token="+token, rappel.FileState{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Get(ctx, "http://user:"+token+"@"+strings.TrimPrefix(up.URL, "http://")+"/gone?token="+token, rappel.FileState{}); err == nil {
		t.Fatal("a 410 was not an error")
	}
	root.End()
	spans := waitSpans(t, exp, func(s tracetest.SpanStub) bool { return s.SpanContext.SpanID() == root.SpanContext().SpanID() })
	var fetches []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == "feeds.Fetch" {
			fetches = append(fetches, s)
		}
	}
	if len(fetches) != 2 {
		t.Fatalf("%d feeds.Fetch spans, want 2", len(fetches))
	}
	if v, _ := attrOf(fetches[0], "url.full"); v.AsString() != up.URL+"/recalls.json" {
		t.Errorf("url.full = %q, want the URL without its query", v.AsString())
	}
	if fetches[1].Status.Code != codes.Error || !strings.Contains(fetches[1].Status.Description, "410") {
		t.Errorf("failed fetch's status = %+v", fetches[1].Status)
	}
	for _, s := range fetches {
		texts := []string{s.Status.Description}
		for _, a := range s.Attributes {
			texts = append(texts, a.Value.Emit())
		}
		for _, e := range s.Events {
			for _, a := range e.Attributes {
				texts = append(texts, a.Value.Emit())
			}
		}
		for _, txt := range texts {
			if strings.Contains(txt, token) {
				t.Errorf("fetch span holds the token: %q", txt)
			}
		}
	}
}
