package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Results is everything a run measured, as the report shows it.
type Results struct {
	Command           string
	Started, Finished time.Time
	Env               Env
	Quick             bool
	Rounds            int
	WrkDur, LatDur    time.Duration
	Conns             int
	Records           int
	Systems           []string
	Classes           []*ClassResult
	// FirstStart is exec to first 200 of GET /recall on an empty data dir
	// (the embedded bundle loaded into the store); WarmStart on the data
	// dir a first start left once idle.
	FirstStart, WarmStart []Start
	// WarmStartProfile is perf's flat report of one more warm start, made
	// before the timed ones (warmStartProfile).
	WarmStartProfile []string `json:",omitempty"`
	// BinaryKB is the size of the rappel binary, built as `make build`
	// builds it, in KiB.
	BinaryKB int64
	// Build is how long `make build` takes, fresh and after a change.
	Build BuildTimes
	// Previous is the throughput of the report this run replaces.
	Previous *PreviousRun `json:",omitempty"`
	// ColdMem is rappel's memory after its last first start and the
	// mixed load (its peak over both), WarmMem after its last warm start
	// and the mixed load; MixedDur is the mixed load's duration.
	ColdMem, WarmMem NodeMem
	MixedDur         time.Duration
	// PeerSetup is how long each peer took from exec to ready (loading
	// and indexing the records included).
	PeerSetup map[string]time.Duration
	// MemKB is each system's highest memory sampled under wrk load.
	MemKB    map[string]int64
	Scale    []*ScaleResult
	Profiles []Profile
	// PeerProfiles are taken during a second constant-rate run of each
	// class whose p99 missed its goal against the better peer;
	// BenchProfiles during a second run of each Go benchmark whose goal
	// was missed (Class names the benchmark).
	PeerProfiles  []Profile `json:",omitempty"`
	BenchProfiles []Profile `json:",omitempty"`
	Notes         []string
	GoBench       string
}

// ClassResult holds one class's figures per system, one per round.
type ClassResult struct {
	Class  Class
	Rate   float64        // the constant rate of the latency runs
	Count  map[string]int // the "count" each system answered, -1 for none
	Bytes  map[string]int
	RPS    map[string][]float64
	P50    map[string][]time.Duration
	P99    map[string][]time.Duration
	Errors map[string]int
}

func newClassResult(c Class) *ClassResult {
	return &ClassResult{Class: c, Count: map[string]int{}, Bytes: map[string]int{}, RPS: map[string][]float64{},
		P50: map[string][]time.Duration{}, P99: map[string][]time.Duration{}, Errors: map[string]int{}}
}

// maxLatDur caps a latency run on a slow class: at the rate of a system
// answering a few requests a second, MinSample requests would otherwise
// take minutes per round.
const maxLatDur = 6 * time.Second

// measure runs the alternating rounds: in each round, for each class,
// every system's throughput (wrk), then every system's latency at one
// constant rate, half the slowest system's throughput in the first round
// (capped by -max-rate), each latency run once every system is idle. The
// systems' order rotates from round to round so that no system always
// runs first or last.
func (h *Harness) measure(ctx context.Context, systems []*system, classes []Class, res *Results) error {
	res.MemKB = map[string]int64{}
	client := loadClient()
	for _, c := range classes {
		cr := newClassResult(c)
		for _, s := range systems {
			b, err := fetch(ctx, client, s.Base+s.URI[c.Name])
			if err != nil {
				return err
			}
			cr.Count[s.Name], cr.Bytes[s.Name] = readBodyCount(b), len(b)
			if !strings.HasPrefix(c.Path, "/recall?") && c.Path != "/recall" {
				cr.Count[s.Name] = -1
			}
		}
		res.Classes = append(res.Classes, cr)
	}
	for round := range h.Rounds {
		order := rotate(systems, round)
		h.logf("round %d/%d", round+1, h.Rounds)
		for _, cr := range res.Classes {
			slowest := 0.0
			for _, s := range order {
				if s.Err != nil {
					continue
				}
				url := s.Base + s.URI[cr.Class.Name]
				stopSampling := sampleMem(s, res)
				w, err := runWrk(ctx, h.LoadCPU, url, keyHeader(), h.Conns, h.WrkDur)
				stopSampling()
				if err != nil && (s.Name == "rappel" || ctx.Err() != nil) {
					return err
				} else if err != nil {
					// A peer that fails mid-run is reported, not allowed
					// to lose the other systems' figures.
					s.Err = err
					res.Notes = append(res.Notes, fmt.Sprintf("%s failed during round %d (%s) and was measured no further: %v", s.Name, round+1, cr.Class.Name, err))
					h.logf("%s failed: %v", s.Name, err)
					continue
				}
				cr.RPS[s.Name] = append(cr.RPS[s.Name], w.RPS)
				cr.Errors[s.Name] += w.Errors
				if slowest == 0 || w.RPS < slowest {
					slowest = w.RPS
				}
			}
			if cr.Rate == 0 {
				cr.Rate = min(h.MaxRate, max(1, float64(int(slowest/2))))
			}
			dur := h.LatDur
			if need := time.Duration(float64(h.MinSample) / cr.Rate * float64(time.Second)); need > dur {
				dur = min(need, maxLatDur)
			}
			// Every system still running shares the servers' core, so
			// each run waits for all of them to go idle, not only for
			// the one it measures.
			var running []*system
			for _, s := range order {
				if s.Err == nil {
					running = append(running, s)
				}
			}
			for _, s := range order {
				if s.Name == "bare" || s.Err != nil {
					continue // bare: its goals are on throughput; this keeps make bench within its hour
				}
				h.settle(ctx, running...)
				l, err := runConstantRate(ctx, client, s.Base+s.URI[cr.Class.Name], keyHeader(), cr.Rate, dur)
				if err != nil {
					return err
				}
				cr.P50[s.Name] = append(cr.P50[s.Name], l.P50)
				cr.P99[s.Name] = append(cr.P99[s.Name], l.P99)
				cr.Errors[s.Name] += l.Errors
			}
			h.logf("  %-16s %s", cr.Class.Name, classLine(cr, order))
		}
	}
	return nil
}

// classLine is a progress line: each system's last throughput and p99.
func classLine(cr *ClassResult, order []*system) string {
	var parts []string
	for _, s := range order {
		if len(cr.RPS[s.Name]) == 0 {
			continue
		}
		line := fmt.Sprintf("%s %.0f/s", s.Name, cr.RPS[s.Name][len(cr.RPS[s.Name])-1])
		if p := cr.P99[s.Name]; len(p) > 0 {
			line += " p99 " + p[len(p)-1].Round(time.Microsecond).String()
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, " | ")
}

func rotate(ss []*system, n int) []*system {
	n %= len(ss)
	return append(append([]*system{}, ss[n:]...), ss[:n]...)
}

// sampleMem samples s's memory every 100 ms until the returned function is
// called, keeping the highest figure in res.MemKB.
func sampleMem(s *system, res *Results) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if m := s.memKB(); m > res.MemKB[s.Name] {
				res.MemKB[s.Name] = m
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// pssKB is the proportional set size of pid (shared pages divided among
// the processes sharing them), from /proc/PID/smaps_rollup.
func pssKB(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// fetch GETs url with the bench key and returns the body of a 200.
func fetch(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header = keyHeader()
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("requesting %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s answered %d: %.300s", url, resp.StatusCode, b)
	}
	return b, err
}
