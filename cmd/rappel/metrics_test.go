package main

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// nodeMetrics is one scrape of a node's /metrics, parsed.
type nodeMetrics map[string]*dto.MetricFamily

// scrapeNode GETs url and parses the text exposition it answers.
func scrapeNode(tb testing.TB, url string) nodeMetrics {
	tb.Helper()
	res, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s: %d", url, res.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return fams
}

// metric returns the series of family name with labels, or nil.
func (n nodeMetrics) metric(name string, labels map[string]string) *dto.Metric {
	f := n[name]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if match {
			return m
		}
	}
	return nil
}

// value returns the value of a counter or gauge, or a histogram's count,
// failing when the series is missing.
func (n nodeMetrics) value(tb testing.TB, name string, labels map[string]string) float64 {
	tb.Helper()
	m := n.metric(name, labels)
	switch {
	case m == nil:
		tb.Fatalf("no series %s%v in /metrics", name, labels)
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return m.GetGauge().GetValue()
}

// source is the label set of one source.
func source(name string) map[string]string { return map[string]string{"source": name} }

// TestServe_MetricsExplainARefresh runs a node on real feeds whose vrdb
// file has a renamed column, so that its bundled plugin fails, and checks
// that /metrics tells the story: every series at zero from the first
// scrape, then the plugin runs and their failures, a candidate that is not
// a module refused as unusable, the fixed plugin activated, and a refresh
// that changed a record timed step by step, with the store's and the read
// index's figures.
func TestServe_MetricsExplainARefresh(t *testing.T) {
	bundleDir := MustBuildBundle(t)
	up := sampleUpstream(t)
	up.Set("/tc/vrdb.csv", bytes.Replace(up.Doc("/tc/vrdb.csv"), []byte(`"MANUFACTURER_RECALL_NO_TXT"`), []byte(`"MANUFACTURER_RECALL_NUMBER"`), 1))
	pluginsDir := t.TempDir()
	c := NewServeCommand()
	if err := c.ParseFlags([]string{
		"--data-dir", t.TempDir(), "--api-keys", "k1", "--feeds", "on",
		"--feed-hc-en", up.URL + "/hc/recalls-en.json", "--feed-hc-fr", up.URL + "/hc/recalls-fr.json",
		"--feed-tc-vrdb", up.URL + "/tc/vrdb.csv", "--feed-detail", up.URL + "/detail/{lang}/{id}.json",
		"--refresh-interval", "1h", "--admin-key", adminKey, "--plugins-dir", pluginsDir, "--plugins-allow-unsigned",
		"--feed-detail-rate", "0", "--metrics-addr", "127.0.0.1:0",
	}); err != nil {
		t.Fatal(err)
	}
	c.Bundle = os.DirFS(bundleDir)
	metricsAddr := make(chan net.Addr, 1)
	c.Telemetry.MetricsReady = func(a net.Addr) { metricsAddr <- a }
	base, _ := serve(t, c)
	url := "http://" + (<-metricsAddr).String() + "/metrics"
	waitFor(t, "hcdump live and vrdb's plugin failing", func() bool {
		return feed(t, base, "hcdump").Live && strings.Contains(feed(t, base, "vrdb").LastError, "MANUFACTURER_RECALL_NO_TXT")
	})

	m := scrapeNode(t, url)
	t.Run("FirstRefresh", func(t *testing.T) {
		for _, src := range []string{"hcdump", "vrdb", "detail"} {
			for _, reason := range []string{"unverified", "manifest", "unusable", "run_failed", "output"} {
				if v := m.value(t, "rappel_plugin_refusals_total", map[string]string{"source": src, "reason": reason}); v != 0 {
					t.Errorf("%s refusals for %s = %v before any candidate, want 0", src, reason, v)
				}
			}
			if v := m.value(t, "rappel_plugin_activations_total", source(src)); v != 0 {
				t.Errorf("%s activations = %v before any candidate, want 0", src, v)
			}
			if v := m.value(t, "rappel_plugin_held", source(src)); v != 0 {
				t.Errorf("%s held = %v, want 0", src, v)
			}
		}
		// hcdump's documents are the bundle's: its refresh had nothing
		// to normalize, and its plugin did not run. vrdb's did, and failed.
		if runs, timed := m.value(t, "rappel_plugin_runs_total", source("vrdb")), m.value(t, "rappel_plugin_run_duration_seconds", source("vrdb")); runs < 1 || timed != runs {
			t.Errorf("vrdb: %v runs, %v timed; want at least 1, all timed", runs, timed)
		}
		if v := m.value(t, "rappel_plugin_run_failures_total", source("vrdb")); v < 1 {
			t.Errorf("vrdb plugin failures = %v, want at least 1", v)
		}
		if v := m.value(t, "rappel_plugin_run_failures_total", source("hcdump")); v != 0 {
			t.Errorf("hcdump plugin failures = %v, want 0", v)
		}
		for _, step := range []string{"fetch", "normalize", "assemble", "write"} {
			if v := m.value(t, "rappel_feed_refresh_step_duration_seconds", map[string]string{"source": "hcdump", "step": step}); v < 1 {
				t.Errorf("hcdump's %s step timed %v times, want at least once", step, v)
			}
		}
		// vrdb failed in its normalize step: fetched, normalized, never
		// written.
		if v := m.value(t, "rappel_feed_refresh_step_duration_seconds", map[string]string{"source": "vrdb", "step": "write"}); v != 0 {
			t.Errorf("vrdb's write step timed %v times, want 0: its refresh failed before it", v)
		}
		if at := m.value(t, "rappel_feed_last_error_timestamp_seconds", source("vrdb")); time.Since(time.Unix(int64(at), 0)) > time.Minute {
			t.Errorf("vrdb's last error at %v, want within the last minute", time.Unix(int64(at), 0))
		}
		if m.metric("rappel_feed_last_error_timestamp_seconds", source("hcdump")) != nil {
			t.Error("hcdump has a last error time, and it never failed")
		}
		if v := m.value(t, "rappel_feed_changed_records_total", source("hcdump")); v < 0 {
			t.Errorf("hcdump changed records = %v", v)
		}
		m.value(t, "rappel_feed_rejected_records_total", source("hcdump"))
		if v := m.value(t, "rappel_storage_disk_bytes", nil); v < 4096 {
			t.Errorf("storage on disk = %v bytes, want the bundle's tables at least", v)
		}
		if v := m.value(t, "rappel_storage_wal_written_bytes_total", nil); v <= 0 {
			t.Errorf("WAL bytes written = %v after a refresh wrote, want more than 0", v)
		}
		if v := m.value(t, "rappel_storage_read_amplification", nil); v < 1 {
			t.Errorf("read amplification = %v, want at least 1 with the bundle's tables", v)
		}
		if v := m.value(t, "rappel_storage_memtable_bytes", nil); v <= 0 {
			t.Errorf("memtable = %v bytes, want its allocation", v)
		}
		for _, name := range []string{"rappel_storage_compactions_total", "rappel_storage_compaction_debt_bytes", "rappel_storage_compactions_in_progress", "rappel_storage_flushes_total", "rappel_storage_wal_files", "rappel_storage_wal_bytes", "rappel_storage_l0_files", "rappel_index_merges_total", "rappel_index_delta_records"} {
			m.value(t, name, nil)
		}
		if v := m.value(t, "rappel_index_segment_open_duration_seconds", nil); v < 1 {
			t.Errorf("segment openings = %v, want at least the bundle's at start", v)
		}
	})

	t.Run("Candidates", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(pluginsDir, "hcdump.wasm"), []byte("not a WebAssembly module"), 0o644); err != nil {
			t.Fatal(err)
		}
		unusable := map[string]string{"source": "hcdump", "reason": "unusable"}
		waitFor(t, "the broken hcdump candidate refused", func() bool { return scrapeNode(t, url).value(t, "rappel_plugin_refusals_total", unusable) == 1 })
		fixed := plugintest.Build(t, "./plugins/testdata/guests/vrdbrenamed")
		plugintest.Install(t, pluginsDir, "vrdb", fixed)
		waitFor(t, "the fixed vrdb plugin activated", func() bool {
			return scrapeNode(t, url).value(t, "rappel_plugin_activations_total", source("vrdb")) == 1
		})
		m := scrapeNode(t, url)
		if v := m.value(t, "rappel_plugin_activations_total", source("hcdump")); v != 0 {
			t.Errorf("hcdump activations = %v after its candidate was refused, want 0", v)
		}
		if v := m.value(t, "rappel_plugin_refusals_total", map[string]string{"source": "vrdb", "reason": "output"}); v != 0 {
			t.Errorf("vrdb refusals for its output = %v, want 0", v)
		}
	})

	t.Run("ChangedRecord", func(t *testing.T) {
		before := scrapeNode(t, url)
		en := bytes.TrimSpace(up.Doc("/hc/recalls-en.json"))
		up.Set("/hc/recalls-en.json", append(en[:len(en)-1], []byte(",\n"+newRowEN+"\n]")...))
		up.Set("/detail/en/70009.json", []byte(newDetailEN))
		if code, body := adminRefresh(t, base, adminKey); code != http.StatusOK {
			t.Fatalf("POST /admin/refresh = %d %s", code, body)
		}
		after := scrapeNode(t, url)
		hc := source("hcdump")
		if d := after.value(t, "rappel_feed_changed_records_total", hc) - before.value(t, "rappel_feed_changed_records_total", hc); d < 1 {
			t.Errorf("hcdump changed records grew by %v over a refresh that added a recall, want at least 1", d)
		}
		if v := after.value(t, "rappel_index_delta_records", nil); v < 1 {
			t.Errorf("read index delta = %v records after a change, want at least 1", v)
		}
		fetch := map[string]string{"source": "hcdump", "step": "fetch"}
		if d := after.value(t, "rappel_feed_refresh_step_duration_seconds", fetch) - before.value(t, "rappel_feed_refresh_step_duration_seconds", fetch); d != 1 {
			t.Errorf("hcdump's fetch step timed %v more times over one refresh, want 1", d)
		}
		if d := after.value(t, "rappel_plugin_runs_total", hc) - before.value(t, "rappel_plugin_runs_total", hc); d < 1 {
			t.Errorf("hcdump's plugin ran %v more times over a refresh that changed its file, want at least 1", d)
		}
		if d := after.value(t, "rappel_plugin_output_bytes_total", hc) - before.value(t, "rappel_plugin_output_bytes_total", hc); d < 100 {
			t.Errorf("hcdump's plugin wrote %v more bytes over a refresh that added a recall, want its record line", d)
		}
	})
}
