package main

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// TestSettle checks settle on real processes: it waits while a grandchild
// of a system's process spins (the children count, as PostgreSQL's do),
// returns soon after it stops, and at once on a system already idle.
func TestSettle(t *testing.T) {
	var log bytes.Buffer
	start := time.Now()
	p, err := startProc("busy-then-idle", "", "", 1, &log, nil,
		"sh", "-c", "timeout 0.3 sh -c 'while :; do :; done'; exec sleep 60")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	s := &system{Name: "busy-then-idle", procs: []*proc{p}}
	idle, err := settleSystems(context.Background(), 2*time.Second, s)
	if err != nil || !idle {
		t.Fatalf("settle on a process idle after 300 ms: idle %v, %v (output %q)", idle, err, log.String())
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("settle returned %s after the start, while its grandchild was still spinning", took)
	}
	again := time.Now()
	if idle, err := settleSystems(context.Background(), 2*time.Second, s); err != nil || !idle {
		t.Fatalf("settle on an idle process: idle %v, %v", idle, err)
	}
	if took := time.Since(again); took > time.Second {
		t.Errorf("settle on an idle process took %s", took)
	}
}

// TestSettleTimeout checks that settle gives up at its timeout on a
// process that stays busy, and says it was not idle.
func TestSettleTimeout(t *testing.T) {
	var log bytes.Buffer
	p, err := startProc("spin", "", "", 1, &log, nil, "sh", "-c", "while :; do :; done")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	start := time.Now()
	idle, err := settleSystems(context.Background(), 500*time.Millisecond, &system{Name: "spin", procs: []*proc{p}})
	took := time.Since(start)
	if err != nil || idle {
		t.Errorf("settle on a spinning process: idle %v, %v", idle, err)
	}
	if took < 500*time.Millisecond || took > 1500*time.Millisecond {
		t.Errorf("settle on a spinning process returned after %s, want its timeout of 500 ms", took)
	}
}

// TestTicksSince checks the sum of CPU used between two readings: a
// process gone counts nothing, a new one (or a new one with an old id)
// all its ticks.
func TestTicksSince(t *testing.T) {
	before := map[int]int64{1: 10, 2: 5, 3: 40}
	now := map[int]int64{1: 12, 3: 2, 4: 7}
	if got := ticksSince(before, now); got != 2+2+7 {
		t.Errorf("ticksSince = %d, want 11", got)
	}
}
