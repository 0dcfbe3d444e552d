package edge

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/rappel-ca/rappel"
)

// counterOf returns the value of the counter name with labels in fams,
// failing the test when the series is missing.
func counterOf(tb testing.TB, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	tb.Helper()
	m := series(fams, name, labels)
	if m == nil {
		tb.Fatalf("no series %s%v in /metrics", name, labels)
	}
	return m.GetCounter().GetValue()
}

// TestMetrics_Exports: every export series is there at zero before any
// export; a whole CSV export counts a stream and its bytes, and an NDJSON
// export whose client stops reading counts a stream cut for
// client_stalled.
func TestMetrics_Exports(t *testing.T) {
	recs := bulkRecords(400)
	s, logs := MustServer(t, MustCatalog(t, recs))
	s.StallTimeout = 300 * time.Millisecond
	base, _ := serveNode(t, s, writeTimeout)
	metricsURL := MustHTTP(t, s.MetricsHandler()).URL + "/metrics"

	fams := scrape(t, metricsURL, nil)
	for _, format := range []string{"ndjson", "csv"} {
		for _, name := range []string{"rappel_export_streams_total", "rappel_export_written_bytes_total"} {
			if v := counterOf(t, fams, name, map[string]string{"format": format}); v != 0 {
				t.Errorf("%s{format=%q} = %v before any export, want 0", name, format, v)
			}
		}
		for _, reason := range []string{"client_closed", "client_stalled", "page_budget", "shutdown", "server_error"} {
			if v := counterOf(t, fams, "rappel_export_streams_cut_total", map[string]string{"format": format, "reason": reason}); v != 0 {
				t.Errorf("cut %s/%s = %v before any export, want 0", format, reason, v)
			}
		}
	}

	c := identityClient()
	whole := startExport(t, t.Context(), c, base+"/recall/export?format=csv", "whole-csv")
	body, err := io.ReadAll(whole.Body)
	whole.Body.Close()
	if err != nil || whole.StatusCode != http.StatusOK {
		t.Fatalf("the CSV export: %d, %v", whole.StatusCode, err)
	}
	waitLogLine(t, logs, "request", "whole-csv")

	stalled := startExport(t, t.Context(), c, base+"/recall/export?format=ndjson", "stalled-ndjson")
	defer stalled.Body.Close()
	if _, err := io.ReadFull(stalled.Body, make([]byte, 4<<10)); err != nil {
		t.Fatal(err)
	}
	waitLogLine(t, logs, "request", "stalled-ndjson") // once cut

	fams = scrape(t, metricsURL, nil)
	csv, ndjson := map[string]string{"format": "csv"}, map[string]string{"format": "ndjson"}
	if v := counterOf(t, fams, "rappel_export_streams_total", csv); v != 1 {
		t.Errorf("CSV streams = %v, want 1", v)
	}
	if v := counterOf(t, fams, "rappel_export_written_bytes_total", csv); v != float64(len(body)) {
		t.Errorf("CSV bytes = %v, want the %d the client read", v, len(body))
	}
	if v := counterOf(t, fams, "rappel_export_streams_total", ndjson); v != 1 {
		t.Errorf("NDJSON streams = %v, want 1", v)
	}
	if v := counterOf(t, fams, "rappel_export_written_bytes_total", ndjson); v < 4<<10 {
		t.Errorf("NDJSON bytes = %v, want at least the 4 KiB the client read", v)
	}
	if v := counterOf(t, fams, "rappel_export_streams_cut_total", map[string]string{"format": "ndjson", "reason": "client_stalled"}); v != 1 {
		t.Errorf("NDJSON cut for client_stalled = %v, want 1", v)
	}
	if v := counterOf(t, fams, "rappel_export_streams_cut_total", map[string]string{"format": "csv", "reason": "client_stalled"}); v != 0 {
		t.Errorf("CSV cut for client_stalled = %v, want 0: it was read whole", v)
	}
}

// TestMetrics_OpenMetricsExemplar: a scraper asking for OpenMetrics gets
// it, and the request histogram's bucket of a traced request carries that
// request's trace id as its exemplar; the text format has none.
func TestMetrics_OpenMetricsExemplar(t *testing.T) {
	s, base, exp, _ := mustTracedServer(t)
	s.AdminKey = metricsAdminKey
	if res, _ := fetch(t, base+"/recall/hc-73841", map[string]string{"X-Request-Id": "exemplar-1"}); res.StatusCode != http.StatusOK {
		t.Fatalf("GET /recall/hc-73841: %d", res.StatusCode)
	}
	spans := waitSpans(t, exp, hasAttr("http.request.id", "exemplar-1"))
	traceID := spanNamed(t, spans, "GET /recall/{record_id}").SpanContext.TraceID().String()

	res, body := fetch(t, base+"/metrics", map[string]string{
		"x-admin-key": metricsAdminKey, "Accept": "application/openmetrics-text; version=1.0.0; charset=utf-8",
	})
	if ct := res.Header.Get("Content-Type"); res.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Fatalf("GET /metrics for OpenMetrics: %d %q", res.StatusCode, ct)
	}
	if !strings.HasSuffix(body, "# EOF\n") {
		t.Error("the OpenMetrics exposition does not end with # EOF")
	}
	var found bool
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "rappel_http_request_duration_seconds_bucket{") && strings.Contains(line, `route="/recall/{record_id}"`) &&
			strings.Contains(line, `code="200"`) && strings.Contains(line, `# {trace_id="`+traceID+`"}`) {
			found = true
		}
	}
	if !found {
		t.Errorf("no bucket of GET /recall/{record_id} 200 has the exemplar trace_id=%s:\n%s", traceID, grepLines(body, "rappel_http_request_duration_seconds_bucket"))
	}
	if _, text := fetch(t, base+"/metrics", map[string]string{"x-admin-key": metricsAdminKey}); strings.Contains(text, "trace_id") {
		t.Error("the text exposition carries exemplars, which it cannot express")
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// TestMetrics_Fleet: a node of a fleet exports what the fleet alert rules
// read (deploy/prometheus: RappelFleetNoLeader, RappelFleetFollowerLagging)
// from its FleetStats; a node on its own exports none of them.
func TestMetrics_Fleet(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	url := MustHTTP(t, s.MetricsHandler()).URL + "/metrics"
	if fams := scrape(t, url, nil); fams["rappel_fleet_leading"] != nil {
		t.Fatal("a node on its own exports rappel_fleet_leading")
	}
	s.FleetStats = func() rappel.FleetStats {
		return rappel.FleetStats{Version: 7, Latest: 9, Lag: 90 * time.Second, SinceContact: 2 * time.Second, Ready: true}
	}
	fams := scrape(t, url, nil)
	for name, want := range map[string]float64{
		"rappel_fleet_leading": 0, "rappel_fleet_dataset_version": 7, "rappel_fleet_latest_version": 9,
		"rappel_fleet_lag_seconds": 90, "rappel_fleet_since_contact_seconds": 2, "rappel_fleet_ready": 1, "rappel_fleet_degraded": 0,
	} {
		m := series(fams, name, nil)
		if m == nil || m.GetGauge().GetValue() != want {
			t.Errorf("%s = %v, want %v", name, m, want)
		}
	}
}
