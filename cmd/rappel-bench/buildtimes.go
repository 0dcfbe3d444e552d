package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The build goals: `make build` on a fresh clone with every cache empty,
// and again after a one-line change.
const (
	goalFreshBuild = 3 * time.Minute
	goalRebuild    = 30 * time.Second
)

// BuildTimes are the wall times of `make build` on a clone of the
// repository's HEAD: Fresh with the Go module, Go build and npm caches
// empty, Edge after a one-line change to a file of the HTTP layer (only
// the binary depends on it), Domain after a one-line change to the domain
// package's doc file, which every step (plugins, corpus, bundle, binary)
// compiles, and DomainCode after one to a domain file that holds code.
// The two domain edits differ: a function in a file that had none adds
// that file to the file table of every binary linking the domain, so the
// plugins' bytes change and the bundle is made again; a function added
// beside others compiles to the same plugins and bundle step, which the
// Makefile keys by their bytes, and only bin/rappel is linked again.
// Err says why they were not measured. The Steps are, for each build, the
// lines of make's output followed by the longest waits (readSteps): where
// a build that misses its goal spends its time.
type BuildTimes struct {
	Fresh, Edge, Domain, DomainCode                     time.Duration
	FreshSteps, EdgeSteps, DomainSteps, DomainCodeSteps []BuildStep `json:",omitempty"`
	Err                                                 string
}

// BuildStep is a line of make's output: when it came, from make's start,
// and how long until the next line, or until make's end after its last.
// The first step of a build, with no line, is make's own start (reading
// the Makefile, running its $(shell …) calls) up to its first line. The
// Makefile's steps run side by side, one per core, so a wait is wall time
// in which none of them printed, not one step's time.
type BuildStep struct {
	Line     string `json:",omitempty"`
	At, Wait time.Duration
}

// stepsKept is how many steps of each build are kept: those followed by
// the longest waits.
const stepsKept = 8

// timedBuild is one of the builds of BuildTimes, as the report shows it.
type timedBuild struct {
	label      string // the table's row
	goalWhat   string // the goal's sentence
	took, goal time.Duration
	steps      []BuildStep
}

// builds lists bt's builds in the order they run.
func (bt BuildTimes) builds() []timedBuild {
	rebuild := func(file string, took time.Duration, steps []BuildStep) timedBuild {
		label := "after a one-line change to " + file
		return timedBuild{label, "make build " + label, took, goalRebuild, steps}
	}
	return []timedBuild{
		{"fresh clone, every cache empty", "make build on a fresh clone with every cache empty", bt.Fresh, goalFreshBuild, bt.FreshSteps},
		rebuild(rebuildEdgeFile, bt.Edge, bt.EdgeSteps),
		rebuild(rebuildDomainFile, bt.Domain, bt.DomainSteps),
		rebuild(rebuildCodeFile, bt.DomainCode, bt.DomainCodeSteps),
	}
}

// The files the rebuilds change: a function appended to each, so that the
// package compiles anew and nothing else in it moves.
var (
	rebuildEdgeFile   = "edge/server.go"
	rebuildDomainFile = "rappel.go"
	rebuildCodeFile   = "record.go"
)

// measureBuilds times `make build` on a clone of h.Repo's HEAD in the work
// dir, with caches of its own under the clone so that nothing is shared
// with the machine's, then after each one-line change. It runs before the
// harness pins itself to a core, so that make uses every core, as a
// developer's does; the clone and its caches are removed afterwards.
func (h *Harness) measureBuilds(ctx context.Context) BuildTimes {
	dir, err := filepath.Abs(filepath.Join(h.WorkDir, "buildtime"))
	if err != nil {
		return BuildTimes{Err: err.Error()}
	}
	os.RemoveAll(dir)
	defer os.RemoveAll(dir)
	h.logf("timing make build on a fresh clone, every cache empty")
	if out, err := exec.CommandContext(ctx, "git", "clone", "-q", "--no-hardlinks", h.Repo, dir).CombinedOutput(); err != nil {
		return BuildTimes{Err: fmt.Sprintf("cloning the repository: %v: %s", err, strings.TrimSpace(string(out)))}
	}
	caches := filepath.Join(dir, ".buildtime-caches")
	env := append(os.Environ(),
		"GOMODCACHE="+filepath.Join(caches, "mod"),
		"GOCACHE="+filepath.Join(caches, "build"),
		"npm_config_cache="+filepath.Join(caches, "npm"),
		// The module cache is read-only by default, which would keep
		// the deferred RemoveAll from deleting it.
		"GOFLAGS=-modcacherw",
	)
	var bt BuildTimes
	if bt.Fresh, bt.FreshSteps, err = h.timeMake(ctx, dir, env, "fresh"); err != nil {
		return BuildTimes{Err: err.Error()}
	}
	for _, c := range []struct {
		file  string
		took  *time.Duration
		steps *[]BuildStep
	}{{rebuildEdgeFile, &bt.Edge, &bt.EdgeSteps}, {rebuildDomainFile, &bt.Domain, &bt.DomainSteps}, {rebuildCodeFile, &bt.DomainCode, &bt.DomainCodeSteps}} {
		// Each probe is named for its file: two of the files are in one
		// package, and the edits stay in place one after the other.
		if err := appendLine(filepath.Join(dir, c.file), probeFunc(c.file)); err != nil {
			bt.Err = err.Error()
			return bt
		}
		if *c.took, *c.steps, err = h.timeMake(ctx, dir, env, "after a one-line change to "+c.file); err != nil {
			bt.Err = err.Error()
			return bt
		}
	}
	return bt
}

