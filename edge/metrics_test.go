package edge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/rappel-ca/rappel"
)

const metricsAdminKey = "adm_metrics_0c41"

// scrape GETs url with hdr and parses the Prometheus text it answers.
func scrape(tb *testing.T, url string, hdr map[string]string) map[string]*dto.MetricFamily {
	tb.Helper()
	res, body := fetch(tb, url, hdr)
	if res.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s: %d %s", url, res.StatusCode, body)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		tb.Fatalf("Content-Type = %q, want the text exposition format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		tb.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	return fams
}

// series returns the metric of family name whose labels include want, or
// nil.
func series(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		for k, v := range want {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m
	}
	return nil
}

// mustMetricsServer is a Server with the admin key, two feeds (one fresh,
// one failing), 3 alert e-mails waiting (of 6 rows, the oldest for 90 s)
// and no confirmation e-mail, at a fixed time.
func mustMetricsServer(tb testing.TB) *Server {
	tb.Helper()
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	s, _ := MustServer(tb, MustCatalog(tb, testRecords()))
	s.Now = func() time.Time { return now }
	s.AdminKey = metricsAdminKey
	s.Feeds = func() []rappel.FeedState {
		return []rappel.FeedState{
			{Source: "hcdump", Live: true, LastAttempt: now.Add(-90 * time.Second), LastSuccess: now.Add(-90 * time.Second), Records: 40000, Plugin: "abc",
				LastDuration: 1500 * time.Millisecond, LastChanged: 12},
			{Source: "vrdb", Live: true, LastAttempt: now.Add(-time.Minute), LastSuccess: now.Add(-2 * time.Hour),
				LastError: "the upstream answered 503 Service Unavailable", LastErrorReason: rappel.FailureFetch, Stale: true, Records: 1000, Rejected: 2},
		}
	}
	s.OutboxDepth = func(context.Context) (rappel.OutboxDepth, error) {
		return rappel.OutboxDepth{Mails: 3, Rows: 6, Oldest: now.Add(-90 * time.Second)}, nil
	}
	s.ConfirmDepth = func(context.Context) (rappel.OutboxDepth, error) { return rappel.OutboxDepth{}, nil }
	return s
}

