package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// startProbe is the request whose first 200 ends a start: the first page
// of every record, which needs the read index, not only the store.
const startProbe = "/recall"

// idleTimeout bounds the wait for a started node to finish its work.
const idleTimeout = 10 * time.Minute

// Start is one start of rappel: exec to its first 200 of GET /recall
// (Took), and to the lines of its log that mark its steps, -1 for a line
// not found: "starting rappel" (the runtime up, the flags read); the
// bundle's line, the first after it not from Pebble (the store open, the
// bundle loaded into it or found there); "dataset ready" (the read index
// open); and "serving".
type Start struct {
	Took, Logging, Bundle, Ready, Serving time.Duration

	log     string    // rappel's log file
	logFrom int64     // its size at exec
	exec    time.Time // when the start began
}

// readSteps fills the steps from rappel's log. rappel writes its log out
// every 100 ms: call it once the node has stopped or has been up longer.
func (st *Start) readSteps() {
	steps := logSteps(st.log, st.logFrom, st.exec)
	st.Logging, st.Bundle, st.Ready, st.Serving = steps.Logging, steps.Bundle, steps.Ready, steps.Serving
}

// startRappel starts `rappel serve` on dataDir, with env added to its
// environment and watch, when not nil, running on the process from its
// exec, and returns the process and the start.
func (h *Harness) startRappel(ctx context.Context, bin, dataDir string, env []string, timeout time.Duration, watch func(*proc)) (*proc, Start, error) {
	return h.startRappelOn(ctx, h.ServerCPU, 1, bin, dataDir, env, timeout, watch)
}

// startRappelOn is startRappel on the cpus given (taskset's list, empty
// for no pinning) with GOMAXPROCS=procs.
func (h *Harness) startRappelOn(ctx context.Context, cpu string, procs int, bin, dataDir string, env []string, timeout time.Duration, watch func(*proc)) (*proc, Start, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, Start{}, err
	}
	logName := filepath.Join(h.WorkDir, "logs", "rappel.log")
	var offset int64
	if info, err := os.Stat(logName); err == nil {
		offset = info.Size()
	}
	start := time.Now()
	p, err := startProc("rappel", addr, cpu, procs, h.logFile("rappel"), env,
		bin, "serve", "--addr", addr, "--data-dir", dataDir, "--api-keys", benchKey, "--feeds", "off")
	if err != nil {
		return nil, Start{}, err
	}
	if watch != nil {
		go watch(p)
	}
	took, err := p.waitOK(ctx, "http://"+addr+startProbe, keyHeader(), start, timeout)
	if err != nil {
		p.Stop()
		return nil, Start{}, err
	}
	return p, Start{Took: took, Logging: -1, Bundle: -1, Ready: -1, Serving: -1, log: logName, logFrom: offset, exec: start}, nil
}

// logSteps reads, from offset on in rappel's log file, when the start
// that began at exec logged its steps (Start).
func logSteps(file string, offset int64, exec time.Time) Start {
	st := Start{Logging: -1, Bundle: -1, Ready: -1, Serving: -1}
	f, err := os.Open(file)
	if err != nil {
		return st
	}
	defer f.Close()
	b, _ := io.ReadAll(io.NewSectionReader(f, offset, 1<<20))
	for _, line := range strings.Split(string(b), "\n") {
		var at *time.Duration
		switch {
		case strings.Contains(line, `msg="starting rappel"`):
			at = &st.Logging
		case strings.Contains(line, `msg="dataset ready"`):
			at = &st.Ready
		case strings.Contains(line, `msg=serving`):
			at = &st.Serving
		case st.Logging >= 0 && st.Bundle < 0 && strings.HasPrefix(line, "time=") && !strings.Contains(line, "component=pebble"):
			at = &st.Bundle
		default:
			continue
		}
		v, ok := strings.CutPrefix(line, "time=")
		if !ok || *at >= 0 {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, strings.Fields(v)[0])
		if err == nil {
			*at = t.Sub(exec)
		}
		if st.Serving >= 0 {
			break
		}
	}
	return st
}

