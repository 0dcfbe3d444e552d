package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// TestServe_MailDir tries subscribing with --mail-dir as a developer
// would, with no SMTP server: the confirmation e-mail is a file in the
// directory, and its link, followed over HTTP, confirms the subscription.
func TestServe_MailDir(t *testing.T) {
	dir, dataDir := filepath.Join(t.TempDir(), "mail"), t.TempDir()
	c := NewServeCommand()
	if err := c.ParseFlags([]string{"--data-dir", dataDir, "--api-keys", "test-key", "--mail-dir", dir, "--alerts-interval", "1h"}); err != nil {
		t.Fatal(err)
	}
	c.Bundle = MustTinyBundle(t)
	base, stop := serve(t, c)
	defer stop()

	code, _, body := call(t, "POST", base+"/recall/alerts/subscribe", "test-key", `{"email":"ana@example.ca","q":"toys","lang":"en"}`)
	var sub rappel.SubscribeResult
	if json.Unmarshal([]byte(body), &sub); code != 200 || sub.Status != rappel.SubPending {
		t.Fatalf("subscribing: %d %s", code, body)
	}
	// The e-mail is sent in the background: it is in the directory soon
	// after the answer, first under a hidden temporary name, then renamed.
	var ents []os.DirEntry
	complete := func() bool {
		return len(ents) == 1 && strings.HasSuffix(ents[0].Name(), ".eml") && !strings.HasPrefix(ents[0].Name(), ".")
	}
	for deadline := time.Now().Add(time.Minute); !complete() && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ents, _ = os.ReadDir(dir)
	}
	if !complete() {
		t.Fatalf("mail dir holds %v, want one .eml file", ents)
	}
	data, err := os.ReadFile(filepath.Join(dir, ents[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	// The link is under --public-url (its default); the path is this
	// server's.
	link := regexp.MustCompile(`http://127\.0\.0\.1:8080(/recall/alerts/confirm\?token=[A-Za-z0-9_-]{22})`).FindStringSubmatch(decodedBody(t, string(data)))
	if link == nil {
		t.Fatalf("no confirmation link in\n%s", data)
	}
	if code, _, body := call(t, "POST", base+link[1], "", ""); code != 200 || !strings.Contains(body, `"status":"subscribed"`) {
		t.Fatalf("following the link: %d %s", code, body)
	}
	// The store holds the subscription active, with the consent of the
	// link followed.
	stop()
	st := kvtest.OpenAt(t, filepath.Join(dataDir, "pebble"))
	defer st.Close()
	var subs []*rappel.Subscription
	st.ForEachSubscription(context.Background(), func(s *rappel.Subscription) error { subs = append(subs, s); return nil })
	if len(subs) != 1 || subs[0].Status != rappel.SubActive || subs[0].Consent == nil || subs[0].Consent.Method != rappel.ConsentDoubleOptIn {
		t.Fatalf("subscriptions after confirming: %+v", subs)
	}
}

// TestServeCommand_MailDirFlag: --mail-dir is read from RAPPEL_MAIL_DIR
// too, and refused next to --smtp-addr.
func TestServeCommand_MailDirFlag(t *testing.T) {
	t.Setenv("RAPPEL_MAIL_DIR", "/tmp/rappel-mail")
	c := NewServeCommand()
	if err := c.ParseFlags(nil); err != nil || c.Alerts.MailDir != "/tmp/rappel-mail" {
		t.Fatalf("ParseFlags = %v, mail dir %q", err, c.Alerts.MailDir)
	}
	err := NewServeCommand().ParseFlags([]string{"--smtp-addr", "127.0.0.1:25", "--smtp-from", "alerts@rappel.example.ca"})
	if err == nil || !strings.Contains(err.Error(), "--smtp-addr and --mail-dir are both set") {
		t.Fatalf("--smtp-addr with RAPPEL_MAIL_DIR: %v", err)
	}
}

// TestServe_AlertsLimits runs rappel serve with the abuse limits' flags:
// one address subscribed three times gets one confirmation e-mail and
// three identical answers; the key's fourth subscription of the day is a
// 429 with Retry-After.
func TestServe_AlertsLimits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mail")
	c := NewServeCommand()
	if err := c.ParseFlags([]string{"--data-dir", t.TempDir(), "--api-keys", "test-key", "--mail-dir", dir, "--alerts-interval", "1h",
		"--alerts-subscriptions-per-key-day", "3"}); err != nil {
		t.Fatal(err)
	}
	c.Bundle = MustTinyBundle(t)
	base, stop := serve(t, c)
	defer stop()
	var answers []string
	for range 3 {
		code, _, body := call(t, "POST", base+"/recall/alerts/subscribe", "test-key", `{"email":"ana@example.ca"}`)
		if code != 200 {
			t.Fatalf("subscribing: %d %s", code, body)
		}
		answers = append(answers, regexp.MustCompile(`[A-Za-z0-9_-]{22}`).ReplaceAllString(body, "TOKEN"))
	}
	if answers[0] != answers[1] || answers[1] != answers[2] {
		t.Fatalf("answers differ: %q", answers)
	}
	code, h, body := call(t, "POST", base+"/recall/alerts/subscribe", "test-key", `{"email":"bob@example.ca"}`)
	if code != 429 || h.Get("Retry-After") == "" || !strings.Contains(body, "this API key may create 3 a day (UTC)") {
		t.Fatalf("fourth subscription: %d %v %s", code, h, body)
	}
	// Stopping waits for the e-mails sent in the background.
	stop()
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 1 {
		t.Fatalf("mail dir holds %v (%v), want one e-mail", ents, err)
	}
}

// TestServeCommand_AlertsLimitFlags: the limits' defaults, their
// variables, and the refusal of a negative count naming its flag.
func TestServeCommand_AlertsLimitFlags(t *testing.T) {
	c := NewServeCommand()
	if err := c.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if a := c.Alerts; a.PendingTTL != 7*24*time.Hour || a.ConfirmPerAddress != 1 || a.ConfirmWindow != 24*time.Hour || a.SubscriptionsPerKeyDay != 1000 ||
		a.OutboxRetention != 30*24*time.Hour {
		t.Fatalf("defaults %+v", a.Config)
	}
	t.Setenv("RAPPEL_ALERTS_PENDING_TTL", "48h")
	c = NewServeCommand()
	if err := c.ParseFlags([]string{"--alerts-confirm-per-address", "2", "--alerts-confirm-window", "1h", "--alerts-subscriptions-per-key-day", "0"}); err != nil {
		t.Fatal(err)
	}
	if a := c.Alerts; a.PendingTTL != 48*time.Hour || a.ConfirmPerAddress != 2 || a.ConfirmWindow != time.Hour || a.SubscriptionsPerKeyDay != 0 {
		t.Fatalf("set %+v", a.Config)
	}
	err := NewServeCommand().ParseFlags([]string{"--alerts-confirm-per-address", "-1"})
	if err == nil || !strings.Contains(err.Error(), "--alerts-confirm-per-address is -1") {
		t.Fatalf("negative count: %v", err)
	}
}
