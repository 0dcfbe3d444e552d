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
	"os/exec"
	"path/filepath"
	"regexp"
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
// The attackers use a development key (no rate limit) by default. With
// -plan free (or pro) they share one key of that plan instead, issued by
// `rappel keys add` in the data dir before the start, as an abuser with a
// real key would (8 of them unless -attackers says otherwise); the cheap
// requests keep the development key. Between the phases a second key of
// the plan, its bucket full, sends a cheap search and each expensive one,
// waiting for the bucket to refill in between, to show what each costs
// (Search-Cost) and what is left of the bucket after it (RateLimit).
//
// With -exports N it measures exports instead (exports.go): N clients
// export the whole dataset at once, each reading at -export-rate bytes a
// second, from a node started with N export slots, and the report says
// how many ended whole.
//
//	rappel-bench abuse [-attackers 64] [-duration 20s] [-budget 2s] [-plan dev|free|pro] [-set classic|expansion|prefixes] [-repo DIR] [-work DIR]
//	rappel-bench abuse -exports 20 [-export-rate 1048576] [-export-format ndjson|csv]

// abuseQueries are the expensive searches: the most common words of the
// records ORed, as many as q allows, and 16 common phrases ORed, both by
// relevance, one result.
var abuseQueries = []string{
	"/recall?" + url.Values{"q": {strings.Join(strings.Fields("the and of to in for is on with by from at as be this that may not are product products recall recalled food contain contains due risk health canada distributed sold"), " OR ")}, "sort_by": {"relevance"}, "limit": {"1"}}.Encode(),
	"/recall?" + url.Values{"q": {`"of the" OR "in the" OR "to the" OR "may contain" OR "for the" OR "on the" OR "due to" OR "has been" OR "with the" OR "from the" OR "at the" OR "by the" OR "is being" OR "may be" OR "of a" OR "in a"`}, "sort_by": {"relevance"}, "limit": {"1"}}.Encode(),
}

// abuseLabels name abuseQueries in the report, in the same order.
var abuseLabels = []string{"32 words ORed", "16 phrases ORed"}

// abuseKeyless marks the abuseQueries sent without a key; nil for none.
var abuseKeyless []bool

// The expansion set (-set expansion): searches whose words the index
// expands (typos, splits, prefixes), by keyed clients (GET /recall, its
// suggestions) and keyless ones (the Atom feed): one word as long as q
// allows, thirty misspelled long words, and long words on the Atom feed.
var (
	misspelled30 = strings.TrimSpace(strings.Repeat("xqzlisteriaxq ", 30))
	expansionSet = []abuseSearch{
		{"512 × x", "/recall?" + url.Values{"q": {strings.Repeat("x", 512)}}.Encode(), false},
		{"30 misspelled words", "/recall?" + url.Values{"q": {misspelled30}}.Encode(), false},
		{"30 misspelled words, prefix=last", "/recall?" + url.Values{"q": {misspelled30}, "prefix": {"last"}}.Encode(), false},
		{"suggest, 30 misspelled words", "/recall/suggest?" + url.Values{"q": {misspelled30}}.Encode(), false},
		{"Atom, 100-letter word", "/recall/feed.atom?" + url.Values{"q": {strings.Repeat("xq", 50)}}.Encode(), true},
		{"Atom, 200 × x", "/recall/feed.atom?" + url.Values{"q": {strings.Repeat("x", 200)}}.Encode(), true},
		{"Atom, 30 misspelled words", "/recall/feed.atom?" + url.Values{"q": {misspelled30}}.Encode(), true},
	}
)

// The prefix set (-set prefixes): two-letter prefixes ORed by relevance,
// eight and sixteen of them, ten results: each completes to up to 64
// terms a stream, and every record is scored for all of them.
var (
	prefixes8   = "re* OR co* OR pr* OR in* OR de* OR ca* OR pa* OR ma*"
	prefixesSet = []abuseSearch{
		{"8 prefixes ORed", "/recall?" + url.Values{"q": {prefixes8}, "sort_by": {"relevance"}, "limit": {"10"}}.Encode(), false},
		{"16 prefixes ORed", "/recall?" + url.Values{"q": {prefixes8 + " OR st* OR sa* OR be* OR fo* OR mi* OR al* OR ch* OR tr*"}, "sort_by": {"relevance"}, "limit": {"10"}}.Encode(), false},
	}
)

