package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rappel-ca/rappel/internal/logtest"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// shortFor is what every alert's `for:` becomes in the rules Prometheus
// loads here: a few evaluations, not minutes.
const shortFor = 3 * time.Second

// promDeadline bounds every wait on Prometheus: long enough for a starved
// machine, since a rule that never fires fails only at this deadline.
const promDeadline = 3 * time.Minute

// costlySearch is the most common words of the generated records ORed by
// relevance: 77 cost units on the bundle, so it runs in the pool of
// expensive searches (edge/admission.go), and it holds the pool's one slot
// (two cores) for tens of milliseconds.
var costlySearch = "/recall?" + url.Values{
	"q":       {strings.Join(strings.Fields("the and of to in for is on with by from at as be this that may not are product products recall recalled food contain contains due risk health canada distributed sold"), " OR ")},
	"sort_by": {"relevance"}, "limit": {"1"},
}.Encode()

// TestPrometheus_RealAlerts runs the alert rules of deploy/ in a real
// Prometheus (Debian's) scraping a real node process every second, with
// only the rules' `for:` shortened, and reads what fires through
// Prometheus's HTTP API:
//
//   - a few bursts of costly searches on an idle node, some shed with a
//     503, put the bad ratio over the fast burn's threshold, yet with
//     fewer than 100 requests neither burn fires;
//   - sixteen clients sending costly searches for as long as it takes
//     overload the pool (one slot, a 300 ms wait): most are shed with a
//     fast 503 (wait_expired), and RappelLatencyBudgetFastBurn fires;
//   - the node stopped with SIGTERM: up goes 0 and RappelNodeDown fires,
//     RappelNodesAbsent does not (the target is still configured).
//
// Every rule evaluates without an error throughout.
func TestPrometheus_RealAlerts(t *testing.T) {
	bin := prometheusBinary(t)
	needBundle(t)
	// The embedded bundle's 41,000 records, so that a costly search costs.
	base, node, stderr := startMainOn(t, t.TempDir(), "--metrics-addr", "127.0.0.1:0")
	base = "http://" + base
	target := loggedAddr(t, stderr, "serving metrics")
	p := startPrometheus(t, bin, shortenedRules(t), target)
	waitWithin(t, "Prometheus to scrape the node", promDeadline, func() bool {
		return len(p.query(t, `up{job="rappel"} == 1`)) == 1
	})

	if !t.Run("QuietNodeNoBurn", func(t *testing.T) { testQuietNoBurn(t, p, base) }) {
		return
	}
	if !t.Run("OverloadFastBurn", func(t *testing.T) { testOverloadBurn(t, p, base) }) {
		return
	}
	t.Run("DeadNode", func(t *testing.T) {
		if err := node.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		exitStatus(t, node, stderr)
		waitWithin(t, "up to go 0", promDeadline, func() bool { return len(p.query(t, `up{job="rappel"} == 0`)) == 1 })
		down := p.waitFiring(t, "RappelNodeDown")
		if down["instance"] != target || down["severity"] != "page" {
			t.Errorf("RappelNodeDown fired with labels %v, want instance %s and severity page", down, target)
		}
		// Its target still configured, the job is not absent: nothing
		// for RappelNodesAbsent to say, pending or firing.
		if got := p.query(t, `absent(up{job="rappel"})`); len(got) != 0 {
			t.Errorf("absent(up{job=\"rappel\"}) = %v with the target configured", got)
		}
		if a, ok := p.active(t)["RappelNodesAbsent"]; ok {
			t.Errorf("RappelNodesAbsent is %s while the node's target is configured and down", a.State)
		}
	})
	p.rulesHealthy(t)
}

// testQuietNoBurn sends bursts of costly searches to an idle node until
// Prometheus's bad ratios are over the fast burn's threshold (some of a
// burst are shed), at most 64 requests, then waits twice the shortened
// `for:` of evaluations: neither burn may be pending or firing, since the
// hour holds fewer than 100 requests.
func testQuietNoBurn(t *testing.T, p *promAPI, base string) {
	const burst, most = 16, 64
	over := `rappel:http_slow_ratio:rate5m > 14.4 * 0.01 and rappel:http_slow_ratio:rate1h > 14.4 * 0.01`
	sent := 0
	for len(p.query(t, over)) == 0 {
		if sent+burst > most {
			t.Fatalf("%d costly searches on an idle node (their statuses above) left the bad ratios under the fast burn's threshold: 5m %v, 1h %v",
				sent, p.query(t, "rappel:http_slow_ratio:rate5m"), p.query(t, "rappel:http_slow_ratio:rate1h"))
		}
		codes := sendCostly(base, burst, nil)
		t.Logf("burst of %d costly searches: %v", burst, codes)
		sent += burst
		// Scraped, then evaluated by the recording rules.
		waitWithin(t, "Prometheus to scrape the burst", promDeadline, func() bool {
			s := p.query(t, `sum(rappel_http_request_duration_seconds_count{job="rappel", route="/recall"})`)
			return len(s) == 1 && s[0].Value >= float64(sent)
		})
		p.evaluatedAfter(t, time.Now())
	}
	if got := p.query(t, `rappel:http_sli_requests:increase1h < 100`); len(got) != 1 {
		t.Fatalf("after %d requests, rappel:http_sli_requests:increase1h < 100 = %v, want the job's one series", sent, got)
	}
	p.evaluatedAfter(t, time.Now().Add(2*shortFor))
	for _, name := range []string{"RappelLatencyBudgetFastBurn", "RappelLatencyBudgetSlowBurn"} {
		if a, ok := p.active(t)[name]; ok {
			t.Errorf("%s is %s after %d requests on an idle node (ratio 5m %v)", name, a.State, sent, p.query(t, "rappel:http_slow_ratio:rate5m"))
		}
	}
	if len(p.query(t, over)) == 0 {
		t.Fatalf("the bad ratios fell under the threshold meanwhile, so the check above proved nothing: %v", p.query(t, "rappel:http_slow_ratio:rate5m"))
	}
}

