package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The markers around the section of BENCHMARKS.md the harness owns;
// everything outside them is left as it is.
const (
	beginMarker = "<!-- bench:begin -->"
	endMarker   = "<!-- bench:end -->"
)

// peers are the systems a user would pick instead of rappel.
var peers = []string{"postgres", "bleve", "sqlite"}

// The goals each figure is judged against. Memory goals are in MB (10⁶
// bytes), as the report prints memory.
const (
	goalRecordVsBare = 0.90 // GET /recall/{record_id}, of the bare handler's throughput
	goalPageVsBare   = 0.80 // the 100-result page, likewise
	goalP99VsPeer    = 0.5  // each class's p99, of the better peer's
	goalGeoMean      = 20   // geometric-mean p99 speedup over the better peers

	goalFirstStart = time.Second            // exec to first 200, empty data dir
	goalWarmStart  = 100 * time.Millisecond // exec to first 200, warm data dir
	goalPeakMB     = 400                    // VmHWM over a first start and the mixed load
	goalPrivateMB  = 100                    // RssAnon after them
	goalBinaryMB   = 100                    // the binary, bundle inside, as make build builds it

	goalLargeRecords = 1_000_000
	goalLargeStart   = 2 * time.Second // warm start at a million records
	goalLargePrivate = 600             // MB, RssAnon after the mixed load
	goalLargeP99     = 5 * time.Millisecond
	goalLargeBuild   = 90 * time.Second // the one-time index build at a million records
	goalLargeBuildMB = 2000             // MB, its peak resident
)

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianDur(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	m := median(xs)
	if math.IsNaN(m) {
		return -1
	}
	return time.Duration(m)
}

// geoMean is the geometric mean of the positive, finite xs.
func geoMean(xs []float64) float64 {
	sum, n := 0.0, 0
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) {
			sum += math.Log(x)
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return math.Exp(sum / float64(n))
}

// betterPeer returns the peer with the highest median throughput and the
// peer with the lowest median p99 in a class, "" when no peer ran.
func betterPeer(cr *ClassResult) (byRPS, byP99 string) {
	for _, p := range peers {
		if len(cr.RPS[p]) == 0 {
			continue
		}
		if byRPS == "" || median(cr.RPS[p]) > median(cr.RPS[byRPS]) {
			byRPS = p
		}
		if byP99 == "" || medianDur(cr.P99[p]) < medianDur(cr.P99[byP99]) {
			byP99 = p
		}
	}
	return byRPS, byP99
}

// fmtRPS, fmtDur and fmtRatio print figures, "—" for a missing one.
func fmtRPS(x float64) string {
	if math.IsNaN(x) || x <= 0 {
		return "—"
	}
	if x >= 100 {
		return groupThousands(int64(math.Round(x)))
	}
	return fmt.Sprintf("%.1f", x)
}

func groupThousands(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtDur(d time.Duration) string {
	switch {
	case d < 0:
		return "—"
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	case d < time.Minute:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%d min %02d s", d/time.Minute, d%time.Minute/time.Second)
}

func fmtRatio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
		return "—"
	}
	if x >= 10 {
		return fmt.Sprintf("%.0f×", x)
	}
	return fmt.Sprintf("%.2f×", x)
}

// mb is kb KiB in MB.
func mb(kb int64) float64 { return float64(kb) * 1024 / 1e6 }

func fmtMB(kb int64) string {
	if kb <= 0 {
		return "—"
	}
	return groupThousands(int64(math.Round(mb(kb)))) + " MB"
}

// ratio is a/b, NaN when either is missing.
func ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}

// write renders the report into h.Out between the markers (or prints it)
// and saves the raw results beside the logs.
func (h *Harness) write(res *Results) error {
	if b, err := json.MarshalIndent(res, "", "  "); err == nil {
		os.WriteFile(filepath.Join(h.WorkDir, "results.json"), b, 0o644)
	}
	return h.render(res)
}

// render writes the report of res into h.Out between the markers, or
// prints it when h.Out is empty.
func (h *Harness) render(res *Results) error {
	section := render(res)
	if h.Out == "" {
		_, err := h.Stdout.Write([]byte(section))
		return err
	}
	old, err := os.ReadFile(h.Out)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("reading %s: %w", h.Out, err)
	}
	if err := os.WriteFile(h.Out, splice(old, section), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", h.Out, err)
	}
	h.logf("wrote %s", h.Out)
	return nil
}

// splice replaces what lies between the markers in doc with section, or
// appends the markers and section when doc has none.
func splice(doc []byte, section string) []byte {
	block := beginMarker + "\n" + strings.TrimRight(section, "\n") + "\n" + endMarker
	i := bytes.Index(doc, []byte(beginMarker))
	j := bytes.Index(doc, []byte(endMarker))
	if i < 0 || j < i {
		out := bytes.TrimRight(doc, "\n")
		if len(out) > 0 {
			out = append(out, "\n\n"...)
		}
		return append(append(out, block...), '\n')
	}
	var out []byte
	out = append(out, doc[:i]...)
	out = append(out, block...)
	return append(out, doc[j+len(endMarker):]...)
}