// abuseSearch is one of a set's searches: its label in the report, its
// path, and whether it is sent without a key.
type abuseSearch struct {
	label, path string
	keyless     bool
}

// useSet makes set the attackers' searches.
func useSet(set []abuseSearch) {
	abuseQueries, abuseLabels, abuseKeyless = nil, nil, nil
	for _, q := range set {
		abuseQueries = append(abuseQueries, q.path)
		abuseLabels = append(abuseLabels, q.label)
		abuseKeyless = append(abuseKeyless, q.keyless)
	}
}

// cheapQuery is the ordinary search the cost probe compares them with.
var cheapQuery = "/recall?" + url.Values{"q": {"shellfish"}, "limit": {"1"}}.Encode()

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

	// Plan is the plan of the attackers' key: "dev" for a development
	// key, which no limit applies to.
	Plan string
	// CostRefused counts the 429s that carried a Search-Cost: refused for
	// the search's cost once estimated, the bucket holding the request's
	// first unit but not the rest; the other 429s were refused at the
	// first unit, before the search was read.
	CostRefused int
	// Costs is the Search-Cost answered to each expensive search, by its
	// label (abuseLabels).
	Costs map[string]string
	// RateLimit is the first RateLimit header answered with each status.
	RateLimit map[int]string
	// Probes are what the cost probe before the phase saw.
	Probes []CostProbe
	// ServerCores, HarnessCores and OtherCores are the cores the server,
	// this harness (the attackers, the measuring clients) and everything
	// else on the machine kept busy on average while the cheap requests
	// were measured: all share the machine's cores.
	ServerCores, HarnessCores, OtherCores float64
}

