package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv"
)

// TestServe_DiskFullAtStart starts a node whose data dir's file system has
// too little room: it stops before opening the store, with status 1 and a
// sentence naming the directory and the room it needs, which on a first
// start counts the bundle's tables.
func TestServe_DiskFullAtStart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bundle func(testing.TB) string
		free   uint64
		need   string
	}{
		{"Tiny", tinyBundleDir, 2 << 20, "64 MiB to start"},
		{"Tables", tablesBundleDir, 64 << 20, "65 MiB to start (--min-free-mib 64 and the bundle's tables and index, 1 MiB, which a first start unpacks)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewServeCommand()
			c.DataDir = filepath.Join(t.TempDir(), "data")
			c.Bundle = os.DirFS(tc.bundle(t))
			c.Addr = "127.0.0.1:0"
			c.Logger = slog.New(slog.DiscardHandler)
			var measured string
			c.freeSpace = func(dir string) (uint64, error) {
				measured = dir
				return tc.free, nil
			}
			err := c.Run(context.Background())
			var stderr bytes.Buffer
			code := exitCode(err, &stderr)
			want := "rappel: the data directory " + c.DataDir + " has " + fmt.Sprint(tc.free>>20) + " MiB free; it needs at least " + tc.need +
				": free space or pass a --data-dir on a larger filesystem\n"
			if code != 1 || stderr.String() != want {
				t.Fatalf("exit %d, stderr %q; want 1, %q", code, stderr.String(), want)
			}
			if measured != filepath.Dir(c.DataDir) {
				t.Errorf("measured %s, want the data dir's existing parent", measured)
			}
			if _, err := os.Stat(filepath.Join(c.DataDir, "pebble")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the store was created on a full file system: %v", err)
			}
		})
	}
}

// tablesBundleDir writes tinyBundleDir's bundle with its sstables, which
// a new store ingests as they are.
func tablesBundleDir(tb testing.TB) string {
	tb.Helper()
	dir := tinyBundleDir(tb)
	if err := bundle.WriteTables(dir, func(sst string, c bundle.Contents) ([]string, error) {
		return kv.WriteTables(context.Background(), sst, c.Records, c.Partials, c.Raw, c.States, c.Info)
	}); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// envServeChild carries the arguments of TestServeChildProcess.
const envServeChild = "RAPPEL_TEST_SERVE_CHILD"

type serveChildConfig struct {
	DataDir, Bundle string
}

// TestServeChildProcess is rappel serve run as a child process by
// TestServe_CorruptStore, so that its exit status and stderr are those of
// the real process: it ends as main does.
func TestServeChildProcess(t *testing.T) {
	raw := os.Getenv(envServeChild)
	if raw == "" {
		t.Skip("run as a child process by TestServe_CorruptStore")
	}
	var cfg serveChildConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	c := NewServeCommand()
	if err := c.ParseFlags([]string{"--data-dir", cfg.DataDir, "--addr", "127.0.0.1:0", "--min-free-mib", "0"}); err != nil {
		t.Fatal(err)
	}
	c.Bundle = os.DirFS(cfg.Bundle)
	// A node that starts stops at once: it did not see the corruption.
	ctx, cancel := context.WithCancel(context.Background())
	c.Ready = func(net.Addr) { cancel() }
	os.Exit(exitCode(c.Run(ctx), os.Stderr))
}

// TestServe_CorruptStore flips 64 bytes in the middle of the store's
// sstable and starts the node on it as a process of its own: it exits with
// status 1 and says on stderr that the store is corrupt and what to do.
func TestServe_CorruptStore(t *testing.T) {
	bundleDir := tablesBundleDir(t)
	dataDir := t.TempDir()
	c := NewServeCommand()
	c.DataDir, c.Bundle = dataDir, os.DirFS(bundleDir)
	_, stop := serve(t, c)
	stop()
	ssts, _ := filepath.Glob(filepath.Join(dataDir, "pebble", "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("the store holds no sstable")
	}
	var biggest string
	var size int64
	for _, p := range ssts {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			biggest, size = p, fi.Size()
		}
	}
	b, err := os.ReadFile(biggest)
	if err != nil {
		t.Fatal(err)
	}
	mid := len(b)/2 - 32
	for i := mid; i < mid+64; i++ {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(biggest, b, 0o644); err != nil {
		t.Fatal(err)
	}

	cfg, _ := json.Marshal(serveChildConfig{DataDir: dataDir, Bundle: bundleDir})
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeChildProcess$")
	cmd.Env = append(os.Environ(), envServeChild+"="+string(cfg))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("the node ended with %v, want exit status 1:\n%s", err, stderr.String())
	}
	// One line says it, whatever else the log wrote: the reason without
	// Pebble's stack traces.
	var said string
	for line := range strings.Lines(stderr.String()) {
		if strings.HasPrefix(line, "rappel: ") {
			said = line
		}
	}
	if !strings.Contains(said, "corrupt") || !strings.Contains(said, "restore the data dir from a backup or start on an empty one") {
		t.Fatalf("stderr does not say in a line that the store is corrupt and what to do:\n%s", stderr.String())
	}
}