// timeMake runs `make build` in dir and returns its wall time and the
// steps of its output followed by the longest waits; the output goes to
// logs/buildtime.log as it comes.
func (h *Harness) timeMake(ctx context.Context, dir string, env []string, what string) (time.Duration, []BuildStep, error) {
	log := h.logFile("buildtime")
	fmt.Fprintf(log, "== make build, %s\n", what)
	cmd := exec.CommandContext(ctx, "make", "build")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, nil, err
	}
	cmd.Stderr = cmd.Stdout // one pipe, so that the lines come in the order made
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, nil, fmt.Errorf("starting make build (%s): %w", what, err)
	}
	steps := readSteps(out, log, start, time.Now)
	err = cmd.Wait()
	took := time.Since(start)
	if err != nil {
		return 0, nil, fmt.Errorf("make build (%s) failed: %v; its output is in logs/buildtime.log", what, err)
	}
	h.logf("  make build, %s: %s", what, took.Round(100*time.Millisecond))
	return took, longestSteps(steps, stepsKept), nil
}

// readSteps reads make's output from r line by line as it comes, until
// r's end, copying it to log, and returns a step for each line, stamped
// by now, and one for make's start (the first, with no line).
func readSteps(r io.Reader, log io.Writer, start time.Time, now func() time.Time) []BuildStep {
	steps := []BuildStep{{}}
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			at := now().Sub(start)
			io.WriteString(log, line)
			steps[len(steps)-1].Wait = at - steps[len(steps)-1].At
			steps = append(steps, BuildStep{Line: strings.TrimRight(line, " \t\r\n"), At: at})
		}
		if err != nil {
			// The end of the output is make's end: every process that
			// could still print has closed the pipe.
			steps[len(steps)-1].Wait = now().Sub(start) - steps[len(steps)-1].At
			return steps
		}
	}
}

// longestSteps returns the n steps followed by the longest waits, the
// longest first.
func longestSteps(steps []BuildStep, n int) []BuildStep {
	steps = slices.Clone(steps)
	slices.SortStableFunc(steps, func(a, b BuildStep) int { return cmp.Compare(b.Wait, a.Wait) })
	return steps[:min(n, len(steps))]
}

// probeFunc is the function appended to file for a rebuild: unused, and
// named for the file, so that probes in files of one package differ.
func probeFunc(file string) string {
	name := strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '_'
	}, file)
	return "\nfunc rebuildProbe_" + name + "() int { return 1 }\n"
}

// appendLine appends s to the file at path.
func appendLine(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("changing %s for a rebuild: %w", path, err)
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return fmt.Errorf("changing %s for a rebuild: %w", path, err)
	}
	return f.Close()
}

// renderBuilds writes the build times and their goals.
func renderBuilds(b *strings.Builder, res *Results) {
	bt := res.Build
	if bt.Fresh == 0 && bt.Err == "" {
		return
	}
	fmt.Fprintf(b, "### Building\n\n"+
		"`make build` on a clone of the commit measured, its Go module, Go build and npm caches empty (the modules downloaded from the Go module proxy, the Swagger UI package from the npm registry), every core in use; "+
		"then after appending one function to `%s` (the HTTP layer: only the binary depends on it), then to `%s` (the domain package's doc file, until then without code: every step compiles the domain, and the new file in every binary's file table changes the plugins' bytes, so the bundle is made again), then to `%s` (a domain file with code: the plugins and the bundle step compile to the same bytes, which the Makefile keys them by, so only the binary is linked again).\n\n", rebuildEdgeFile, rebuildDomainFile, rebuildCodeFile)
	if bt.Err != "" {
		fmt.Fprintf(b, "Not all measured: %s.\n\n", bt.Err)
	}
	header(b, "build", "wall time", "goal")
	for _, tb := range bt.builds() {
		row(b, tb.label, fmtDur(tb.took), fmt.Sprintf("≤ %s: %s", fmtDur(tb.goal), durVerdict(tb.took, tb.goal)))
	}
	b.WriteString("\n")
	renderBuildSteps(b, bt)
}

// renderBuildSteps writes, for each build that missed its goal, the lines
// of make's output followed by the longest waits.
func renderBuildSteps(b *strings.Builder, bt BuildTimes) {
	var missed []timedBuild
	for _, tb := range bt.builds() {
		if tb.took > tb.goal && len(tb.steps) > 0 {
			missed = append(missed, tb)
		}
	}
	if len(missed) == 0 {
		return
	}
	fmt.Fprintf(b, "Where a build that misses its goal spends its time: the %d lines of make's output (its own and its commands', as they came) followed by the longest waits, the longest first, each with the wait until the next line (or make's end) and when it came from make's start. "+
		"The first of a build's lines, \"%s\", is make reading the Makefile and running its `$(shell …)` calls. "+
		"The steps run side by side, one per core: a wait is wall time in which none of them printed, not one step's time.\n\n", stepsKept, makeStartLine)
	for _, tb := range missed {
		lines := []string{fmt.Sprintf("%9s %9s  %s", "wait", "at", "line")}
		for _, st := range tb.steps {
			line := st.Line
			if line == "" && st.At == 0 {
				line = makeStartLine
			}
			lines = append(lines, fmt.Sprintf("%7.1f s %7.1f s  %s", st.Wait.Seconds(), st.At.Seconds(), line))
		}
		fmt.Fprintf(b, "<details><summary>%s (%s)</summary>\n\n```\n%s\n```\n\n</details>\n\n", tb.label, fmtDur(tb.took), strings.Join(lines, "\n"))
	}
}

// makeStartLine stands for the step before make's first line.
const makeStartLine = "(make's start, to its first line)"
