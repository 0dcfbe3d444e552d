package kv

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/storetest"
)

// openGuarded opens a store on the disk through inj, probing often.
func openGuarded(t *testing.T, inj errorfs.Injector) *Store {
	t.Helper()
	s := NewStore(filepath.Join(t.TempDir(), "db"))
	s.FS = errorfs.Wrap(vfs.Default, inj)
	s.Logger = slog.New(slog.DiscardHandler)
	s.ProbeInterval = 10 * time.Millisecond
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// waitRecovered waits until s counts its storage as working again.
func waitRecovered(t *testing.T, s *Store) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if err, _ := s.StorageFault(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			err, _ := s.StorageFault()
			t.Fatalf("the storage still counts as failing: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// mustUnavailable checks that err is the EUNAVAILABLE of a failing storage
// and names reason.
func mustUnavailable(t *testing.T, err error, reason string) {
	t.Helper()
	var e *rappel.Error
	if !errors.As(err, &e) || e.Code != rappel.EUNAVAILABLE || e.RetryAfter <= 0 ||
		!strings.Contains(e.Message, "The node's storage is failing: "+reason) {
		t.Fatalf("got %v, want an EUNAVAILABLE error saying the storage fails (%s)", err, reason)
	}
}

// TestStore_DiskFull fills the disk under a store: writes fail with
// EUNAVAILABLE instead of hanging or stopping the process, reads go on,
// and once there is room again the store takes writes without a restart,
// and keeps them.
func TestStore_DiskFull(t *testing.T) {
	full := storetest.DiskFull()
	s := openGuarded(t, full)
	ctx := context.Background()
	MustPut(t, s, makeRecord(1))

	full.On()
	mustUnavailable(t, s.PutRecords(ctx, []*rappel.Record{makeRecord(2)}), "no space left on device")
	err, since := s.StorageFault()
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno != syscall.ENOSPC || since.IsZero() || !strings.Contains(err.Error(), ".log: no space left on device") {
		t.Fatalf("StorageFault = %v, %v", err, since)
	}
	if strings.Contains(err.Error(), string(os.PathSeparator)) {
		t.Errorf("the fault names a path, which GET /health would show: %v", err)
	}
	mustUnavailable(t, s.SetDatasetInfo(ctx, rappel.DatasetInfo{Source: "x"}), "no space left on device")
	mustUnavailable(t, s.DeleteRecords(ctx, []string{makeRecord(1).RecordID}), "no space left on device")
	if _, err := s.Record(ctx, makeRecord(1).RecordID); err != nil {
		t.Fatalf("reading on a full disk: %v", err)
	}

	full.Off()
	waitRecovered(t, s)
	MustPut(t, s, makeRecord(3))
	MustReopen(t, s)
	for _, i := range []int{1, 3} {
		if _, err := s.Record(ctx, makeRecord(i).RecordID); err != nil {
			t.Fatalf("record %d after recovery and a restart: %v", i, err)
		}
	}
	checkIndex(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStore_StalledDisk stalls the disk without any error: a write still
// returns, EUNAVAILABLE, after the write timeout, and the store recovers
// once the disk answers again.
func TestStore_StalledDisk(t *testing.T) {
	release := make(chan struct{})
	stall := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData || op.Kind == errorfs.OpFileWrite {
			<-release
		}
		return nil
	})}
	s := openGuarded(t, stall)
	s.db.g.timeout = 50 * time.Millisecond
	stall.On()
	mustUnavailable(t, s.PutRecords(context.Background(), []*rappel.Record{makeRecord(1)}), "a write did not finish within 50ms")
	stall.Off()
	close(release)
	waitRecovered(t, s)
	MustPut(t, s, makeRecord(2))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStore_SyncFails fails an fsync of the write-ahead log: the kernel
// may have dropped what it could not write, so the store never counts the
// storage as working again, refuses writes, keeps reading, and does not
// close its database (Pebble would stop the process).
func TestStore_SyncFails(t *testing.T) {
	eio := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if (op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData) && strings.HasSuffix(op.Path, ".log") {
			return &os.PathError{Op: "fsync", Path: op.Path, Err: syscall.EIO}
		}
		return nil
	})}
	s := openGuarded(t, eio)
	ctx := context.Background()
	MustPut(t, s, makeRecord(1))
	eio.On()
	mustUnavailable(t, s.PutRecords(ctx, []*rappel.Record{makeRecord(2)}), "input/output error")
	eio.Off()
	// Many probe ticks later, still failing: the probe write waits behind
	// the held sync.
	for range 20 {
		time.Sleep(s.ProbeInterval)
		mustUnavailable(t, s.SetDatasetInfo(ctx, rappel.DatasetInfo{Source: "x"}), "input/output error")
	}
	if _, err := s.Record(ctx, makeRecord(1).RecordID); err != nil {
		t.Fatalf("reading after a failed sync: %v", err)
	}
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "syncing") {
		t.Fatalf("Close after a failed sync: %v", err)
	}
}

