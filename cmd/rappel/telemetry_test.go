package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/internal/buildinfo"
	"github.com/rappel-ca/rappel/internal/logline"
	"github.com/rappel-ca/rappel/internal/logtest"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

func TestTracingWanted(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want bool
	}{
		{nil, false},
		{[]string{"PATH=/bin", "OTEL_TRACES_SAMPLER=always_on"}, false},
		{[]string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318"}, true},
		{[]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://collector:4318/v1/traces"}, true},
		{[]string{"OTEL_SERVICE_NAME=rappel-east"}, true},
		{[]string{"OTEL_SERVICE_NAME="}, false},
		{[]string{"OTEL_EXPORTER_OTLP_HEADERS=authorization=x"}, false},
		{[]string{"OTEL_SERVICE_NAME=rappel", "OTEL_SDK_DISABLED=true"}, false},
		{[]string{"OTEL_SDK_DISABLED=false", "OTEL_SERVICE_NAME=rappel"}, true},
		{[]string{"OTEL_TRACES_EXPORTER=console"}, true},
		{[]string{"OTEL_TRACES_EXPORTER=otlp"}, true},
		{[]string{"OTEL_SERVICE_NAME=rappel", "OTEL_TRACES_EXPORTER=none"}, false},
		{[]string{"OTEL_TRACES_EXPORTER=console", "OTEL_SDK_DISABLED=true"}, false},
	} {
		if got := tracingWanted(tc.env); got != tc.want {
			t.Errorf("tracingWanted(%q) = %v, want %v", tc.env, got, tc.want)
		}
	}
}

// clearOTEL unsets, for the test, the variables that turn tracing on.
func clearOTEL(t *testing.T) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "OTEL_") {
			t.Setenv(name, "")
		}
	}
}

func TestStartTelemetry_Off(t *testing.T) {
	clearOTEL(t)
	tel, err := StartTelemetry(context.Background(), slog.New(slog.DiscardHandler))
	if err != nil || tel != nil {
		t.Fatalf("StartTelemetry without OTEL_* = %v, %v; want nil, nil", tel, err)
	}
	if tel.TracerProvider() != nil {
		t.Fatal("a nil Telemetry gives a tracer provider: the server would wrap otelhttp")
	}
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes every
// ExportTraceServiceRequest posted to /v1/traces.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	res   []map[string]string // each span's resource attributes
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a protobuf POST to /v1/traces", http.StatusNotFound)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		attrs := map[string]string{}
		for _, a := range rs.GetResource().GetAttributes() {
			attrs[a.GetKey()] = a.GetValue().GetStringValue()
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				o.spans = append(o.spans, sp)
				o.res = append(o.res, attrs)
			}
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// named returns the received spans called name, with their resources.
func (o *otlpReceiver) named(name string) (spans []*tracepb.Span, res []map[string]string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, sp := range o.spans {
		if sp.GetName() == name {
			spans, res = append(spans, sp), append(res, o.res[i])
		}
	}
	return spans, res
}

func (o *otlpReceiver) names() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, sp := range o.spans {
		out = append(out, sp.GetName())
	}
	return out
}

// otlpRan is set once TestServe_Telemetry has installed an SDK: the
// packages' tracers follow the first global provider only, so a second run
// in the same process (-count=2) cannot see their spans.
var otlpRan bool

