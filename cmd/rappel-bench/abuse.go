package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The abuse mode: what expensive searches sent by many clients at once do
// to everyone else. It starts `rappel serve` on the embedded bundle, with
// GOMAXPROCS=2 and no pinning (a node as deployed), and measures, first
// unloaded, then while Attackers clients each send the expensive searches
// back to back on their own connection:
//
//   - GET /recall/{record_id}: a few closed-loop clients, its latency
//     percentiles and throughput;
//   - GET /health: an open-loop client at a constant rate, its latency;
//   - the expensive searches: their statuses, and the latency of each
//     status (a 504 must land within the budget plus 10%);
//   - the server's resident set before, at its peak during the load, and
//     after.
//
//	rappel-bench abuse [-attackers 64] [-duration 20s] [-budget 2s] [-repo DIR] [-work DIR]

// abuseQueries are the expensive searches: the most common words of the
// records ORed, as many as q allows, and 16 common phrases ORed, both by
// relevance, one result.
var abuseQueries = []string{
	"/recall?" + url.Values{"q": {strings.Join(strings.Fields("the and of to in for is on with by from at as be this that may not are product products recall recalled food contain contains due risk health canada distributed sold"), " OR ")}, "sort_by": {"relevance"}, "limit": {"1"}}.Encode(),
	"/recall?" + url.Values{"q": {`"of the" OR "in the" OR "to the" OR "may contain" OR "for the" OR "on the" OR "due to" OR "has been" OR "with the" OR "from the" OR "at the" OR "by the" OR "is being" OR "may be" OR "of a" OR "in a"`}, "sort_by": {"relevance"}, "limit": {"1"}}.Encode(),
}

// AbusePhase is what one phase measured.
type AbusePhase struct {
	Name         string
	RecordRPS    float64
	RecordP50    time.Duration
	RecordP99    time.Duration
	RecordErrors int
	HealthP50    time.Duration
	HealthP99    time.Duration
	// Statuses counts the expensive searches by status; Latency has the
	// p50, p99 and max of each status.
	Statuses map[int]int
	Latency  map[int][3]time.Duration
	// Late is the number of 504s later than the budget plus 10%.
	Late    int
	Sent    int
	RSSKB   int64 // before the phase
	PeakKB  int64 // the largest resident set sampled during it
	AfterKB int64
}

// runAbuse is the abuse subcommand.
func runAbuse(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rappel-bench abuse", flag.ContinueOnError)
	fs.SetOutput(stderr)
	attackers := fs.Int("attackers", 64, "`clients` sending the expensive searches")
	dur := fs.Duration("duration", 20*time.Second, "`time` of each phase")
	recordClients := fs.Int("record-clients", 4, "closed-loop `clients` of GET /recall/{record_id}")
	healthRate := fs.Float64("health-rate", 20, "GET /health `rate` (requests/s)")
	budget := fs.Duration("budget", 2*time.Second, "rappel's query `budget` (a smaller one than the default makes 504s to time)")
	h := NewHarness()
	h.Stdout, h.Stderr = stdout, stderr
	fs.StringVar(&h.Repo, "repo", "", "`directory` of the rappel module (default: found above the working directory)")
	fs.StringVar(&h.WorkDir, "work", "", "`directory` for the binary, data dir and logs (default build/bench-abuse in -repo)")
	out := fs.String("json", "", "`file` to write the figures to as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if h.Repo == "" {
		repo, err := findRepo(".")
		if err != nil {
			return err
		}
		h.Repo = repo
	}
	if h.WorkDir == "" {
		h.WorkDir = filepath.Join(h.Repo, "build", "bench-abuse")
	}
	h.ServerCPU = ""
	dataDir := filepath.Join(h.WorkDir, "rappel-data")
	if err := os.RemoveAll(dataDir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(h.WorkDir, "logs"), 0o755); err != nil {
		return err
	}
	bin, err := h.buildRappel(ctx)
	if err != nil {
		return err
	}
	h.logf("starting rappel serve (GOMAXPROCS=2, query budget %s)", *budget)
	p, _, err := h.startRappel(ctx, bin, dataDir, []string{"GOMAXPROCS=2", "RAPPEL_QUERY_BUDGET=" + budget.String()}, 5*time.Minute, nil)
	if err != nil {
		return err
	}
	defer p.Stop()
	base := "http://" + p.Addr
	id, err := firstRecordID(ctx, base)
	if err != nil {
		return err
	}
	var phases []AbusePhase
	for _, n := range []int{0, *attackers} {
		name := "unloaded"
		if n > 0 {
			name = fmt.Sprintf("%d clients sending expensive searches", n)
		}
		h.logf("phase: %s", name)
		ph, err := abusePhase(ctx, p.PID(), base, id, n, *recordClients, *healthRate, *dur, *budget)
		if err != nil {
			return err
		}
		ph.Name = name
		phases = append(phases, ph)
		time.Sleep(2 * time.Second) // the last searches end
	}
	writeAbuse(stdout, phases, *budget)
	if *out != "" {
		b, _ := json.MarshalIndent(phases, "", "  ")
		return os.WriteFile(*out, b, 0o644)
	}
	return nil
}