// render writes the section.
func render(res *Results) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	has := func(s string) bool { return slices.Contains(res.Systems, s) }
	p("## Side by side: rappel, bare net/http, PostgreSQL, Bleve, SQLite\n\n")
	p("Written by `%s` on %s, commit %s.", res.Command, res.Started.Format("2006-01-02 15:04 UTC"), orDash(res.Env.Commit))
	switch {
	case res.Quick:
		p(" **Quick mode** (`-quick`): one short round of a few classes and no scale curve; the figures are indicative only, not the medians of five rounds.")
	case res.Rounds < 5:
		p(" **Short run** (%d round(s) of %s runs): the figures are indicative only; `make bench` takes the median of five rounds.", res.Rounds, res.WrkDur)
	}
	p("\n\nMachine: %s, %d CPUs, %d MiB, Linux %s; %s; %s; %s; Bleve %s; %s. ", orDash(res.Env.CPU), res.Env.CPUs, res.Env.MemMiB,
		orDash(res.Env.Kernel), res.Env.Go, orDash(res.Env.Postgres), orDash(res.Env.Wrk), orDash(res.Env.Bleve), orDash(res.Env.SQLite))
	p("Data: the embedded bundle, %s synthetic records. ", groupThousands(int64(res.Records)))
	p("Every server runs as its own process pinned to CPU 0 with GOMAXPROCS=1 (PostgreSQL and its Go front both on CPU 0); "+
		"wrk (`-t1 -c%d`, keep-alive, %s per run) and the constant-rate client run on CPU 1. "+
		"Each figure is the median of %d round(s); in each round every class runs on every system, the systems' order rotating from round to round. "+
		"Latency is measured open loop at one constant rate per class for all systems (half the slowest system's throughput, at most 1,000/s; at least 30 requests, or 6 s; the bare handler is not measured here, its goals being on throughput), "+
		"every request sent when due from its own goroutine, so that no request waits for another and stalls are not hidden (coordinated omission). "+
		"Each latency run starts once every server is idle, its processes and their children (PostgreSQL's) having used at most one clock tick of CPU in %s (waiting at most %s), so that no server is still working off the requests in flight when the wrk run before it stopped. "+
		"Requests carry no Accept-Encoding: every system sends identity bodies. "+
		"Run %s.\n\n", res.Conns, res.WrkDur, res.Rounds, fmtDur(quietBeforeLatency.span()), fmtDur(settleTimeout), res.Finished.Sub(res.Started).Round(time.Second))

	renderGoals(&b, res)
	renderLimit(&b, res)
	renderStartup(&b, res)
	renderBuilds(&b, res)
	renderBenchGoals(&b, res)
	renderThroughput(&b, res, has)
	renderPrevious(&b, res)
	renderLatency(&b, res, has)
	renderCounts(&b, res)
	renderScale(&b, res)
	renderStartProfiles(&b, res)
	renderScaleProfiles(&b, res)
	renderPeerProfiles(&b, res)
	renderBenchProfiles(&b, res)
	renderProfiles(&b, res)
	if len(res.Notes) > 0 {
		p("### What could not run\n\n")
		for _, n := range res.Notes {
			p("- %s\n", n)
		}
		p("\n")
	}
	if res.GoBench != "" {
		p("### Go benchmarks of this run\n\n<details><summary>`go test -run '^$' -bench . -benchmem ./...`</summary>\n\n```\n%s\n```\n\n</details>\n", strings.TrimSpace(benchLines(res.GoBench)))
	}
	return b.String()
}

