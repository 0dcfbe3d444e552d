package feeds_test

import (
	"context"
	"log/slog"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/alerts/smtptest"
	"github.com/rappel-ca/rappel/kv/index"
)

// TestRefresh_IndexAndAlerts follows one new recall from the agencies'
// feed to a subscriber's inbox through the real packages alone, wired as
// rappel serve wires them but without its main: the refresher fetches and
// normalizes it through the Wasm plugins into Pebble, then tells its
// listeners in order — the read index reloads, and the alert runner
// matches the recall against a saved search and sends the alert over SMTP
// — with no timer involved (the runner's interval is an hour).
func TestRefresh_IndexAndAlerts(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	h.loadBundle(nil, true)
	idx := MustIndex(t, h.store)
	catalog := idx.Catalog
	smtp := smtptest.MustStart(t)
	runner, err := alerts.NewRunner(alerts.Config{SMTPAddr: smtp.Addr, SMTPFrom: "alerts@rappel.example.ca",
		PublicURL: "https://rappel.example.ca", Interval: time.Hour}, h.store, h.store, index.Engine{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	h.r.Listeners = []rappel.ChangeListener{idx, runner}
	h.open()
	h.mustRefresh() // the first live refresh takes over from the bundle
	q, lang := "frozen peas", "en"
	if _, err := runner.Service.Subscribe(ctx, &rappel.SubscribeRequest{Email: &[]string{"ana@example.ca"}[0], Q: &q, Lang: &lang}); err != nil {
		t.Fatal(err)
	}
	if err := runner.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Close() })

	addRow(h, newRowEN, newRowFR)
	h.up.Set("/detail/en/70009.json", []byte(newDetailEN))
	h.mustRefresh()
	if r, ok := catalog.Current().Record("hc-70009"); !ok || !strings.Contains(r.Translations.EN.Title, "frozen peas") {
		t.Fatalf("hc-70009 in the read index after the refresh: %+v, %v", r, ok)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var ids []string
		for _, m := range smtp.Messages() {
			msg, err := mail.ReadMessage(strings.NewReader(m.Data))
			if err != nil {
				t.Fatal(err)
			}
			if id := msg.Header.Get("Message-Id"); strings.HasPrefix(id, "<alert.") {
				ids = append(ids, id)
			}
		}
		if len(ids) == 1 && strings.HasSuffix(ids[0], ".hc-70009@rappel.example.ca>") {
			break
		}
		if len(ids) > 1 || time.Now().After(deadline) {
			t.Fatalf("alert e-mails %v, want one for hc-70009", ids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
