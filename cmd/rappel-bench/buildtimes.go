package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// Err says why they were not measured.
type BuildTimes struct {
	Fresh, Edge, Domain, DomainCode time.Duration
	Err                             string
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
	make := func(what string) (time.Duration, error) {
		cmd := exec.CommandContext(ctx, "make", "build")
		cmd.Dir, cmd.Env = dir, env
		cmd.Stdout, cmd.Stderr = h.logFile("buildtime"), h.logFile("buildtime")
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("make build (%s) failed: %v; its output is in logs/buildtime.log", what, err)
		}
		took := time.Since(start)
		h.logf("  make build, %s: %s", what, took.Round(100*time.Millisecond))
		return took, nil
	}
	var bt BuildTimes
	if bt.Fresh, err = make("fresh"); err != nil {
		return BuildTimes{Err: err.Error()}
	}
	for _, c := range []struct {
		file string
		took *time.Duration
	}{{rebuildEdgeFile, &bt.Edge}, {rebuildDomainFile, &bt.Domain}, {rebuildCodeFile, &bt.DomainCode}} {
		// Each probe is named for its file: two of the files are in one
		// package, and the edits stay in place one after the other.
		if err := appendLine(filepath.Join(dir, c.file), probeFunc(c.file)); err != nil {
			bt.Err = err.Error()
			return bt
		}
		if *c.took, err = make("after a one-line change to " + c.file); err != nil {
			bt.Err = err.Error()
			return bt
		}
	}
	return bt
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
	row(b, "fresh clone, every cache empty", fmtDur(bt.Fresh), fmt.Sprintf("≤ %s: %s", fmtDur(goalFreshBuild), durVerdict(bt.Fresh, goalFreshBuild)))
	row(b, "after a one-line change to "+rebuildEdgeFile, fmtDur(bt.Edge), fmt.Sprintf("≤ %s: %s", fmtDur(goalRebuild), durVerdict(bt.Edge, goalRebuild)))
	row(b, "after a one-line change to "+rebuildDomainFile, fmtDur(bt.Domain), fmt.Sprintf("≤ %s: %s", fmtDur(goalRebuild), durVerdict(bt.Domain, goalRebuild)))
	row(b, "after a one-line change to "+rebuildCodeFile, fmtDur(bt.DomainCode), fmt.Sprintf("≤ %s: %s", fmtDur(goalRebuild), durVerdict(bt.DomainCode, goalRebuild)))
	b.WriteString("\n")
}
