package main

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel/internal/logtest"
)

// TestServe_IndexDamagedInPlace starts a node on the embedded bundle, stops
// it, flips a byte in the middle of the read index it unpacked into the
// data dir, and starts it again: the node serves at once (its index was
// checked when unpacked), finds the damage in its background check, answers
// 503 to /readyz while it rebuilds the index from the store, then 200.
func TestServe_IndexDamagedInPlace(t *testing.T) {
	dataDir := t.TempDir()
	start := func(logs *logtest.Buffer) (string, func()) {
		c := NewServeCommand()
		if err := c.ParseFlags([]string{"--data-dir", dataDir, "--api-keys", "k1", "--feeds", "off", "--mail-dir", t.TempDir()}); err != nil {
			t.Fatal(err)
		}
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the node's log:\n%s", logs.String())
			}
		})
		return serve(t, c)
	}
	_, stop := start(&logtest.Buffer{})
	stop()

	seg := filepath.Join(dataDir, "bundle", "index.seg")
	f, err := os.OpenFile(seg, os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("the node left no unpacked index: %v", err)
	}
	fi, _ := f.Stat()
	b := make([]byte, 1)
	at := fi.Size() / 2
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x20
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
	f.Close()

	logs := &logtest.Buffer{}
	base, stop := start(logs)
	defer stop()
	saw503 := false
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		code, body := get(t, base+"/readyz", "")
		if code == http.StatusServiceUnavailable && strings.Contains(string(body), "rebuilding it from its store") {
			saw503 = true
		}
		if code == http.StatusOK && strings.Contains(logs.String(), "read index rebuilt") {
			break
		}
	}
	if !strings.Contains(logs.String(), "failed its check") || !strings.Contains(logs.String(), "checksum") {
		t.Fatal("the log does not say the index failed its check")
	}
	if !strings.Contains(logs.String(), "read index rebuilt") {
		t.Fatal("the index was not rebuilt after failing its check")
	}
	if !saw503 {
		t.Error("/readyz never answered 503 while the index was rebuilt")
	}
	if code, body := get(t, base+"/recall?q=toys&limit=1", "k1"); code != http.StatusOK {
		t.Fatalf("a search after the rebuild: %d %s", code, body)
	}
}
