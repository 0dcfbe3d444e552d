package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadSteps feeds make's output through readSteps with a clock that
// gives each line its time: every line is kept, with the wait after it,
// the first step is make's start, and the output reaches the log whole.
func TestReadSteps(t *testing.T) {
	out := "make: installing the pinned Swagger UI with npm ci\n" +
		"cd edge/docs && npm ci --ignore-scripts --no-audit --no-fund\r\n" +
		"make: compiling rappel for the bundle step\n" +
		"bundle: done" // no newline: make's last line may lack one
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	// The times of the four lines, then of the output's end.
	stamps := []time.Duration{2 * time.Second, 2500 * time.Millisecond, 10 * time.Second, 11 * time.Second, 15 * time.Second}
	now := func() time.Time {
		if len(stamps) == 0 {
			t.Fatal("readSteps asked the time more often than once per line and once at the end")
		}
		d := stamps[0]
		stamps = stamps[1:]
		return start.Add(d)
	}
	var log strings.Builder
	steps := readSteps(strings.NewReader(out), &log, start, now)
	if log.String() != out {
		t.Errorf("the log got %q, want the output as it came", log.String())
	}
	s := time.Second
	want := []BuildStep{
		{Line: "", At: 0, Wait: 2 * s},
		{Line: "make: installing the pinned Swagger UI with npm ci", At: 2 * s, Wait: s / 2},
		{Line: "cd edge/docs && npm ci --ignore-scripts --no-audit --no-fund", At: 2500 * time.Millisecond, Wait: 7500 * time.Millisecond},
		{Line: "make: compiling rappel for the bundle step", At: 10 * s, Wait: s},
		{Line: "bundle: done", At: 11 * s, Wait: 4 * s},
	}
	if len(steps) != len(want) {
		t.Fatalf("steps %+v, want %+v", steps, want)
	}
	for i := range want {
		if steps[i] != want[i] {
			t.Errorf("step %d is %+v, want %+v", i, steps[i], want[i])
		}
	}
	top := longestSteps(steps, 3)
	if len(top) != 3 || top[0] != want[2] || top[1] != want[4] || top[2] != want[0] {
		t.Errorf("the 3 longest waits are %+v, want the npm ci line, the last line and make's start", top)
	}
	if steps[1] != want[1] {
		t.Error("longestSteps reordered the steps it was given")
	}
}

// TestReadStepsAsTheyCome reads a real process's output: a line is stamped
// when it comes, not when the output ends.
func TestReadStepsAsTheyCome(t *testing.T) {
	cmd := exec.Command("sh", "-c", "echo first; sleep 0.3; echo second")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	steps := readSteps(out, &log, start, time.Now)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 || steps[1].Line != "first" || steps[2].Line != "second" {
		t.Fatalf("steps %+v", steps)
	}
	if w := steps[1].Wait; w < 250*time.Millisecond || w > 2*time.Second {
		t.Errorf("the wait after the first line is %s, want the 300 ms the process slept", w)
	}
	if steps[2].At-steps[1].At != steps[1].Wait {
		t.Errorf("the wait after the first line, %s, is not the time to the second, %s", steps[1].Wait, steps[2].At-steps[1].At)
	}
}

