package main

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// seriesName is a series name as PromQL and the dashboard write them: the
// names of our series and those of the Go and process collectors.
var seriesName = regexp.MustCompile(`\b(?:rappel|process|go)_[a-z0-9_]+\b`)

// bucketBound is a histogram bound a query selects, such as le="0.5".
var bucketBound = regexp.MustCompile(`le="([^"]+)"`)

// TestServe_DeployMetrics starts a node with its feeds on and its metrics
// listener, as deployed, and checks that every series the alert rules and
// the dashboard in deploy/ name is in its /metrics from the start: a rule
// over a series the node does not export never fires, and nothing tells.
func TestServe_DeployMetrics(t *testing.T) {
	root := plugintest.ModuleRoot(t)
	usedIn := map[string]string{} // series name → a file that names it
	text := map[string]string{}
	for _, f := range []string{"deploy/prometheus/rappel-rules.yml", "deploy/grafana/rappel-dashboard.json"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		text[f] = string(b)
		for _, name := range seriesName.FindAllString(string(b), -1) {
			usedIn[name] = f
		}
	}

	bundleDir := MustBuildBundle(t)
	up := sampleUpstream(t)
	c := NewServeCommand()
	err := c.ParseFlags([]string{
		"--data-dir", t.TempDir(), "--api-keys", "k1", "--feeds", "on",
		"--feed-hc-en", up.URL + "/hc/recalls-en.json", "--feed-hc-fr", up.URL + "/hc/recalls-fr.json",
		"--feed-tc-vrdb", up.URL + "/tc/vrdb.csv", "--feed-detail", up.URL + "/detail/{lang}/{id}.json",
		"--feed-detail-rate", "0", "--admin-key", adminKey, "--metrics-addr", "127.0.0.1:0",
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Bundle = os.DirFS(bundleDir)
	metricsAddr := make(chan net.Addr, 1)
	c.Telemetry.MetricsReady = func(a net.Addr) { metricsAddr <- a }
	base, _ := serve(t, c)
	// Every source live: the bundle's own states have a last success
	// already, and the switch may be under way.
	waitFor(t, "the first refresh", func() bool {
		h := health(t, base)
		for _, f := range h.Feeds {
			if !f.Live {
				return false
			}
		}
		return len(h.Feeds) == 3
	})
	// The request histogram has series once a request was answered. The
	// read index follows the store a moment after the refresh: the live
	// record is there once it has.
	waitFor(t, "the live record in the read index", func() bool {
		code, _ := get(t, base+"/recall/hc-70003", "k1")
		return code == http.StatusOK
	})
	code, body := get(t, "http://"+(<-metricsAddr).String()+"/metrics", "")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	families := metricTypes(string(body))
	for name, f := range usedIn {
		if onlyWithTLS[name] || strings.HasPrefix(name, "rappel_fleet_") {
			continue
		}
		if !exported(families, name) {
			t.Errorf("%s names %s, which is not in the node's /metrics", f, name)
		}
	}
	for f, s := range text {
		for _, m := range bucketBound.FindAllStringSubmatch(s, -1) {
			if !strings.Contains(string(body), `le="`+m[1]+`"`) {
				t.Errorf("%s selects the bucket le=%q, which the request histogram does not have", f, m[1])
			}
		}
	}
}

// onlyWithTLS are the series only a node serving HTTPS (--tls-domains)
// exports, which this node does not; TestServe_TLS checks them. Likewise
// the rappel_fleet_ series are a fleet node's only (--shared-store), which
// edge's TestMetrics_Fleet checks.
var onlyWithTLS = map[string]bool{"rappel_tls_certificate_expiry_timestamp_seconds": true}

// metricTypes maps each family of a text exposition to its type, from its
// "# TYPE" lines; a family without series has none.
func metricTypes(exposition string) map[string]string {
	types := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(exposition))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]] = f[3]
		}
	}
	return types
}

// exported reports whether name is a family of types, or a series of one:
// the _bucket, _sum and _count of a histogram or summary.
func exported(types map[string]string, name string) bool {
	if types[name] != "" {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if k := types[base]; k == "histogram" || (k == "summary" && suffix != "_bucket") {
				return true
			}
		}
	}
	return false
}
