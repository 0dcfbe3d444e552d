package alerts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// mailFileName is the name writeMailFile gives: time, then random.
var mailFileName = regexp.MustCompile(`^\d{8}T\d{6}\.\d{9}Z-[0-9a-f]{16}\.eml$`)

// mailFiles returns the names in dir, failing on anything but finished
// mail files (a temporary file left behind, say).
func mailFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if !mailFileName.MatchString(e.Name()) {
			tb.Fatalf("unexpected file %q in the mail dir", e.Name())
		}
		names = append(names, e.Name())
	}
	return names
}

// readMailFile parses a mail file as the SMTP server's DATA is parsed.
func readMailFile(tb testing.TB, path string) (*mail.Message, string) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := mail.ReadMessage(bytes.NewReader(b))
	if err != nil {
		tb.Fatalf("%s is not an RFC 5322 message: %v", path, err)
	}
	return m, string(b)
}

// seeded makes a pipeline's tokens and subscription ids a fixed sequence,
// so that two pipelines fed the same calls compose the same e-mails.
func seeded(p *pipeline) {
	p.svc.Random = rand.NewChaCha8([32]byte{1})
	p.snd.Random = rand.NewChaCha8([32]byte{2})
}

// TestSender_MailDir sends one digest over SMTP and the same digest (same
// store contents, same tokens) into a mail dir: the file is the message
// the SMTP server received, header for header, and the outbox ends the
// same way.
func TestSender_MailDir(t *testing.T) {
	ctx := context.Background()
	viaSMTP := newPipeline(t, kvtest.OpenMem(t), smtptest.MustStart(t))
	viaDir := newPipeline(t, kvtest.OpenMem(t), smtptest.MustStart(t))
	dir := filepath.Join(t.TempDir(), "mail")
	viaDir.snd.Addr, viaDir.snd.MailDir = "", dir
	var logs bytes.Buffer
	viaDir.snd.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	for _, p := range []*pipeline{viaSMTP, viaDir} {
		seeded(p)
		p.svc.RequireConfirm = false
		if _, err := p.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr("ana@example.ca"), Q: ptr("cookies")}); err != nil {
			t.Fatal(err)
		}
		p.st.PutRecords(ctx, []*rappel.Record{newRecord("hc-1", "Cookies recalled for undeclared peanut", "peanut")})
		if n, err := p.m.Match(ctx, 1, []string{"hc-1"}); n != 1 || err != nil {
			t.Fatalf("Match = %d, %v", n, err)
		}
		if n, err := p.snd.SendDue(ctx); n != 1 || err != nil {
			t.Fatalf("SendDue = %d, %v", n, err)
		}
		if n, err := p.snd.SendDue(ctx); n != 0 || err != nil {
			t.Fatalf("second SendDue = %d, %v: the row was not recorded as sent", n, err)
		}
	}
	files := mailFiles(t, dir)
	if len(files) != 1 || len(viaSMTP.smtp.Messages()) != 1 || len(viaDir.smtp.Messages()) != 0 {
		t.Fatalf("%d files, %d messages over SMTP", len(files), len(viaSMTP.smtp.Messages()))
	}
	want, err := mail.ReadMessage(strings.NewReader(viaSMTP.smtp.Messages()[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	got, raw := readMailFile(t, filepath.Join(dir, files[0]))
	if !strings.Contains(raw, "\r\n") {
		t.Error("the file's lines do not end in CRLF")
	}
	keys := func(h mail.Header) []string {
		var ks []string
		for k := range h {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	if !slices.Equal(keys(got.Header), keys(want.Header)) {
		t.Fatalf("headers %v, over SMTP %v", keys(got.Header), keys(want.Header))
	}
	for _, k := range keys(want.Header) {
		g, w := got.Header.Get(k), want.Header.Get(k)
		switch k {
		case "Date": // the clock of the write
			continue
		case "Content-Type": // a random MIME boundary
			g, _, _ = mime.ParseMediaType(g)
			w, _, _ = mime.ParseMediaType(w)
		}
		if g != w {
			t.Errorf("%s: %q in the file, %q over SMTP", k, g, w)
		}
	}
	if id := got.Header.Get("Message-Id"); !strings.HasPrefix(id, "<alert.") || !strings.HasSuffix(id, ".hc-1@rappel.example.ca>") {
		t.Errorf("Message-Id %q", id)
	}
	sm := unsubLink.FindStringSubmatch(got.Header.Get("List-Unsubscribe"))
	lines := logLines(t, &logs)
	if sm == nil || len(lines) != 1 || lines[0]["level"] != "INFO" || lines[0]["file"] != filepath.Join(dir, files[0]) ||
		lines[0]["unsubscribe"] != "https://rappel.example.ca/recall/alerts/unsubscribe?token="+sm[1] || strings.Contains(logs.String(), "ana@example.ca") {
		t.Errorf("log, want the file and the unsubscribe link at info, not the address:\n%s", logs.String())
	}
}

// logLines decodes a JSON log.
func logLines(tb testing.TB, logs *bytes.Buffer) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for line := range strings.Lines(logs.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			tb.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestSender_MailDirConfirmation follows a confirmation e-mail written to
// the mail dir: its link, logged and in the file, confirms the
// subscription.
func TestSender_MailDirConfirmation(t *testing.T) {
	ctx := context.Background()
	p := newPipeline(t, kvtest.OpenMem(t), smtptest.MustStart(t))
	dir := t.TempDir()
	p.snd.Addr, p.snd.MailDir = "", dir
	var logs bytes.Buffer
	p.snd.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	// Two addresses: one address gets one confirmation a day.
	for _, addr := range []string{"ana@example.ca", "bob@example.ca"} {
		if _, err := p.svc.Subscribe(ctx, &rappel.SubscribeRequest{Email: ptr(addr)}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := p.snd.SendConfirmations(ctx); n != 2 || err != nil {
		t.Fatalf("SendConfirmations = %d, %v", n, err)
	}
	files := mailFiles(t, dir)
	if len(files) != 2 || files[0] == files[1] {
		t.Fatalf("files %v, want two distinct ones", files)
	}
	_, raw := readMailFile(t, filepath.Join(dir, files[0]))
	tok := confirmToken(t, raw)
	// Both files bear the test clock's time: which is first is random.
	lines := logLines(t, &logs)
	i := slices.IndexFunc(lines, func(l map[string]any) bool {
		return l["confirm"] == "https://rappel.example.ca/recall/alerts/confirm?token="+tok && l["file"] == filepath.Join(dir, files[0])
	})
	if len(lines) != 2 || i < 0 || !strings.HasPrefix(fmt.Sprint(lines[i]["unsubscribe"]), "https://rappel.example.ca/recall/alerts/unsubscribe?token=") {
		t.Errorf("log, want the links of %s's e-mail:\n%s", files[0], logs.String())
	}
	if r, err := p.svc.Confirm(ctx, tok, "ua"); err != nil || r.Status != rappel.SubActive {
		t.Fatalf("Confirm = %+v, %v", r, err)
	}
}

// TestSender_MailDirUnwritable: a mail dir that cannot be created defers
// the digest, as an SMTP server's 4xx would, and the digest goes out once
// the directory can be written.
func TestSender_MailDirUnwritable(t *testing.T) {
	ctx := context.Background()
	p := newPipeline(t, kvtest.OpenMem(t), smtptest.MustStart(t))
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p.snd.Addr, p.snd.MailDir = "", filepath.Join(blocker, "mail") // under a file: cannot be made
	p.queueOne(t, "bob@example.ca")
	if n, err := p.snd.SendDue(ctx); n != 0 || err != nil {
		t.Fatalf("SendDue = %d, %v", n, err)
	}
	p.snd.MailDir = filepath.Join(filepath.Dir(blocker), "mail")
	p.clock.Add(p.snd.MinBackoff)
	if n, err := p.snd.SendDue(ctx); n != 1 || err != nil {
		t.Fatalf("SendDue after the fix = %d, %v", n, err)
	}
	if files := mailFiles(t, p.snd.MailDir); len(files) != 1 {
		t.Fatalf("files %v", files)
	}
}
