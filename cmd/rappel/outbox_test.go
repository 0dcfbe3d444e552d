package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/internal/logline"
	"github.com/rappel-ca/rappel/internal/logtest"
)

// TestServe_MailOutboxes runs a node whose SMTP server refuses what it is
// sent (451 to DATA), as an operator meets it: 150 confirmed subscribers
// with two new recalls each are 150 alert e-mails waiting on /metrics (the
// node sends one per subscriber and batch, however many recalls it lists,
// not one per outbox row), with the oldest's age; 7 new subscriptions'
// confirmation e-mails wait in their own gauge; and the log warns once
// that alert e-mails are deferred, then once with how many more failed
// alike, not once per e-mail.
func TestServe_MailOutboxes(t *testing.T) {
	f := newFleetEnv(t)
	smtp := smtptest.MustStart(t)
	c := NewServeCommand()
	err := c.ParseFlags([]string{
		"--data-dir", t.TempDir(), "--api-keys", "k1", "--feeds", "on",
		"--feed-hc-en", f.up.URL + "/hc/recalls-en.json", "--feed-hc-fr", f.up.URL + "/hc/recalls-fr.json",
		"--feed-tc-vrdb", f.up.URL + "/tc/vrdb.csv", "--feed-detail", f.up.URL + "/detail/{lang}/{id}.json",
		"--feed-detail-rate", "0", "--admin-key", adminKey, "--refresh-interval", "1h",
		"--smtp-addr", smtp.Addr, "--smtp-from", "alerts@rappel.example.ca", "--public-url", "http://rappel.example.ca",
		"--alerts-interval", "200ms", "--metrics-addr", "127.0.0.1:0",
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Bundle = os.DirFS(f.bundleDir)
	// A repeated failure is logged at most every 5 s rather than every
	// minute, so that the line counting the others comes within the test.
	c.Alerts.LogEvery = 5 * time.Second
	logs := &logtest.Buffer{}
	c.Logger = logline.New(logs, "json", slog.LevelInfo)
	metricsAddr := make(chan net.Addr, 1)
	c.Telemetry.MetricsReady = func(a net.Addr) { metricsAddr <- a }
	base, _ := serve(t, c)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the node's log:\n%s", logs.String())
		}
	})
	waitLive(t, base)
	metrics := "http://" + (<-metricsAddr).String() + "/metrics"
	gauge := func(name string) float64 {
		t.Helper()
		code, body := get(t, metrics, "")
		m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(body)
		if code != 200 || m == nil {
			t.Fatalf("GET /metrics = %d, no %s in\n%s", code, name, body)
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	// 150 subscribers, confirmed while the server takes e-mails.
	confirmLink := regexp.MustCompile(`/recall/alerts/confirm\?token=[A-Za-z0-9_-]{22}`)
	subscribe := func(addr string) {
		t.Helper()
		code, _, body := call(t, "POST", base+"/recall/alerts/subscribe", "k1", fmt.Sprintf(`{"email":%q,"q":"peas","lang":"en"}`, addr))
		if code != 200 {
			t.Fatalf("subscribing %s: %d %s", addr, code, body)
		}
	}
	for i := range 150 {
		subscribe(fmt.Sprintf("s%03d@example.ca", i))
	}
	waitFor(t, "150 confirmation e-mails", func() bool { return len(smtp.Messages()) == 150 })
	for _, m := range smtp.Messages() {
		link := confirmLink.FindString(decodedBody(t, m.Data))
		if code, _, body := call(t, "POST", base+link, "", ""); link == "" || code != 200 {
			t.Fatalf("confirming %v: %d %s", m.To, code, body)
		}
	}
	if v := gauge("rappel_confirmation_outbox_pending"); v != 0 {
		t.Fatalf("rappel_confirmation_outbox_pending = %v once all were sent, want 0", v)
	}

	// The server refuses from now on: 7 more subscriptions' e-mails wait.
	smtp.SetDataReply("451 4.3.0 try again later")
	for i := range 7 {
		subscribe(fmt.Sprintf("late%d@example.ca", i))
	}
	waitFor(t, "7 confirmation e-mails refused", func() bool { return len(smtp.Refused()) >= 7 })
	if v := gauge("rappel_confirmation_outbox_pending"); v != 7 {
		t.Errorf("rappel_confirmation_outbox_pending = %v, want 7", v)
	}
	if v := gauge("rappel_confirmation_outbox_oldest_seconds"); !(v > 0) {
		t.Errorf("rappel_confirmation_outbox_oldest_seconds = %v, want the age of the first", v)
	}

	// Two new recalls match every confirmed subscriber: 150 e-mails, not
	// 300 rows.
	f.addRecall(t, "70009", "Acme brand frozen peas recalled due to Listeria")
	f.addRecall(t, "70010", "Bulk frozen peas recalled due to Listeria")
	refreshEach(t, base)
	waitFor(t, "150 alert e-mails refused", func() bool { return len(smtp.Refused()) >= 7+150 })
	if v := gauge("rappel_alert_outbox_pending"); v != 150 {
		t.Errorf("rappel_alert_outbox_pending = %v, want 150 e-mails (one per subscriber)", v)
	}
	if v := gauge("rappel_alert_outbox_oldest_seconds"); !(v > 0) {
		t.Errorf("rappel_alert_outbox_oldest_seconds = %v, want the age of the batch", v)
	}

	// One warning as the failures start, one counting the rest once the
	// interval has passed (the end of a pass tells it); retries come
	// after the backoff, 30 s on.
	deferred := func() (lines []map[string]any) {
		for l := range strings.Lines(logs.String()) {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && strings.HasPrefix(fmt.Sprint(m["msg"]), "alert e-mail deferred") {
				lines = append(lines, m)
			}
		}
		return lines
	}
	told := func(lines []map[string]any) int { // the failures the lines tell of
		n := 0
		for _, l := range lines {
			held, _ := l["suppressed"].(float64)
			n += 1 + int(held)
		}
		return n
	}
	waitFor(t, "the count of the failures held back", func() bool { return told(deferred()) >= 150 })
	lines := deferred()
	if len(lines) < 2 || len(lines) > 4 || lines[0]["level"] != "WARN" || lines[0]["suppressed"] != nil ||
		!strings.Contains(fmt.Sprint(lines[len(lines)-1]["msg"]), "more like it in the last") || told(lines) != 150 {
		t.Fatalf("log lines of deferred alert e-mails: %v; want the first, then a few telling of the 149 others", lines)
	}
}
