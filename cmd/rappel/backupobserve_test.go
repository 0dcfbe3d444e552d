package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rappel-ca/rappel/internal/logtest"
	"github.com/rappel-ca/rappel/kv/storetest"
)

// logLines returns the JSON log lines of logs whose msg is msg.
func logLines(tb testing.TB, logs string, msg string) []map[string]any {
	tb.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			tb.Fatalf("a log line that is not JSON: %s", sc.Text())
		}
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// backupNode is a node serving a data dir whose store's checkpoints fail
// with ENOSPC while full is on, with the admin key, --mail-dir for
// subscriptions and a metrics listener, logging JSON into logs.
type backupNode struct {
	dir, base, metrics string
	logs               *logtest.Buffer
	stop               func()
}

func startBackupNode(t *testing.T, dir string, full *atomic.Bool) *backupNode {
	t.Helper()
	checkpoints := filepath.Join(dir, backupPrefix)
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !full.Load() || !strings.HasPrefix(op.Path, checkpoints) {
			return nil
		}
		return storetest.NoSpace(op)
	})
	c := NewServeCommand()
	if err := c.ParseFlags([]string{"--data-dir", dir, "--api-keys", "k1", "--admin-key", testAdminKey,
		"--mail-dir", t.TempDir(), "--alerts-interval", "1h", "--metrics-addr", "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	c.Bundle = os.DirFS(t.TempDir())
	c.storeFS = errorfs.Wrap(vfs.Default, inj)
	n := &backupNode{dir: dir, logs: &logtest.Buffer{}}
	c.Logger = slog.New(slog.NewJSONHandler(n.logs, nil))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the node's log:\n%s", n.logs)
		}
	})
	metricsAddr := make(chan net.Addr, 1)
	c.Telemetry.MetricsReady = func(a net.Addr) { metricsAddr <- a }
	n.base, n.stop = serve(t, c)
	n.metrics = "http://" + (<-metricsAddr).String() + "/metrics"
	return n
}

// backup runs rappel backup against the node into file.
func (n *backupNode) backup(file string) (stdout, stderr string, err error) {
	c := NewBackupCommand()
	if err := c.ParseFlags([]string{"--to", file, "--node", n.base, "--admin-key", testAdminKey}); err != nil {
		return "", "", err
	}
	var out, errOut logtest.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err = c.Run(context.Background())
	return out.String(), errOut.String(), err
}