// TestServe_Telemetry runs rappel serve as configured by
// OTEL_EXPORTER_OTLP_ENDPOINT and --metrics-addr: traces of a search go
// over OTLP/HTTP to a local receiver when the server shuts down, and the
// metrics listener answers without a key.
func TestServe_Telemetry(t *testing.T) {
	clearOTEL(t)
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	t.Cleanup(collector.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	// Spans go out at shutdown (a flush), not on the batcher's timer.
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "600000")

	c := NewServeCommand()
	c.DataDir, c.APIKeys, c.Bundle = t.TempDir(), "k1", MustTinyBundle(t)
	logs := &logtest.Buffer{}
	c.Logger = logline.New(logs, "json", slog.LevelInfo)
	metricsAddr := make(chan net.Addr, 1)
	c.Telemetry.MetricsAddr = "127.0.0.1:0"
	c.Telemetry.MetricsReady = func(a net.Addr) { metricsAddr <- a }
	base, stop := serve(t, c)
	if code, body := get(t, base+"/recall?q=wooden", "k1"); code != http.StatusOK || !strings.Contains(string(body), "hc-74012") {
		t.Fatalf("search: %d %s", code, body)
	}
	ma := <-metricsAddr
	code, body := get(t, "http://"+ma.String()+"/metrics", "")
	for _, want := range []string{`rappel_http_request_duration_seconds_count{code="200",method="GET",route="/recall"} 1`, "rappel_alert_outbox_pending 0", "go_goroutines"} {
		if code != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("metrics listener: %d, no %q in\n%s", code, want, body)
		}
	}
	if code, _ := get(t, base+"/metrics", ""); code != http.StatusForbidden {
		t.Errorf("GET /metrics on the API without the admin key = %d, want 403", code)
	}
	if len(recv.names()) != 0 {
		t.Logf("spans before shutdown: %q", recv.names())
	}
	stop()

	srv, res := recv.named("GET /recall")
	if len(srv) != 1 {
		t.Fatalf("received %q, want one GET /recall", recv.names())
	}
	if res[0]["service.name"] != defaultServiceName || res[0]["service.version"] != buildinfo.Read().Version || res[0]["service.instance.id"] != alerts.DefaultNode() {
		t.Errorf("resource = %v, want service.name %q, service.version and service.instance.id", res[0], defaultServiceName)
	}
	// The request's access line leads to its trace, and to the server span.
	access := accessLine(t, logs.String(), "/recall")
	if access["trace_id"] != hex.EncodeToString(srv[0].GetTraceId()) || access["span_id"] != hex.EncodeToString(srv[0].GetSpanId()) {
		t.Errorf("access line trace_id %v span_id %v, want the span's %x %x", access["trace_id"], access["span_id"], srv[0].GetTraceId(), srv[0].GetSpanId())
	}
	if otlpRan {
		t.Log("second run in this process: the packages' spans went to the first run's provider")
		return
	}
	otlpRan = true
	idx, _ := recv.named("index.Search")
	if len(idx) != 1 || string(idx[0].GetParentSpanId()) != string(srv[0].GetSpanId()) {
		t.Errorf("index.Search = %v, want one child of GET /recall", idx)
	}
	if w, _ := recv.named("kv.Replace"); len(w) != 1 {
		t.Errorf("no Pebble write span for the bundle's load among %q", recv.names())
	}
}

// TestTelemetryConfig_OutboxDepth checks the outbox gauges against a real
// Pebble outbox: pending e-mails count, one per subscription and batch
// however many rows it has, and sent rows do not.
func TestTelemetryConfig_OutboxDepth(t *testing.T) {
	clearOTEL(t)
	ctx := context.Background()
	st := kvtest.Open(t)
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	var rows []*rappel.AlertRow
	for _, rec := range []string{"hc-1", "hc-2", "hc-3"} {
		rows = append(rows, &rappel.AlertRow{Sub: "sub1", Record: rec, OutboxState: rappel.OutboxState{Seq: 1, Status: rappel.AlertPending, CreatedAt: now, NextAt: now}})
	}
	rows = append(rows, &rappel.AlertRow{Sub: "sub2", Record: "hc-1", OutboxState: rappel.OutboxState{Seq: 1, Status: rappel.AlertPending, CreatedAt: now, NextAt: now}})
	if _, err := st.CommitMatches(ctx, []string{"hc-1", "hc-2", "hc-3"}, rows); err != nil {
		t.Fatal(err)
	}
	claimed, err := st.ClaimAlerts(ctx, "n1", now, time.Minute, 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimAlerts = %v, %v", claimed, err)
	}
	claimed[0].Status, claimed[0].SentAt = rappel.AlertSent, now
	if _, err := st.UpdateAlerts(ctx, "n1", claimed); err != nil {
		t.Fatal(err)
	}

	srv := edge.NewServer()
	srv.Catalog = &index.Catalog{} // an empty snapshot
	srv.Logger = slog.New(slog.DiscardHandler)
	srv.Now = func() time.Time { return now.Add(90 * time.Second) }
	ready := make(chan net.Addr, 1)
	tc := TelemetryConfig{MetricsAddr: "127.0.0.1:0", MetricsReady: func(a net.Addr) { ready <- a }}
	stop, err := tc.start(ctx, nil, st, srv, srv.Logger)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	code, body := get(t, "http://"+(<-ready).String()+"/metrics", "")
	for _, want := range []string{"\nrappel_alert_outbox_pending 2\n", "\nrappel_alert_outbox_oldest_seconds 90\n",
		"\nrappel_confirmation_outbox_pending 0\n", "\nrappel_confirmation_outbox_oldest_seconds 0\n"} {
		if code != http.StatusOK || !strings.Contains(string(body), want) {
			t.Fatalf("GET /metrics = %d, want %q in\n%s", code, want, body)
		}
	}
}

func TestServeCommand_MetricsAddrFlag(t *testing.T) {
	t.Setenv("RAPPEL_METRICS_ADDR", "127.0.0.1:9464")
	c := NewServeCommand()
	if err := c.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if c.Telemetry.MetricsAddr != "127.0.0.1:9464" {
		t.Fatalf("MetricsAddr = %q from RAPPEL_METRICS_ADDR", c.Telemetry.MetricsAddr)
	}
	if err := c.ParseFlags([]string{"--metrics-addr", "10.0.0.1:9100"}); err != nil || c.Telemetry.MetricsAddr != "10.0.0.1:9100" {
		t.Fatalf("--metrics-addr: %v, %q", err, c.Telemetry.MetricsAddr)
	}
}

