package kv

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/storetest"
)

// mustIssue adds a new key of plan to k and returns it with its record.
func mustIssue(tb testing.TB, k *Keys, plan, label string, created time.Time) (string, *rappel.APIKey) {
	tb.Helper()
	key, hash := rappel.NewKey()
	a := &rappel.APIKey{ID: rappel.KeyID(hash), Plan: plan, Label: label, Created: created}
	if err := k.AddKey(context.Background(), hash, a); err != nil {
		tb.Fatal(err)
	}
	return key, a
}

func TestKeys_KeyStore(t *testing.T) {
	storetest.KeyStore(t, func(t *testing.T) (rappel.KeyStore, rappel.KeyStore) {
		// Two Keys on one directory: a server and `rappel keys`.
		path := filepath.Join(t.TempDir(), "keys")
		return NewKeys(path), NewKeys(path)
	})
}

func sha(key string) [sha256.Size]byte { return sha256.Sum256([]byte(key)) }

func TestKeys_Busy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	k := NewKeys(path)
	mustIssue(t, k, rappel.PlanFree, "one", time.Now())
	// Another holder of the database, as a process in the middle of a
	// write would be.
	db, err := pebble.Open(path, &pebble.Options{Logger: quietLogger{pebbleLogger{slog.New(slog.DiscardHandler)}}})
	if err != nil {
		t.Fatal(err)
	}
	k.LockWait = 50 * time.Millisecond
	_, hash := rappel.NewKey()
	err = k.AddKey(context.Background(), hash, &rappel.APIKey{ID: rappel.KeyID(hash), Plan: rappel.PlanFree})
	if !errors.Is(err, ErrKeysBusy) {
		t.Fatalf("held store: %v, want ErrKeysBusy", err)
	}
	// Released within the wait, it is used.
	k.LockWait = 20 * time.Second
	go func() {
		time.Sleep(100 * time.Millisecond)
		db.Close()
	}()
	if err := k.AddKey(context.Background(), hash, &rappel.APIKey{ID: rappel.KeyID(hash), Plan: rappel.PlanFree}); err != nil {
		t.Fatalf("store released: %v", err)
	}
}

func TestStore_QuotaStore(t *testing.T) {
	storetest.QuotaStore(t, func(t *testing.T) (rappel.QuotaStore, rappel.QuotaStore) {
		// One node's Pebble has one handle.
		s := NewStore(filepath.Join(t.TempDir(), "pebble"))
		if err := s.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, s
	})
}

func TestStore_Usage(t *testing.T) {
	ctx := context.Background()
	s := NewStore(filepath.Join(t.TempDir(), "pebble"))
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddUsage(ctx, "2025-03", map[string]int64{"aaaaaaaaaaaa": 7, "bbbbbbbbbbbb": 1 << 33}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddUsage(ctx, "2025-03", map[string]int64{"aaaaaaaaaaaa": 2}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The counts outlive the process.
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.LoadUsage(ctx, "2025-03")
	if err != nil || len(got) != 2 || got["aaaaaaaaaaaa"] != 9 || got["bbbbbbbbbbbb"] != 1<<33 {
		t.Fatalf("2025-03 after reopening: %v, %v", got, err)
	}
}

// TestKeys_BusyOtherProcess holds the key database from a child process,
// as `rappel keys` does while it writes, and checks that the lock is
// recognised (fcntl's EAGAIN) and waited for.
func TestKeys_BusyOtherProcess(t *testing.T) {
	if path := os.Getenv("RAPPEL_TEST_HOLD_KEYS"); path != "" {
		db, err := pebble.Open(path, &pebble.Options{Logger: quietLogger{pebbleLogger{slog.New(slog.DiscardHandler)}}})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("held")
		_, _ = io.ReadAll(os.Stdin) // until the parent closes it
		db.Close()
		return
	}
	path := filepath.Join(t.TempDir(), "keys")
	k := NewKeys(path)
	mustIssue(t, k, rappel.PlanFree, "one", time.Now())
	cmd := exec.Command(os.Args[0], "-test.run=^TestKeys_BusyOtherProcess$")
	cmd.Env = append(os.Environ(), "RAPPEL_TEST_HOLD_KEYS="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("child: %q, %v", line, err)
	}
	k.LockWait = 50 * time.Millisecond
	_, hash := rappel.NewKey()
	a := &rappel.APIKey{ID: rappel.KeyID(hash), Plan: rappel.PlanFree}
	if err := k.AddKey(context.Background(), hash, a); !errors.Is(err, ErrKeysBusy) {
		t.Fatalf("held by another process: %v, want ErrKeysBusy", err)
	}
	k.LockWait = 30 * time.Second
	go func() {
		time.Sleep(100 * time.Millisecond)
		stdin.Close()
	}()
	if err := k.AddKey(context.Background(), hash, a); err != nil {
		t.Fatalf("released: %v", err)
	}
}
