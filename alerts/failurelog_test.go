package alerts

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// warnings returns the warnings of the JSON log in buf, and empties it.
func warnings(tb testing.TB, buf *bytes.Buffer) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for _, m := range logLines(tb, buf) {
		if m["level"] == "WARN" {
			out = append(out, m)
		}
	}
	buf.Reset()
	return out
}

// TestSender_FailuresLoggedOncePerCause: 150 subscribers with two new
// recalls each are 150 e-mails, and an SMTP server refusing them all
// makes one warning a minute, not one per e-mail or row: the first as it
// happens, then one saying how many more failed alike. The outbox counts
// 150 e-mails waiting, not 300 rows. Confirmation e-mails failing on a
// server that is down are a cause of their own.
func TestSender_FailuresLoggedOncePerCause(t *testing.T) {
	ctx := context.Background()
	smtp := smtptest.MustStart(t)
	p := newPipeline(t, kvtest.OpenMem(t), smtp)
	var logs bytes.Buffer
	p.snd.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	p.svc.RequireConfirm = false
	for i := range 150 {
		if _, err := p.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr(fmt.Sprintf("s%03d@example.ca", i)), Q: ptr("peanut")}); err != nil {
			t.Fatal(err)
		}
	}
	p.st.PutRecords(ctx, []*rappel.Record{newRecord("hc-1", "Peanut butter recalled"), newRecord("hc-2", "Peanut cookies recalled")})
	if n, err := p.m.Match(ctx, 1, []string{"hc-1", "hc-2"}); n != 300 || err != nil {
		t.Fatalf("Match = %d, %v; want 300 rows", n, err)
	}
	smtp.SetDataReply("451 4.3.0 try again later")
	if n, err := p.snd.SendDue(ctx); n != 0 || err != nil {
		t.Fatalf("SendDue = %d, %v", n, err)
	}
	if got := len(smtp.Refused()); got != 150 {
		t.Fatalf("the server refused %d e-mails, want 150 (one per subscriber)", got)
	}
	warns := warnings(t, &logs)
	if len(warns) != 1 || warns[0]["msg"] != "alert e-mail deferred" || !strings.Contains(warns[0]["error"].(string), "451") {
		t.Fatalf("a pass of 150 failures logged %d warnings, want the first only: %v", len(warns), warns)
	}
	if d, err := p.st.AlertDepth(ctx); d.Mails != 150 || d.Rows != 300 || err != nil {
		t.Fatalf("AlertDepth = %+v, %v; want 150 e-mails of 300 rows", d, err)
	}

	// The retries a minute on: one line, with the count of the others.
	p.clock.Add(61 * time.Second)
	if _, err := p.snd.SendDue(ctx); err != nil {
		t.Fatal(err)
	}
	warns = warnings(t, &logs)
	if len(warns) != 1 || warns[0]["msg"] != "alert e-mail deferred (and 149 more like it in the last 1m1s)" || warns[0]["suppressed"] != 149.0 {
		t.Fatalf("the retries logged %v, want one line counting the 149 held back", warns)
	}

	// The server gone: a confirmation e-mail's failure is a line of its
	// own, and the next pass's flush, a minute on, tells the two held.
	p.svc.RequireConfirm = true
	for _, a := range []string{"ana@example.ca", "bob@example.ca", "eve@example.ca"} {
		if _, err := p.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr(a)}); err != nil {
			t.Fatal(err)
		}
	}
	smtp.Close()
	if _, err := p.snd.SendConfirmations(ctx); err != nil {
		t.Fatal(err)
	}
	warns = warnings(t, &logs)
	if len(warns) != 1 || warns[0]["msg"] != "confirmation e-mail deferred" || !strings.Contains(warns[0]["error"].(string), "connection refused") {
		t.Fatalf("3 confirmations failing logged %v, want one line", warns)
	}
	if d, err := p.st.ConfirmDepth(ctx); d.Mails != 3 || d.Rows != 3 || !d.Oldest.Equal(p.clock.Now()) || err != nil {
		t.Fatalf("ConfirmDepth = %+v, %v; want 3 e-mails", d, err)
	}
	// A minute on, the alerts' retries fail on the server gone (a cause of
	// their own) and the pass's end tells the lines held back since the
	// last of each cause: the 149 retries refused, the 2 confirmations.
	p.clock.Add(time.Minute)
	if _, err := p.snd.SendDue(ctx); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, w := range warnings(t, &logs) {
		msgs = append(msgs, w["msg"].(string))
	}
	slices.Sort(msgs)
	want := []string{"alert e-mail deferred", "alert e-mail deferred (and 148 more like it in the last 1m0s)",
		"confirmation e-mail deferred (and 1 more like it in the last 1m0s)"}
	if !slices.Equal(msgs, want) {
		t.Fatalf("the pass a minute on logged %q, want %q", msgs, want)
	}
}