// TestStore_FlushFails fails only the creation of sstables, as a full
// disk does to a flush while the write-ahead log still has preallocated
// room: the flush waits instead of failing in a loop, writes are refused
// meanwhile, and once there is room the flush ends and writes resume.
func TestStore_FlushFails(t *testing.T) {
	var on atomic.Bool
	noSST := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if on.Load() && op.Kind == errorfs.OpCreate && strings.HasSuffix(op.Path, ".sst") {
			return &os.PathError{Op: "open", Path: op.Path, Err: syscall.ENOSPC}
		}
		return nil
	})
	s := openGuarded(t, noSST)
	MustPut(t, s, makeRecord(1))
	on.Store(true)
	flushed := make(chan error, 1)
	go func() { flushed <- s.db.Flush() }()
	deadline := time.Now().Add(time.Minute)
	for {
		if err, _ := s.StorageFault(); err != nil {
			if !strings.Contains(err.Error(), ".sst: no space left on device") {
				t.Fatalf("StorageFault = %v", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a flush that cannot create its sstable did not mark the store faulted")
		}
		time.Sleep(5 * time.Millisecond)
	}
	mustUnavailable(t, s.PutRecords(context.Background(), []*rappel.Record{makeRecord(2)}), "no space left on device")
	on.Store(false)
	if err := <-flushed; err != nil {
		t.Fatalf("the held flush: %v", err)
	}
	waitRecovered(t, s)
	MustPut(t, s, makeRecord(3))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGuard_LogLines checks what a fault logs: one line when it starts,
// then at most one a minute with the number of errors since the last,
// and one when it ends.
func TestGuard_LogLines(t *testing.T) {
	var buf bytes.Buffer
	g := newGuard(slog.New(slog.NewTextHandler(&buf, nil)), 0, 0)
	now := time.Date(2026, 11, 26, 13, 0, 0, 0, time.UTC)
	g.now = func() time.Time { return now }
	enospc := &opError{what: "writing 000004.log", err: syscall.ENOSPC}
	for range 100 { // a retry every 3 s for 5 minutes
		g.fail(enospc)
		now = now.Add(3 * time.Second)
	}
	g.recover()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6 (start, one a minute for 4 minutes, end):\n%s", len(lines), buf.String())
	}
	for i, want := range []string{
		`level=ERROR msg="storage failing: writes answer 503 until a probe write succeeds" error="writing 000004.log: no space left on device"`,
		`level=WARN msg="storage still failing" error="writing 000004.log: no space left on device" since=2026-11-26T13:00:00.000Z errors=20`,
		`errors=20`, `errors=20`, `errors=20`,
		`level=INFO msg="storage recovered: writes are accepted again" failed_for=5m0s first_error="writing 000004.log: no space left on device" errors=100`,
	} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d is %s, want %s", i+1, lines[i], want)
		}
	}
}

