package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/bundle/synth"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/internal/logtest"
	"github.com/rappel-ca/rappel/plugins"
)

// BenchmarkRefresh_FullSizeVehicleFile measures a node's first live
// refresh of a vehicle file the size of Transport Canada's monthly full
// file (207 MB) and the Health Canada dumps: its wall time and the peak
// resident memory of the server and of its plugin processes, which is
// what the systemd unit's MemoryMax must hold (docs/operations.md,
// "Sizing a node"). The node is this test binary run as rappel serve on a
// fresh data dir with the embedded bundle, as a first start is; its
// plugin runs are its children. `make bench-refresh` runs it.
//
// RAPPEL_BENCH_VRDB_SIZE sets the vehicle file's size (207MB);
// RAPPEL_BENCH_VRDB_ROWS names an agency vehicle file whose rows are
// copied, renumbered, instead of drawn ones (synth.WriteVRDB);
// RAPPEL_BENCH_CORPUS a generated corpus whose dumps are served (one is
// generated otherwise); RAPPEL_BENCH_BINARY a rappel binary to measure
// instead of this one (an older build, for a baseline in the same run).
func BenchmarkRefresh_FullSizeVehicleFile(b *testing.B) {
	if _, err := bundle.ReadManifest(bundle.Embedded()); errors.Is(err, bundle.ErrEmpty) {
		b.Skip("no bundle embedded; run make bundle first")
	}
	size := int64(207e6)
	if s := os.Getenv("RAPPEL_BENCH_VRDB_SIZE"); s != "" {
		var err error
		if size, err = parseByteSize(s); err != nil {
			b.Fatal(err)
		}
	}
	up := benchUpstream(b, size)
	for b.Loop() {
		m := measureRefresh(b, up, os.Getenv("RAPPEL_BENCH_BINARY"))
		b.ReportMetric(m.wall.Seconds(), "s/refresh")
		b.ReportMetric(mibOf(m.parent), "MiB-server")
		b.ReportMetric(mibOf(m.child), "MiB-child")
		b.ReportMetric(mibOf(m.total), "MiB-total")
		b.ReportMetric(mibOf(m.bound), "MiB-bound")
		b.Logf("vehicle file %d bytes: refresh %s (vrdb %s), server peak %.0f MiB, largest plugin process %.0f MiB, server and plugins together %.0f MiB sampled, at most %.0f MiB (server peak + plugins' peaks running at once)",
			size, m.wall.Round(100*time.Millisecond), m.vrdb.Round(100*time.Millisecond), mibOf(m.parent), mibOf(m.child), mibOf(m.total), mibOf(m.bound))
	}
}

func mibOf(n int64) float64 { return float64(n) / (1 << 20) }

// parseByteSize reads 207MB, 40MiB or a number of bytes.
func parseByteSize(s string) (int64, error) {
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"MiB", 1 << 20}, {"GiB", 1 << 30}, {"MB", 1e6}, {"GB", 1e9}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			return int64(v * u.mult), err
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// benchUpstream serves the dumps of a corpus, a vehicle file of size and
// no detail documents.
func benchUpstream(b *testing.B, size int64) *feedstest.Upstream {
	b.Helper()
	cfg := synth.Config{Seed: 1, ReferenceDate: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)}
	corpus := os.Getenv("RAPPEL_BENCH_CORPUS")
	if corpus == "" {
		corpus = b.TempDir()
		if _, err := synth.Generate(corpus, cfg); err != nil {
			b.Fatal(err)
		}
	}
	var rows []byte
	if p := os.Getenv("RAPPEL_BENCH_VRDB_ROWS"); p != "" {
		var err error
		if rows, err = os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
	var csv bytes.Buffer
	if _, err := synth.WriteVRDB(&csv, cfg, size, rows); err != nil {
		b.Fatal(err)
	}
	up := feedstest.NewUpstream(b)
	up.LoadDir(b, "/hc", filepath.Join(corpus, "hc"))
	up.Set("/tc/vrdb.csv", csv.Bytes())
	return up
}

// refreshMemory is what measureRefresh measured.
type refreshMemory struct {
	// wall is from the server's start to the end of its first refresh;
	// vrdb is the vehicle file's part of it.
	wall, vrdb time.Duration
	// parent is the server's peak resident set (VmHWM), child the
	// largest of its plugin processes', total the largest sum of the
	// server's and its children's resident sets sampled at one moment,
	// and bound the server's peak plus the peaks of the children that
	// ran at once.
	parent, child, total, bound int64
}

