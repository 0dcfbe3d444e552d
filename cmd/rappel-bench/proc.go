package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is a server process started by the harness.
type proc struct {
	Name string
	Addr string // host:port it serves on
	cmd  *exec.Cmd
	done chan error
	exit chan struct{} // closed when the process has exited
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startProc starts argv pinned to cpu with GOMAXPROCS=procs, its output
// going to log.
func startProc(name, addr, cpu string, procs int, log io.Writer, env []string, argv ...string) (*proc, error) {
	if cpu != "" {
		argv = append([]string{"taskset", "-c", cpu}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(procs)), env...)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, so that a ^C to the harness reaches the
	// harness, which then stops its servers in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{Name: name, Addr: addr, cmd: cmd, done: make(chan error, 1), exit: make(chan struct{})}
	go func() {
		p.done <- cmd.Wait()
		close(p.exit)
	}()
	return p, nil
}

// exited is closed once the process has exited.
func (p *proc) exited() <-chan struct{} { return p.exit }

// PID is the server's process id (taskset execs it, so it is the same).
func (p *proc) PID() int { return p.cmd.Process.Pid }

// waitOK polls url until it answers 200, the process exits or timeout
// passes, and returns how long it took from start.
func (p *proc) waitOK(ctx context.Context, url string, header http.Header, start time.Time, timeout time.Duration) (time.Duration, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := start.Add(timeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header = header
		if resp, err := client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(start), nil
			}
		}
		select {
		case err := <-p.done:
			p.done <- err
			return 0, fmt.Errorf("%s exited before serving: %v", p.Name, err)
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s did not answer 200 at %s within %s", p.Name, url, timeout)
		}
	}
}

// Stop sends SIGTERM, then SIGKILL after 30 s.
func (p *proc) Stop() error {
	if p == nil {
		return nil
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil // a signalled exit is the expected one
		}
		return err
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		return fmt.Errorf("%s did not stop within 30 s; killed", p.Name)
	}
}

// Mem is what /proc/PID/status says of a process's memory, in KiB: its
// resident set (VmRSS), the peak of it over the process's life (VmHWM),
// and the resident set's private part, anonymous memory the process
// allocated (RssAnon), apart from the pages of files it maps (RssFile),
// which the kernel can drop and read again and which processes mapping
// the same file share.
type Mem struct {
	RSSKB, PeakKB, AnonKB, FileKB int64
}

// readMem reads pid's Mem; zero when the process is gone.
func readMem(pid int) Mem {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return Mem{}
	}
	return parseStatusMem(string(b))
}

// parseStatusMem reads the memory lines of a /proc/PID/status.
func parseStatusMem(status string) Mem {
	var m Mem
	for _, line := range strings.Split(status, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			m.RSSKB = n
		case "VmHWM":
			m.PeakKB = n
		case "RssAnon":
			m.AnonKB = n
		case "RssFile":
			m.FileKB = n
		}
	}
	return m
}

// cpuTicks is the CPU time pid has used (user and system, in clock ticks),
// from /proc/PID/stat; -1 when the process is gone.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// The command name, in parentheses, may hold spaces: the fields
	// counted start after its closing parenthesis, utime and stime being
	// the 14th and 15th of the line.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return -1
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// quiet is a rule for when processes have gone idle: between them, at
// most one clock tick of CPU over their last n windows of window each.
type quiet struct {
	window time.Duration
	n      int
}

var (
	// quietAfterStart is the rule after a start: a node writing its
	// index or compacting its store works in bursts, so only a second of
	// near silence says that it is done.
	quietAfterStart = quiet{250 * time.Millisecond, 4}
	// quietBeforeLatency is the rule before a constant-rate run: a server
	// working off the backlog of the wrk run before it is busy without
	// pause, so a tenth of a second of near silence says that it is done,
	// at a cost the few hundred constant-rate runs of a run can pay.
	quietBeforeLatency = quiet{50 * time.Millisecond, 2}
)

// span is how long q's windows last together.
func (q quiet) span() time.Duration { return q.window * time.Duration(q.n) }

// waitQuiet waits until the processes pids returns have gone idle by q's
// rule, and says whether they did before timeout passed. pids is asked
// again at every window, so that a child started meanwhile counts; a
// process gone uses no CPU.
func waitQuiet(ctx context.Context, pids func() []int, q quiet, timeout time.Duration) (bool, error) {
	deadline := time.Now().Add(timeout)
	used := make([]int64, q.n) // the ticks of the last n windows, a ring
	last := ticksOf(pids())
	for i := 0; time.Now().Before(deadline); i++ {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(q.window):
		}
		now := ticksOf(pids())
		used[i%q.n], last = ticksSince(last, now), now
		if i >= q.n-1 && sum(used) <= 1 {
			return true, nil
		}
	}
	return false, nil
}

// ticksOf is the CPU ticks of each of pids still running.
func ticksOf(pids []int) map[int]int64 {
	t := make(map[int]int64, len(pids))
	for _, pid := range pids {
		if n := cpuTicks(pid); n >= 0 {
			t[pid] = n
		}
	}
	return t
}

// ticksSince is the ticks used between two readings of ticksOf. A process
// that was not in the first (started since), or whose count went down (a
// new process with an old one's id), counts with all its ticks.
func ticksSince(before, now map[int]int64) int64 {
	var n int64
	for pid, t := range now {
		if b, ok := before[pid]; ok && b <= t {
			t -= b
		}
		n += t
	}
	return n
}

func sum(xs []int64) int64 {
	var n int64
	for _, x := range xs {
		n += x
	}
	return n
}

// waitIdle waits until p has gone idle by quietAfterStart: a start that
// answered its first request may still be at work (writing its index,
// compacting its store), and the data dir it leaves is the one a node
// finds at its next start only once that work is done. It gives up after
// timeout, or when p exits, and says so.
func (p *proc) waitIdle(ctx context.Context, timeout time.Duration) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.exit:
			cancel()
		case <-wctx.Done():
		}
	}()
	idle, err := waitQuiet(wctx, func() []int { return []int{p.PID()} }, quietAfterStart, timeout)
	select {
	case <-p.exit:
		err := <-p.done
		p.done <- err
		return fmt.Errorf("%s exited: %v", p.Name, err)
	default:
	}
	switch {
	case err != nil:
		return err
	case !idle:
		return fmt.Errorf("%s was still using CPU after %s", p.Name, timeout)
	}
	return nil
}

// childPIDs returns the children of pid (one level), from /proc: those of
// each of its threads, since a child is listed under the thread that
// started it.
func childPIDs(pid int) []int {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// withDescendants returns pid and every process under it.
func withDescendants(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, childPIDs(out[i])...)
	}
	return out
}

// memAvailableKB is MemAvailable from /proc/meminfo.
func memAvailableKB() int64 { return meminfo("MemAvailable:") }

// memTotalKB is MemTotal from /proc/meminfo.
func memTotalKB() int64 { return meminfo("MemTotal:") }

// meminfo reads the line key of /proc/meminfo, in KiB; 0 when absent.
func meminfo(key string) int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