// TestStore_DiskFullUsage checks that the usage counts' pushes go through
// the guard as every other write: refused at once while the disk is full,
// rather than queued behind the held log write (a push holds the node's
// usage lock, and the last one runs at shutdown), and taken again once
// there is room.
func TestStore_DiskFullUsage(t *testing.T) {
	full := storetest.DiskFull()
	s := openGuarded(t, full)
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	if _, err := s.AddUsage(ctx, "2026-11", map[string]int64{"key1": 1}); err != nil {
		t.Fatal(err)
	}
	full.On()
	mustUnavailable(t, s.PutRecords(ctx, []*rappel.Record{makeRecord(1)}), "no space left on device")
	done := make(chan error, 1)
	go func() {
		_, err := s.AddUsage(ctx, "2026-11", map[string]int64{"key1": 2})
		done <- err
	}()
	select {
	case err := <-done:
		mustUnavailable(t, err, "no space left on device")
	case <-time.After(time.Minute): // a hang, not a slow answer
		full.Off()
		t.Fatal("AddUsage did not return while the disk was full")
	}
	full.Off()
	waitRecovered(t, s)
	totals, err := s.AddUsage(ctx, "2026-11", map[string]int64{"key1": 4})
	if err != nil || totals["key1"] != 5 {
		t.Fatalf("after recovery: %v, %v; want key1 at 5 (the refused push not counted)", totals, err)
	}
}

// TestStore_CheckpointFailsAlone fails a checkpoint's writes as a backup
// finds a full disk (ENOSPC on creating, writing, linking and renaming
// its files), then its syncs (EIO): the checkpoint returns the error
// instead of being held, leaves nothing of itself, and the store neither
// counts as failing nor stops taking writes. Once the disk works, a
// checkpoint opens as a store holding every record.
func TestStore_CheckpointFailsAlone(t *testing.T) {
	var fault atomic.Value // "", "write" or "sync"
	fault.Store("")
	var root string // set before the first fault: the checkpoints' directory
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !strings.HasPrefix(op.Path, root+string(os.PathSeparator)) {
			return nil
		}
		switch {
		case storetest.TakesSpace(op.Kind):
			if fault.Load() == "write" {
				return storetest.NoSpace(op)
			}
		case op.Kind == errorfs.OpFileSync, op.Kind == errorfs.OpFileSyncData, op.Kind == errorfs.OpFileSyncTo:
			if fault.Load() == "sync" {
				return &os.PathError{Op: "sync", Path: op.Path, Err: syscall.EIO}
			}
		}
		return nil
	})
	s := openGuarded(t, inj)
	defer s.Close()
	root = filepath.Join(filepath.Dir(s.Path), ".backup-1")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "pebble")
	MustPut(t, s, makeRecord(1))
	if err := s.db.Flush(); err != nil { // a table for the checkpoint to link
		t.Fatal(err)
	}

	for i, tc := range []struct {
		fault string
		errno syscall.Errno
	}{{"write", syscall.ENOSPC}, {"sync", syscall.EIO}} {
		t.Run(tc.fault, func(t *testing.T) {
			fault.Store(tc.fault)
			defer fault.Store("")
			done := make(chan error, 1)
			go func() { done <- s.Checkpoint(dir) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the checkpoint was held instead of failing")
			}
			if !errors.Is(err, tc.errno) {
				t.Fatalf("checkpoint whose %ss fail: %v; want %v", tc.fault, err, tc.errno)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the failed checkpoint left %s: %v", dir, err)
			}
			if err, _ := s.StorageFault(); err != nil {
				t.Fatalf("a failed checkpoint marked the storage failing: %v", err)
			}
			MustPut(t, s, makeRecord(2+i))
		})
	}

	if err := s.Checkpoint(dir); err != nil {
		t.Fatalf("checkpoint once the disk works: %v", err)
	}
	cp := NewStore(dir)
	cp.Logger = slog.New(slog.DiscardHandler)
	if err := cp.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	for _, i := range []int{1, 2, 3} {
		if r, err := cp.Record(context.Background(), makeRecord(i).RecordID); err != nil || r == nil {
			t.Fatalf("record %d in the checkpoint: %v, %v", i, r, err)
		}
	}
	if err := s.Checkpoint(filepath.Join(s.Path, "inside")); err == nil || !strings.Contains(err.Error(), "outside the store's directory") {
		t.Fatalf("checkpoint inside the store's directory: %v", err)
	}
}