// testOverloadBurn floods the node from 16 clients, a fraction of the
// queue's 64, so that the waits expire rather than the queue filling,
// until RappelLatencyBudgetFastBurn fires.
func testOverloadBurn(t *testing.T, p *promAPI, base string) {
	stop := make(chan struct{})
	var codes map[int]int
	done := make(chan struct{})
	go func() { defer close(done); codes = sendCostly(base, 16, stop) }()
	burn := p.waitFiring(t, "RappelLatencyBudgetFastBurn")
	close(stop)
	<-done
	t.Logf("answers to the flood: %v; RappelLatencyBudgetFastBurn fired with %v", codes, burn)
	if burn["job"] != "rappel" || burn["severity"] != "page" {
		t.Errorf("RappelLatencyBudgetFastBurn fired with labels %v, want job rappel and severity page", burn)
	}
	if codes[http.StatusServiceUnavailable] == 0 {
		t.Errorf("the flood got no 503: %v", codes)
	}
	if got := p.query(t, `rappel_expensive_searches_total{job="rappel", outcome="wait_expired"} > 0`); len(got) != 1 {
		t.Errorf("Prometheus saw no search shed by an expired wait: %v", got)
	}
}

// sendCostly sends the costly search from n clients at once, once each when
// stop is nil and until stop closes otherwise, and returns the count of
// answers by status (0 for a failed request).
func sendCostly(base string, n int, stop <-chan struct{}) map[int]int {
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				code := 0
				req, _ := http.NewRequest(http.MethodGet, base+costlySearch, nil)
				req.Header.Set("x-gateway-key", "test-key")
				if res, err := client.Do(req); err == nil {
					res.Body.Close()
					code = res.StatusCode
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
				select {
				case <-stop:
					return
				default:
					if stop == nil {
						return
					}
				}
			}
		})
	}
	wg.Wait()
	return codes
}

// loggedAddr returns the addr of the node's JSON log line msg.
func loggedAddr(t *testing.T, stderr *logtest.Buffer, msg string) string {
	t.Helper()
	if addr, ok := logAddr(stderr.String(), msg); ok {
		return addr
	}
	t.Fatalf("no %q line in the node's log:\n%s", msg, stderr.String())
	return ""
}

// prometheusBinary returns the path of Debian's prometheus. Without one
// the test is skipped, except under CI (RAPPEL_CI, set by .ci/run, which
// installs it), where it fails.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	if os.Getenv("RAPPEL_CI") != "" {
		t.Fatal("prometheus is not installed, and CI must run the alert rules in it: apt-get install -y prometheus")
	}
	t.Skip("prometheus is not installed (apt-get install -y --no-install-recommends prometheus); skipping the alert rules' run in a real Prometheus")
	return ""
}

// forLine is an alerting rule's `for:` line in deploy's rules file.
var forLine = regexp.MustCompile(`(?m)^(\s+for:\s*)\S+[ \t]*$`)

