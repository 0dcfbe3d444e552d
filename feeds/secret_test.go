package feeds_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/feeds"
)

// TestRefresh_NoSecretsInErrors: an upstream fetched with a key in its
// query string, answering with a private text document instead of its
// JSON, fails the refresh with a sentence on /health and in the log that
// names neither the key nor any byte of the document: the URL without its
// query string, and the document's length and kind.
func TestRefresh_NoSecretsInErrors(t *testing.T) {
	h := newHarness(t)
	var logs bytes.Buffer
	h.r.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	h.up.Set("/hc/private.json", []byte("INTERNAL_SECRET=hunter2-do-not-leak\nDB_PASSWORD=swordfish\n"))
	h.r.Sources = []*feeds.Source{feeds.HCDump(h.up.URL+"/hc/private.json?api_key=TOPSECRET-UPSTREAM-KEY", h.up.URL+"/hc/recalls-fr.json?api_key=TOPSECRET-UPSTREAM-KEY")}
	h.open()
	if err := h.refresh(); err == nil {
		t.Fatal("a refresh of a document that is not JSON succeeded")
	}
	st := h.state("hcdump")
	for _, where := range []struct{ name, text string }{{"/health's last_error", st.LastError}, {"the log", logs.String()}} {
		for _, secret := range []string{"TOPSECRET", "api_key", "hunter2", "INTERNAL_SECRET", "swordfish"} {
			if strings.Contains(where.text, secret) {
				t.Errorf("%s holds %q: %s", where.name, secret, where.text)
			}
		}
	}
	if !strings.Contains(st.LastError, "57 bytes of text/plain") {
		t.Errorf("last_error %q does not say what the document was", st.LastError)
	}
}