// TestBackup_DiskFullFailsAlone backs up a real node whose data dir's file
// system refuses every write of the backup's checkpoint (errorfs, ENOSPC):
// rappel backup fails at once with the node's sentence and writes no file,
// the checkpoint's partial files are gone, /health stays ok and writes
// answer 200, the failure is counted in /metrics and logged with its
// reason, and the storage never counts as failing. Once the disk has
// room, a backup succeeds, is logged and measured, and a restart on the
// same data dir still reports it.
func TestBackup_DiskFullFailsAlone(t *testing.T) {
	dir, id := mustDataDir(t)
	var full atomic.Bool
	n := startBackupNode(t, dir, &full)
	m := scrapeNode(t, n.metrics)
	for _, name := range []string{"rappel_backup_last_success_timestamp_seconds", "rappel_backup_duration_seconds", "rappel_backup_bytes", "rappel_backup_failures_total"} {
		if v := m.value(t, name, nil); v != 0 {
			t.Errorf("%s = %v before any backup, want 0", name, v)
		}
	}

	full.Store(true)
	out := t.TempDir()
	file := filepath.Join(out, "node.tar")
	_, _, err := n.backup(file)
	want := "503 Service Unavailable: The backup could not be taken: the checkpoint of the store failed (no space left on device). Free space on the data dir's file system, then try again. The node goes on serving and taking writes."
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), dir) {
		t.Fatalf("backup on a full disk: %v\nwant it to say %q, without the data dir's path", err, want)
	}
	assertOnlyFile(t, out, "")
	if left, _ := filepath.Glob(filepath.Join(dir, backupPrefix+"*")); len(left) > 0 {
		t.Fatalf("the failed backup left %v in the data dir", left)
	}
	if h := health(t, n.base); h.Status != "ok" {
		t.Fatalf("GET /health after a failed backup: %+v", h)
	}
	if code, _, body := call(t, "POST", n.base+"/recall/alerts/subscribe", "k1", `{"email":"ana@example.ca","q":"airbag","lang":"en"}`); code != http.StatusOK {
		t.Fatalf("subscribing after a failed backup: %d %s", code, body)
	}
	if code, body := get(t, n.base+"/recall/"+id, "k1"); code != http.StatusOK {
		t.Fatalf("GET /recall/%s after a failed backup: %d %s", id, code, body)
	}
	m = scrapeNode(t, n.metrics)
	if v := m.value(t, "rappel_backup_failures_total", nil); v != 1 {
		t.Errorf("rappel_backup_failures_total = %v after one failed backup, want 1", v)
	}
	if v := m.value(t, "rappel_backup_last_success_timestamp_seconds", nil); v != 0 {
		t.Errorf("rappel_backup_last_success_timestamp_seconds = %v with no success, want 0", v)
	}
	if v := m.value(t, "rappel_storage_degraded", nil); v != 0 {
		t.Errorf("rappel_storage_degraded = %v after a failed backup, want 0", v)
	}
	logs := n.logs.String()
	if started := logLines(t, logs, "backup started"); len(started) != 1 || started[0]["by"] != "admin key" || started[0]["client"] != "127.0.0.1" {
		t.Errorf("backup started lines: %v; want one naming the admin key and the client", started)
	}
	failed := logLines(t, logs, "backup failed")
	if len(failed) != 1 || failed[0]["level"] != "ERROR" || !strings.HasPrefix(failed[0]["reason"].(string), "The backup could not be taken: the checkpoint of the store failed (no space left on device).") {
		t.Errorf("backup failed lines: %v; want one at ERROR with the reason", failed)
	}
	if strings.Contains(logs, testAdminKey) {
		t.Error("the log holds the admin key")
	}
	if strings.Contains(logs, "storage failing") {
		t.Error("a failed backup made the storage count as failing")
	}

	full.Store(false)
	stdout, _, err := n.backup(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "written to "+file) {
		t.Errorf("rappel backup's last line: %q", stdout)
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	m = scrapeNode(t, n.metrics)
	at := m.value(t, "rappel_backup_last_success_timestamp_seconds", nil)
	if now := float64(time.Now().Unix()); at <= 0 || at > now+1 {
		t.Errorf("rappel_backup_last_success_timestamp_seconds = %v after a backup, now %v", at, now)
	}
	if v := m.value(t, "rappel_backup_bytes", nil); v != float64(st.Size()) {
		t.Errorf("rappel_backup_bytes = %v, the file has %d", v, st.Size())
	}
	if v := m.value(t, "rappel_backup_duration_seconds", nil); v <= 0 {
		t.Errorf("rappel_backup_duration_seconds = %v after a backup, want more than 0", v)
	}
	if v := m.value(t, "rappel_backup_failures_total", nil); v != 1 {
		t.Errorf("rappel_backup_failures_total = %v after a success, want the 1 before", v)
	}
	finished := logLines(t, n.logs.String(), "backup finished")
	if len(finished) != 1 || finished[0]["bytes"] != float64(st.Size()) || finished[0]["files"].(float64) < 3 || finished[0]["duration"] == nil {
		t.Errorf("backup finished lines: %v; want one with the files, the bytes (%d) and the duration", finished, st.Size())
	}

	// The record of the last backup outlives a restart, and stays out of
	// the backups themselves.
	n.stop()
	again := startBackupNode(t, dir, &full)
	if v := scrapeNode(t, again.metrics).value(t, "rappel_backup_last_success_timestamp_seconds", nil); v != at {
		t.Errorf("rappel_backup_last_success_timestamp_seconds after a restart = %v, want %v", v, at)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if err := restoreInto(file, restored); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(restored, lastBackupFile)); err == nil {
		t.Errorf("the backup holds %s: a restored node would claim its source's backups", lastBackupFile)
	}
}

