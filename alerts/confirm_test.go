package alerts

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/kvtest"
	"github.com/rappel-ca/rappel/kv/postgres"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

// storeOpener opens a handle on one store, the same at every call, with
// the node's records; close closes the handle. It stands for a node
// restarting on its data dir, or on the fleet's database.
type storeOpener func(tb testing.TB) (st Store, records RecordSource, close func() error)

// pebbleOpener reopens one Pebble store kept in memory.
func pebbleOpener() storeOpener {
	fs := vfs.NewMem()
	return func(tb testing.TB) (Store, RecordSource, func() error) {
		tb.Helper()
		st := kv.NewStore("alerts")
		st.FS, st.Logger = fs, slog.New(slog.DiscardHandler)
		if err := st.Open(context.Background()); err != nil {
			tb.Fatal(err)
		}
		return st, st, st.Close
	}
}

// postgresOpener opens a new handle on one PostgreSQL database each time;
// the records are a Pebble store of the node's own.
func postgresOpener(dsn string) storeOpener {
	return func(tb testing.TB) (Store, RecordSource, func() error) {
		tb.Helper()
		s := postgres.NewStore(dsn)
		s.Node, s.Logger = "n1", slog.New(slog.DiscardHandler)
		if err := s.Open(context.Background()); err != nil {
			tb.Fatal(err)
		}
		return s, kvtest.OpenMem(tb), func() error { s.Close(); return nil }
	}
}

// mailOutlet is where a runner's e-mails go, with a way to make it fail
// for real and to heal it.
type mailOutlet struct {
	config     func(*Config)
	fail, heal func(tb testing.TB)
	// delivered returns the e-mails it took, whole; refused, when set,
	// how many it refused.
	delivered func(tb testing.TB) []string
	refused   func() int
}

// smtpOutlet is the test SMTP server, refusing DATA with a 451 while it
// fails.
func smtpOutlet(tb testing.TB) *mailOutlet {
	srv := smtptest.MustStart(tb)
	return &mailOutlet{
		config: func(c *Config) { c.SMTPAddr, c.SMTPFrom = srv.Addr, "alerts@rappel.example.ca" },
		fail:   func(testing.TB) { srv.SetDataReply("451 4.3.0 try again later") },
		heal:   func(testing.TB) { srv.SetDataReply("") },
		delivered: func(testing.TB) []string {
			var out []string
			for _, m := range srv.Messages() {
				out = append(out, m.Data)
			}
			return out
		},
		refused: func() int { return len(srv.Refused()) },
	}
}

// mailDirOutlet is a mail dir under a path that, while it fails, is a
// regular file, so that the directory cannot be made.
func mailDirOutlet(tb testing.TB) *mailOutlet {
	blocker := filepath.Join(tb.TempDir(), "spool")
	dir := filepath.Join(blocker, "mail")
	return &mailOutlet{
		config: func(c *Config) { c.MailDir = dir },
		fail: func(tb testing.TB) {
			if err := os.WriteFile(blocker, nil, 0o600); err != nil {
				tb.Fatal(err)
			}
		},
		heal: func(tb testing.TB) {
			if err := os.Remove(blocker); err != nil {
				tb.Fatal(err)
			}
		},
		delivered: func(tb testing.TB) []string {
			// The files complete so far; one being written is hidden.
			files, _ := filepath.Glob(filepath.Join(dir, "[0-9]*.eml"))
			var out []string
			for _, f := range files {
				_, raw := readMailFile(tb, f)
				out = append(out, raw)
			}
			return out
		},
	}
}

// TestRunner_ConfirmationRetried: a confirmation e-mail whose first send
// fails (the SMTP server answers 451, the mail dir cannot be made) is
// sent by a later attempt, after the node restarted on the same store,
// and its link confirms; the address's allowance, spent on it once, holds
// back a second subscription's e-mail. On the node's Pebble store and on
// the fleet's PostgreSQL.
func TestRunner_ConfirmationRetried(t *testing.T) {
	t.Run("Pebble/SMTP", func(t *testing.T) { testConfirmationRetried(t, pebbleOpener(), smtpOutlet(t)) })
	t.Run("Pebble/MailDir", func(t *testing.T) { testConfirmationRetried(t, pebbleOpener(), mailDirOutlet(t)) })
	t.Run("PostgreSQL/SMTP", func(t *testing.T) { testConfirmationRetried(t, postgresOpener(pgtest.DSN(t)), smtpOutlet(t)) })
	t.Run("PostgreSQL/MailDir", func(t *testing.T) { testConfirmationRetried(t, postgresOpener(pgtest.DSN(t)), mailDirOutlet(t)) })
}

func testConfirmationRetried(t *testing.T, open storeOpener, out *mailOutlet) {
	ctx := context.Background()
	clock := newFakeClock()
	start := func() (*Runner, func()) {
		t.Helper()
		st, recs, closeStore := open(t)
		cfg := Config{Confirm: true, PublicURL: "https://rappel.example.ca", Interval: time.Hour,
			ConfirmPerAddress: 1, ConfirmWindow: 24 * time.Hour, PendingTTL: 7 * 24 * time.Hour}
		out.config(&cfg)
		r, err := NewRunner(cfg, st, recs, index.Engine{}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		r.Service.Now, r.Sender.Now = clock.Now, clock.Now
		if err := r.Open(ctx); err != nil {
			t.Fatal(err)
		}
		return r, func() {
			t.Helper()
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if err := closeStore(); err != nil {
				t.Fatal(err)
			}
		}
	}

	out.fail(t)
	r, stop := start()
	if _, err := r.Service.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("ana@example.ca"), Q: ptr("cookies")}); err != nil {
		t.Fatal(err)
	}
	stop() // its last pass tries what is due
	if got := out.delivered(t); len(got) != 0 {
		t.Fatalf("%d e-mails delivered while the outlet fails", len(got))
	}
	if out.refused != nil && out.refused() != 1 {
		t.Fatalf("the SMTP server refused %d e-mails, want the one attempt", out.refused())
	}

	out.heal(t)
	clock.Add(time.Hour) // past the backoff
	r, stop = start()
	defer stop()
	waitUntil(t, "the confirmation e-mail after the restart", func() bool { return len(out.delivered(t)) > 0 })
	mails := out.delivered(t)
	if len(mails) != 1 {
		t.Fatalf("%d confirmation e-mails, want 1", len(mails))
	}
	if res, err := r.Service.Confirm(ctx, confirmToken(t, mails[0]), "ua"); err != nil || res.Status != rappel.SubActive {
		t.Fatalf("Confirm = %+v, %v", res, err)
	}

	// The retry spent the address's allowance once: the day's second
	// subscription is stored and answered alike, with no e-mail.
	if res, err := r.Service.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("Ana@example.ca")}); err != nil || res.Status != rappel.SubPending {
		t.Fatalf("second Subscribe = %+v, %v", res, err)
	}
	before := r.passesDone()
	r.DataChanged(ctx, true)
	waitUntil(t, "a pass", func() bool { return r.passesDone() > before })
	if n := len(out.delivered(t)); n != 1 {
		t.Fatalf("%d e-mails after a second subscription within the window, want 1", n)
	}
}