// measureRefresh starts a node on a fresh data dir with the feeds at up,
// waits for its first refresh to end, and stops it.
func measureRefresh(b *testing.B, up *feedstest.Upstream, binary string) refreshMemory {
	b.Helper()
	args := []string{"serve", "--data-dir", b.TempDir(), "--addr", "127.0.0.1:0", "--min-free-mib", "0",
		"--log-format", "json", "--feeds", "on", "--refresh-interval", "1h",
		"--feed-hc-en", up.URL + "/hc/recalls-en.json", "--feed-hc-fr", up.URL + "/hc/recalls-fr.json",
		"--feed-tc-vrdb", up.URL + "/tc/vrdb.csv", "--feed-detail", up.URL + "/detail/{lang}/{id}.json",
		"--feed-detail-budget", "1ms"}
	var cmd *exec.Cmd
	if binary != "" {
		cmd = exec.Command(binary, args...)
	} else {
		j, _ := json.Marshal(args)
		cmd = exec.Command(os.Args[0], "-test.run=^TestMainProcess$")
		cmd.Env = append(os.Environ(), envMainArgs+"="+string(j))
	}
	stderr := &logtest.Buffer{}
	cmd.Stderr = stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	s := newMemSampler(cmd.Process.Pid)
	var m refreshMemory
	deadline := time.Now().Add(10 * time.Minute)
	for !strings.Contains(stderr.String(), `"msg":"refresh done"`) {
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			b.Fatalf("no refresh done within 10 minutes; the node logged:\n%s", tail(stderr.String(), 4000))
		}
		s.sample()
		time.Sleep(10 * time.Millisecond)
	}
	m.wall = time.Since(start)
	s.sample()
	log := stderr.String()
	for line := range strings.Lines(log) {
		var l struct {
			Msg, Source, Err string
			Took             float64
		}
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		switch {
		case l.Msg == "refreshed" && l.Source == "vrdb":
			m.vrdb = time.Duration(l.Took * float64(time.Second))
		case strings.HasPrefix(l.Msg, "refresh failed"):
			b.Fatalf("the refresh of %s failed: %s", l.Source, l.Err)
		}
	}
	if m.vrdb == 0 {
		b.Fatalf("the vehicle file was not refreshed; the node logged:\n%s", tail(log, 4000))
	}
	m.parent, m.child, m.total, m.bound = s.result()
	if p := os.Getenv("RAPPEL_BENCH_TIMELINE"); p != "" {
		// The samples and the node's log, to see which step peaks.
		var out strings.Builder
		for _, t := range s.timeline {
			fmt.Fprintf(&out, "%s\t%.0f\t%.0f\n", t.at.Sub(start).Round(10*time.Millisecond), mibOf(t.server), mibOf(t.children))
		}
		if err := os.WriteFile(p, []byte(out.String()+log), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return m
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// memSampler follows the resident sets of a process and its children.
type memSampler struct {
	pid   int
	hwm   int64 // the process's VmHWM
	total int64 // the largest sum seen at one sample
	// children's peaks so far, by pid, and the sets of them seen alive
	// at one sample
	peaks    map[int]int64
	shared   [][]int
	timeline []memSample
}

type memSample struct {
	at               time.Time
	server, children int64
}

func newMemSampler(pid int) *memSampler { return &memSampler{pid: pid, peaks: map[int]int64{}} }

// sample reads the process's and its children's resident sets once.
func (s *memSampler) sample() {
	rss, hwm := procMem(s.pid)
	kids := childPIDs(s.pid)
	sum := rss
	var alive []int
	for _, k := range kids {
		krss, khwm := procMem(k)
		if khwm == 0 || !isPluginChild(k) {
			continue // gone, or not yet the plugin (a fork shares its parent's memory until exec)
		}
		sum += krss
		s.peaks[k] = max(s.peaks[k], khwm)
		alive = append(alive, k)
	}
	s.timeline = append(s.timeline, memSample{time.Now(), rss, sum - rss})
	s.hwm = max(s.hwm, hwm)
	s.total = max(s.total, sum)
	if len(alive) > 1 {
		s.shared = append(s.shared, alive)
	}
}

// result returns the server's peak, its largest child's, the largest
// sampled sum, and the bound: the server's peak and the largest sum of the
// peaks of children seen alive together.
func (s *memSampler) result() (parent, child, total, bound int64) {
	most := int64(0)
	for _, p := range s.peaks {
		child = max(child, p)
	}
	most = child
	for _, set := range s.shared {
		sum := int64(0)
		for _, k := range set {
			sum += s.peaks[k]
		}
		most = max(most, sum)
	}
	return s.hwm, child, max(s.total, s.hwm), s.hwm + most
}

// procMem returns a process's VmRSS and VmHWM in bytes, 0 once it is gone.
func procMem(pid int) (rss, hwm int64) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != "VmRSS" && k != "VmHWM" {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if k == "VmRSS" {
			rss = n << 10
		} else {
			hwm = n << 10
		}
	}
	return rss, hwm
}

// isPluginChild reports whether pid runs a plugin.
func isPluginChild(pid int) bool {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return bytes.Contains(b, []byte(plugins.ChildCommand))
}

// childPIDs returns the pids of pid's children.
func childPIDs(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
