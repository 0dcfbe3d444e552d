package alerts

import (
	"context"
	"log/slog"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// waitUntil polls ok until it holds, failing the test after a minute.
func waitUntil(tb testing.TB, what string, ok func() bool) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// passes returns how many passes r's loop has finished.
func (r *Runner) passesDone() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.passes
}

// applyRefresh commits recs as a refresh of the hc source would: the
// records and the batch of new recalls, in one write.
func applyRefresh(tb testing.TB, st *kv.Store, recs ...*rappel.Record) {
	tb.Helper()
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.RecordID
	}
	err := st.ApplySource(context.Background(), &rappel.SourceChange{
		State:      rappel.SourceState{Feed: rappel.FeedState{Source: "hc"}},
		PutRecords: recs,
		NewRecalls: &rappel.NewRecalls{At: time.Now().UTC(), Source: "hc", RecordIDs: ids},
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// newTestRunner returns a runner on st sending through smtp with double
// opt-in and an interval no test waits out: only Open, DataChanged and
// Close make passes.
func newTestRunner(tb testing.TB, st *kv.Store, smtp *smtptest.Server) *Runner {
	tb.Helper()
	r, err := NewRunner(Config{Confirm: true, SMTPAddr: smtp.Addr, SMTPFrom: "alerts@rappel.example.ca", PublicURL: "https://rappel.example.ca", Interval: time.Hour},
		st, st, index.Engine{}, slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// subscribeConfirmed subscribes addr to q and follows the confirmation
// e-mail's link, returning the subscription's id.
func subscribeConfirmed(tb testing.TB, r *Runner, smtp *smtptest.Server, addr, q string) string {
	tb.Helper()
	ctx := context.Background()
	before := len(smtp.Messages())
	if _, err := r.Service.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr(addr), Q: ptr(q), Lang: ptr("en")}); err != nil {
		tb.Fatal(err)
	}
	if _, err := r.Sender.SendConfirmations(ctx); err != nil {
		tb.Fatal(err)
	}
	msgs := smtp.Messages()
	if len(msgs) != before+1 {
		tb.Fatalf("%d confirmation e-mails", len(msgs)-before)
	}
	if res, err := r.Service.Confirm(ctx, confirmToken(tb, msgs[before].Data), "ua"); err != nil || res.Status != rappel.SubActive {
		tb.Fatalf("Confirm = %+v, %v", res, err)
	}
	var id string
	r.Service.Store.ForEachSubscription(ctx, func(s *rappel.Subscription) error {
		if s.Email == addr {
			id = s.ID
		}
		return nil
	})
	return id
}

// alertIDs returns the Message-IDs of the alert e-mails (not the
// confirmations) smtp received.
func alertIDs(tb testing.TB, smtp *smtptest.Server) []string {
	tb.Helper()
	var ids []string
	for _, m := range smtp.Messages() {
		msg, err := mail.ReadMessage(strings.NewReader(m.Data))
		if err != nil {
			tb.Fatal(err)
		}
		if id := msg.Header.Get("Message-Id"); strings.HasPrefix(id, "<alert.") {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestRunner_DataChanged: a refresh commits a new recall to the store and
// tells the runner; the runner, whose interval is an hour away, matches the
// recall against the confirmed subscription and sends the alert at once.
func TestRunner_DataChanged(t *testing.T) {
	ctx := context.Background()
	st, smtp := kvtest.OpenMem(t), smtptest.MustStart(t)
	r := newTestRunner(t, st, smtp)
	var _ rappel.ChangeListener = r
	sub := subscribeConfirmed(t, r, smtp, "ana@example.ca", "cookies")
	if err := r.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	waitUntil(t, "the first pass", func() bool { return r.passesDone() >= 1 })

	applyRefresh(t, st, newRecord("hc-9", "Cookies recalled for undeclared peanut", "peanut"), newRecord("hc-10", "Bread recalled"))
	if left, _ := st.UnmatchedRecords(ctx, []string{"hc-9", "hc-10"}); len(left) != 2 {
		t.Fatalf("matched before DataChanged: %v left", left)
	}
	// Only the dataset's info moved: no pass is due for that.
	if err := r.DataChanged(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := r.DataChanged(ctx, true); err != nil {
		t.Fatal(err)
	}
	want := "<alert." + sub + ".hc-9@rappel.example.ca>"
	waitUntil(t, "the alert e-mail", func() bool { return len(alertIDs(t, smtp)) > 0 })
	if ids := alertIDs(t, smtp); len(ids) != 1 || ids[0] != want {
		t.Fatalf("alerts %v, want %s", ids, want)
	}
	if left, err := st.UnmatchedRecords(ctx, []string{"hc-9", "hc-10"}); len(left) != 0 || err != nil {
		t.Fatalf("unmatched after the pass: %v, %v", left, err)
	}
	waitUntil(t, "the alert recorded as sent", func() bool { d, err := st.AlertDepth(ctx); return err == nil && d.Rows == 0 })
	if batches, err := st.NewRecalls(ctx); len(batches) != 0 || err != nil {
		t.Fatalf("batches left: %+v, %v", batches, err)
	}
}

// TestRunner_CloseFlushes: a new recall committed while nobody calls
// DataChanged is matched and sent by the last pass of Close, before the
// store closes.
func TestRunner_CloseFlushes(t *testing.T) {
	ctx := context.Background()
	st, smtp := kvtest.OpenMem(t), smtptest.MustStart(t)
	r := newTestRunner(t, st, smtp)
	sub := subscribeConfirmed(t, r, smtp, "bob@example.ca", "peanut")
	if err := r.Open(ctx); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the first pass", func() bool { return r.passesDone() >= 1 })
	applyRefresh(t, st, newRecord("hc-11", "Peanut butter recalled", "peanut"))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if ids := alertIDs(t, smtp); len(ids) != 1 || ids[0] != "<alert."+sub+".hc-11@rappel.example.ca>" {
		t.Fatalf("alerts after Close: %v", ids)
	}
	if d, err := st.AlertDepth(ctx); d.Rows != 0 || err != nil {
		t.Fatalf("pending after Close: %+v, %v", d, err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestConfig_Validate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{SMTPAddr: "mail:25", SMTPFrom: "a@b.example", MailDir: "mail", Interval: time.Second}, "--smtp-addr and --mail-dir are both set"},
		{Config{SMTPAddr: "mail:25", Interval: time.Second}, "--smtp-from is empty"},
		{Config{}, "--alerts-interval is 0s"},
		{Config{Interval: time.Second, FlushTimeout: -time.Second}, "flush timeout"},
		{Config{Interval: time.Second, OutboxRetention: 24 * time.Hour}, "--alerts-outbox-retention is 24h0m0s; give at least 168h0m0s"},
	} {
		_, err := NewRunner(tc.cfg, kvtest.OpenMem(t), kvtest.OpenMem(t), index.Engine{}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewRunner(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := NewRunner(Config{MailDir: t.TempDir(), Interval: time.Second}, kvtest.OpenMem(t), kvtest.OpenMem(t), index.Engine{}, nil); err != nil {
		t.Errorf("mail dir alone: %v", err)
	}
}