// benchLines keeps the benchmark result lines and package headers of
// `go test -bench` output.
func benchLines(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Benchmark") || strings.HasPrefix(l, "pkg:") || strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "cpu:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func classResult(res *Results, name string) *ClassResult {
	for _, cr := range res.Classes {
		if cr.Class.Name == name {
			return cr
		}
	}
	return nil
}

func renderLimit(b *strings.Builder, res *Results) {
	fmt.Fprintf(b, "### Against the physical limit (bare net/http, identical bytes)\n\n")
	fmt.Fprintf(b, "| request | rappel req/s | bare req/s | rappel ÷ bare | goal |\n|---|---|---|---|---|\n")
	for _, g := range []struct {
		class string
		goal  float64
	}{{"record", goalRecordVsBare}, {"no_q", goalPageVsBare}} {
		cr := classResult(res, g.class)
		if cr == nil {
			continue
		}
		r, bare := median(cr.RPS["rappel"]), median(cr.RPS["bare"])
		fmt.Fprintf(b, "| %s | %s | %s | %s | ≥ %.2f× %s |\n", cr.Class.Label, fmtRPS(r), fmtRPS(bare), fmtRatio(ratio(r, bare)), g.goal, verdict(ratio(r, bare), g.goal, true))
	}
	b.WriteString("\n")
}

// verdict says whether x meets goal (at least goal when atLeast, else at
// most), and by how much it misses.
func verdict(x, goal float64, atLeast bool) string {
	switch {
	case math.IsNaN(x):
		return "(not measured)"
	case atLeast && x >= goal, !atLeast && x <= goal:
		return "met"
	case atLeast:
		return fmt.Sprintf("**missed by %.0f%%**", (goal-x)/goal*100)
	}
	return fmt.Sprintf("**missed: %.2f×, %.0f%% over**", x, (x-goal)/goal*100)
}

// row writes a table row of cells.
func row(b *strings.Builder, cells ...string) {
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

// header writes a table header of cells.
func header(b *strings.Builder, cells ...string) {
	row(b, cells...)
	b.WriteString("|" + strings.Repeat("---|", len(cells)) + "\n")
}

func renderThroughput(b *strings.Builder, res *Results, has func(string) bool) {
	others := append([]string{"bare"}, peers...)
	b.WriteString("### Throughput (requests/s, wrk)\n\n")
	cols := []string{"class", "request", "rappel"}
	cols = append(cols, others...)
	for _, s := range others {
		cols = append(cols, "÷ "+s)
	}
	header(b, cols...)
	for _, cr := range res.Classes {
		r := median(cr.RPS["rappel"])
		cells := []string{cr.Class.Label, "`" + shortPath(cr.Class) + "`", fmtRPS(r)}
		for _, s := range others {
			cells = append(cells, fmtRPS(median(cr.RPS[s])))
		}
		for _, s := range others {
			cells = append(cells, fmtRatio(ratio(r, median(cr.RPS[s]))))
		}
		row(b, cells...)
	}
	b.WriteString("\n")
}

func shortPath(c Class) string {
	s := c.Path
	if c.Deep {
		s += "&cursor=…"
	}
	if len(s) > 90 {
		s = s[:87] + "…"
	}
	return strings.ReplaceAll(s, "|", "%7C")
}

func renderLatency(b *strings.Builder, res *Results, has func(string) bool) {
	b.WriteString("### Latency at a constant rate (p50 / p99)\n\n")
	header(b, append(append([]string{"class", "rate/s", "rappel"}, peers...), "rappel p99 ÷ better peer's", fmt.Sprintf("goal ≤ %.1f×", goalP99VsPeer))...)
	pair := func(cr *ClassResult, s string) string {
		if len(cr.P50[s]) == 0 {
			return "—"
		}
		return fmtDur(medianDur(cr.P50[s])) + " / " + fmtDur(medianDur(cr.P99[s]))
	}
	for _, cr := range res.Classes {
		_, best := betterPeer(cr)
		x := math.NaN()
		if best != "" {
			x = ratio(float64(medianDur(cr.P99["rappel"])), float64(medianDur(cr.P99[best])))
		}
		goal := verdict(x, goalP99VsPeer, false)
		if cr.Class.Name == "record" {
			goal = "(not in the query set)"
		}
		cells := []string{cr.Class.Label, fmtRPS(cr.Rate), pair(cr, "rappel")}
		for _, s := range peers {
			cells = append(cells, pair(cr, s))
		}
		row(b, append(cells, fmtRatio(x)+" ("+orDash(best)+")", goal)...)
	}
	tput, p50, p99 := speedups(res)
	fmt.Fprintf(b, "\nGeometric-mean speedup over the better peer of each class (the issue's query set, GET /recall/{record_id} left out): "+
		"throughput %s, p50 %s, p99 %s (goal ≥ %d×: %s, judged on p99).\n\n", fmtRatio(tput), fmtRatio(p50), fmtRatio(p99), goalGeoMean, verdict(p99, goalGeoMean, true))
}

// speedups returns the geometric means over the query set of rappel's
// speedup over each class's better peer: in throughput, p50 and p99.
func speedups(res *Results) (tput, p50, p99 float64) {
	var t, a, z []float64
	for _, cr := range res.Classes {
		if cr.Class.Name == "record" {
			continue
		}
		byRPS, byP99 := betterPeer(cr)
		if byRPS == "" {
			continue
		}
		t = append(t, ratio(median(cr.RPS["rappel"]), median(cr.RPS[byRPS])))
		bestP50 := math.Inf(1)
		for _, p := range peers {
			if len(cr.P50[p]) > 0 {
				bestP50 = min(bestP50, float64(medianDur(cr.P50[p])))
			}
		}
		a = append(a, ratio(bestP50, float64(medianDur(cr.P50["rappel"]))))
		z = append(z, ratio(float64(medianDur(cr.P99[byP99])), float64(medianDur(cr.P99["rappel"]))))
	}
	return geoMean(t), geoMean(a), geoMean(z)
}

func renderCounts(b *strings.Builder, res *Results) {
	fmt.Fprintf(b, "### What each system matched\n\nThe `count` each system answered (searches) and its body size, as a check that they answer the same question. "+
		"PostgreSQL's, Bleve's and SQLite's stemmers and tokenizers are not rappel's, so word queries could match differently; a difference shows here. "+
		"SQLite's FTS5 has no French stemmer: its French text is matched unstemmed, accents folded.\n\n")
	systems := append([]string{"rappel"}, peers...)
	header(b, append(append([]string{"class"}, systems...), "body bytes ("+strings.Join(systems, " / ")+")")...)
	cnt := func(cr *ClassResult, s string) string {
		n, ok := cr.Count[s]
		if !ok || n < 0 {
			return "—"
		}
		return groupThousands(int64(n))
	}
	for _, cr := range res.Classes {
		cells := []string{cr.Class.Label}
		var sizes []string
		for _, s := range systems {
			cells = append(cells, cnt(cr, s))
			size := "—"
			if n, ok := cr.Bytes[s]; ok {
				size = groupThousands(int64(n))
			}
			sizes = append(sizes, size)
		}
		row(b, append(cells, strings.Join(sizes, " / "))...)
	}
	var errs []string
	for _, cr := range res.Classes {
		for s, n := range cr.Errors {
			if n > 0 {
				errs = append(errs, fmt.Sprintf("%s on %s: %d", s, cr.Class.Name, n))
			}
		}
	}
	slices.Sort(errs)
	if len(errs) > 0 {
		fmt.Fprintf(b, "\nFailed requests (errors or non-200s) during the runs: %s.\n", strings.Join(errs, "; "))
	}
	b.WriteString("\n")
}

func renderStartup(b *strings.Builder, res *Results) {
	fmt.Fprintf(b, "### Start-up and memory\n\n"+
		"A start is timed from exec to the first 200 of `GET /recall` (the first page of every record, which needs the read index), polled every 2 ms; each figure is the median of the starts. "+
		"First starts run on an empty data dir, which the embedded bundle fills (its store tables unpacked and ingested, its index segment unpacked into the data dir and mapped from there); "+
		"warm starts on the data dir the last first start left, once it had used no CPU for a second. "+
		"The steps of a start are read from the times of rappel's log lines (millisecond precision): \"starting rappel\" (the runtime up), the bundle line, its first line after it not from Pebble (the store open, the bundle loaded into it or found there), \"dataset ready\" (the read index open) and \"serving\". "+
		"The mixed load is wrk sending every class's request in turn for %s (`-c%d`); memory is read from `/proc/PID/status` after it. "+
		"Peak is VmHWM, the highest resident set since exec, the start included; private is RssAnon, the memory the process allocated; "+
		"file-backed is RssFile, the pages of mapped files (the binary, the bundle's index segment, index segments) resident at that moment, which the kernel can drop and read again and which processes mapping the same file share.\n\n",
		res.MixedDur, res.Conns)
	header(b, "what", "first start (empty data dir)", "warm start", "goal")
	row(b, "exec to first 200 of GET /recall", startCell(res.FirstStart), startCell(res.WarmStart),
		fmt.Sprintf("≤ %s empty: %s; ≤ %s warm: %s", fmtDur(goalFirstStart), durVerdict(medianTook(res.FirstStart), goalFirstStart),
			fmtDur(goalWarmStart), durVerdict(medianTook(res.WarmStart), goalWarmStart)))
	row(b, "of which exec to the log's \"starting rappel\" / bundle line / \"dataset ready\" / \"serving\"", stepsCell(res.FirstStart), stepsCell(res.WarmStart), "")
	row(b, "peak resident (VmHWM), start and mixed load", fmtMB(res.ColdMem.PeakKB), fmtMB(res.WarmMem.PeakKB),
		fmt.Sprintf("≤ %d MB after a first start: %s", goalPeakMB, mbVerdict(res.ColdMem.PeakKB, goalPeakMB)))
	row(b, "private resident (RssAnon) after the mixed load", fmtMB(res.ColdMem.AnonKB), fmtMB(res.WarmMem.AnonKB),
		fmt.Sprintf("≤ %d MB after a first start: %s", goalPrivateMB, mbVerdict(res.ColdMem.AnonKB, goalPrivateMB)))
	row(b, "file-backed resident (RssFile) after the mixed load", fmtMB(res.ColdMem.FileKB), fmtMB(res.WarmMem.FileKB), "(for information)")
	row(b, "the binary (`make build`, the bundle inside)", fmtMB(res.BinaryKB), "",
		fmt.Sprintf("≤ %d MB: %s", goalBinaryMB, mbVerdict(res.BinaryKB, goalBinaryMB)))
	row(b, "mixed load's throughput", fmtRPS(res.ColdMem.MixedRPS)+" req/s"+failed(res.ColdMem.MixedErrors),
		fmtRPS(res.WarmMem.MixedRPS)+" req/s"+failed(res.WarmMem.MixedErrors), "")
	b.WriteString("\n")
	fmt.Fprintf(b, "| other systems | figure |\n|---|---|\n")
	fmt.Fprintf(b, "| rappel (warm start) RSS, highest sampled during the comparison's wrk runs | %s |\n", fmtMB(res.MemKB["rappel"]))
	for _, s := range append([]string{"bare"}, peers...) {
		if m, ok := res.MemKB[s]; ok {
			what := "RSS"
			if s == "postgres" {
				what = "PSS of the server processes plus RSS of its Go front"
			}
			fmt.Fprintf(b, "| %s %s, highest sampled under load | %s |\n", s, what, fmtMB(m))
		}
	}
	for _, s := range peers {
		if d, ok := res.PeerSetup[s]; ok {
			fmt.Fprintf(b, "| %s, exec to ready (loading and indexing the records) | %s |\n", s, fmtDur(d))
		}
	}
	b.WriteString("\n")
}

// failed says how many requests failed, when some did.
func failed(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s failed)", groupThousands(int64(n)))
}

// medianStep is the median of one step of starts, -1 when a start lacks it.
func medianStep(ss []Start, step func(Start) time.Duration) time.Duration {
	var ds []time.Duration
	for _, s := range ss {
		if d := step(s); d >= 0 {
			ds = append(ds, d)
		} else {
			return -1
		}
	}
	return medianDur(ds)
}

// medianTook is the median time from exec to first 200 of starts.
func medianTook(ss []Start) time.Duration {
	return medianStep(ss, func(s Start) time.Duration { return s.Took })
}

// startCell is the median of starts and how many there were.
func startCell(ss []Start) string {
	if len(ss) == 0 {
		return "—"
	}
	return fmt.Sprintf("%s (median of %d)", fmtDur(medianTook(ss)), len(ss))
}

// stepsCell is the medians of the steps rappel logs during starts.
func stepsCell(ss []Start) string {
	if len(ss) == 0 {
		return "—"
	}
	var cells []string
	for _, step := range []func(Start) time.Duration{
		func(s Start) time.Duration { return s.Logging }, func(s Start) time.Duration { return s.Bundle },
		func(s Start) time.Duration { return s.Ready }, func(s Start) time.Duration { return s.Serving },
	} {
		cells = append(cells, fmtDur(medianStep(ss, step)))
	}
	return strings.Join(cells, " / ")
}

// durVerdict says whether d meets a goal of at most goal.
func durVerdict(d, goal time.Duration) string {
	if d <= 0 {
		return "(not measured)"
	}
	return verdict(float64(d)/float64(goal), 1, false)
}

// mbVerdict says whether kb meets a goal of at most goal MB.
func mbVerdict(kb int64, goal float64) string {
	if kb <= 0 {
		return "(not measured)"
	}
	return verdict(mb(kb)/goal, 1, false)
}

// isLarge says whether a size of n records is one the million-record
// goals are judged on: within a tenth of a million.
func isLarge(n int) bool {
	return math.Abs(float64(n-goalLargeRecords)) <= goalLargeRecords/10
}

// largeScale is the size of the scale curve the million-record goals are
// judged on: the largest within a tenth of a million records, nil when
// the curve has none.
func largeScale(res *Results) *ScaleResult {
	var best *ScaleResult
	for _, s := range res.Scale {
		if isLarge(s.Records) && (best == nil || s.Records > best.Records) {
			best = s
		}
	}
	return best
}

func renderScale(b *strings.Builder, res *Results) {
	if len(res.Scale) == 0 {
		return
	}
	fmt.Fprintf(b, "### Scale curve (rappel only, one round per size)\n\n"+
		"The generator (`bundle/synth`, `rappel-synth -scale`) at larger sizes, normalized by the shipped plugins' code (natively: see RATIONALE.md) and loaded into a store, which holds records and no index segments. "+
		"The first start on it builds the read index from the store and writes it as a segment: a one-time cost, shown apart, measured as a node takes it: on every core, not pinned, with GOMEMLIMIT at three quarters of the memory then available. "+
		"Then %d warm starts on the data dir it left (their median shown), the mixed load, memory as above, and one wrk run and one constant-rate run of each class, the latter once the node is idle, as in the main run. "+
		"The %s-record column is the main run's: its warm starts, its memory after a warm start and the mixed load, and its medians of %d round(s). "+
		"Latency p99 is at the main run's rate of each class; where a size's throughput is below that rate the server is overloaded and its p99 is queueing, which the cell says. "+
		"The last column is the goal at a million records.\n\n", len(res.WarmStart), groupThousands(int64(res.Records)), res.Rounds)
	large := largeScale(res)
	fmt.Fprintf(b, "| | %s records |", groupThousands(int64(res.Records)))
	for _, s := range res.Scale {
		fmt.Fprintf(b, " %s records |", groupThousands(int64(s.Records)))
	}
	b.WriteString(" goal at 1M |\n|---|---|" + strings.Repeat("---|", len(res.Scale)) + "---|\n")
	line := func(what, main string, cell func(*ScaleResult) string, goal string) {
		fmt.Fprintf(b, "| %s | %s |", what, main)
		for _, s := range res.Scale {
			fmt.Fprintf(b, " %s |", scaleCell(s, cell(s)))
		}
		fmt.Fprintf(b, " %s |\n", goal)
	}
	largeVerdict := func(f func(*ScaleResult) string) string {
		if large == nil || large.Skipped != "" {
			return "(not measured)"
		}
		return f(large)
	}
	line("one-time index build: exec to first 200", "(the bundle's index is embedded)", func(s *ScaleResult) string { return fmtDur(s.Build) },
		fmt.Sprintf("≤ %s: %s", fmtDur(goalLargeBuild), largeVerdict(func(s *ScaleResult) string { return durVerdict(s.Build, goalLargeBuild) })))
	line("one-time index build: peak private resident (RssAnon, sampled every 100 ms)", "—", func(s *ScaleResult) string { return fmtMB(s.buildPrivateKB()) },
		fmt.Sprintf("≤ %s MB: %s", groupThousands(goalLargeBuildMB), largeVerdict(func(s *ScaleResult) string { return mbVerdict(s.buildPrivateKB(), goalLargeBuildMB) })))
	line("one-time index build: peak resident (VmHWM, the written segment's mapped pages included)", "—", func(s *ScaleResult) string { return fmtMB(s.BuildMem.PeakKB) }, "(for information)")
	line("index segments on disk; store on disk", "—", func(s *ScaleResult) string {
		return fmtMB(s.IndexBytes>>10) + "; " + fmtMB(s.StoreBytes>>10)
	}, "")
	line("warm start: exec to first 200", fmtDur(medianTook(res.WarmStart)), func(s *ScaleResult) string { return fmtDur(medianTook(s.Starts)) },
		fmt.Sprintf("≤ %s: %s", fmtDur(goalLargeStart), largeVerdict(func(s *ScaleResult) string { return durVerdict(medianTook(s.Starts), goalLargeStart) })))
	line("of which exec to \"starting rappel\" / bundle line / \"dataset ready\" / \"serving\"", stepsCell(res.WarmStart), func(s *ScaleResult) string { return stepsCell(s.Starts) }, "")
	line("peak resident (VmHWM), warm start and mixed load", fmtMB(res.WarmMem.PeakKB), func(s *ScaleResult) string { return fmtMB(s.Mem.PeakKB) }, "")
	line("private resident (RssAnon) after the mixed load", fmtMB(res.WarmMem.AnonKB), func(s *ScaleResult) string { return fmtMB(s.Mem.AnonKB) },
		fmt.Sprintf("≤ %d MB: %s", goalLargePrivate, largeVerdict(func(s *ScaleResult) string { return mbVerdict(s.Mem.AnonKB, goalLargePrivate) })))
	line("file-backed resident (RssFile) after the mixed load", fmtMB(res.WarmMem.FileKB), func(s *ScaleResult) string { return fmtMB(s.Mem.FileKB) }, "")
	line("mixed load's throughput", fmtRPS(res.WarmMem.MixedRPS)+" req/s"+failed(res.WarmMem.MixedErrors), func(s *ScaleResult) string {
		return fmtRPS(s.Mem.MixedRPS) + " req/s" + failed(s.Mem.MixedErrors)
	}, "")
	for _, cr := range res.Classes {
		main := fmtRPS(median(cr.RPS["rappel"])) + ", " + fmtDur(medianDur(cr.P99["rappel"]))
		line(cr.Class.Label+": req/s, p99", main, func(s *ScaleResult) string {
			r, ok := s.RPS[cr.Class.Name]
			if !ok {
				return "—"
			}
			cell := fmtRPS(r) + ", " + fmtDur(s.P99[cr.Class.Name])
			if rate := s.Rate[cr.Class.Name]; rate > r {
				cell += " (overloaded: " + fmtRPS(rate) + "/s sent)"
			}
			return cell + failed(s.Errors[cr.Class.Name])
		}, fmt.Sprintf("p99 ≤ %s: %s", fmtDur(goalLargeP99), largeVerdict(func(s *ScaleResult) string {
			p, ok := s.P99[cr.Class.Name]
			if !ok {
				return "(not measured)"
			}
			return durVerdict(p, goalLargeP99)
		})))
	}
	for _, s := range res.Scale {
		switch {
		case s.Skipped != "":
			fmt.Fprintf(b, "\n%.2f× (%s records) was not measured: %s.", s.Scale, groupThousands(int64(s.Records)), s.Skipped)
		case s.Reused:
			fmt.Fprintf(b, "\n%.2f×: the data set and loaded store of an earlier run in the same work dir were reused.", s.Scale)
		default:
			fmt.Fprintf(b, "\n%.2f×: generating, normalizing and loading took %s.", s.Scale, fmtDur(s.Prepare))
		}
		if s.Skipped == "" && s.Build > 0 {
			when := "in this run"
			if !s.BuildThisRun {
				when = fmt.Sprintf("by the run of %s (commit %s), whose data dir this run started on, its segments opened as they were (`-rebuild` measures it again)",
					s.BuildWhen.Format("2006-01-02 15:04 UTC"), orDash(s.BuildCommit))
			}
			fmt.Fprintf(b, " The one-time index build was measured %s, with GOMEMLIMIT=%dMiB.", when, s.BuildLimitMiB)
		}
	}
	b.WriteString("\n\n")
}

func scaleCell(s *ScaleResult, v string) string {
	if s.Skipped != "" {
		return "not run"
	}
	return v
}

// renderGoals lists every goal missed, and every goal this run could not
// judge.
func renderGoals(b *strings.Builder, res *Results) {
	missed, unjudged := goalsMissed(res)
	fmt.Fprintf(b, "### Goals missed in this run\n\n")
	if len(missed) == 0 {
		b.WriteString("None.\n")
	}
	for _, m := range missed {
		fmt.Fprintf(b, "- %s\n", m)
	}
	if len(unjudged) > 0 {
		fmt.Fprintf(b, "\nNot judged, not measured in this run: %s.\n", strings.Join(unjudged, "; "))
	}
	b.WriteString("\n")
}

// goalsMissed returns a sentence for each goal the figures miss, and the
// goals with no figure to judge.
func goalsMissed(res *Results) (missed, unjudged []string) {
	for _, g := range []struct {
		class string
		goal  float64
	}{{"record", goalRecordVsBare}, {"no_q", goalPageVsBare}} {
		if cr := classResult(res, g.class); cr != nil {
			if x := ratio(median(cr.RPS["rappel"]), median(cr.RPS["bare"])); !math.IsNaN(x) && x < g.goal {
				missed = append(missed, fmt.Sprintf("%s throughput is %s the bare handler's (goal ≥ %.2f×)", cr.Class.Label, fmtRatio(x), g.goal))
			}
		}
	}
	dur := func(what string, d, goal time.Duration) {
		switch {
		case d <= 0:
			unjudged = append(unjudged, what)
		case d > goal:
			missed = append(missed, fmt.Sprintf("%s is %s (goal ≤ %s)", what, fmtDur(d), fmtDur(goal)))
		}
	}
	mem := func(what string, kb int64, goal float64) {
		switch {
		case kb <= 0:
			unjudged = append(unjudged, what)
		case mb(kb) > goal:
			missed = append(missed, fmt.Sprintf("%s is %s, %.1f× the goal of %.0f MB", what, fmtMB(kb), mb(kb)/goal, goal))
		}
	}
	records := groupThousands(int64(res.Records))
	dur("exec to first 200 of GET /recall on an empty data dir", medianTook(res.FirstStart), goalFirstStart)
	dur("exec to first 200 of GET /recall on a warm data dir", medianTook(res.WarmStart), goalWarmStart)
	mem("peak resident memory over a first start and the mixed load at "+records+" records", res.ColdMem.PeakKB, goalPeakMB)
	mem("private resident memory after a first start and the mixed load at "+records+" records", res.ColdMem.AnonKB, goalPrivateMB)
	mem("the binary (the bundle inside)", res.BinaryKB, goalBinaryMB)
	if res.Build.Fresh > 0 || res.Build.Err != "" {
		for _, tb := range res.Build.builds() {
			dur(tb.goalWhat, tb.took, tb.goal)
		}
	}
	large := largeScale(res)
	if large == nil || large.Skipped != "" {
		unjudged = append(unjudged, "the goals at a million records (warm start, private resident memory, every class's p99)")
	} else {
		n := groupThousands(int64(large.Records))
		dur("the warm start at "+n+" records", medianTook(large.Starts), goalLargeStart)
		dur("the one-time index build at "+n+" records", large.Build, goalLargeBuild)
		mem("peak private resident memory of the one-time index build at "+n+" records", large.buildPrivateKB(), goalLargeBuildMB)
		mem("private resident memory after the mixed load at "+n+" records", large.Mem.AnonKB, goalLargePrivate)
		for _, cr := range res.Classes {
			if p, ok := large.P99[cr.Class.Name]; ok && p > goalLargeP99 {
				missed = append(missed, fmt.Sprintf("p99 of %s at %s records is %s (goal ≤ %s)", cr.Class.Label, n, fmtDur(p), fmtDur(goalLargeP99)))
			}
		}
	}
	for _, cr := range res.Classes {
		_, best := betterPeer(cr)
		if best == "" || cr.Class.Name == "record" {
			continue
		}
		x := ratio(float64(medianDur(cr.P99["rappel"])), float64(medianDur(cr.P99[best])))
		if !math.IsNaN(x) && x > goalP99VsPeer {
			missed = append(missed, fmt.Sprintf("p99 of %s is %s of %s's (goal ≤ %.1f×)", cr.Class.Label, fmtRatio(x), best, goalP99VsPeer))
		}
	}
	if _, _, p99 := speedups(res); !math.IsNaN(p99) && p99 < goalGeoMean {
		missed = append(missed, fmt.Sprintf("geometric-mean p99 speedup is %s (goal ≥ %d×)", fmtRatio(p99), goalGeoMean))
	}
	if res.GoBench != "" {
		missed, unjudged = benchGoalsMissed(res, missed, unjudged)
	}
	pm, pu := previousMissed(res)
	missed, unjudged = append(missed, pm...), append(unjudged, pu...)
	return missed, unjudged
}

// renderStartProfiles writes the profile of a warm start wherever the
// timed warm starts' median missed its goal: at the bundle's size, and at
// a million records.
func renderStartProfiles(b *strings.Builder, res *Results) {
	type missed struct {
		what string
		took time.Duration
		top  []string
	}
	var ms []missed
	if took := medianTook(res.WarmStart); took > goalWarmStart && len(res.WarmStartProfile) > 0 {
		ms = append(ms, missed{groupThousands(int64(res.Records)) + " records", took, res.WarmStartProfile})
	}
	if large := largeScale(res); large != nil && large.Skipped == "" {
		if took := medianTook(large.Starts); took > goalLargeStart && len(large.StartProfile) > 0 {
			ms = append(ms, missed{groupThousands(int64(large.Records)) + " records", took, large.StartProfile})
		}
	}
	if len(ms) == 0 {
		return
	}
	b.WriteString("### Where a warm start's time goes\n\n" +
		"`perf record -F 2999 -p <rappel>` from the moment perf attaches (a few milliseconds after exec) to the first 200, during one more warm start made before the timed ones and not counted among them; the symbols above 1.5% of samples. Page faults (`*fault*`, `filemap_*`) are the mapped segment read in; `runtime.gcBgMarkWorker` and the like the collector.\n\n")
	for _, m := range ms {
		fmt.Fprintf(b, "<details><summary>warm start at %s (median of the timed starts %s)</summary>\n\n```\n%s\n```\n\n</details>\n\n", m.what, fmtDur(m.took), strings.Join(m.top, "\n"))
	}
}

// renderScaleProfiles writes the profiles taken at the million-record
// size: of the one-time build when it missed its goals, and during the
// constant-rate runs of the classes that missed.
func renderScaleProfiles(b *strings.Builder, res *Results) {
	large := largeScale(res)
	if large == nil {
		return
	}
	if len(large.BuildProfile) > 0 && (large.Build > goalLargeBuild || large.buildPrivateKB()>>10 > goalLargeBuildMB) {
		fmt.Fprintf(b, "### Where the one-time index build's time goes at %s records\n\n"+
			"`perf record -F 499 -p <rappel>` from the node's first moments to its first 200 (%s, peak private resident %s): the symbols above 1.5%% of samples.\n\n"+
			"<details><summary>one-time index build</summary>\n\n```\n%s\n```\n\n</details>\n\n",
			groupThousands(int64(large.Records)), fmtDur(large.Build), fmtMB(large.buildPrivateKB()), strings.Join(large.BuildProfile, "\n"))
	}
	if len(large.Profiles)+len(large.ProfileNotes) == 0 {
		return
	}
	fmt.Fprintf(b, "### Where a %s-record node's time goes in the classes that miss\n\n"+
		"`perf record -F 999 -p <rappel>` during a second constant-rate run of each class whose p99 missed %s, at the same rate (its p99 given again: the two runs differ by the machine's noise); the symbols above 1.5%% of samples. "+
		"`runtime.gcBgMarkWorker`, `runtime.scanobject` and the like are the collector; kernel symbols are the network stack, or page faults (`*fault*`, `filemap_*`) reading pages of the mapped segment in.\n\n",
		groupThousands(int64(large.Records)), fmtDur(goalLargeP99))
	for _, p := range large.Profiles {
		label := p.Class
		if cr := classResult(res, p.Class); cr != nil {
			label = cr.Class.Label
		}
		fmt.Fprintf(b, "<details><summary>%s (p99 %s in this run)</summary>\n\n```\n%s\n```\n\n</details>\n\n", label, fmtDur(p.P99), strings.Join(p.Top, "\n"))
	}
	for _, n := range large.ProfileNotes {
		fmt.Fprintf(b, "- %s\n", n)
	}
	b.WriteString("\n")
}

// renderPeerProfiles writes the profiles taken during the constant-rate
// runs of the classes whose p99 missed the goal against the better peer.
func renderPeerProfiles(b *strings.Builder, res *Results) {
	if len(res.PeerProfiles) == 0 {
		return
	}
	fmt.Fprintf(b, "### Where rappel's time goes in the classes that miss the peer goal\n\n"+
		"`perf record -F 999 -p <rappel>` during a second constant-rate run of each class whose p99 missed %.1f× the better peer's, at the same rate (its p99 given again); the symbols above 1.5%% of samples.\n\n", goalP99VsPeer)
	for _, p := range res.PeerProfiles {
		label := p.Class
		if cr := classResult(res, p.Class); cr != nil {
			label = cr.Class.Label
		}
		fmt.Fprintf(b, "<details><summary>%s (p99 %s in this run)</summary>\n\n```\n%s\n```\n\n</details>\n\n", label, fmtDur(p.P99), strings.Join(p.Top, "\n"))
	}
}

// renderBenchProfiles writes the CPU profiles of the Go benchmarks whose
// goals were missed.
func renderBenchProfiles(b *strings.Builder, res *Results) {
	if len(res.BenchProfiles) == 0 {
		return
	}
	b.WriteString("### Where the Go benchmarks that miss spend their time\n\n" +
		"Each benchmark whose goal was missed, run once more alone with `go test -cpuprofile` (`-benchtime` 1x for the refresh benchmark, 2s for a search), then `go tool pprof -top`: flat share, flat time, function; for a search, the samples under `View.Search` alone (`-focus`, leaving out the index the benchmark builds first), by cumulative share of all samples and cumulative time (`-cum`).\n\n")
	for _, p := range res.BenchProfiles {
		fmt.Fprintf(b, "<details><summary>%s</summary>\n\n```\n%s\n```\n\n</details>\n\n", p.Class, strings.Join(p.Top, "\n"))
	}
}

func renderProfiles(b *strings.Builder, res *Results) {
	if len(res.Profiles) == 0 {
		return
	}
	fmt.Fprintf(b, "### Where rappel's CPU goes (perf, self time, under wrk)\n\n"+
		"`perf record -F 999 -p <rappel>` during one wrk run of each class; the symbols above 1.5%% of samples. "+
		"Kernel symbols are the network stack (the same cost the bare handler pays).\n\n")
	for _, p := range res.Profiles {
		label := p.Class
		if cr := classResult(res, p.Class); cr != nil {
			label = cr.Class.Label
		}
		fmt.Fprintf(b, "<details><summary>%s</summary>\n\n```\n%s\n```\n\n</details>\n\n", label, strings.Join(p.Top, "\n"))
	}
}