func TestMetrics(t *testing.T) {
	s := mustMetricsServer(t)
	base := MustHTTP(t, s.Handler()).URL
	key := map[string]string{"x-gateway-key": testKey}
	for _, target := range []string{"/recall/hc-73841", "/recall/hc-73841", "/recall/nope", "/no/such/" + strings.Repeat("z", 30)} {
		res, _ := fetch(t, base+target, key)
		res.Body.Close()
	}
	s.countRateLimited("free")
	s.countRateLimited("free")
	s.countRateLimited("pro")

	t.Run("ErrForbidden", func(t *testing.T) {
		for _, hdr := range []map[string]string{nil, {"x-admin-key": "wrong"}, {"x-gateway-key": testKey}} {
			res, body := fetch(t, base+"/metrics", hdr)
			var e struct{ Detail string }
			if res.StatusCode != http.StatusForbidden || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Detail, "admin key") {
				t.Errorf("GET /metrics with %v: %d %s, want 403 about the admin key", hdr, res.StatusCode, body)
			}
		}
	})

	t.Run("OK", func(t *testing.T) {
		fams := scrape(t, base+"/metrics", map[string]string{"x-admin-key": metricsAdminKey})
		hist := func(route, code string) uint64 {
			m := series(fams, "rappel_http_request_duration_seconds", map[string]string{"method": "GET", "route": route, "code": code})
			if m == nil {
				t.Errorf("no duration series for GET %s %s", route, code)
				return 0
			}
			return m.GetHistogram().GetSampleCount()
		}
		if n := hist("/recall/{record_id}", "200"); n != 2 {
			t.Errorf("GET /recall/{record_id} 200 count = %d, want 2", n)
		}
		if n := hist("/recall/{record_id}", "404"); n != 1 {
			t.Errorf("GET /recall/{record_id} 404 count = %d, want 1", n)
		}
		if n := hist("unmatched", "404"); n != 1 {
			t.Errorf("GET unmatched 404 count = %d, want 1", n)
		}
		for _, m := range fams["rappel_http_request_duration_seconds"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" && strings.Contains(l.GetValue(), "zzz") {
					t.Errorf("an unmatched path became a route label: %q", l.GetValue())
				}
			}
		}
		gauge := func(name string, labels map[string]string) float64 {
			m := series(fams, name, labels)
			if m == nil {
				t.Errorf("no series %s%v", name, labels)
				return -1
			}
			return m.GetGauge().GetValue()
		}
		if v := gauge("rappel_feed_last_success_age_seconds", map[string]string{"source": "hcdump"}); v != 90 {
			t.Errorf("hcdump freshness = %v, want 90", v)
		}
		if v := gauge("rappel_feed_last_success_age_seconds", map[string]string{"source": "vrdb"}); v != 7200 {
			t.Errorf("vrdb freshness = %v, want 7200", v)
		}
		if v := gauge("rappel_feed_last_attempt_timestamp_seconds", map[string]string{"source": "vrdb"}); v != float64(s.Now().Add(-time.Minute).Unix()) {
			t.Errorf("vrdb last attempt = %v, want a minute before now, after its last success", v)
		}
		if v := gauge("rappel_feed_last_refresh_duration_seconds", map[string]string{"source": "hcdump"}); v != 1.5 {
			t.Errorf("hcdump refresh duration = %v, want 1.5", v)
		}
		if m := series(fams, "rappel_feed_last_refresh_duration_seconds", map[string]string{"source": "vrdb"}); m != nil {
			t.Errorf("vrdb refresh duration = %v, want none before its first refresh", m)
		}
		if v := gauge("rappel_feed_last_refresh_changed_records", map[string]string{"source": "hcdump"}); v != 12 {
			t.Errorf("hcdump records changed = %v, want 12", v)
		}
		if v := gauge("rappel_feed_error", map[string]string{"source": "vrdb", "reason": "fetch"}); v != 1 {
			t.Errorf("vrdb error = %v, want 1 with its reason", v)
		}
		if v := gauge("rappel_feed_error", map[string]string{"source": "hcdump", "reason": ""}); v != 0 {
			t.Errorf("hcdump error = %v, want 0 with no reason", v)
		}
		if n := len(fams["rappel_feed_error"].GetMetric()); n != 2 {
			t.Errorf("rappel_feed_error has %d series, want one per source", n)
		}
		if v := gauge("rappel_feed_stale", map[string]string{"source": "vrdb"}); v != 1 {
			t.Errorf("vrdb stale = %v, want 1", v)
		}
		if v := gauge("rappel_feed_plugin_info", map[string]string{"source": "hcdump", "plugin": "abc"}); v != 1 {
			t.Errorf("hcdump plugin info = %v, want 1 labelled with its /health plugin", v)
		}
		for name, want := range map[string]float64{"rappel_alert_outbox_pending": 3, "rappel_alert_outbox_oldest_seconds": 90,
			"rappel_confirmation_outbox_pending": 0, "rappel_confirmation_outbox_oldest_seconds": 0} {
			if v := gauge(name, nil); v != want {
				t.Errorf("%s = %v, want %v", name, v, want)
			}
		}
		limited := func(plan string) float64 {
			m := series(fams, "rappel_rate_limited_requests_total", map[string]string{"plan": plan})
			if m == nil {
				t.Errorf("no rate-limited series for plan %s", plan)
				return -1
			}
			return m.GetCounter().GetValue()
		}
		if v := limited("free"); v != 2 {
			t.Errorf("rate-limited free = %v, want 2", v)
		}
		if v := limited("pro"); v != 1 {
			t.Errorf("rate-limited pro = %v, want 1", v)
		}
		for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes"} {
			if fams[name] == nil {
				t.Errorf("no %s", name)
			}
		}
	})

	t.Run("OutboxError", func(t *testing.T) {
		s := mustMetricsServer(t)
		s.OutboxDepth = func(context.Context) (rappel.OutboxDepth, error) {
			return rappel.OutboxDepth{}, errors.New("disk on fire")
		}
		s.ConfirmDepth = nil
		fams := scrape(t, MustHTTP(t, s.Handler()).URL+"/metrics", map[string]string{"x-admin-key": metricsAdminKey})
		for _, name := range []string{"rappel_alert_outbox_pending", "rappel_alert_outbox_oldest_seconds"} {
			if m := series(fams, name, nil); m == nil || m.GetGauge().GetValue() == m.GetGauge().GetValue() {
				t.Errorf("%s after a failed count = %v, want NaN", name, m)
			}
		}
		if m := series(fams, "rappel_confirmation_outbox_pending", nil); m != nil {
			t.Errorf("a confirmation outbox gauge without ConfirmDepth: %v", m)
		}
	})
}

