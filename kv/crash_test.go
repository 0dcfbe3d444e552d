package kv

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// helperEnv names the store directory a TestHelperProcess child writes to.
const helperEnv = "RAPPEL_KV_HELPER_DIR"

// Batches the helper writes: batch b holds records crashID(b, 0) to
// crashID(b, crashBatch-1).
const (
	crashBatch   = 500
	crashBatches = 1000
)

func crashID(batch, i int) string { return fmt.Sprintf("hc-b%04d-%04d", batch, i) }

// TestHelperProcess is not a test: run by TestStore_CrashDurability as a
// child process, it writes batches of records to the store named by
// $RAPPEL_KV_HELPER_DIR, printing "acked <batch>" after each PutRecords
// returns, and then sleeps until it is killed.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("run as a child process by TestStore_CrashDurability")
	}
	ctx := context.Background()
	s := NewStore(dir)
	s.Logger = nil
	if err := s.Open(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for b := range crashBatches {
		recs := make([]*rappel.Record, crashBatch)
		for i := range recs {
			recs[i] = makeRecord(b*crashBatch + i)
			recs[i].RecordID = crashID(b, i)
		}
		if err := s.PutRecords(ctx, recs); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("acked %d\n", b)
	}
	time.Sleep(time.Hour)
}

// TestStore_CrashDurability kills (SIGKILL) a process that is writing
// batches, then checks that every batch whose PutRecords had returned is
// there in full, that any other batch is there entirely or not at all, and
// that the index matches the records.
func TestStore_CrashDurability(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs SIGKILL and child processes")
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := filepath.Join(t.TempDir(), "db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.v=false")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})

	// Kill the child while it writes, once it has acknowledged three
	// batches, then read every acknowledgement it printed before dying.
	acked := -1
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		n, ok := strings.CutPrefix(lines.Text(), "acked ")
		if !ok {
			continue
		}
		if acked, err = strconv.Atoi(n); err != nil {
			t.Fatalf("child printed %q", lines.Text())
		}
		if acked == 2 && !killed {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	if !killed {
		t.Fatalf("child exited before acknowledging 3 batches (last ack %d): %v", acked, cmd.Wait())
	}
	cmd.Wait()
	t.Logf("killed the child after it acknowledged batch %d", acked)

	s := MustOpenStoreAt(t, dir, nil)
	found := make(map[int]int) // records per batch
	err = s.ForEachRecord(context.Background(), func(r *rappel.Record) error {
		var b, i int
		if _, err := fmt.Sscanf(r.RecordID, "hc-b%04d-%04d", &b, &i); err != nil {
			return fmt.Errorf("record %q: %w", r.RecordID, err)
		}
		found[b]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for b := 0; b <= acked; b++ {
		if found[b] != crashBatch {
			t.Errorf("acknowledged batch %d: found %d of %d records", b, found[b], crashBatch)
		}
	}
	if n := found[acked+1]; n != 0 && n != crashBatch {
		t.Errorf("batch %d, written when the child died: found %d of %d records, want all or none", acked+1, n, crashBatch)
	}
	for b := range found {
		if b > acked+1 {
			t.Errorf("batch %d, never started, is there", b)
		}
	}
	checkIndex(t, s)
}
