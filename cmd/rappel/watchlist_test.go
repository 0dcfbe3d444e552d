package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

// TestServe_WatchlistMatch runs a node on the agencies' real files served
// on loopback, as an operator deploys it: once it is live, a key registers
// a webhook for watchlist.match and a watchlist of three items (a Yamaha
// power adaptor by brand and model, the same model under another brand,
// an unrelated product); then Health Canada's dump gains the notice of
// that adaptor (NID 77585, held back until then) and a refresh runs. The
// receiver gets one watchlist.match delivery, signed as Standard Webhooks
// say, naming the Yamaha item, the notice and its evidence; the other
// brand's item gets none; the hit is listed and can be marked handled;
// and a refresh of the same files makes no second delivery.
func TestServe_WatchlistMatch(t *testing.T) {
	needBundle(t)
	dump := guesttest.RealSample(t, "hc-dump-en-2025-06.json")
	vrdb := guesttest.RealSample(t, "tc-vrdb-daily-sample.csv")
	var rows []map[string]any
	if err := json.Unmarshal(dump, &rows); err != nil {
		t.Fatal(err)
	}
	var held []map[string]any
	for _, r := range rows {
		if r["NID"] != "77585" {
			held = append(held, r)
		}
	}
	if len(held) != len(rows)-1 {
		t.Fatalf("the real dump has %d rows of NID 77585, want 1", len(rows)-len(held))
	}
	without, _ := json.Marshal(held)

	type delivery struct {
		h    http.Header
		body []byte
	}
	var mu sync.Mutex
	var got []delivery
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, delivery{r.Header.Clone(), b})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)
	deliveries := func() []delivery {
		mu.Lock()
		defer mu.Unlock()
		return append([]delivery(nil), got...)
	}

	up := feedstest.NewUpstream(t)
	up.Set("/hc/recalls-en.json", without)
	up.Set("/hc/recalls-fr.json", []byte("[]"))
	up.Set("/tc/vrdb.csv", vrdb)
	c := NewServeCommand()
	if err := c.ParseFlags([]string{
		"--data-dir", t.TempDir(), "--api-keys", "k1", "--feeds", "on", "--admin-key", adminKey,
		"--feed-hc-en", up.URL + "/hc/recalls-en.json", "--feed-hc-fr", up.URL + "/hc/recalls-fr.json",
		"--feed-tc-vrdb", up.URL + "/tc/vrdb.csv", "--feed-detail", up.URL + "/detail/{lang}/{id}.json",
		"--refresh-interval", "1h", "--feed-detail-rate", "0", "--alerts-interval", "1s",
		"--webhooks-allow-http-loopback",
	}); err != nil {
		t.Fatal(err)
	}
	base, _ := serve(t, c)
	if code, body := adminRefresh(t, base, adminKey); code != 200 {
		t.Fatalf("POST /admin/refresh = %d %s", code, body)
	}
	waitFor(t, "every source live", func() bool {
		h := health(t, base)
		for _, f := range h.Feeds {
			if !f.Live {
				return false
			}
		}
		return len(h.Feeds) == 3
	})
	time.Sleep(2 * time.Second) // the switch's events matched before the lists exist

	code, _, body := call(t, "POST", base+"/recall/webhooks", "k1", `{"url": "`+hook.URL+`/hook", "events": ["watchlist.match"]}`)
	var wh struct{ ID, Secret string }
	if code != 201 || json.Unmarshal([]byte(body), &wh) != nil {
		t.Fatalf("registering a webhook: %d %s", code, body)
	}
	code, hdr, body := call(t, "POST", base+"/recall/watchlists", "k1", `{"name": "Store 12", "items": [
		{"id": "yam-1", "brand": "Yamaha", "model": "PA-300C", "name": "AC power adaptor"},
		{"id": "other-brand", "brand": "Roland", "model": "PA-300C", "name": "AC power adaptor"},
		{"id": "hose", "brand": "Acme", "name": "Garden hose 50 ft"}]}`)
	var wl struct {
		ID    string `json:"id"`
		Items int    `json:"items"`
	}
	if code != 201 || json.Unmarshal([]byte(body), &wl) != nil || wl.Items != 3 || hdr.Get("Location") != "/recall/watchlists/"+wl.ID {
		t.Fatalf("registering a watchlist: %d %s (Location %q)", code, body, hdr.Get("Location"))
	}
	if n := len(deliveries()); n != 0 {
		t.Fatalf("%d deliveries before the notice was published", n)
	}

	up.Set("/hc/recalls-en.json", dump)
	if code, body := adminRefresh(t, base, adminKey); code != 200 {
		t.Fatalf("POST /admin/refresh = %d %s", code, body)
	}
	waitFor(t, "the watchlist.match delivery", func() bool { return len(deliveries()) > 0 })
	time.Sleep(3 * time.Second) // a delivery for another item would have come by now
	ds := deliveries()
	if len(ds) != 1 {
		for _, d := range ds {
			t.Logf("delivery: %.400s", d.body)
		}
		t.Fatalf("%d deliveries, want 1: the Yamaha item's", len(ds))
	}
	d := ds[0]
	checkSignature(t, wh.Secret, d.h, d.body)
	var ev struct {
		Type string `json:"type"`
		Data struct {
			Watchlist struct{ ID, Name string }         `json:"watchlist"`
			Item      struct{ ID, Brand, Model string } `json:"item"`
			Hit       struct {
				ID, Status, Event string
				RecordID          string `json:"record_id"`
				Candidate         struct {
					Confidence float64  `json:"confidence"`
					Matched    []string `json:"matched"`
					Why        string   `json:"why"`
					Evidence   string   `json:"evidence"`
				} `json:"candidate"`
			} `json:"hit"`
			Record struct {
				RecordID string `json:"record_id"`
				RecallID string `json:"recall_id"`
			} `json:"record"`
		} `json:"data"`
	}
	if err := json.Unmarshal(d.body, &ev); err != nil {
		t.Fatalf("the delivery is not JSON: %v\n%s", err, d.body)
	}
	h := ev.Data.Hit
	if ev.Type != "watchlist.match" || ev.Data.Watchlist.ID != wl.ID || ev.Data.Watchlist.Name != "Store 12" || ev.Data.Item.ID != "yam-1" ||
		h.Status != "check_lot" || h.Event != "recall.created" || !strings.Contains(h.RecordID, "77585") || ev.Data.Record.RecordID != h.RecordID {
		t.Fatalf("the delivery: %s", d.body)
	}
	if h.Candidate.Confidence <= 0 || !strings.Contains(strings.Join(h.Candidate.Matched, ","), "model") || h.Candidate.Why == "" {
		t.Errorf("the hit's evidence: %+v", h.Candidate)
	}
	if d.h.Get("webhook-id") == "" {
		t.Errorf("no webhook-id header")
	}

	// The hit, listed, then handled.
	code, _, body = call(t, "GET", base+"/recall/watchlists/"+wl.ID+"/hits", "k1", "")
	var page struct {
		Hits []struct {
			ID      string `json:"id"`
			Item    string `json:"item_id"`
			Handled bool   `json:"handled"`
		} `json:"hits"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &page) != nil || len(page.Hits) != 1 || page.Hits[0].ID != h.ID || page.Hits[0].Item != "yam-1" || page.Hits[0].Handled {
		t.Fatalf("GET hits = %d %s", code, body)
	}
	code, _, body = call(t, "PATCH", base+"/recall/watchlists/"+wl.ID+"/hits/"+h.ID, "k1", `{"handled": true}`)
	if code != 200 || !strings.Contains(body, `"handled":true`) {
		t.Fatalf("marking the hit handled = %d %s", code, body)
	}
	if code, _, body := call(t, "GET", base+"/recall/watchlists/"+wl.ID+"/hits", "k2", ""); code != 403 && code != 404 {
		t.Errorf("another key reads the hits: %d %s", code, body)
	}

	// The same files again: nothing new.
	if code, body := adminRefresh(t, base, adminKey); code != 200 {
		t.Fatalf("POST /admin/refresh = %d %s", code, body)
	}
	time.Sleep(3 * time.Second)
	if n := len(deliveries()); n != 1 {
		t.Errorf("%d deliveries after refreshing the same files, want still 1", n)
	}
}

// checkSignature verifies a delivery as a receiver following Standard
// Webhooks does: HMAC-SHA256 of id "." timestamp "." body, keyed by the
// base64 after whsec_, one of the space-separated v1 signatures.
func checkSignature(t *testing.T, secret string, h http.Header, body []byte) {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "."))
	m.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	for _, s := range strings.Fields(h.Get("webhook-signature")) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return
		}
	}
	t.Fatalf("webhook-signature %q does not verify", h.Get("webhook-signature"))
}

// needBundle skips a test of a node serving the embedded bundle when none
// is embedded, unless make test built one (RAPPEL_TEST_BUNDLE), where it
// fails.
func needBundle(t *testing.T) {
	t.Helper()
	if _, err := bundle.ReadManifest(bundle.Embedded()); errors.Is(err, bundle.ErrEmpty) {
		if os.Getenv("RAPPEL_TEST_BUNDLE") != "" {
			t.Fatal("no bundle is embedded, and RAPPEL_TEST_BUNDLE says make test built one")
		}
		t.Skip("no bundle embedded; `make test` builds one first and sets RAPPEL_TEST_BUNDLE=1")
	}
}
