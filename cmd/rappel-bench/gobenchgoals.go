package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The goals judged on the Go benchmarks' output rather than over HTTP:
// they measure what no request can isolate (a search while the index
// swaps under it; a query's expansion, in process).
const (
	goalRefreshP99Ratio = 1.2                  // search p99 during back-to-back refreshes ÷ at rest
	goalTypo            = 2 * time.Millisecond // each typo class, per search
)

// benchGoal is one goal read from a Go benchmark's line: the metric's
// value, or found false when the line or metric is absent.
type benchGoal struct {
	what, bench, metric string
	value               float64
	found               bool
	goal                float64
	unit                string // "×" or "ms"
	// pkg is the benchmark's package, relative to the module root, and
	// benchtime the -benchtime its profile is taken over.
	pkg, benchtime string
	// focus, when set, is the pprof -focus of its profile: the function
	// measured, so that the benchmark's setup (building an index to
	// search) does not fill the profile's top.
	focus string
}

// searchFocus is the pprof -focus of a search's profile: the samples
// under kv/index's View.Search.
const searchFocus = `index\.\(\*View\)\.Search$`

// goBenchGoals reads the benchmark goals from out, `go test -bench`
// output.
func goBenchGoals(out string) []benchGoal {
	goals := []benchGoal{
		{what: "search p99 during back-to-back refreshes ÷ at rest", bench: "BenchmarkSegments_SearchDuringRefresh", metric: "p99-ratio", goal: goalRefreshP99Ratio, unit: "×", pkg: "./kv/index", benchtime: "1x"},
		{what: "typo class `lysteria` (one edit, by the automaton), per search", bench: "BenchmarkSegment_Search/typo/segment", metric: "ns/op", goal: float64(goalTypo) / 1e6, unit: "ms", pkg: "./kv/index", benchtime: "2s", focus: searchFocus},
		{what: "typo class `contaminaton` (stemmed edits), per search", bench: "BenchmarkSegment_Search/typo2/segment", metric: "ns/op", goal: float64(goalTypo) / 1e6, unit: "ms", pkg: "./kv/index", benchtime: "2s", focus: searchFocus},
	}
	for i := range goals {
		g := &goals[i]
		g.value, g.found = benchMetric(out, g.bench, g.metric)
		if g.found && g.metric == "ns/op" {
			g.value /= 1e6
		}
	}
	return goals
}

// benchMetric returns the value of metric on the line of the benchmark
// named bench (its -GOMAXPROCS suffix aside), the last such line if the
// benchmark ran more than once.
func benchMetric(out, bench, metric string) (float64, bool) {
	var v float64
	found := false
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || !sameBench(f[0], bench) {
			continue
		}
		for i := 2; i+1 < len(f); i += 2 {
			if f[i+1] == metric {
				if x, err := strconv.ParseFloat(f[i], 64); err == nil {
					v, found = x, true
				}
			}
		}
	}
	return v, found
}

// sameBench says whether name, as `go test` prints it, is bench: the
// same, or bench followed by -N, the GOMAXPROCS it ran with.
func sameBench(name, bench string) bool {
	rest, ok := strings.CutPrefix(name, bench)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	_, err := strconv.Atoi(strings.TrimPrefix(rest, "-"))
	return strings.HasPrefix(rest, "-") && err == nil
}

func (g benchGoal) figure() string {
	if !g.found {
		return "(not measured)"
	}
	if g.unit == "×" {
		return fmtRatio(g.value)
	}
	return fmtDur(time.Duration(g.value * 1e6))
}

func (g benchGoal) goalCell() string {
	if g.unit == "×" {
		return fmt.Sprintf("≤ %.1f×", g.goal)
	}
	return fmt.Sprintf("≤ %s", fmtDur(time.Duration(g.goal*1e6)))
}

func (g benchGoal) met() bool { return g.value <= g.goal }

// renderBenchGoals writes the goals judged on the Go benchmarks.
func renderBenchGoals(b *strings.Builder, res *Results) {
	if res.GoBench == "" {
		return
	}
	b.WriteString("### Goals judged on the Go benchmarks of this run\n\n")
	header(b, "what", "benchmark", "figure", "goal")
	for _, g := range goBenchGoals(res.GoBench) {
		v := "(not measured)"
		if g.found {
			v = verdict(g.value/g.goal, 1, false)
		}
		row(b, g.what, "`"+g.bench+"` ("+g.metric+")", g.figure(), g.goalCell()+": "+v)
	}
	b.WriteString("\n")
}

// benchGoalsMissed adds the Go benchmarks' goals to missed or unjudged.
func benchGoalsMissed(res *Results, missed, unjudged []string) ([]string, []string) {
	for _, g := range goBenchGoals(res.GoBench) {
		switch {
		case !g.found:
			unjudged = append(unjudged, g.what)
		case !g.met():
			missed = append(missed, fmt.Sprintf("%s is %s (goal %s)", g.what, g.figure(), g.goalCell()))
		}
	}
	return missed, unjudged
}
