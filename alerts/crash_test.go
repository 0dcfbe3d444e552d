package alerts

import (
	"context"
	"fmt"
	"log/slog"
	"net/mail"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// Environment of a TestHelperProcess child.
const (
	envDir   = "RAPPEL_ALERTS_HELPER_DIR"
	envSMTP  = "RAPPEL_ALERTS_HELPER_SMTP"
	envCrash = "RAPPEL_ALERTS_HELPER_CRASH" // matched, accepted:<n>, or none
)

const crashSubs = 20

var crashIDs = []string{"hc-1", "hc-2", "hc-3"}

// TestHelperProcess is not a test: run by TestAlerts_CrashRestart as a
// child process, it matches batch 1 and sends the outbox, killing itself
// with SIGKILL where $RAPPEL_ALERTS_HELPER_CRASH says.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv(envDir)
	if dir == "" {
		t.Skip("run as a child process by TestAlerts_CrashRestart")
	}
	ctx := context.Background()
	st := kv.NewStore(dir)
	st.Logger = slog.New(slog.DiscardHandler)
	if err := st.Open(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	m := NewMatcher(index.Engine{})
	m.Subscriptions, m.Outbox, m.Records, m.Logger = st, st, st, st.Logger
	if _, err := m.Match(ctx, 1, crashIDs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	crash := os.Getenv(envCrash)
	kill := func() { syscall.Kill(os.Getpid(), syscall.SIGKILL); select {} }
	if crash == "matched" {
		kill()
	}
	s := NewSender()
	s.Outbox, s.Subscriptions, s.Records, s.Logger = st, st, st, st.Logger
	s.Addr, s.From, s.PublicURL = os.Getenv(envSMTP), "alerts@rappel.example.ca", "https://rappel.example.ca"
	s.accepted = killAfter(crash, kill)
	if _, err := s.SendDue(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}

// killAfter returns the accepted hook of a child whose crash is
// "accepted:<n>": it calls kill at the n-th acceptance, counted across
// goroutines since webhooks are posted side by side. It returns nil for
// any other crash.
func killAfter(crash string, kill func()) func() {
	after, ok := strings.CutPrefix(crash, "accepted:")
	if !ok {
		return nil
	}
	var at int64
	fmt.Sscan(after, &at)
	var n atomic.Int64
	return func() {
		if n.Add(1) == at {
			kill()
		}
	}
}

func runHelper(t *testing.T, dir, smtp, crash string) {
	t.Helper()
	runChild(t, "TestHelperProcess", crash, envDir+"="+dir, envSMTP+"="+smtp, envCrash+"="+crash)
}

// runChild runs the test named test alone in a child process with env
// added, and checks that it was killed by SIGKILL unless crash is "none",
// in which case it must succeed.
func runChild(t *testing.T, test, crash string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	killed := false
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			killed = true
		}
	}
	if crash != "none" && !killed {
		t.Fatalf("child with crash %s was not killed: %v\n%s", crash, err, out)
	}
	if crash == "none" && err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestAlerts_CrashRestart kills the process (SIGKILL) after the match is
// committed and after the SMTP server accepted a message but before it was
// recorded, restarts it, and counts the e-mails each subscriber got.
func TestAlerts_CrashRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, tc := range []struct {
		crash string
		dups  int // messages the server accepted twice
	}{
		{"none", 0},
		{"matched", 0},
		{"accepted:1", 1},
		{"accepted:7", 1},
		{fmt.Sprintf("accepted:%d", crashSubs), 1},
	} {
		t.Run(tc.crash, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			st := kvtest.OpenAt(t, dir)
			svc := NewService(st)
			svc.RequireConfirm, svc.Logger = false, st.Logger
			for i := range crashSubs {
				if _, err := svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr(fmt.Sprintf("u%d@example.ca", i))}); err != nil {
					t.Fatal(err)
				}
			}
			var recs []*rappel.Record
			for _, id := range crashIDs {
				recs = append(recs, newRecord(id, "Recall "+id))
			}
			if err := st.PutRecords(ctx, recs); err != nil {
				t.Fatal(err)
			}
			st.Close()
			srv := smtptest.MustStart(t)
			runHelper(t, dir, srv.Addr, tc.crash)
			if tc.crash != "none" {
				runHelper(t, dir, srv.Addr, "none") // the restart
			}
			perID := map[string]int{}
			for _, m := range srv.Messages() {
				msg, err := mail.ReadMessage(strings.NewReader(m.Data))
				if err != nil {
					t.Fatal(err)
				}
				perID[msg.Header.Get("Message-Id")]++
			}
			dups := 0
			for id, n := range perID {
				if n > 2 {
					t.Fatalf("%s sent %d times", id, n)
				}
				dups += n - 1
			}
			if len(perID) != crashSubs || dups != tc.dups {
				t.Fatalf("%d subscribers reached (want %d), %d duplicates (want %d)", len(perID), crashSubs, dups, tc.dups)
			}
		})
	}
}
