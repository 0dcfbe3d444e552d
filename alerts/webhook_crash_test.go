package alerts

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// Environment of a TestHookHelperProcess child.
const (
	envHookDir   = "RAPPEL_HOOKS_HELPER_DIR"
	envHookCrash = "RAPPEL_HOOKS_HELPER_CRASH" // matched, accepted:<n>, or none
)

const crashHooks = 10

// TestHookHelperProcess is not a test: run by TestWebhooks_CrashRestart as
// a child process, it matches record-events batch 1 and posts the
// webhook outbox, killing itself with SIGKILL where
// $RAPPEL_HOOKS_HELPER_CRASH says.
func TestHookHelperProcess(t *testing.T) {
	dir := os.Getenv(envHookDir)
	if dir == "" {
		t.Skip("run as a child process by TestWebhooks_CrashRestart")
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx := context.Background()
	st := kv.NewStore(filepath.Join(dir, "pebble"))
	st.Logger = slog.New(slog.DiscardHandler)
	if err := st.Open(ctx); err != nil {
		fail(err)
	}
	m := NewHookMatcher(index.Engine{})
	m.Hooks, m.Outbox, m.Records, m.Logger = st, st, st, st.Logger
	if _, err := m.Match(ctx, &rappel.RecordEvents{Seq: 1, At: time.Now(), Created: crashIDs}); err != nil {
		fail(err)
	}
	crash := os.Getenv(envHookCrash)
	kill := func() { syscall.Kill(os.Getpid(), syscall.SIGKILL); select {} }
	if crash == "matched" {
		kill()
	}
	certPEM, err := os.ReadFile(filepath.Join(dir, "receiver.pem"))
	if err != nil {
		fail(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	s := NewHookSender()
	s.Outbox, s.Hooks, s.Logger = st, st, st.Logger
	s.Client.RootCAs, s.Client.AllowHTTPLoopback = pool, true
	s.accepted = killAfter(crash, kill)
	if _, err := s.SendDue(ctx); err != nil {
		fail(err)
	}
	os.Exit(0)
}

func runHookHelper(t *testing.T, dir, crash string) {
	t.Helper()
	runChild(t, "TestHookHelperProcess", crash, envHookDir+"="+dir, envHookCrash+"="+crash)
}

// TestWebhooks_CrashRestart kills the process (SIGKILL) after the match is
// committed, and after a receiver accepted a delivery but before it was
// recorded, restarts it, and counts what the receiver got per webhook-id:
// every (endpoint, event) once, and duplicates, with the same id, only
// when the kill fell between acceptance and record: at least the one
// accepted delivery, at most one per endpoint being posted to at once
// (HookSender.Parallel), each of which the receiver may have accepted.
func TestWebhooks_CrashRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	total := crashHooks * len(crashIDs)
	for _, tc := range []struct {
		crash string
		dups  int
	}{
		{"none", 0},
		{"matched", 0},
		{"accepted:1", 1},
		{"accepted:13", 1},
		{fmt.Sprintf("accepted:%d", total), 1},
	} {
		t.Run(tc.crash, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			var mu sync.Mutex
			perID := map[string]int{}
			secrets := map[string]string{}
			var bad []string
			srv, _, _ := tlsReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				defer mu.Unlock()
				if err := VerifyWebhook(secrets[r.URL.Path], r.Header, body, time.Now(), time.Minute); err != nil {
					bad = append(bad, err.Error())
				}
				perID[r.Header.Get("webhook-id")]++
			})
			pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
			if err := os.WriteFile(filepath.Join(dir, "receiver.pem"), pemBytes, 0o600); err != nil {
				t.Fatal(err)
			}
			st := kvtest.OpenAt(t, filepath.Join(dir, "pebble"))
			sender := NewHookSender()
			sender.Client.AllowHTTPLoopback = true
			svc := NewHookService(st, sender)
			for i := range crashHooks {
				u := fmt.Sprintf("%s/hook/%d", srv.URL, i)
				w, err := svc.Create(ctx, "k1", &rappel.WebhookRequest{URL: &u})
				if err != nil {
					t.Fatal(err)
				}
				secrets[fmt.Sprintf("/hook/%d", i)] = w.Secret
			}
			var recs []*rappel.Record
			for _, id := range crashIDs {
				recs = append(recs, newRecord(id, "Recall "+id))
			}
			if err := st.PutRecords(ctx, recs); err != nil {
				t.Fatal(err)
			}
			st.Close()
			runHookHelper(t, dir, tc.crash)
			if tc.crash != "none" {
				runHookHelper(t, dir, "none") // the restart
			}
			mu.Lock()
			defer mu.Unlock()
			if len(bad) > 0 {
				t.Fatalf("bad signatures: %v", bad)
			}
			dups := 0
			for id, n := range perID {
				if n > 2 {
					t.Fatalf("%s delivered %d times", id, n)
				}
				dups += n - 1
			}
			maxDups := tc.dups
			if tc.dups > 0 {
				maxDups = DefaultHookParallel
			}
			if len(perID) != total || dups < tc.dups || dups > maxDups {
				t.Fatalf("%d deliveries (want %d), %d duplicates (want %d to %d)", len(perID), total, dups, tc.dups, maxDups)
			}
		})
	}
}