// starts starts rappel n times on dataDir, emptied before each start when
// empty is set, and returns each start's time and the last process, left
// running once it is idle.
func (h *Harness) starts(ctx context.Context, bin, dataDir string, empty bool, n int) ([]Start, *proc, error) {
	var took []Start
	var p *proc
	kind := "its warm data dir"
	if empty {
		kind = "an empty data dir"
	}
	for i := range n {
		if p != nil {
			if err := p.Stop(); err != nil {
				return nil, nil, err
			}
			took[i-1].readSteps()
		}
		if empty {
			if err := os.RemoveAll(dataDir); err != nil {
				return nil, nil, fmt.Errorf("clearing rappel's data dir: %w", err)
			}
		}
		h.logf("starting rappel on %s (%d/%d)", kind, i+1, n)
		var d Start
		var err error
		if p, d, err = h.startRappel(ctx, bin, dataDir, nil, 10*time.Minute, nil); err != nil {
			return nil, nil, err
		}
		took = append(took, d)
	}
	if err := p.waitIdle(ctx, idleTimeout); err != nil {
		p.Stop()
		return nil, nil, err
	}
	took[n-1].readSteps()
	return took, p, nil
}

// NodeMem is a node's memory after the mixed load: Mem as /proc says it
// then (Peak being the highest resident set since exec, the start
// included), and the mixed load's throughput and failures (a node that
// answers 504 to a query over its time budget is still measured).
type NodeMem struct {
	Mem
	MixedRPS    float64
	MixedErrors int // failed requests (errors and non-200s) of the mixed load
}

// mixedLoad runs wrk on s with every class's request in turn, for the
// mixed-load duration, and returns s's memory after it.
func (h *Harness) mixedLoad(ctx context.Context, s *system, classes []Class) (NodeMem, error) {
	var uris []string
	for _, c := range classes {
		uris = append(uris, s.URI[c.Name])
	}
	script, err := filepath.Abs(filepath.Join(h.WorkDir, "mixed.lua"))
	if err != nil {
		return NodeMem{}, err
	}
	h.logf("mixed load on %s (%d requests in turn, %s)", s.Name, len(uris), h.MixedDur)
	w, err := runWrkMixed(ctx, h.LoadCPU, s.Base, uris, script, keyHeader(), h.Conns, h.MixedDur)
	if err != nil {
		return NodeMem{}, err
	}
	return NodeMem{Mem: readMem(s.procs[0].PID()), MixedRPS: w.RPS, MixedErrors: w.Errors}, nil
}

// coldAndWarm measures rappel's starts: Startups first starts, each on an
// empty data dir (the embedded bundle loaded into it), the memory after
// the last one and the mixed load; then Startups starts on the data dir
// the last first start left once idle, and the memory after the last one
// and the mixed load. The last node is left running, for the comparison,
// and the bodies it answered returned, for the bare handler.
func (h *Harness) coldAndWarm(ctx context.Context, bin string, classes []Class, res *Results) (*system, Bodies, error) {
	dataDir := h.rappelDataDir()
	node := func(p *proc) *system {
		return &system{Name: "rappel", Base: "http://" + p.Addr, URI: map[string]string{}, procs: []*proc{p}}
	}
	took, p, err := h.starts(ctx, bin, dataDir, true, h.Startups)
	if err != nil {
		return nil, nil, err
	}
	res.FirstStart = took
	s := node(p)
	if _, err := h.resolve(ctx, s, classes); err != nil {
		s.stop()
		return nil, nil, err
	}
	res.ColdMem, err = h.mixedLoad(ctx, s, classes)
	if err := s.stop(); err != nil {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, err
	}
	res.WarmStartProfile = h.warmStartProfile(ctx, bin, dataDir)
	if took, p, err = h.starts(ctx, bin, dataDir, false, h.Startups); err != nil {
		return nil, nil, err
	}
	res.WarmStart = took
	s = node(p)
	bodies, err := h.resolve(ctx, s, classes)
	if err != nil {
		s.stop()
		return nil, nil, err
	}
	if res.WarmMem, err = h.mixedLoad(ctx, s, classes); err != nil {
		s.stop()
		return nil, nil, err
	}
	return s, bodies, nil
}

// warmStartProfile starts rappel once on its warm data dir under perf
// record, from the moment perf attaches to the node's first 200, and
// returns perf's flat report, nil without perf. It runs before the timed
// warm starts and is not one of them, so that perf's cost is in none; the
// report shows it when their median misses its goal.
func (h *Harness) warmStartProfile(ctx context.Context, bin, dataDir string) []string {
	h.logf("starting rappel on its warm data dir under perf (not timed)")
	perfc := make(chan *perfRecording, 1)
	p, _, err := h.startRappel(ctx, bin, dataDir, nil, 10*time.Minute, func(p *proc) {
		perfc <- h.startPerf(p.PID(), "perf-warm-start.data", "2999")
	})
	if err != nil {
		return nil
	}
	top := (<-perfc).stop(ctx)
	p.Stop()
	return top
}

func (h *Harness) rappelDataDir() string { return filepath.Join(h.WorkDir, "rappel-data") }