// CostProbe is one search sent by a key whose bucket is full.
type CostProbe struct {
	Label     string
	Status    int
	Cost      string // Search-Cost
	RateLimit string // RateLimit after it
	Policy    string // RateLimit-Policy
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
	plan := fs.String("plan", "dev", "`plan` of the attackers' key: dev (a development key, no limit), or free or pro (one key of that plan issued by rappel keys add; 8 attackers unless -attackers is given)")
	h := NewHarness()
	h.Stdout, h.Stderr = stdout, stderr
	fs.StringVar(&h.Repo, "repo", "", "`directory` of the rappel module (default: found above the working directory)")
	fs.StringVar(&h.WorkDir, "work", "", "`directory` for the binary, data dir and logs (default build/bench-abuse in -repo)")
	out := fs.String("json", "", "`file` to write the figures to as JSON")
	set := fs.String("set", "classic", "`set` of expensive searches: classic (common words and phrases ORed), expansion (long and misspelled words, keyed and on the keyless Atom feed) or prefixes (8 and 16 two-letter prefixes ORed, by relevance)")
	exports := fs.Int("exports", 0, "measure this many `clients` exporting the dataset at once, slowly, instead of the expensive searches")
	exportRate := fs.Int64("export-rate", 1<<20, "`bytes` a second each exporting client reads at most")
	exportFormat := fs.String("export-format", "ndjson", "`format` of the exports: ndjson or csv")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *exports > 0 && *exportRate <= 0 {
		return fmt.Errorf("-export-rate is %d; give the bytes a second each client reads, such as 1048576", *exportRate)
	}
	switch *set {
	case "classic":
	case "expansion":
		useSet(expansionSet)
	case "prefixes":
		useSet(prefixesSet)
	default:
		return fmt.Errorf("-set %q: want classic, expansion or prefixes", *set)
	}
	if *plan != "dev" && !flagSet(fs, "attackers") {
		*attackers = 8
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
	bin, _, err := h.buildRappel(ctx)
	if err != nil {
		return err
	}
	var attackKey, probeKey string
	if *plan != "dev" {
		// Issued before the start, so that the server reads them when it
		// opens the data dir's keys.
		if attackKey, err = issueKey(ctx, bin, dataDir, *plan, "abuse bench, attackers"); err != nil {
			return err
		}
		if probeKey, err = issueKey(ctx, bin, dataDir, *plan, "abuse bench, cost probe"); err != nil {
			return err
		}
	}
	env := []string{"GOMAXPROCS=2", "RAPPEL_QUERY_BUDGET=" + budget.String()}
	if *exports > 0 {
		// As many slots as clients: the question is whether every
		// export to a slow client ends whole, not the bound.
		env = append(env, "RAPPEL_EXPORT_SLOTS="+strconv.Itoa(*exports))
	}
	h.logf("starting rappel serve (GOMAXPROCS=2, query budget %s)", *budget)
	p, _, err := h.startRappel(ctx, bin, dataDir, env, 5*time.Minute, nil)
	if err != nil {
		return err
	}
	defer p.Stop()
	base := "http://" + p.Addr
	if *exports > 0 {
		h.logf("%d exports (%s) at once, each read at %d bytes/s", *exports, *exportFormat, *exportRate)
		run := runExports(ctx, base, p.PID(), filepath.Join(h.WorkDir, "logs", "rappel.log"), *exports, *exportRate, *exportFormat)
		writeExports(stdout, run)
		if *out != "" {
			b, _ := json.MarshalIndent(run, "", "  ")
			return os.WriteFile(*out, b, 0o644)
		}
		return nil
	}
	id, err := firstRecordID(ctx, base)
	if err != nil {
		return err
	}
	h.logf("each expensive search alone")
	alone := measureAlone(ctx, p.PID(), base, attackKey)
	var phases []AbusePhase
	for _, n := range []int{0, *attackers} {
		name := "unloaded"
		if n > 0 {
			name = fmt.Sprintf("%d clients sending expensive searches", n)
			if *plan != "dev" {
				name = fmt.Sprintf("%d clients on one %s key sending expensive searches", n, *plan)
			}
		}
		var probes []CostProbe
		if n > 0 && probeKey != "" {
			h.logf("cost probe with a %s key", *plan)
			if probes, err = probeCosts(ctx, base, probeKey); err != nil {
				return err
			}
		}
		h.logf("phase: %s", name)
		ph, err := abusePhase(ctx, p.PID(), base, id, attackKey, n, *recordClients, *healthRate, *dur, *budget)
		if err != nil {
			return err
		}
		ph.Name, ph.Plan, ph.Probes = name, *plan, probes
		phases = append(phases, ph)
		time.Sleep(2 * time.Second) // the last searches end
	}
	writeAlone(stdout, alone, *budget)
	writeAbuse(stdout, phases, *budget)
	if *out != "" {
		b, _ := json.MarshalIndent(struct {
			Alone  []AloneRun
			Phases []AbusePhase
		}{alone, phases}, "", "  ")
		return os.WriteFile(*out, b, 0o644)
	}
	return nil
}

// AloneRun is one expensive search sent alone to the idle server: its
// status, latency, cost and the server's CPU time while it ran.
type AloneRun struct {
	Label   string
	Status  int
	Latency time.Duration
	CPU     time.Duration
	Cost    string
}

// measureAlone sends each expensive search once, alone, and measures it;
// the server's CPU time is read from its clock ticks (10 ms each).
func measureAlone(ctx context.Context, pid int, base, key string) []AloneRun {
	if key == "" {
		key = benchKey
	}
	client := loadClient()
	var out []AloneRun
	for i, q := range abuseQueries {
		k := key
		if abuseKeyless != nil && abuseKeyless[i] {
			k = ""
		}
		t0 := cpuTicks(pid)
		code, took, h := timedGet(ctx, client, base+q, k)
		time.Sleep(20 * time.Millisecond) // the last tick of the request is counted
		out = append(out, AloneRun{Label: abuseLabels[i], Status: code, Latency: took,
			CPU: time.Duration(cpuTicks(pid)-t0) * 10 * time.Millisecond, Cost: h.Get(headerSearchCost)})
	}
	return out
}

// writeAlone writes the searches sent alone as Markdown.
func writeAlone(w io.Writer, runs []AloneRun, budget time.Duration) {
	fmt.Fprintf(w, "Each expensive search alone (query budget %s):\n\n| search | status | latency | server CPU | Search-Cost |\n|---|---|---|---|---|\n", budget)
	for _, r := range runs {
		cost := r.Cost
		if cost == "" {
			cost = "–"
		}
		fmt.Fprintf(w, "| %s | %s | %.1f ms | %d ms | %s |\n", r.Label, statusName(r.Status), float64(r.Latency)/float64(time.Millisecond), r.CPU.Milliseconds(), cost)
	}
	fmt.Fprintln(w)
}

// flagSet reports whether the flag name was given on fs's command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// issueKey issues a key of plan in dataDir with `rappel keys add`, the
// way an operator does, and returns it.
func issueKey(ctx context.Context, bin, dataDir, plan, label string) (string, error) {
	var out, errOut strings.Builder
	cmd := exec.CommandContext(ctx, bin, "keys", "add", "--plan", plan, "--label", label, "--data-dir", dataDir)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("rappel keys add --plan %s: %w: %s", plan, err, strings.TrimSpace(errOut.String()))
	}
	return parseIssuedKey(out.String())
}

