package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Profile is where rappel's CPU went during a wrk run of one class: perf's
// flat profile (self time by symbol) of the server process.
type Profile struct {
	Class string
	Top   []string // "12.34%  symbol", highest first
	// P99 is the p99 of the constant-rate run a scale profile was taken
	// during; zero for a profile under wrk.
	P99 time.Duration `json:",omitempty"`
}

// profiles samples rappel with perf during a wrk run of each class whose
// goal is against the bare handler (GET /recall/{record_id} and the
// 100-result page) and of the class furthest from the bare handler, so
// that a missed goal comes with what the server spent its time on. Without
// perf, or where perf may not sample (perf_event_paranoid), it notes why.
func (h *Harness) profiles(ctx context.Context, s *system, res *Results) {
	if _, err := exec.LookPath("perf"); err != nil {
		res.Notes = append(res.Notes, "no CPU profiles: perf is not installed (Debian package linux-perf)")
		return
	}
	want := []string{"record", "no_q"}
	worst, worstRatio := "", 2.0
	for _, cr := range res.Classes {
		if x := ratio(median(cr.RPS["rappel"]), median(cr.RPS["bare"])); x < worstRatio && !contains(want, cr.Class.Name) {
			worst, worstRatio = cr.Class.Name, x
		}
	}
	if worst != "" {
		want = append(want, worst)
	}
	for _, name := range want {
		if _, ok := s.URI[name]; !ok {
			continue
		}
		p, err := h.profile(ctx, s, name)
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("no CPU profile of %s: %v", name, err))
			continue
		}
		res.Profiles = append(res.Profiles, p)
	}
}

// profile runs perf record on rappel while wrk loads it with class, then
// reads perf's flat report.
func (h *Harness) profile(ctx context.Context, s *system, class string) (Profile, error) {
	return h.perfDuring(ctx, s, class, "perf-"+class, h.WrkDur, func() error {
		_, err := runWrk(ctx, h.LoadCPU, s.Base+s.URI[class], keyHeader(), h.Conns, h.WrkDur)
		return err
	})
}

// perfDuring samples s's process with perf record for d while load runs,
// into the work dir's file name.data, then reads perf's flat report.
func (h *Harness) perfDuring(ctx context.Context, s *system, class, name string, d time.Duration, load func() error) (Profile, error) {
	file, err := filepath.Abs(filepath.Join(h.WorkDir, name+".data"))
	if err != nil {
		return Profile{}, err
	}
	secs := strconv.Itoa(max(1, int(d.Round(time.Second).Seconds())))
	perf := exec.CommandContext(ctx, "perf", "record", "-F", "999", "-p", strconv.Itoa(s.procs[0].PID()), "-o", file, "--", "sleep", secs)
	var perfOut strings.Builder
	perf.Stdout, perf.Stderr = &perfOut, &perfOut
	if err := perf.Start(); err != nil {
		return Profile{}, fmt.Errorf("starting perf record: %w", err)
	}
	lerr := load()
	perr := perf.Wait()
	if lerr != nil {
		return Profile{}, lerr
	}
	if perr != nil && !strings.Contains(perfOut.String(), "Captured") {
		return Profile{}, fmt.Errorf("running perf record: %w: %.200s", perr, perfOut.String())
	}
	out, err := exec.CommandContext(ctx, "perf", "report", "-i", file, "--stdio", "--no-children", "--sort", "symbol", "--percent-limit", "1.5").Output()
	if err != nil {
		return Profile{}, fmt.Errorf("running perf report: %w", err)
	}
	return Profile{Class: class, Top: parsePerfReport(string(out), 12)}, nil
}

// profileLargeMisses samples rappel at a size of the million-record goals
// during a second constant-rate run of each class whose p99 missed the
// goal, at the same rate: the goal's miss comes with where the server's
// time went while it was measured (the requests' own work, the collector,
// page faults), which a profile under wrk would not show. The second run's
// p99 is kept beside the profile.
func (h *Harness) profileLargeMisses(ctx context.Context, s *system, sr *ScaleResult, classes []Class) {
	if _, err := exec.LookPath("perf"); err != nil {
		return
	}
	client := loadClient()
	for _, c := range classes {
		p99, ok := sr.P99[c.Name]
		if !ok || p99 <= goalLargeP99 {
			continue
		}
		var again time.Duration
		h.settle(ctx, s) // before perf starts, so that its seconds are the run's
		p, err := h.perfDuring(ctx, s, c.Name, "perf-scale-"+c.Name, h.LatDur, func() error {
			l, err := runConstantRate(ctx, client, s.Base+s.URI[c.Name], keyHeader(), sr.Rate[c.Name], h.LatDur)
			again = l.P99
			return err
		})
		if err != nil {
			sr.ProfileNotes = append(sr.ProfileNotes, fmt.Sprintf("no profile of %s: %v", c.Name, err))
			continue
		}
		p.P99 = again
		sr.Profiles = append(sr.Profiles, p)
	}
}

// parsePerfReport keeps the first n sample lines of a flat perf report,
// as "percent symbol".
func parsePerfReport(out string, n int) []string {
	var top []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || strings.HasPrefix(line, "#") || !strings.HasSuffix(f[0], "%") {
			continue
		}
		// "12.34%  [.] runtime.memmove  -  -": the kind ([k] kernel, [.]
		// user), the symbol, then IPC columns perf may print empty.
		top = append(top, fmt.Sprintf("%7s %s %s", f[0], f[1], f[2]))
		if len(top) == n {
			break
		}
	}
	return top
}

