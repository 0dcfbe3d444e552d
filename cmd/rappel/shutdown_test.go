package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rappel-ca/rappel/internal/logtest"
)

// envMainArgs, when set, makes TestMainProcess run main with these
// arguments (JSON): the real process's signal handling and exit status.
const envMainArgs = "RAPPEL_TEST_MAIN_ARGS"

// TestMainProcess is main, run as a child process by the shutdown tests.
func TestMainProcess(t *testing.T) {
	raw := os.Getenv(envMainArgs)
	if raw == "" {
		t.Skip("run as a child process by TestShutdown")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatal(err)
	}
	os.Args = append([]string{"rappel"}, args...)
	main()
}

// startMain runs rappel serve as a child process on a data dir of one
// record with JSON logs and returns its address, the process and its
// stderr.
func startMain(t *testing.T, extra ...string) (string, *exec.Cmd, *logtest.Buffer) {
	t.Helper()
	dir, _ := mustDataDir(t)
	return startMainOn(t, dir, extra...)
}

// startMainOn is startMain on the data dir dir: an empty one loads the
// embedded bundle.
func startMainOn(t *testing.T, dir string, extra ...string) (string, *exec.Cmd, *logtest.Buffer) {
	t.Helper()
	args := append([]string{"serve", "--data-dir", dir, "--addr", "127.0.0.1:0", "--min-free-mib", "0",
		"--log-format", "json", "--api-keys", "test-key"}, extra...)
	b, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainProcess$")
	cmd.Env = append(os.Environ(), envMainArgs+"="+string(b))
	stderr := &logtest.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var addr string
	waitFor(t, "the node to serve", func() bool {
		var ok bool
		addr, ok = logAddr(stderr.String(), "serving")
		return ok
	})
	return addr, cmd, stderr
}

// logAddr returns the addr of the first JSON log line msg in logs, and
// whether there is one.
func logAddr(logs, msg string) (string, bool) {
	for line := range strings.Lines(logs) {
		var l struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == msg {
			return l.Addr, true
		}
	}
	return "", false
}

// exitStatus waits for the process and returns its exit status.
func exitStatus(t *testing.T, cmd *exec.Cmd, stderr *logtest.Buffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(60 * time.Second):
		t.Fatalf("the node did not stop after SIGTERM:\n%s", stderr.String())
	}
	return -1
}

// TestShutdown sends SIGTERM to a real node process: with its requests
// drained it exits 0 (2 is for usage errors); with a request still
// running at --shutdown-timeout, the request is logged as cut by the
// shutdown, not as a 200, and the process exits 1.
func TestShutdown(t *testing.T) {
	t.Run("Drained", func(t *testing.T) {
		addr, cmd, stderr := startMain(t)
		if code, body := get(t, "http://"+addr+"/health", ""); code != http.StatusOK {
			t.Fatalf("GET /health = %d %s", code, body)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := exitStatus(t, cmd, stderr); code != 0 {
			t.Fatalf("exit status %d after SIGTERM with nothing in flight, want 0:\n%s", code, stderr.String())
		}
		// The last line says the store closed: a stop that ended before it
		// (a kill, a hang) has no such line.
		var last map[string]any
		for line := range strings.Lines(stderr.String()) {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) == nil {
				last = l
			}
		}
		if last == nil || last["msg"] != "stopped: the store is closed" {
			t.Fatalf("the last log line of a clean stop is %v, want the store closed:\n%s", last, stderr.String())
		}
	})
	t.Run("CutAtTimeout", func(t *testing.T) {
		addr, cmd, stderr := startMain(t, "--shutdown-timeout", "300ms")
		// A subscription whose body never comes: its handler waits for
		// it past the shutdown timeout.
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /recall/alerts/subscribe HTTP/1.1\r\nHost: %s\r\nx-gateway-key: test-key\r\nX-Request-Id: cut-me\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", addr)
		if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err != nil || resp.StatusCode != http.StatusContinue {
			t.Fatalf("no 100 Continue: %v %v", resp, err)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := exitStatus(t, cmd, stderr); code != 1 {
			t.Errorf("exit status %d after a shutdown that cut a request, want 1:\n%s", code, stderr.String())
		}
		var logged map[string]any
		for line := range strings.Lines(stderr.String()) {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) == nil && l["msg"] == "request" && l["request_id"] == "cut-me" {
				logged = l
			}
		}
		if logged == nil {
			t.Fatalf("the cut request was not logged:\n%s", stderr.String())
		}
		if logged["cut"] != "the node shut down" || logged["status"] == float64(http.StatusOK) {
			t.Fatalf("the request cut at the shutdown timeout is logged %v; want it cut by the shutdown, not a 200", logged)
		}
	})
}
