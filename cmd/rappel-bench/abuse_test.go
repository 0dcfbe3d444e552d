package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseIssuedKey(t *testing.T) {
	key := "rk_" + strings.Repeat("A", 43)
	out := key + "\nid 0123456789ab, plan free, label \"abuse bench, attackers\". The key is shown only this once: only its SHA-256 is kept.\n"
	got, err := parseIssuedKey(out)
	if err != nil || got != key {
		t.Errorf("parseIssuedKey = %q, %v; want %q", got, err, key)
	}
	for _, bad := range []string{"", "adding key: no space left\n", "id 0123, plan free\n" + key + "\n"} {
		if got, err := parseIssuedKey(bad); err == nil {
			t.Errorf("parseIssuedKey(%q) = %q, want an error", bad, got)
		}
	}
}

// limitedServer answers like rappel with one issued key: cheap requests
// with the development key, the expensive searches with attackKey only,
// refusing most of them with 429 (every other one after the estimate,
// with the search's cost, like rappel's charge) and answering one in
// three with 200.
type limitedServer struct {
	attackKey string
	searches  atomic.Int64
	mu        sync.Mutex
	wrongKey  []string // requests that came with the wrong key
}

func (s *limitedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("X-Gateway-Key")
	h := w.Header()
	switch {
	case r.URL.Path == "/health":
		w.Write([]byte(`{"status":"ok"}`))
	case r.URL.Path == "/recall" && r.URL.Query().Get("q") != "":
		if key != s.attackKey {
			s.refuse(w, r)
			return
		}
		n := s.searches.Add(1)
		cost := "24"
		if strings.Contains(r.URL.Query().Get("q"), `"`) {
			cost = "40"
		}
		h.Set("RateLimit-Policy", `"burst";q=20;w=0, "monthly";q=100000;w=2592000`)
		switch n % 3 {
		case 0:
			h.Set("Search-Cost", cost)
			h.Set("RateLimit", `"burst";r=0;t=1, "monthly";r=99980;t=100`)
			w.Write([]byte(`{"results":[]}`))
		case 1:
			h.Set("Search-Cost", cost)
			h.Set("RateLimit", `"burst";r=0;t=1, "monthly";r=99980;t=100`)
			http.Error(w, `{"code":"rate_limited"}`, http.StatusTooManyRequests)
		default:
			h.Set("RateLimit", `"burst";r=0;t=1, "monthly";r=99980;t=100`)
			http.Error(w, `{"code":"rate_limited"}`, http.StatusTooManyRequests)
		}
	case strings.HasPrefix(r.URL.Path, "/recall/"):
		if key != benchKey {
			s.refuse(w, r)
			return
		}
		w.Write([]byte(`{"record_id":"hc-1"}`))
	default:
		http.NotFound(w, r)
	}
}

func (s *limitedServer) refuse(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.wrongKey = append(s.wrongKey, r.URL.RequestURI())
	s.mu.Unlock()
	http.Error(w, "wrong key", http.StatusUnauthorized)
}

// TestAbusePhase_IssuedKey runs a phase with attackers on an issued key:
// they send the expensive searches with it while the cheap requests keep
// the development key, and the phase counts the 429s, those refused for
// the search's cost, the costs and the RateLimit headers.
func TestAbusePhase_IssuedKey(t *testing.T) {
	s := &limitedServer{attackKey: "rk_attack"}
	srv := httptest.NewServer(s)
	defer srv.Close()
	ph, err := abusePhase(context.Background(), os.Getpid(), srv.URL, "hc-1", s.attackKey, 4, 2, 20, 300*time.Millisecond, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.wrongKey) > 0 {
		t.Errorf("requests sent with the wrong key: %q", s.wrongKey[:min(5, len(s.wrongKey))])
	}
	if ph.RecordErrors != 0 || ph.RecordRPS <= 0 || ph.HealthP50 <= 0 {
		t.Errorf("cheap requests: %.0f req/s, %d errors, /health p50 %s; want answers and no error", ph.RecordRPS, ph.RecordErrors, ph.HealthP50)
	}
	n429, n200 := ph.Statuses[http.StatusTooManyRequests], ph.Statuses[http.StatusOK]
	if n429 == 0 || n200 == 0 || ph.Sent != n429+n200 {
		t.Fatalf("statuses %v, %d sent; want 200s and 429s only", ph.Statuses, ph.Sent)
	}
	// One 429 in two carried the cost; the server's count decides how the
	// last searches fell, so allow one either way per attacker.
	if ph.CostRefused < n429/2-4 || ph.CostRefused > n429/2+4 {
		t.Errorf("%d of %d 429s counted as refused for their cost, want about half", ph.CostRefused, n429)
	}
	if ph.Costs["32 words ORed"] != "24" || ph.Costs["16 phrases ORed"] != "40" {
		t.Errorf("costs %v, want 24 for the words and 40 for the phrases", ph.Costs)
	}
	if !strings.HasPrefix(ph.RateLimit[http.StatusTooManyRequests], `"burst";r=0`) || ph.RateLimit[http.StatusOK] == "" {
		t.Errorf("RateLimit headers %v, want the first of a 200 and of a 429", ph.RateLimit)
	}
	// The "server" is this process: it was busy serving and attacking.
	if ph.ServerCores <= 0 || ph.HarnessCores <= 0 || ph.OtherCores < 0 {
		t.Errorf("cores busy: server %.2f, harness %.2f, rest %.2f; want the first two positive", ph.ServerCores, ph.HarnessCores, ph.OtherCores)
	}
}

