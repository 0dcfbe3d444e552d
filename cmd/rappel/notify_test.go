package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestServe_SystemdNotify starts a node as systemd's Type=notify with
// WatchdogSec= would, on a real unixgram socket: it says READY=1 once it
// serves, pings the watchdog every half WATCHDOG_USEC, and says
// STOPPING=1 when the shutdown starts.
func TestServe_SystemdNotify(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", "200000") // pings every 100 ms
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	msgs := make(chan string, 100)
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			msgs <- string(buf[:n])
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case m := <-msgs:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no notification")
		}
		return ""
	}

	dir, _ := mustDataDir(t)
	c := NewServeCommand()
	c.DataDir, c.Bundle = dir, os.DirFS(t.TempDir())
	start := time.Now()
	base, stop := serve(t, c)
	if m := next(); m != "READY=1" {
		t.Fatalf("first notification %q, want READY=1", m)
	}
	if h := health(t, base); h.Status != "ok" {
		t.Fatalf("GET /health: %+v", h)
	}
	for i := 0; i < 3; i++ {
		if m := next(); m != "WATCHDOG=1" {
			t.Fatalf("notification %q while serving, want WATCHDOG=1", m)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("three watchdog pings took %s; they come every 100 ms", took)
	}
	stop()
	for m := next(); m != "STOPPING=1"; m = next() {
		if m != "WATCHDOG=1" {
			t.Fatalf("notification %q at shutdown, want STOPPING=1", m)
		}
	}
}

func TestWatchdogInterval(t *testing.T) {
	self := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		usec, pid string
		want      time.Duration
	}{
		{"30000000", "", 15 * time.Second},
		{"30000000", self, 15 * time.Second},
		{"30000000", "1", 0}, // another process's watchdog
		{"", "", 0},
		{"-5", "", 0},
		{"soon", "", 0},
	} {
		if got := watchdogInterval(tc.usec, tc.pid); got != tc.want {
			t.Errorf("watchdogInterval(%q, %q) = %s, want %s", tc.usec, tc.pid, got, tc.want)
		}
	}
}