// profilePeerMisses samples rappel during a second constant-rate run of
// each class whose p99 missed its goal against the better peer, at the
// class's rate, as profileLargeMisses does at a million records: the goal
// is on latency at that rate, so the profile is taken under it.
func (h *Harness) profilePeerMisses(ctx context.Context, s *system, res *Results) {
	if _, err := exec.LookPath("perf"); err != nil || s == nil {
		return
	}
	client := loadClient()
	for _, cr := range res.Classes {
		_, best := betterPeer(cr)
		if best == "" || cr.Class.Name == "record" || cr.Rate == 0 {
			continue
		}
		if x := ratio(float64(medianDur(cr.P99["rappel"])), float64(medianDur(cr.P99[best]))); math.IsNaN(x) || x <= goalP99VsPeer {
			continue
		}
		var again time.Duration
		h.settle(ctx, s) // after the wrk runs under perf; before perf starts again
		p, err := h.perfDuring(ctx, s, cr.Class.Name, "perf-peer-"+cr.Class.Name, h.LatDur, func() error {
			l, err := runConstantRate(ctx, client, s.Base+s.URI[cr.Class.Name], keyHeader(), cr.Rate, h.LatDur)
			again = l.P99
			return err
		})
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("no profile of %s at its constant rate: %v", cr.Class.Name, err))
			continue
		}
		p.P99 = again
		res.PeerProfiles = append(res.PeerProfiles, p)
	}
}

// profileBenchMisses runs each Go benchmark whose goal was missed once
// more, with -cpuprofile, in its package of the repository, and keeps
// pprof's flat top: a missed goal of the Go benchmarks comes with where
// that benchmark's time went, as the HTTP classes' do with perf's.
func (h *Harness) profileBenchMisses(ctx context.Context, res *Results) {
	for _, g := range goBenchGoals(res.GoBench) {
		if !g.found || g.met() || g.pkg == "" {
			continue
		}
		top, err := h.benchProfile(ctx, g)
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("no profile of %s: %v", g.bench, err))
			continue
		}
		res.BenchProfiles = append(res.BenchProfiles, Profile{Class: g.bench, Top: top})
	}
}

// benchProfile runs g's benchmark alone with a CPU profile and returns
// the first lines of `go tool pprof -top`, of the samples under g.focus
// when it is set.
func (h *Harness) benchProfile(ctx context.Context, g benchGoal) ([]string, error) {
	file, err := filepath.Abs(filepath.Join(h.WorkDir, "cpu-"+strings.NewReplacer("/", "-").Replace(g.bench)+".pprof"))
	if err != nil {
		return nil, err
	}
	// The benchmark's name as a -bench pattern: each part anchored.
	parts := strings.Split(g.bench, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	test := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", strings.Join(parts, "/"), "-benchtime", g.benchtime, "-cpuprofile", file, g.pkg)
	test.Dir = h.Repo
	test.Env = append(os.Environ(), "RAPPEL_TEST_BUNDLE=1")
	if out, err := test.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go test -bench %s: %v: %.300s", g.bench, err, out)
	}
	args := []string{"tool", "pprof", "-top", "-nodecount=12"}
	if g.focus != "" {
		// The samples under the function measured, by cumulative time:
		// their flat shares of the whole profile are small, the setup
		// taking most of it, where the cumulative ones show the calls.
		// Sixteen rows: the first four are the benchmark's own frames.
		args = append(args, "-focus="+g.focus, "-cum", "-nodecount=16")
	}
	out, err := exec.CommandContext(ctx, "go", append(args, file)...).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof: %w", err)
	}
	return parsePprofTop(string(out), g.focus != ""), nil
}

// parsePprofTop keeps the rows of `go tool pprof -top` output: flat%,
// flat and the function, highest first; cum% and cum instead when cum is
// set (the output of -top -cum).
func parsePprofTop(out string, cum bool) []string {
	var top []string
	rows := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "flat" && f[1] == "flat%" {
			rows = true
			continue
		}
		if !rows || len(f) < 6 {
			continue
		}
		share, took := f[1], f[0]
		if cum {
			share, took = f[4], f[3]
		}
		top = append(top, fmt.Sprintf("%7s %8s %s", share, took, strings.Join(f[5:], " ")))
	}
	return top
}

// perfRecording is a perf record following a node: its one-time index
// build, or a warm start.
type perfRecording struct {
	cmd  *exec.Cmd
	file string
}

// startPerf starts perf record on the process pid at freq samples a
// second into name in the work dir, or returns nil without perf.
func (h *Harness) startPerf(pid int, name, freq string) *perfRecording {
	if _, err := exec.LookPath("perf"); err != nil {
		return nil
	}
	file, err := filepath.Abs(filepath.Join(h.WorkDir, name))
	if err != nil {
		return nil
	}
	cmd := exec.Command("perf", "record", "-F", freq, "-p", strconv.Itoa(pid), "-o", file)
	if cmd.Start() != nil {
		return nil
	}
	return &perfRecording{cmd: cmd, file: file}
}

// stop ends the recording (perf writes its file on SIGINT) and returns
// its flat report, or nothing when there is none.
func (bp *perfRecording) stop(ctx context.Context) []string {
	if bp == nil {
		return nil
	}
	bp.cmd.Process.Signal(os.Interrupt)
	bp.cmd.Wait()
	out, err := exec.CommandContext(ctx, "perf", "report", "-i", bp.file, "--stdio", "--no-children", "--sort", "symbol", "--percent-limit", "1.5").Output()
	if err != nil {
		return nil
	}
	return parsePerfReport(string(out), 15)
}
