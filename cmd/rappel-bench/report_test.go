package main

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

func TestSplice(t *testing.T) {
	t.Run("Replace", func(t *testing.T) {
		doc := "# Benchmarks\n\nhand-written\n\n" + beginMarker + "\nold figures\n" + endMarker + "\n\n## After\nkept\n"
		got := string(splice([]byte(doc), "new figures\n"))
		want := "# Benchmarks\n\nhand-written\n\n" + beginMarker + "\nnew figures\n" + endMarker + "\n\n## After\nkept\n"
		if got != want {
			t.Errorf("splice:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("Append", func(t *testing.T) {
		got := string(splice([]byte("# Benchmarks\n\nhand-written\n"), "figures"))
		want := "# Benchmarks\n\nhand-written\n\n" + beginMarker + "\nfigures\n" + endMarker + "\n"
		if got != want {
			t.Errorf("splice:\n%q\nwant:\n%q", got, want)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		if got := string(splice(nil, "x")); got != beginMarker+"\nx\n"+endMarker+"\n" {
			t.Errorf("splice(nil) = %q", got)
		}
	})
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}} {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median(nil) is not NaN")
	}
	if got := medianDur([]time.Duration{3, 1, 2}); got != 2 {
		t.Errorf("medianDur = %v", got)
	}
}

func TestGeoMean(t *testing.T) {
	if got := geoMean([]float64{2, 8}); math.Abs(got-4) > 1e-9 {
		t.Errorf("geoMean(2, 8) = %v, want 4", got)
	}
	if got := geoMean([]float64{10, math.NaN(), 0, 10}); math.Abs(got-10) > 1e-9 {
		t.Errorf("geoMean ignoring missing = %v, want 10", got)
	}
}

func TestVerdict(t *testing.T) {
	for _, tt := range []struct {
		x, goal float64
		atLeast bool
		want    string
	}{
		{0.95, 0.90, true, "met"},
		{0.45, 0.90, true, "missed by 50%"},
		{0.4, 0.5, false, "met"},
		{0.75, 0.5, false, "50% over"},
		{math.NaN(), 0.5, false, "not measured"},
	} {
		if got := verdict(tt.x, tt.goal, tt.atLeast); !strings.Contains(got, tt.want) {
			t.Errorf("verdict(%v, %v, %v) = %q, want it to say %q", tt.x, tt.goal, tt.atLeast, got, tt.want)
		}
	}
}

// TestRender checks that the ratios and missed goals come out of the
// figures: rappel at 900 req/s against a bare 1000 meets the record goal;
// its p99 at 0.6 of the better peer's misses the p99 goal by 20%.
func TestRender(t *testing.T) {
	ms := time.Millisecond
	rec := newClassResult(Class{Name: "record", Label: "GET /recall/{record_id}", Path: "/recall/x"})
	rec.RPS = map[string][]float64{"rappel": {900, 950, 850}, "bare": {1000, 1000, 1000}, "postgres": {100}, "bleve": {50}, "sqlite": {400}}
	word := newClassResult(Class{Name: "common_word", Label: "common word", Path: "/recall?q=recalled"})
	word.RPS = map[string][]float64{"rappel": {5000}, "bare": {6000}, "postgres": {50}, "bleve": {250}, "sqlite": {125}}
	word.P50 = map[string][]time.Duration{"rappel": {ms}, "postgres": {40 * ms}, "bleve": {10 * ms}, "sqlite": {20 * ms}}
	word.P99 = map[string][]time.Duration{"rappel": {6 * ms}, "postgres": {80 * ms}, "bleve": {10 * ms}, "sqlite": {30 * ms}}
	word.Count = map[string]int{"rappel": 27203, "postgres": 27000, "bleve": 26999, "sqlite": 26500}
	word.Bytes = map[string]int{"rappel": 1000, "postgres": 1001, "bleve": 1002, "sqlite": 1003}
	word.Rate = 25
	res := &Results{Systems: AllSystems, Classes: []*ClassResult{rec, word}, Rounds: 3, Records: 41000,
		FirstStart: []Start{{Took: 900 * ms}, {Took: 1200 * ms}, {Took: 800 * ms}}, WarmStart: []Start{{Took: 150 * ms, Logging: 5 * ms, Bundle: 60 * ms, Ready: 120 * ms, Serving: 121 * ms}},
		ColdMem: NodeMem{Mem: Mem{PeakKB: 200 << 10, AnonKB: 300 << 10}}, BinaryKB: 90 << 10,
		WarmStartProfile: []string{" 30.00% [k] filemap_fault"}}
	res.Scale = []*ScaleResult{
		{Scale: 4.88, Records: 200000, Skipped: "it did not fit"},
		{Scale: 24.39, Records: 999990, Starts: []Start{{Took: time.Second}}, Mem: NodeMem{Mem: Mem{AnonKB: 500 << 10}},
			StartProfile: []string{" 40.00% [.] main.met"},
			ScaleBuild: ScaleBuild{Build: 8 * time.Minute, BuildMem: Mem{PeakKB: 16 << 20}, BuildPeakAnonKB: 3 << 20, BuildLimitMiB: 14000,
				BuildWhen: time.Date(2026, 11, 25, 19, 23, 0, 0, time.UTC), BuildCommit: "abc"},
			Errors: map[string]int{"common_word": 3},
			RPS:    map[string]float64{"record": 40000, "common_word": 900}, Rate: map[string]float64{"record": 1000, "common_word": 1000},
			P99:      map[string]time.Duration{"record": ms, "common_word": 7 * ms},
			Profiles: []Profile{{Class: "common_word", Top: []string{" 12.00% [.] runtime.scanobject"}, P99: 8 * ms}}},
	}
	out := render(res)
	reportHas(t, out, []string{
		"| GET /recall/{record_id} | 900 | 1,000 | 0.90× | ≥ 0.90× met |",
		"| class | request | rappel | bare | postgres | bleve | sqlite | ÷ bare | ÷ postgres | ÷ bleve | ÷ sqlite |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
		"| common word | `/recall?q=recalled` | 5,000 | 6,000 | 50.0 | 250 | 125 | 0.83× | 100× | 20× | 40× |",
		"| common word | 25.0 | 1.00 ms / 6.00 ms | 40.0 ms / 80.0 ms | 10.0 ms / 10.0 ms | 20.0 ms / 30.0 ms | 0.60× (bleve) |",
		"0.60× (bleve) | **missed: 0.60×, 20% over** |",
		"throughput 20×, p50 10×, p99 1.67×",
		"p99 of common word is 0.60× of bleve's",
		"| common word | 27,203 | 27,000 | 26,999 | 26,500 | 1,000 / 1,001 / 1,002 / 1,003 |",
		"- exec to first 200 of GET /recall on a warm data dir is 150.0 ms (goal ≤ 100.0 ms)",
		"- private resident memory after a first start and the mixed load at 41,000 records is 315 MB, 3.1× the goal of 100 MB",
		"- p99 of common word at 999,990 records is 7.00 ms (goal ≤ 5.00 ms)",
		"| exec to first 200 of GET /recall | 900.0 ms (median of 3) | 150.0 ms (median of 1) | ≤ 1.00 s empty: met; ≤ 100.0 ms warm: **missed: 1.50×, 50% over** |",
		"| common word: req/s, p99 | 5,000, 6.00 ms | not run | 900, 7.00 ms (overloaded: 1,000/s sent) (3 failed) | p99 ≤ 5.00 ms: **missed: 1.40×, 40% over** |",
		"| one-time index build: exec to first 200 | (the bundle's index is embedded) | not run | 8 min 00 s | ≤ 1 min 30 s: **missed: 5.33×, 433% over** |",
		"| one-time index build: peak private resident (RssAnon, sampled every 100 ms) | — | not run | 3,221 MB | ≤ 2,000 MB: **missed: 1.61×, 61% over** |",
		"| one-time index build: peak resident (VmHWM, the written segment's mapped pages included) | — | not run | 17,180 MB | (for information) |",
		"- peak private resident memory of the one-time index build at 999,990 records is 3,221 MB",
		"- the one-time index build at 999,990 records is 8 min 00 s (goal ≤ 1 min 30 s)",
		"measured by the run of 2026-11-25 19:23 UTC (commit abc)",
		"4.88× (200,000 records) was not measured: it did not fit.",
		"### Where a 999,990-record node's time goes in the classes that miss",
		"### Where a warm start's time goes",
		"<details><summary>warm start at 41,000 records (median of the timed starts 150.0 ms)</summary>\n\n```\n 30.00% [k] filemap_fault\n```",
		"<details><summary>common word (p99 8.00 ms in this run)</summary>\n\n```\n 12.00% [.] runtime.scanobject\n```",
		"| of which exec to the log's \"starting rappel\" / bundle line / \"dataset ready\" / \"serving\" | 0 µs / 0 µs / 0 µs / 0 µs | 5.00 ms / 60.0 ms / 120.0 ms / 121.0 ms |",
	})
	for _, met := range []string{"warm start at 999,990 records (median", "main.met", "on an empty data dir is", "peak resident memory over a first start", "the warm start at", "p99 of GET /recall/{record_id} at", "Not judged", "the binary (the bundle inside)"} {
		if strings.Contains(out, met) {
			t.Errorf("report lists %q among the goals missed, which the figures meet:\n%s", met, out)
		}
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	if p := percentile(d, 0.5); p != 50 {
		t.Errorf("p50 = %d, want 50", p)
	}
	if p := percentile(d, 0.99); p != 99 {
		t.Errorf("p99 = %d, want 99", p)
	}
	if p := percentile(d[:1], 0.99); p != 1 {
		t.Errorf("p99 of one = %d", p)
	}
}

func TestParsePerfReport(t *testing.T) {
	out := `# Samples: 3  of event 'cpu-clock:pppH'
#
# Overhead  Symbol                          IPC   [IPC Coverage]
# ........  ..............................  ....................
#
    66.67%  [k] exc_page_fault              -      -            
    23.33%  [.] runtime.rtsigprocmask.abi0  -      -            
    10.00%  [.] main.main


#
# (Tip: To record callchains for each sample: perf record -g)
`
	got := parsePerfReport(out, 2)
	want := []string{" 66.67% [k] exc_page_fault", " 23.33% [.] runtime.rtsigprocmask.abi0"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("parsePerfReport = %q, want %q", got, want)
	}
}

func TestGoBenchGoals(t *testing.T) {
	out := strings.Join([]string{
		"pkg: github.com/rappel-ca/rappel/kv/index",
		"BenchmarkSegment_Search/typo/segment-2         	    2000	    460000 ns/op	   12 B/op	 1 allocs/op",
		"BenchmarkSegment_Search/typo2/segment-2        	     200	   6700000 ns/op	   12 B/op	 1 allocs/op",
		"BenchmarkSegment_Search/typo2/segmentx-2       	     200	   1 ns/op",
		"BenchmarkSegments_SearchDuringRefresh-2            	       1	2561526781 ns/op	         1.269 p99-ratio	      5361 p99-refreshing-µs",
	}, "\n")
	goals := goBenchGoals(out)
	want := []struct {
		value float64
		met   bool
	}{{1.269, false}, {0.46, true}, {6.7, false}}
	for i, w := range want {
		g := goals[i]
		if !g.found || math.Abs(g.value-w.value) > 1e-9 || g.met() != w.met {
			t.Errorf("%s: got %v (found %v, met %v), want %v (met %v)", g.bench, g.value, g.found, g.met(), w.value, w.met)
		}
	}
	res := &Results{GoBench: out}
	missed, unjudged := benchGoalsMissed(res, nil, nil)
	if len(unjudged) != 0 || len(missed) != 2 {
		t.Fatalf("missed %q, unjudged %q; want the refresh ratio and contaminaton missed", missed, unjudged)
	}
	var b strings.Builder
	renderBenchGoals(&b, res)
	reportHas(t, b.String(), []string{
		"| search p99 during back-to-back refreshes ÷ at rest | `BenchmarkSegments_SearchDuringRefresh` (p99-ratio) | 1.27× | ≤ 1.2×: **missed: 1.06×, 6% over** |",
		"| typo class `lysteria` (one edit, by the automaton), per search | `BenchmarkSegment_Search/typo/segment` (ns/op) | 460 µs | ≤ 2.00 ms: met |",
		"6.70 ms | ≤ 2.00 ms: **missed: 3.35×, 235% over** |",
	})
	if _, unjudged := benchGoalsMissed(&Results{GoBench: "pkg: x\n"}, nil, nil); len(unjudged) != 3 {
		t.Errorf("with no benchmark lines, unjudged = %q, want all three goals", unjudged)
	}
}

func TestRenderBuilds(t *testing.T) {
	res := &Results{Build: BuildTimes{Fresh: 4 * time.Minute, Edge: 12 * time.Second, Domain: 45 * time.Second}}
	var b strings.Builder
	renderBuilds(&b, res)
	reportHas(t, b.String(), []string{
		"| fresh clone, every cache empty | 4 min 00 s | ≤ 3 min 00 s: **missed: 1.33×, 33% over** |",
		"| after a one-line change to edge/server.go | 12.00 s | ≤ 30.00 s: met |",
		"| after a one-line change to rappel.go | 45.00 s | ≤ 30.00 s: **missed: 1.50×, 50% over** |",
	})
	missed, _ := goalsMissed(res)
	reportHas(t, strings.Join(missed, "\n"), []string{
		"make build on a fresh clone with every cache empty is 4 min 00 s (goal ≤ 3 min 00 s)",
		"make build after a one-line change to rappel.go is 45.00 s (goal ≤ 30.00 s)",
	})
	if strings.Contains(strings.Join(missed, "\n"), "edge/server.go") {
		t.Errorf("the edge rebuild, within its goal, is listed as missed: %q", missed)
	}
}

// TestPreviousRun reads the throughput table of the repository's own
// BENCHMARKS.md, as a run about to replace it does, and judges a run
// against it.
func TestPreviousRun(t *testing.T) {
	doc := beginMarker + "\nWritten by `x` on 2026-11-25 19:58 UTC, commit 6fc8113163a0.\n\n" +
		"Machine: AMD EPYC, 2 CPUs, 24105 MiB, Linux 6.18.44-fc-v595; go1.26.8; postgres 15.\n\n" +
		"### Throughput (requests/s, wrk)\n\n" +
		"| class | request | rappel | bare | postgres | ÷ bare |\n|---|---|---|---|---|---|\n" +
		"| GET /recall/{record_id} | `/recall/hc-55933` | 17,462 | 27,264 | 6,472 | 0.64× |\n" +
		"| common word | `/recall?q=recalled` | 4,303 | 5,378 | 11.8 | 0.80× |\n\n" +
		"### Latency at a constant rate (p50 / p99)\n\n| class | rate/s |\n|---|---|\n| phrase | 29.0 |\n" + endMarker + "\n"
	p := parsePreviousRun(doc)
	if p == nil || p.Commit != "6fc8113163a0" || p.Machine != "AMD EPYC, 2 CPUs, 24105 MiB, Linux 6.18.44-fc-v595" || p.Rappel["GET /recall/{record_id}"] != 17462 || p.Bare["common word"] != 5378 || len(p.Rappel) != 2 {
		t.Fatalf("parsed %+v", p)
	}
	rec := newClassResult(Class{Name: "record", Label: "GET /recall/{record_id}"})
	rec.RPS = map[string][]float64{"rappel": {18000}, "bare": {27264}}
	word := newClassResult(Class{Name: "common_word", Label: "common word"})
	word.RPS = map[string][]float64{"rappel": {3900}, "bare": {5378}}
	same := Env{CPU: "AMD EPYC", CPUs: 2, MemMiB: 24105, Kernel: "6.18.44-fc-v595"}
	res := &Results{Classes: []*ClassResult{rec, word}, Previous: p, Env: same}
	var b strings.Builder
	renderPrevious(&b, res)
	reportHas(t, b.String(), []string{
		"Both runs were on the same machine.",
		"| GET /recall/{record_id} | 18,000 / 17,462 | 27,264 / 27,264 | 0.66× / 0.64× | +3% | met |",
		"| common word | 3,900 / 4,303 | 5,378 / 5,378 | 0.73× / 0.80× | -9% | **missed: 9% slower** |",
	})
	missed, _ := goalsMissed(res)
	reportHas(t, strings.Join(missed, "\n"), []string{"common word throughput (÷ bare) is 9% below the previous run's"})

	// On another machine the change is shown, not judged.
	res.Env.Kernel = "6.18.44-fc-v669"
	b.Reset()
	renderPrevious(&b, res)
	reportHas(t, b.String(), []string{"**Not judged**: the previous run was on another machine", "-9% | (not judged: another machine) |"})
	missed, unjudged := goalsMissed(res)
	if strings.Contains(strings.Join(missed, "\n"), "previous run") || !strings.Contains(strings.Join(unjudged, "\n"), "another machine") {
		t.Errorf("across machines: missed %q, unjudged %q; want the goal unjudged", missed, unjudged)
	}

	// The repository's own report parses: the format the harness writes.
	if _, err := os.Stat("../../BENCHMARKS.md"); err == nil {
		if p := readPreviousRun("../../BENCHMARKS.md"); p == nil || len(p.Rappel) < 10 {
			t.Errorf("BENCHMARKS.md's throughput table did not parse: %+v", p)
		}
	}
}

// TestParsePprofTop reads `go tool pprof -top` output as the report
// shows it, and the two profile sections name what they profiled.
func TestParsePprofTop(t *testing.T) {
	out := `File: index.test
Type: cpu
Duration: 2.41s, Total samples = 2.30s (95.43%)
Showing nodes accounting for 1.90s, 82.61% of 2.30s total
      flat  flat%   sum%        cum   cum%
     0.60s 26.09% 26.09%      0.80s 34.78%  github.com/rappel-ca/rappel/kv/index.(*words).edits
     0.30s 13.04% 39.13%      0.30s 13.04%  runtime.memmove
`
	top := parsePprofTop(out, false)
	if len(top) != 2 || !strings.Contains(top[0], "26.09%") || !strings.HasSuffix(top[0], "index.(*words).edits") || !strings.HasSuffix(top[1], "runtime.memmove") {
		t.Fatalf("parsePprofTop = %q", top)
	}
	if cum := parsePprofTop(out, true); len(cum) != 2 || !strings.Contains(cum[0], "34.78%") || !strings.Contains(cum[0], "0.80s") {
		t.Fatalf("parsePprofTop, cumulative = %q", cum)
	}
	res := &Results{
		PeerProfiles:  []Profile{{Class: "vin", Top: []string{" 10.00% [.] main.x"}, P99: 2 * time.Millisecond}},
		BenchProfiles: []Profile{{Class: "BenchmarkSegment_Search/typo2/segment", Top: top}},
	}
	var b strings.Builder
	renderPeerProfiles(&b, res)
	renderBenchProfiles(&b, res)
	for _, want := range []string{"miss the peer goal", "vin (p99 2.00 ms in this run)", "BenchmarkSegment_Search/typo2/segment", "runtime.memmove"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("profile sections lack %q:\n%s", want, b.String())
		}
	}
}

// TestProbeFunc_Distinct checks that the rebuild probes of the two domain
// files, one package, declare different functions (the same name in both
// failed the third rebuild with "redeclared in this block").
func TestProbeFunc_Distinct(t *testing.T) {
	a, b := probeFunc(rebuildDomainFile), probeFunc(rebuildCodeFile)
	if a == b || !strings.Contains(a, "func rebuildProbe_rappel_go()") || !strings.Contains(b, "func rebuildProbe_record_go()") {
		t.Errorf("probes %q and %q", a, b)
	}
}