// parseIssuedKey returns the key that `rappel keys add` printed: its
// first line.
func parseIssuedKey(out string) (string, error) {
	line, _, _ := strings.Cut(out, "\n")
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "rk_") || strings.ContainsAny(line, " \t") {
		return "", fmt.Errorf("rappel keys add printed %q, not a key on its first line", out)
	}
	return line, nil
}

// burstPolicy matches the bucket in a RateLimit-Policy header.
var burstPolicy = regexp.MustCompile(`"burst";q=(\d+);w=(\d+)`)

// probeCosts sends, with key (its bucket full), a cheap search and then
// each expensive search, and returns what each answered. Before each
// search after the first it waits for the bucket to refill (the policy's
// w seconds), so that each one finds it full.
func probeCosts(ctx context.Context, base, key string) ([]CostProbe, error) {
	client := loadClient()
	labels := append([]string{"one rare word"}, abuseLabels...)
	uris := append([]string{cheapQuery}, abuseQueries...)
	var probes []CostProbe
	for i, uri := range uris {
		code, _, h := timedGet(ctx, client, base+uri, key)
		if code == 0 {
			return nil, fmt.Errorf("cost probe: %s: no answer", uri)
		}
		pr := CostProbe{Label: labels[i], Status: code, Cost: h.Get(headerSearchCost), RateLimit: h.Get("RateLimit"), Policy: h.Get("RateLimit-Policy")}
		probes = append(probes, pr)
		if i == len(uris)-1 {
			break
		}
		refill := 0
		if m := burstPolicy.FindStringSubmatch(pr.Policy); m != nil {
			refill, _ = strconv.Atoi(m[2])
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(refill)*time.Second + 200*time.Millisecond):
		}
	}
	return probes, nil
}

// headerSearchCost is the header rappel states a search's cost in.
const headerSearchCost = "Search-Cost"