// shortenedRules writes deploy's rules file with every `for:` set to
// shortFor and nothing else changed, and returns its path. It rewrites
// the `for:` lines themselves rather than parsing the YAML, so that the
// file Prometheus loads is the deployed text but for those values; their
// count must be the alerts'.
func shortenedRules(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(plugintest.ModuleRoot(t), "deploy/prometheus/rappel-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	alertCount := len(regexp.MustCompile(`(?m)^\s+- alert: `).FindAllString(text, -1))
	if n := len(forLine.FindAllString(text, -1)); n != alertCount || n == 0 {
		t.Fatalf("the rules file has %d `for:` lines and %d alerts; the rewrite expects one each", n, alertCount)
	}
	out := filepath.Join(t.TempDir(), "rappel-rules.yml")
	text = forLine.ReplaceAllString(text, "${1}"+shortFor.String())
	if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// promAPI is a Prometheus process's HTTP API.
type promAPI struct{ base string }

// startPrometheus runs prometheus on a free loopback port with its
// storage in a temp dir, scraping target as job rappel and evaluating
// rules every second, and returns its API once it is ready.
func startPrometheus(t *testing.T, bin, rules, target string) *promAPI {
	t.Helper()
	dir := t.TempDir()
	// JSON is YAML: no quoting of the temp paths to get wrong.
	cfg, _ := json.Marshal(map[string]any{
		"global":     map[string]string{"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
		"rule_files": []string{rules},
		"scrape_configs": []any{map[string]any{
			"job_name":       "rappel",
			"static_configs": []any{map[string]any{"targets": []string{target}}},
		}},
	})
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	out := &logtest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() && out.String() != "" {
			t.Logf("prometheus's log:\n%s", out.String())
		}
	})
	p := &promAPI{base: "http://" + addr}
	waitWithin(t, "Prometheus to be ready", promDeadline, func() bool {
		select {
		case <-exited:
			t.Fatalf("prometheus exited before it was ready:\n%s", out.String())
		default:
		}
		res, err := http.Get(p.base + "/-/ready")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	return p
}

// get decodes the data of an API answer into v.
func (p *promAPI) get(t *testing.T, path string, v any) {
	t.Helper()
	res, err := http.Get(p.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Status, Error string
		Data          json.RawMessage
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("GET %s: %d %s %s %v", path, res.StatusCode, body.Status, body.Error, err)
	}
	if err := json.Unmarshal(body.Data, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// promSample is one series of an instant vector.
type promSample struct {
	Labels map[string]string
	Value  float64
}

// query evaluates expr at Prometheus's now.
func (p *promAPI) query(t *testing.T, expr string) []promSample {
	t.Helper()
	var data struct {
		ResultType string
		Result     []struct {
			Metric map[string]string
			Value  [2]any
		}
	}
	p.get(t, "/api/v1/query?"+url.Values{"query": {expr}}.Encode(), &data)
	var out []promSample
	for _, r := range data.Result {
		v, err := strconv.ParseFloat(fmt.Sprint(r.Value[1]), 64)
		if err != nil {
			t.Fatalf("%s: value %v", expr, r.Value)
		}
		out = append(out, promSample{r.Metric, v})
	}
	return out
}

// promAlert is an alert Prometheus holds pending or firing.
type promAlert struct {
	Labels map[string]string
	State  string
	Value  string
}

// active returns the pending and firing alerts by name (one of each name
// here: the rules group by job or instance, and there is one node).
func (p *promAPI) active(t *testing.T) map[string]promAlert {
	t.Helper()
	var data struct{ Alerts []promAlert }
	p.get(t, "/api/v1/alerts", &data)
	out := map[string]promAlert{}
	for _, a := range data.Alerts {
		out[a.Labels["alertname"]] = a
	}
	return out
}

// waitFiring waits until the alert name fires and returns its labels.
func (p *promAPI) waitFiring(t *testing.T, name string) map[string]string {
	t.Helper()
	var labels map[string]string
	waitWithin(t, name+" to fire", promDeadline, func() bool {
		a, ok := p.active(t)[name]
		labels = a.Labels
		return ok && a.State == "firing"
	})
	return labels
}

// promRule is a rule as GET /api/v1/rules reports it.
type promRule struct {
	Name, Health, LastError string
}

// groups returns the rule groups' last evaluations and rules.
func (p *promAPI) groups(t *testing.T) (last []time.Time, rules []promRule) {
	t.Helper()
	var data struct {
		Groups []struct {
			LastEvaluation time.Time
			Rules          []promRule
		}
	}
	p.get(t, "/api/v1/rules", &data)
	for _, g := range data.Groups {
		last = append(last, g.LastEvaluation)
		rules = append(rules, g.Rules...)
	}
	return last, rules
}

// evaluatedAfter waits until every rule group has been evaluated after
// when.
func (p *promAPI) evaluatedAfter(t *testing.T, when time.Time) {
	t.Helper()
	waitWithin(t, "the rules to be evaluated", promDeadline, func() bool {
		last, _ := p.groups(t)
		for _, l := range last {
			if !l.After(when) {
				return false
			}
		}
		return len(last) > 0
	})
}

// rulesHealthy fails on a rule whose last evaluation failed, such as one
// whose expression made series with the same labels.
func (p *promAPI) rulesHealthy(t *testing.T) {
	t.Helper()
	_, rules := p.groups(t)
	for _, r := range rules {
		if r.Health != "ok" || r.LastError != "" {
			t.Errorf("rule %s: health %s, %s", r.Name, r.Health, r.LastError)
		}
	}
}