// TestProbeCosts sends the cost probe to the same server: each search's
// status, cost and RateLimit in order, the cheap one first.
func TestProbeCosts(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Query().Get("q"))
		mu.Unlock()
		if r.Header.Get("X-Gateway-Key") != "rk_probe" {
			http.Error(w, "wrong key", http.StatusUnauthorized)
			return
		}
		h := w.Header()
		h.Set("RateLimit-Policy", `"burst";q=20;w=0`)
		if q := r.URL.Query().Get("q"); q == "shellfish" {
			h.Set("Search-Cost", "1")
			h.Set("RateLimit", `"burst";r=19;t=1`)
		} else {
			h.Set("Search-Cost", "33")
			h.Set("RateLimit", `"burst";r=0;t=1`)
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	probes, err := probeCosts(context.Background(), srv.URL, "rk_probe")
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) != 1+len(abuseQueries) || len(got) != len(probes) {
		t.Fatalf("%d probes for %d searches sent, want %d", len(probes), len(got), 1+len(abuseQueries))
	}
	want := []CostProbe{
		{Label: "one rare word", Status: 200, Cost: "1", RateLimit: `"burst";r=19;t=1`, Policy: `"burst";q=20;w=0`},
		{Label: abuseLabels[0], Status: 200, Cost: "33", RateLimit: `"burst";r=0;t=1`, Policy: `"burst";q=20;w=0`},
		{Label: abuseLabels[1], Status: 200, Cost: "33", RateLimit: `"burst";r=0;t=1`, Policy: `"burst";q=20;w=0`},
	}
	for i := range want {
		if probes[i] != want[i] {
			t.Errorf("probe %d = %+v, want %+v", i, probes[i], want[i])
		}
	}
	if got[0] != "shellfish" || !strings.Contains(got[1], " OR ") {
		t.Errorf("searches sent %q, want the rare word first, then the ORed words", got)
	}
}

// TestWriteAbuse_Plan checks the rows and the probe table a phase on an
// issued key adds, and that a development key's report has neither.
func TestWriteAbuse_Plan(t *testing.T) {
	unloaded := AbusePhase{Name: "unloaded", Plan: "free", Statuses: map[int]int{}, Latency: map[int][3]time.Duration{}}
	loaded := AbusePhase{Name: "8 clients on one free key sending expensive searches", Plan: "free",
		Statuses: map[int]int{200: 3, 429: 900}, Latency: map[int][3]time.Duration{200: {time.Millisecond, time.Millisecond, time.Millisecond}, 429: {1, 2, 3}},
		Sent: 903, CostRefused: 40, Costs: map[string]string{"32 words ORed": "37", "16 phrases ORed": "25"},
		RateLimit: map[int]string{429: `"burst";r=0;t=1`},
		Probes:    []CostProbe{{Label: "one rare word", Status: 200, Cost: "1", RateLimit: `"burst";r=19;t=1`, Policy: `"burst";q=20;w=4`}}}
	var b strings.Builder
	writeAbuse(&b, []AbusePhase{unloaded, loaded}, 2*time.Second)
	reportHas(t, b.String(), []string{
		"| … 429: count, p50 / p99 / max | – | 900: ",
		"| … 429s refused for the search's cost (Search-Cost set) | – | 40 |",
		"| Search-Cost answered (32 words ORed / 16 phrases ORed) | – / – | `37` / `25` |",
		"| first RateLimit of a 429 | – | `\"burst\";r=0;t=1` |",
		"| one rare word | 200 | `1` | `\"burst\";r=19;t=1` |",
		"RateLimit-Policy: `\"burst\";q=20;w=4`",
	})
	b.Reset()
	unloaded.Plan, loaded.Plan = "dev", "dev"
	writeAbuse(&b, []AbusePhase{unloaded, loaded}, 2*time.Second)
	if strings.Contains(b.String(), "Search-Cost") || strings.Contains(b.String(), "probe") {
		t.Errorf("a development key's report has the plan's rows:\n%s", b.String())
	}
}

// reportHas fails t for each of wants that out lacks.
func reportHas(t *testing.T, out string, wants []string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