// accessLine returns the JSON access-log line of the first request to
// route, failing the test when there is none.
func accessLine(t *testing.T, logs, route string) map[string]any {
	t.Helper()
	for line := range strings.Lines(logs) {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "request" && m["route"] == route {
			return m
		}
	}
	t.Fatalf("no access line for %s in\n%s", route, logs)
	return nil
}

// The tests below install an SDK as the global provider: they come after
// TestServe_Telemetry, whose packages' spans follow the first one.

// TestStartTelemetry_Console traces with OTEL_TRACES_EXPORTER=console and
// no collector: the span is printed, with the service's resource.
func TestStartTelemetry_Console(t *testing.T) {
	clearOTEL(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	var out bytes.Buffer
	tel, err := startTelemetry(context.Background(), os.Environ(), &out, slog.New(slog.DiscardHandler))
	if err != nil || tel == nil {
		t.Fatalf("startTelemetry = %v, %v; want tracing on", tel, err)
	}
	_, span := tel.Provider.Tracer("test").Start(context.Background(), "GET /livez")
	span.End()
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Name":"GET /livez"`, span.SpanContext().TraceID().String(), `"service.version"`, `"service.instance.id"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("console output lacks %s:\n%s", want, out.String())
		}
	}

	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	if _, err := startTelemetry(context.Background(), os.Environ(), &out, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "otlp, console or none") {
		t.Errorf("OTEL_TRACES_EXPORTER=zipkin: %v, want an error naming the choices", err)
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	t.Setenv("OTEL_SERVICE_NAME", "rappel-east")
	if tel, err := startTelemetry(context.Background(), os.Environ(), &out, slog.New(slog.DiscardHandler)); tel != nil || err != nil {
		t.Errorf("OTEL_TRACES_EXPORTER=none: %v, %v; want tracing off", tel, err)
	}
}

// TestStartTelemetry_DeadCollector exports to a port where nothing
// listens: the outage is one warning, however many exports fail, and a
// line when the collector answers again.
func TestStartTelemetry_DeadCollector(t *testing.T) {
	clearOTEL(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300") // ms, retries included
	// The batcher's timer exports, as in production, every 20 ms.
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	logs := &logtest.Buffer{}
	tel, err := startTelemetry(context.Background(), os.Environ(), io.Discard, logline.New(logs, "json", slog.LevelInfo))
	if err != nil {
		t.Fatal(err)
	}
	defer tel.close(slog.New(slog.DiscardHandler))
	// export ends a span and waits for the batcher to have sent it.
	export := func() {
		_, span := tel.Provider.Tracer("test").Start(context.Background(), "GET /recall")
		span.End()
		time.Sleep(400 * time.Millisecond)
	}
	for range 4 {
		export()
	}
	if n := strings.Count(logs.String(), `"level":"WARN"`); n != 1 {
		t.Fatalf("%d warnings for four failed exports, want 1:\n%s", n, logs.String())
	}

	// The collector comes back on the same port.
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	collector := httptest.NewUnstartedServer(&otlpReceiver{})
	collector.Listener = ln
	collector.Start()
	defer collector.Close()
	export()
	export()
	if n := strings.Count(logs.String(), `"msg":"exporting traces again"`); n != 1 || strings.Count(logs.String(), `"level":"WARN"`) != 1 {
		t.Errorf("after the collector's return: %d recovery lines, want 1, and no new warning:\n%s", n, logs.String())
	}
}

// TestServe_FinalErrorJSON checks that under --log-format json the error
// that ends rappel serve is a JSON log line, not plain text after it.
func TestServe_FinalErrorJSON(t *testing.T) {
	clearOTEL(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	logs := &logtest.Buffer{}
	c := NewServeCommand()
	c.DataDir, c.APIKeys, c.Bundle = t.TempDir(), "k1", MustTinyBundle(t)
	c.Addr, c.LogFormat = taken.Addr().String(), "json"
	c.Logger = logline.New(logs, c.LogFormat, slog.LevelInfo)
	err = c.Run(context.Background())
	var stderr bytes.Buffer
	if code := exitCode(err, &stderr); code == 0 || stderr.Len() != 0 {
		t.Errorf("exit %d, stderr %q; want a failure and nothing beside the JSON log", code, stderr.String())
	}
	var last map[string]any
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if json.Unmarshal([]byte(lines[len(lines)-1]), &last) != nil || last["level"] != "ERROR" || !strings.Contains(fmt.Sprint(last["err"]), taken.Addr().String()) {
		t.Errorf("last log line %s, want the error in JSON", lines[len(lines)-1])
	}
	if !errors.As(err, new(loggedError)) {
		t.Errorf("Run's error %v is not marked logged", err)
	}
}