// firstRecordID returns the record_id of the first record of GET /recall.
func firstRecordID(ctx context.Context, base string) (string, error) {
	b, err := fetch(ctx, http.DefaultClient, base+"/recall?limit=1")
	if err != nil {
		return "", err
	}
	var page struct {
		Results []struct {
			RecordID string `json:"record_id"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &page); err != nil || len(page.Results) == 0 {
		return "", fmt.Errorf("reading the first record of GET /recall: %v", err)
	}
	return page.Results[0].RecordID, nil
}

// abusePhase measures one phase with attackers clients sending the
// expensive searches (none for the unloaded phase) with attackKey (the
// development key when empty).
func abusePhase(ctx context.Context, pid int, base, id, attackKey string, attackers, recordClients int, healthRate float64, dur, budget time.Duration) (AbusePhase, error) {
	ph := AbusePhase{Statuses: map[int]int{}, Latency: map[int][3]time.Duration{}, RSSKB: readMem(pid).RSSKB,
		Costs: map[string]string{}, RateLimit: map[int]string{}}
	if attackKey == "" {
		attackKey = benchKey
	}
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
				q := j % len(abuseQueries)
				key := attackKey
				if abuseKeyless != nil && abuseKeyless[q] {
					key = ""
				}
				code, took, h := timedGet(ctx, client, base+abuseQueries[q], key)
				if ctx.Err() != nil {
					return
				}
				cost := h.Get(headerSearchCost)
				mu.Lock()
				byStatus[code] = append(byStatus[code], took)
				if cost != "" {
					ph.Costs[abuseLabels[q]] = cost
					if code == http.StatusTooManyRequests {
						ph.CostRefused++
					}
				}
				if rl := h.Get("RateLimit"); rl != "" && ph.RateLimit[code] == "" {
					ph.RateLimit[code] = rl
				}
				mu.Unlock()
			}
		}()
	}
	peak := peakRSS(pid)
	if attackers > 0 {
		time.Sleep(time.Second) // the attack is under way
	}

	// GET /recall/{record_id}, closed loop, and GET /health, open loop,
	// side by side.
	var recLat []time.Duration
	var recErrs atomic.Int64
	var rmu sync.Mutex
	measureStart := time.Now()
	measureEnd := measureStart.Add(dur)
	srv0, own0, busy0 := cpuTicks(pid), cpuTicks(os.Getpid()), machineBusyTicks()
	var mwg sync.WaitGroup
	for range recordClients {
		mwg.Add(1)
		go func() {
			defer mwg.Done()
			client := loadClient()
			var mine []time.Duration
			for time.Now().Before(measureEnd) && ctx.Err() == nil {
				code, took, _ := timedGet(ctx, client, base+"/recall/"+url.PathEscape(id), benchKey)
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
	// Clock ticks are USER_HZ, 100 a second on Linux.
	secs := time.Since(measureStart).Seconds() * 100
	ph.ServerCores = float64(cpuTicks(pid)-srv0) / secs
	ph.HarnessCores = float64(cpuTicks(os.Getpid())-own0) / secs
	ph.OtherCores = max(0, float64(machineBusyTicks()-busy0)/secs-ph.ServerCores-ph.HarnessCores)
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
	ph.PeakKB = max(peak(), ph.RSSKB)
	ph.AfterKB = readMem(pid).RSSKB
	return ph, nil
}

// peakRSS samples the resident set of process pid every 250 ms until the
// function it returns is called; that function returns the largest
// sample, in KiB.
func peakRSS(pid int) func() int64 {
	var peak atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			if m := readMem(pid).RSSKB; m > peak.Load() {
				peak.Store(m)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(stop)
		<-done
		return peak.Load()
	}
}

// machineBusyTicks is the time all cores of the machine have spent busy
// (not idle nor waiting for I/O), in clock ticks, from /proc/stat; 0 when
// it cannot be read.
func machineBusyTicks() int64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i != 3 && i != 4 && i < 8 { // idle, iowait; guest time is in user already
			busy += n
		}
	}
	return busy
}

// timedGet sends GET url with key and returns the status (0 on a
// transport error), the time to the end of the body and the response's
// header (nil on a transport error).
func timedGet(ctx context.Context, client *http.Client, url, key string) (int, time.Duration, http.Header) {
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if key != "" {
		req.Header = http.Header{"X-Gateway-Key": {key}}
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, time.Since(start), nil
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, time.Since(start), resp.Header
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
	row("cores busy: server / harness / rest of the machine", func(p AbusePhase) string {
		return fmt.Sprintf("%.2f / %.2f / %.2f", p.ServerCores, p.HarnessCores, p.OtherCores)
	})
	if !slices.ContainsFunc(phases, func(p AbusePhase) bool { return p.Plan != "" && p.Plan != "dev" }) {
		return
	}
	dash := func(v string) string {
		if v == "" {
			return "–"
		}
		return "`" + v + "`"
	}
	row("… 429s refused for the search's cost (Search-Cost set)", func(p AbusePhase) string {
		if p.Statuses[http.StatusTooManyRequests] == 0 {
			return "–"
		}
		return strconv.Itoa(p.CostRefused)
	})
	row("Search-Cost answered ("+strings.Join(abuseLabels, " / ")+")", func(p AbusePhase) string {
		var c []string
		for _, l := range abuseLabels {
			c = append(c, dash(p.Costs[l]))
		}
		return strings.Join(c, " / ")
	})
	for _, code := range []int{200, 429} {
		row(fmt.Sprintf("first RateLimit of a %d", code), func(p AbusePhase) string { return dash(p.RateLimit[code]) })
	}
	for _, p := range phases {
		if len(p.Probes) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nCost probe before %q: a second %s key, its bucket full before each search:\n\n", p.Name, p.Plan)
		fmt.Fprintf(w, "| search | status | Search-Cost | RateLimit after it |\n|---|---|---|---|\n")
		for _, pr := range p.Probes {
			fmt.Fprintf(w, "| %s | %d | %s | %s |\n", pr.Label, pr.Status, dash(pr.Cost), dash(pr.RateLimit))
		}
		if pol := p.Probes[0].Policy; pol != "" {
			fmt.Fprintf(w, "\nRateLimit-Policy: `%s`\n", pol)
		}
	}
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