// firstRecordID returns the record_id of the first record of GET /recall.
func firstRecordID(ctx context.Context, base string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/recall?limit=1", nil)
	req.Header = keyHeader()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var page struct {
		Results []struct {
			RecordID string `json:"record_id"`
		} `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || len(page.Results) == 0 {
		return "", fmt.Errorf("reading the first record of GET /recall: %v", err)
	}
	return page.Results[0].RecordID, nil
}

// abusePhase measures one phase with attackers clients sending the
// expensive searches (none for the unloaded phase).
func abusePhase(ctx context.Context, pid int, base, id string, attackers, recordClients int, healthRate float64, dur, budget time.Duration) (AbusePhase, error) {
	ph := AbusePhase{Statuses: map[int]int{}, Latency: map[int][3]time.Duration{}, RSSKB: readMem(pid).RSSKB}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup

	// The attackers, each on its own connection, back to back.
	var mu sync.Mutex
	byStatus := map[int][]time.Duration{}
	for i := range attackers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
			for j := i; ctx.Err() == nil; j++ {
				code, took := timedGet(ctx, client, base+abuseQueries[j%len(abuseQueries)])
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				byStatus[code] = append(byStatus[code], took)
				mu.Unlock()
			}
		}()
	}
	// The resident set, sampled.
	var peak atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			if m := readMem(pid).RSSKB; m > peak.Load() {
				peak.Store(m)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	if attackers > 0 {
		time.Sleep(time.Second) // the attack is under way
	}

	// GET /recall/{record_id}, closed loop, and GET /health, open loop,
	// side by side.
	var recLat []time.Duration
	var recErrs atomic.Int64
	var rmu sync.Mutex
	measureEnd := time.Now().Add(dur)
	var mwg sync.WaitGroup
	for range recordClients {
		mwg.Add(1)
		go func() {
			defer mwg.Done()
			client := loadClient()
			var mine []time.Duration
			for time.Now().Before(measureEnd) && ctx.Err() == nil {
				code, took := timedGet(ctx, client, base+"/recall/"+url.PathEscape(id))
				if code != http.StatusOK {
					recErrs.Add(1)
				}
				mine = append(mine, took)
			}
			rmu.Lock()
			recLat = append(recLat, mine...)
			rmu.Unlock()
		}()
	}
	health, err := runConstantRate(ctx, loadClient(), base+"/health", nil, healthRate, dur)
	mwg.Wait()
	cancel()
	wg.Wait()
	if err != nil {
		return ph, err
	}
	slices.Sort(recLat)
	ph.RecordRPS = float64(len(recLat)) / dur.Seconds()
	ph.RecordP50, ph.RecordP99 = percentile(recLat, 0.5), percentile(recLat, 0.99)
	ph.RecordErrors = int(recErrs.Load())
	ph.HealthP50, ph.HealthP99 = health.P50, health.P99
	for code, lat := range byStatus {
		slices.Sort(lat)
		ph.Statuses[code] = len(lat)
		ph.Sent += len(lat)
		ph.Latency[code] = [3]time.Duration{percentile(lat, 0.5), percentile(lat, 0.99), lat[len(lat)-1]}
		if code == http.StatusGatewayTimeout {
			for _, d := range lat {
				if d > budget*11/10 {
					ph.Late++
				}
			}
		}
	}
	ph.PeakKB = max(peak.Load(), ph.RSSKB)
	ph.AfterKB = readMem(pid).RSSKB
	return ph, nil
}

// timedGet sends GET url with the bench key and returns the status (0 on
// a transport error) and the time to the end of the body.
func timedGet(ctx context.Context, client *http.Client, url string) (int, time.Duration) {
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header = keyHeader()
	resp, err := client.Do(req)
	if err != nil {
		return 0, time.Since(start)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// writeAbuse writes the phases side by side as Markdown.
func writeAbuse(w io.Writer, phases []AbusePhase, budget time.Duration) {
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + " ms"
	}
	fmt.Fprintf(w, "| | %s |\n|---|%s\n", strings.Join(phaseNames(phases), " | "), strings.Repeat("---|", len(phases)))
	row := func(label string, f func(AbusePhase) string) {
		cells := make([]string, len(phases))
		for i, p := range phases {
			cells[i] = f(p)
		}
		fmt.Fprintf(w, "| %s | %s |\n", label, strings.Join(cells, " | "))
	}
	row("GET /recall/{record_id} throughput", func(p AbusePhase) string { return strconv.FormatFloat(p.RecordRPS, 'f', 0, 64) + " req/s" })
	row("GET /recall/{record_id} p50", func(p AbusePhase) string { return ms(p.RecordP50) })
	row("GET /recall/{record_id} p99", func(p AbusePhase) string { return ms(p.RecordP99) })
	row("GET /recall/{record_id} errors", func(p AbusePhase) string { return strconv.Itoa(p.RecordErrors) })
	row("GET /health p50", func(p AbusePhase) string { return ms(p.HealthP50) })
	row("GET /health p99", func(p AbusePhase) string { return ms(p.HealthP99) })
	row("expensive searches answered", func(p AbusePhase) string { return strconv.Itoa(p.Sent) })
	for _, code := range []int{200, 503, 504, 429, 0} {
		row(fmt.Sprintf("… %s: count, p50 / p99 / max", statusName(code)), func(p AbusePhase) string {
			n := p.Statuses[code]
			if n == 0 {
				return "–"
			}
			l := p.Latency[code]
			return fmt.Sprintf("%d: %s / %s / %s", n, ms(l[0]), ms(l[1]), ms(l[2]))
		})
	}
	row("504s later than budget + 10% ("+ms(budget*11/10)+")", func(p AbusePhase) string { return strconv.Itoa(p.Late) })
	row("resident set before / peak / after", func(p AbusePhase) string {
		return fmt.Sprintf("%d / %d / %d MiB", p.RSSKB>>10, p.PeakKB>>10, p.AfterKB>>10)
	})
}

func phaseNames(phases []AbusePhase) []string {
	var out []string
	for _, p := range phases {
		out = append(out, p.Name)
	}
	return out
}

func statusName(code int) string {
	if code == 0 {
		return "transport error"
	}
	return strconv.Itoa(code)
}
