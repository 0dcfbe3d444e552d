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
	p := &proc{Name: name, Addr: addr, cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

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

// rssKB returns the resident set size and its peak (VmRSS, VmHWM) of pid,
// in KiB, from /proc.
func rssKB(pid int) (rss, peak int64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			peak = n
		}
	}
	return rss, peak
}

// childPIDs returns the children of pid (one level), from /proc.
func childPIDs(pid int) []int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// memAvailableKB is MemAvailable from /proc/meminfo.
func memAvailableKB() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