// TestRenderBuildSteps checks that the steps of a build missing its goal
// are shown, collapsed, after the table, and a build within its goal's are
// not.
func TestRenderBuildSteps(t *testing.T) {
	res := &Results{Build: BuildTimes{
		Fresh: 4 * time.Minute,
		FreshSteps: []BuildStep{
			{Line: "make: compiling rappel for the bundle step (on a fresh clone Go downloads and compiles the modules first, a few minutes without output)", At: 3 * time.Second, Wait: 150 * time.Second},
			{At: 0, Wait: 1200 * time.Millisecond},
		},
		Edge:      12 * time.Second,
		EdgeSteps: []BuildStep{{Line: "make: building bin/rappel", At: time.Second, Wait: 11 * time.Second}},
	}}
	var b strings.Builder
	renderBuilds(&b, res)
	out := b.String()
	reportHas(t, out, []string{
		"| after a one-line change to record.go | 0 µs | ≤ 30.00 s: (not measured) |\n\nWhere a build that misses its goal spends its time: the 8 lines",
		"<details><summary>fresh clone, every cache empty (4 min 00 s)</summary>\n\n```\n" +
			"     wait        at  line\n" +
			"  150.0 s     3.0 s  make: compiling rappel for the bundle step (on a fresh clone Go downloads and compiles the modules first, a few minutes without output)\n" +
			"    1.2 s     0.0 s  (make's start, to its first line)\n" +
			"```\n\n</details>\n\n",
	})
	if strings.Contains(out, "make: building bin/rappel") || strings.Count(out, "<details>") != 1 {
		t.Errorf("the steps of the edge rebuild, within its goal, are shown:\n%s", out)
	}
	var none strings.Builder
	renderBuilds(&none, &Results{Build: BuildTimes{Fresh: 4 * time.Minute}})
	if strings.Contains(none.String(), "<details>") || strings.Contains(none.String(), "Where a build") {
		t.Errorf("a build with no steps recorded (an older run's results) shows a profile:\n%s", none.String())
	}
}

// TestBuildTimesJSON checks that an older run's results.json, without
// steps, still reads, and that the steps survive a round trip.
func TestBuildTimesJSON(t *testing.T) {
	var old BuildTimes
	if err := json.Unmarshal([]byte(`{"Fresh":180000000000,"Edge":5000000000,"Domain":0,"DomainCode":0,"Err":""}`), &old); err != nil || old.Fresh != 3*time.Minute || old.FreshSteps != nil {
		t.Errorf("an older BuildTimes read as %+v, %v", old, err)
	}
	bt := BuildTimes{Fresh: time.Minute, FreshSteps: []BuildStep{{Wait: time.Second}, {Line: "go build", At: time.Second, Wait: 59 * time.Second}}}
	b, err := json.Marshal(bt)
	if err != nil {
		t.Fatal(err)
	}
	var back BuildTimes
	if err := json.Unmarshal(b, &back); err != nil || len(back.FreshSteps) != 2 || back.FreshSteps[1] != bt.FreshSteps[1] {
		t.Errorf("round trip of %s gave %+v, %v", b, back, err)
	}
}

// TestTimeMake runs make on a Makefile of a few steps: the lines of its
// standard output and its standard error are both steps, the slow one
// found, and the log holds the output.
func TestTimeMake(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	dir, work := t.TempDir(), t.TempDir()
	mk := "build:\n\t@echo 'make: building bin/rappel'\n\tsleep 0.3\n\t@echo 'go: downloading a module' >&2\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(work, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := &Harness{WorkDir: work, Stderr: io.Discard}
	took, steps, err := h.timeMake(context.Background(), dir, os.Environ(), "test")
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]BuildStep{}
	for _, s := range steps {
		lines[s.Line] = s
	}
	if s, ok := lines["make: building bin/rappel"]; !ok || s.Wait > 200*time.Millisecond {
		t.Errorf("the echo before the slow command: %+v (found %v), want a short wait; steps %+v", s, ok, steps)
	}
	if s, ok := lines["sleep 0.3"]; !ok || s.Wait < 250*time.Millisecond || s.Wait > took || steps[0].Line != "sleep 0.3" {
		t.Errorf("the slow command: %+v (found %v), want the longest wait, about 300 ms; steps %+v", s, ok, steps)
	}
	if _, ok := lines["go: downloading a module"]; !ok {
		t.Errorf("the line on standard error is not a step: %+v", steps)
	}
	log, err := os.ReadFile(filepath.Join(work, "logs", "buildtime.log"))
	if err != nil || !strings.Contains(string(log), "make: building bin/rappel\nsleep 0.3\ngo: downloading a module\n") {
		t.Errorf("logs/buildtime.log holds %q, %v", log, err)
	}
}
