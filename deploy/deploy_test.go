package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const (
	dashboardFile = "grafana/rappel-dashboard.json"
	rulesFile     = "prometheus/rappel-rules.yml"
	rulesTestFile = "prometheus/rappel-rules.test.yml"
	alertmanager  = "alertmanager/rappel-alertmanager.yml"
	operations    = "../docs/operations.md"
)

// promtool returns the path of Prometheus's promtool. Without one the test
// is skipped, except under CI (RAPPEL_CI, set by .ci/run, which installs
// it), where it fails.
func promtool(tb testing.TB) string {
	tb.Helper()
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	if os.Getenv("RAPPEL_CI") != "" {
		tb.Fatal("promtool is not installed, and CI must check the alert rules: apt-get install -y prometheus")
	}
	tb.Skip("promtool is not installed (apt-get install -y --no-install-recommends prometheus); skipping the checks of the alert rules")
	return ""
}

func runPromtool(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(promtool(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
}

// TestRules_Check: the rules parse, and their PromQL is valid.
func TestRules_Check(t *testing.T) { runPromtool(t, "check", "rules", rulesFile) }

// TestRules_Test runs the rules' unit tests on their synthetic series.
func TestRules_Test(t *testing.T) {
	runPromtool(t, "test", "rules", rulesTestFile)
}

func read(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// alert is one alerting rule's name and the text of its block.
type alert struct{ name, block string }

var alertLine = regexp.MustCompile(`(?m)^\s*- alert: (\w+)\s*$`)

// alerts splits the rules file into its alerting rules.
func alerts(tb testing.TB) []alert {
	tb.Helper()
	text := read(tb, rulesFile)
	locs := alertLine.FindAllStringSubmatchIndex(text, -1)
	if len(locs) == 0 {
		tb.Fatalf("no alerts in %s", rulesFile)
	}
	var out []alert
	for i, l := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		out = append(out, alert{text[l[2]:l[3]], text[l[0]:end]})
	}
	return out
}

// TestRules_EveryAlertTested: the unit tests evaluate every alert at a
// time when it fires and at one when it does not; promtool itself runs
// only the cases it is given.
func TestRules_EveryAlertTested(t *testing.T) {
	cases := regexp.MustCompile(`(?m)^\s*alertname: (\w+)\s*\n\s*exp_alerts:(.*)$`).
		FindAllStringSubmatch(read(t, rulesTestFile), -1)
	for _, a := range alerts(t) {
		fires, quiet := false, false
		for _, c := range cases {
			if c[1] == a.name {
				quiet = quiet || strings.TrimSpace(c[2]) == "[]"
				fires = fires || strings.TrimSpace(c[2]) == ""
			}
		}
		if !fires || !quiet {
			t.Errorf("%s: a firing case %v, a quiet case %v in %s; give it both", a.name, fires, quiet, rulesTestFile)
		}
	}
}

// runbookBase is where every alert's runbook_url points: the operations
// guide as the forge renders it, so that the link in a page opens the
// alert's own section.
const runbookBase = "https://github.com/rappel-ca/rappel/blob/main/docs/operations.md#"

// TestRules_Runbooks: every alert says what happened and has a clickable
// runbook_url to a section of the operations guide of its own, headed by
// the alert's name, that says what to look at first.
func TestRules_Runbooks(t *testing.T) {
	doc := read(t, operations)
	runbook := regexp.MustCompile(`runbook_url: "([^"]*)"`)
	seen := map[string]string{}
	for _, a := range alerts(t) {
		for _, ann := range []string{"summary:", "description:"} {
			if !strings.Contains(a.block, ann) {
				t.Errorf("%s has no %s annotation", a.name, strings.TrimSuffix(ann, ":"))
			}
		}
		m := runbook.FindStringSubmatch(a.block)
		if m == nil {
			t.Errorf("%s has no runbook_url annotation", a.name)
			continue
		}
		anchor, ok := strings.CutPrefix(m[1], runbookBase)
		if !ok || anchor != strings.ToLower(a.name) {
			t.Errorf("%s: runbook_url %q, want %s%s, its own section", a.name, m[1], runbookBase, strings.ToLower(a.name))
			continue
		}
		if other, dup := seen[anchor]; dup {
			t.Errorf("%s and %s share the runbook section #%s", other, a.name, anchor)
		}
		seen[anchor] = a.name
		section := sectionOf(doc, anchor)
		if section == "" {
			t.Errorf("%s: docs/operations.md has no section headed ### %s", a.name, a.name)
		} else if !strings.Contains(section, "Look first at ") || !strings.Contains(section, "**Pages") && !strings.Contains(section, "**Opens a ticket") {
			t.Errorf("%s: the section #%s of docs/operations.md does not say whether it pages and what to look at first", a.name, anchor)
		}
	}
}

// sectionOf returns the text of the Markdown section whose heading has the
// anchor GitHub gives it, up to the next heading of any level.
func sectionOf(doc, anchor string) string {
	lines := strings.Split(doc, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "#") || headingAnchor(l) != anchor {
			continue
		}
		var out []string
		for _, next := range lines[i+1:] {
			if strings.HasPrefix(next, "#") {
				break
			}
			out = append(out, next)
		}
		return strings.Join(out, "\n")
	}
	return ""
}

// headingAnchor is GitHub's anchor for a heading line: lower case, spaces
// to hyphens, punctuation other than hyphens and underscores dropped.
func headingAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(strings.TrimLeft(heading, "#"))) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// dashboard is the part of Grafana's dashboard model the tests read.
type dashboard struct {
	Panels []struct {
		ID      int    `json:"id"`
		Type    string `json:"type"`
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// grafanaVars stand for the dashboard's variables, so that promtool can
// parse its queries as Prometheus will get them.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__range", "6h", "$job", ".*", "$instance", ".*")

// TestDashboard_Queries: the dashboard is a JSON model whose panels have
// distinct ids and whose every query is valid PromQL, checked by promtool
// as the expressions of recording rules.
func TestDashboard_Queries(t *testing.T) {
	var d dashboard
	if err := json.Unmarshal([]byte(read(t, dashboardFile)), &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	ids := map[int]bool{}
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d is taken", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for i, tg := range p.Targets {
			q, _ := json.Marshal(grafanaVars.Replace(tg.Expr)) // a JSON string is a YAML string
			fmt.Fprintf(&rules, "      - record: panel_%d_%d\n        expr: %s\n", p.ID, i, q)
		}
	}
	path := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(path, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, "check", "rules", path)
}

// TestAlertmanager_Config: the shipped Alertmanager configuration is one
// amtool accepts, and every alert its inhibit rules name is one of the
// rules': a renamed alert would silently stop being held back, or stop
// holding others.
func TestAlertmanager_Config(t *testing.T) {
	amtool, err := exec.LookPath("amtool")
	if err != nil {
		if os.Getenv("RAPPEL_CI") != "" {
			t.Fatal("amtool is not installed, and CI must check the Alertmanager configuration: apt-get install -y prometheus-alertmanager")
		}
		t.Skip("amtool is not installed (apt-get install -y --no-install-recommends prometheus-alertmanager); skipping the check of the Alertmanager configuration")
	}
	if out, err := exec.Command(amtool, "check-config", alertmanager).CombinedOutput(); err != nil {
		t.Fatalf("amtool check-config %s: %v\n%s", alertmanager, err, out)
	}
	known := map[string]bool{}
	for _, a := range alerts(t) {
		known[a.name] = true
	}
	names := regexp.MustCompile(`Rappel[A-Za-z]+`).FindAllString(read(t, alertmanager), -1)
	if len(names) == 0 {
		t.Fatal("the Alertmanager configuration names no alert")
	}
	for _, n := range names {
		if !known[n] {
			t.Errorf("%s names %s, which is no alert of %s", alertmanager, n, rulesFile)
		}
	}
}