// TestBackup_Timeout runs rappel backup against loopback servers that
// stall, one before it answers (as a node whose checkpoint hangs), one
// midway through the archive: each ends at --timeout with a sentence that
// names it and how much arrived, leaves no file, closes its connection,
// and said on stderr what it was waiting for meanwhile.
func TestBackup_Timeout(t *testing.T) {
	for _, tc := range []struct {
		name, progress, received string
		send                     int
	}{
		{"BeforeAnswer", "to take its checkpoints and answer", "0 KiB received", 0},
		{"MidArchive", "20 KiB received from", "20 KiB received", 20 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			closed := make(chan struct{})
			stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(closed)
				if tc.send > 0 {
					// The start of an archive: a file of 1 MiB of which
					// the stream holds what makes up tc.send bytes.
					var b bytes.Buffer
					tw := tar.NewWriter(&b)
					if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "big", Size: 1 << 20, Mode: 0o600, Format: tar.FormatUSTAR}); err != nil {
						t.Error(err)
					}
					b.Write(make([]byte, tc.send-b.Len()))
					w.Header().Set("Content-Type", "application/x-tar")
					w.WriteHeader(http.StatusOK)
					_, _ = w.Write(b.Bytes())
					http.NewResponseController(w).Flush()
				}
				<-r.Context().Done()
			}))
			defer stall.Close()
			out := t.TempDir()
			file := filepath.Join(out, "node.tar")
			c := NewBackupCommand()
			if err := c.ParseFlags([]string{"--to", file, "--node", stall.URL, "--admin-key", testAdminKey, "--timeout", "1s"}); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr logtest.Buffer
			c.Stdout, c.Stderr, c.ProgressEvery = &stdout, &stderr, 10*time.Millisecond
			err := c.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), "did not finish within 1s (--timeout; "+tc.received+"), and no "+file+" was written") {
				t.Fatalf("a backup from a stalled server: %v", err)
			}
			select {
			case <-closed:
			case <-time.After(time.Minute):
				t.Fatal("the stalled server's request did not end: the command left its connection open")
			}
			assertOnlyFile(t, out, "")
			if !strings.Contains(stderr.String(), tc.progress) {
				t.Errorf("stderr while stalled:\n%s\nwant a line saying %q", stderr.String(), tc.progress)
			}
			if stdout.String() != "" {
				t.Errorf("stdout of a failed backup: %q", stdout.String())
			}
		})
	}
	t.Run("Flags", func(t *testing.T) {
		c := NewBackupCommand()
		if c.Timeout != DefaultBackupTimeout {
			t.Errorf("--timeout defaults to %s, want %s", c.Timeout, DefaultBackupTimeout)
		}
		if err := c.ParseFlags([]string{"--to", "x", "--admin-key", "k", "--timeout", "0"}); err != nil || c.Timeout != 0 {
			t.Errorf("--timeout 0: %v, %s", err, c.Timeout)
		}
		if err := NewBackupCommand().ParseFlags([]string{"--to", "x", "--admin-key", "k", "--timeout", "-1m"}); err == nil || !strings.Contains(err.Error(), "--timeout is -1m0s") {
			t.Errorf("--timeout -1m: %v", err)
		}
	})
}

// TestBackup_Progress backs up a real node through a proxy that holds the
// archive after its first 16 KiB until rappel backup has said so on
// stderr: the progress line counts what arrived, and once the rest
// follows, the backup is written and its last line says so on stdout.
func TestBackup_Progress(t *testing.T) {
	base, _, _ := servedDataDir(t)
	var stderr logtest.Buffer
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.Path, nil)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		if _, err := io.CopyN(w, resp.Body, 16<<10); err != nil {
			t.Error(err)
			return
		}
		http.NewResponseController(w).Flush()
		for deadline := time.Now().Add(time.Minute); !strings.Contains(stderr.String(), "16 KiB received"); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Error("no progress line counted the first 16 KiB")
				return
			}
		}
		_, _ = io.Copy(w, resp.Body)
	}))
	defer proxy.Close()
	file := filepath.Join(t.TempDir(), "node.tar")
	c := NewBackupCommand()
	if err := c.ParseFlags([]string{"--to", file, "--node", proxy.URL, "--admin-key", testAdminKey}); err != nil {
		t.Fatal(err)
	}
	var stdout logtest.Buffer
	c.Stdout, c.Stderr, c.ProgressEvery = &stdout, &stderr, 10*time.Millisecond
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "rappel backup: 16 KiB received from "+proxy.URL+" (") {
		t.Errorf("stderr: %q; want a progress line of the first 16 KiB", stderr.String())
	}
	if out := stdout.String(); !strings.HasPrefix(out, "backup of "+proxy.URL+" as of ") || !strings.Contains(out, " written to "+file+": ") || strings.Count(out, "\n") != 1 {
		t.Errorf("stdout: %q; want the one line saying the backup is written", out)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
}