// TestMetrics_Listener checks the separate metrics listener: no key, GET
// /metrics only, JSON errors otherwise.
func TestMetrics_Listener(t *testing.T) {
	s := mustMetricsServer(t)
	s.AdminKey = "" // the API's /metrics is closed; the listener needs no key
	api := MustHTTP(t, s.Handler()).URL
	res, _ := fetch(t, api+"/recall/hc-73841", map[string]string{"x-gateway-key": testKey})
	res.Body.Close()
	ms := MustHTTP(t, s.MetricsHandler()).URL

	fams := scrape(t, ms+"/metrics", nil)
	if m := series(fams, "rappel_http_request_duration_seconds", map[string]string{"route": "/recall/{record_id}", "code": "200"}); m.GetHistogram().GetSampleCount() != 1 {
		t.Errorf("the listener does not show the API's request: %v", m)
	}
	if fams["rappel_feed_records"] == nil {
		t.Error("no feed series on the listener")
	}
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/recall/hc-73841", http.StatusNotFound},
		{http.MethodPost, "/metrics", http.StatusMethodNotAllowed},
	} {
		req, _ := http.NewRequest(tc.method, ms+tc.path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var e struct{ Detail string }
		if res.StatusCode != tc.status || json.Unmarshal(b, &e) != nil || e.Detail == "" {
			t.Errorf("%s %s: %d %s, want %d with a JSON detail", tc.method, tc.path, res.StatusCode, b, tc.status)
		}
	}
}

// BenchmarkMiddleware serves GET /recall/{record_id} through the whole
// chain as deployed without OTEL_* variables (tracing off, metrics on) and
// through the bare handler writing the same bytes; the ratio of their ns/op
// is the chain's cost (at most 1.10 by the issue). Chain drops the access
// log at its level check; ChainJSONLog encodes it, as in production;
// ChainTracingOn records a server span per request (exported nowhere).
func BenchmarkMiddleware(b *testing.B) {
	cat := MustCatalog(b, testRecords())
	b.Run("Chain", func(b *testing.B) {
		s, _ := MustServer(b, cat)
		s.Logger = discardLogger()
		benchmarkRecord(b, s.Handler())
	})
	b.Run("ChainJSONLog", func(b *testing.B) {
		s, _ := MustServer(b, cat)
		s.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
		benchmarkRecord(b, s.Handler())
	})
	b.Run("Bare", func(b *testing.B) {
		body, _ := cat.Snapshot().RecordJSON("hc-73841", "")
		benchmarkRecord(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
		}))
	})
	// Router is the routes table's handler (key check, parameters, the
	// record's bytes) behind requestID alone, which makes the exchange it
	// needs: Chain over Router is what the other middlewares cost.
	b.Run("Router", func(b *testing.B) {
		s, _ := MustServer(b, cat)
		s.Logger = discardLogger()
		benchmarkRecord(b, s.requestID(s.router(s.routes())))
	})
	// ChainOtelNoop wraps otelhttp with a no-op provider: what leaving it
	// in the chain with tracing off would cost.
	b.Run("ChainOtelNoop", func(b *testing.B) {
		s, _ := MustServer(b, cat)
		s.Logger = discardLogger()
		s.TracerProvider = noop.NewTracerProvider()
		benchmarkRecord(b, s.Handler())
	})
	b.Run("ChainTracingOn", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider()
		b.Cleanup(func() { tp.Shutdown(context.Background()) })
		s, _ := MustServer(b, cat)
		s.Logger = discardLogger()
		s.TracerProvider = tp
		benchmarkRecord(b, s.Handler())
	})
}

