package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
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