// TestMetrics_RateLimited drives a key of a small plan past its burst
// through the real limiter and scrapes the 429s by plan.
func TestMetrics_RateLimited(t *testing.T) {
	e := mustKeyedEnv(t, "", march2025)
	e.s.AdminKey = metricsAdminKey
	key := e.issue(t, "tiny") // burst 3
	limited := 0
	for range 5 {
		if code, _, _ := e.get(t, "/recall/hc-73841", key); code == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited != 2 {
		t.Fatalf("%d requests limited, want 2 past the burst of 3", limited)
	}
	fams := scrape(t, e.url+"/metrics", map[string]string{"x-admin-key": metricsAdminKey})
	if m := series(fams, "rappel_rate_limited_requests_total", map[string]string{"plan": "tiny"}); m.GetCounter().GetValue() != 2 {
		t.Errorf("rate-limited tiny = %v, want 2", m)
	}
	if m := series(fams, "rappel_http_request_duration_seconds", map[string]string{"route": "/recall/{record_id}", "code": "429"}); m.GetHistogram().GetSampleCount() != 2 {
		t.Errorf("429 durations = %v, want 2", m)
	}
}

// TestMetrics_ZeroBeforeFirstEvent: the event counters have a series per
// known label value at 0 before their first event, so that an alert rule
// over rate() sees the first burst of 429s or refused searches, and a
// dashboard shows 0 rather than "no data".
func TestMetrics_ZeroBeforeFirstEvent(t *testing.T) {
	s := mustMetricsServer(t)
	base := MustHTTP(t, s.Handler()).URL
	fams := scrape(t, base+"/metrics", map[string]string{"x-admin-key": metricsAdminKey})
	for _, c := range []struct{ name, label, value string }{
		{"rappel_rate_limited_requests_total", "plan", rappel.PlanFree},
		{"rappel_rate_limited_requests_total", "plan", rappel.PlanPro},
		{"rappel_expensive_searches_total", "outcome", "admitted"},
		{"rappel_expensive_searches_total", "outcome", "queue_full"},
		{"rappel_expensive_searches_total", "outcome", "timeout"},
	} {
		if m := series(fams, c.name, map[string]string{c.label: c.value}); m == nil || m.GetCounter().GetValue() != 0 {
			t.Errorf("%s{%s=%q} = %v, want a series at 0", c.name, c.label, c.value, m)
		}
	}
	if m := series(fams, "rappel_rate_limited_requests_total", map[string]string{"plan": rappel.PlanDev}); m != nil {
		t.Errorf("a series for the dev plan, whose keys are never limited: %v", m)
	}
	if m := series(fams, "rappel_storage_degraded", nil); m == nil || m.GetGauge().GetValue() != 0 {
		t.Errorf("rappel_storage_degraded without a StorageFault = %v, want 0", m)
	}
}

// TestMetrics_Webhooks: the webhook counters and outbox gauge read the
// fields at each scrape, set after the registry was built as rappel serve
// sets them.
func TestMetrics_Webhooks(t *testing.T) {
	s := mustMetricsServer(t)
	base := MustHTTP(t, s.Handler()).URL
	admin := map[string]string{"x-admin-key": metricsAdminKey}
	fams := scrape(t, base+"/metrics", admin)
	if m := series(fams, "rappel_webhook_deliveries_total", nil); m == nil || m.GetCounter().GetValue() != 0 {
		t.Fatalf("before the webhooks are wired: %v", m)
	}
	s.WebhookStats = func() rappel.WebhookStats {
		return rappel.WebhookStats{Delivered: 5, Retried: 3, Failed: 2, Disabled: 1}
	}
	s.WebhookDepth = func(context.Context) (int, error) { return 4, nil }
	fams = scrape(t, base+"/metrics", admin)
	for name, want := range map[string]float64{"rappel_webhook_deliveries_total": 5, "rappel_webhook_retries_total": 3,
		"rappel_webhook_failures_total": 2, "rappel_webhook_endpoints_disabled_total": 1} {
		if m := series(fams, name, nil); m == nil || m.GetCounter().GetValue() != want {
			t.Errorf("%s = %v, want %v", name, m, want)
		}
	}
	if m := series(fams, "rappel_webhook_outbox_pending", nil); m == nil || m.GetGauge().GetValue() != 4 {
		t.Errorf("rappel_webhook_outbox_pending = %v, want 4", m)
	}
}
