package feeds_test

import (
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/kv/index"
)

// hookReceiver is an in-process HTTPS webhook receiver with its own
// certificate: it verifies each delivery's signature, answers with the
// statuses it is given in turn (200 once they run out), and keeps what it
// received.
type hookReceiver struct {
	srv    *httptest.Server
	secret string

	mu       sync.Mutex
	statuses []int
	got      []hookDelivery
	bad      []string
}

type hookDelivery struct {
	id, typ, record string
	status          int
}

func startReceiver(t *testing.T, statuses ...int) *hookReceiver {
	rc := &hookReceiver{statuses: statuses}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc
}

// pool trusts the receiver's certificate alone.
func (rc *hookReceiver) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(rc.srv.Certificate())
	return p
}

func (rc *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err := alerts.VerifyWebhook(rc.secret, r.Header, body, time.Now(), 5*time.Minute); err != nil {
		rc.bad = append(rc.bad, err.Error())
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var p struct {
		Type string `json:"type"`
		Data struct {
			Record rappel.Record `json:"record"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		rc.bad = append(rc.bad, "payload: "+err.Error())
	}
	status := http.StatusOK
	if len(rc.statuses) > 0 {
		status, rc.statuses = rc.statuses[0], rc.statuses[1:]
	}
	rc.got = append(rc.got, hookDelivery{id: r.Header.Get("webhook-id"), typ: p.Type, record: p.Data.Record.RecordID, status: status})
	w.WriteHeader(status)
}

func (rc *hookReceiver) deliveries() ([]hookDelivery, []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hookDelivery(nil), rc.got...), append([]string(nil), rc.bad...)
}

// await waits up to 30 s for n deliveries, failing on any the receiver
// refused, and returns those it got.
func (rc *hookReceiver) await(t *testing.T, n int) []hookDelivery {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got, bad := rc.deliveries()
		if len(bad) > 0 {
			t.Fatalf("deliveries the receiver refused: %v", bad)
		}
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
	}
}

// hookRunner returns an alerts runner on h's store that posts webhooks to
// rc (retrying on schedule, without jitter) and follows h's refreshes.
func hookRunner(t *testing.T, h *harness, rc *hookReceiver, schedule []time.Duration) *alerts.Runner {
	t.Helper()
	runner, err := alerts.NewRunner(alerts.Config{Interval: 20 * time.Millisecond, Webhooks: alerts.HookConfig{
		AllowHTTPLoopback: true, RootCAs: rc.pool(), Schedule: schedule, Jitter: -1,
	}}, h.store, h.store, index.Engine{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	h.r.Listeners = []rappel.ChangeListener{runner}
	return runner
}

// register registers req as key-1's endpoint, tells rc its secret and
// opens the runner.
func (rc *hookReceiver) register(t *testing.T, h *harness, runner *alerts.Runner, req *rappel.WebhookRequest) *rappel.WebhookCreated {
	t.Helper()
	created, err := runner.Hooks.Create(h.ctx, "key-1", req)
	if err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	rc.secret = created.Secret
	rc.mu.Unlock()
	if err := runner.Open(h.ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Close() })
	return created
}

// TestRefresh_Webhooks follows two new recalls from the agencies' feed to
// a webhook receiver through the real packages: the refresher writes them
// with their record events, the runner matches them against an endpoint's
// search (one matches, one does not) and posts the match, signed, over
// HTTPS to a receiver that answers 500 and then 200: the delivery goes
// out twice with one webhook-id, and nothing else does.
func TestRefresh_Webhooks(t *testing.T) {
	h := newHarness(t)
	h.loadBundle(nil, true)
	rc := startReceiver(t, http.StatusInternalServerError)
	runner := hookRunner(t, h, rc, []time.Duration{10 * time.Millisecond, time.Hour})
	h.open()
	h.mustRefresh() // the first live refresh finds the bundle's records unchanged: no events
	u, q := rc.srv.URL+"/hook?token=s3cret", "frozen peas"
	created := rc.register(t, h, runner, &rappel.WebhookRequest{URL: &u, Q: &q})

	addRow(h, newRowEN, newRowFR)
	h.up.Set("/detail/en/70009.json", []byte(newDetailEN))
	other := strings.NewReplacer("70009", "70010", "frozen peas", "garden hoses", "Frozen peas", "Garden hoses", "pois surgelés", "tuyaux", "Pois surgelés", "Tuyaux")
	addRow(h, other.Replace(newRowEN), other.Replace(newRowFR))
	h.up.Set("/detail/en/70010.json", []byte(other.Replace(newDetailEN)))
	h.mustRefresh()
	if h.record("hc-70010") == nil {
		t.Fatal("the non-matching recall hc-70010 was not stored: the test would prove nothing")
	}

	rc.await(t, 2)
	// A few more passes, for any duplicate to show.
	for range 3 {
		if err := runner.DataChanged(h.ctx, true); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got, _ := rc.deliveries()
	if len(got) != 2 || got[0].status != 500 || got[1].status != 200 || got[0].id != got[1].id ||
		got[0].typ != rappel.EventRecallCreated || got[0].record != "hc-70009" || got[1].record != "hc-70009" {
		t.Fatalf("deliveries %+v; want hc-70009's recall.created refused once, then accepted, under one webhook-id", got)
	}
	v, err := runner.Hooks.Get(h.ctx, "key-1", created.ID)
	if err != nil || v.LastDelivery == nil || !v.LastDelivery.OK || v.LastDelivery.ID != got[0].id || v.FailingSince != nil {
		t.Fatalf("endpoint after the deliveries: %+v, %v", v, err)
	}
	if c := runner.HookSender.Counts(); c.Delivered != 1 || c.Retried != 1 || c.Failed != 0 {
		t.Fatalf("counts %+v; want 1 delivered, 1 retried", c)
	}
}

// TestRefresh_FirstLiveWebhooks follows the changes a node's first live
// refresh finds since its bundle was built (a recall created, one updated,
// one archived) to an unfiltered endpoint registered before that refresh,
// through the real refresher, runner and HTTPS receiver: each is delivered,
// as the change feed lists it, and as any later refresh's would be.
func TestRefresh_FirstLiveWebhooks(t *testing.T) {
	h := newHarness(t)
	h.loadBundle(nil, true)
	rc := startReceiver(t)
	runner := hookRunner(t, h, rc, nil)
	h.open()
	u := rc.srv.URL + "/hook"
	rc.register(t, h, runner, &rappel.WebhookRequest{URL: &u})

	// Upstream changed since the bundle was built.
	replace(t, h, "/hc/recalls-en.json", `"Type II", "Last updated": null, "Archived": "0"}`, `"Type II", "Last updated": null, "Archived": "1"}`)
	replace(t, h, "/hc/recalls-en.json", "The handle can detach while the kettle is full.", "The handle can detach while the kettle is full or hot.")
	addRow(h, newRowEN, newRowFR)
	h.up.Set("/detail/en/70009.json", []byte(newDetailEN))
	h.mustRefresh()

	// The change feed lists the three changes.
	page, err := h.store.ReadChanges(h.ctx, 0, 0, 1)
	if err == nil {
		page, err = h.store.ReadChanges(h.ctx, page.Gen, 0, 100)
	}
	if err != nil {
		t.Fatal(err)
	}
	feed := map[string]string{}
	for _, e := range page.Entries {
		feed[e.RecordID] = e.Kind
	}
	if want := map[string]string{"hc-70009": rappel.ChangeCreated, "hc-70005": rappel.ChangeUpdated, "hc-70003": rappel.ChangeArchived}; !maps.Equal(feed, want) {
		t.Fatalf("the change feed after the first live refresh: %v; want %v", feed, want)
	}
	want := map[string]string{"hc-70009": rappel.EventRecallCreated, "hc-70005": rappel.EventRecallUpdated, "hc-70003": rappel.EventRecallArchived}
	got := rc.await(t, len(want))
	seen := map[string]string{}
	for _, d := range got {
		seen[d.record] = d.typ
	}
	if len(got) != len(want) || !maps.Equal(seen, want) {
		t.Fatalf("deliveries after the first live refresh: %+v; want %v", got, want)
	}
	if c := runner.HookSender.Counts(); c.Delivered != int64(len(want)) {
		t.Fatalf("counts %+v; want %d delivered", c, len(want))
	}
}

// TestRefresh_RecordEvents checks how a refresh names its changes for the
// webhooks: a new record is created, a changed one updated, one whose
// status became archived archived. A first live refresh that finds the
// bundle's records as they are names none.
func TestRefresh_RecordEvents(t *testing.T) {
	h := newHarness(t)
	h.loadBundle(nil, true)
	h.open()
	h.mustRefresh()
	if evs, err := h.store.RecordEvents(h.ctx); err != nil || len(evs) != 0 {
		t.Fatalf("after a first live refresh that changed nothing: %+v, %v; want none", evs, err)
	}
	for _, e := range mustEvents(t, h) {
		if err := h.store.AckRecordEvents(h.ctx, e.Seq); err != nil {
			t.Fatal(err)
		}
	}
	replace(t, h, "/hc/recalls-en.json", `"Type II", "Last updated": null, "Archived": "0"}`, `"Type II", "Last updated": null, "Archived": "1"}`)
	// hc-70005 has no detail document, whose title would win.
	replace(t, h, "/hc/recalls-en.json", "The handle can detach while the kettle is full.", "The handle can detach while the kettle is full or hot.")
	addRow(h, newRowEN, newRowFR)
	h.up.Set("/detail/en/70009.json", []byte(newDetailEN))
	h.mustRefresh()
	var created, updated, archived []string
	for _, e := range mustEvents(t, h) {
		if e.Initial {
			t.Fatalf("a later refresh's events marked initial: %+v", e)
		}
		created, updated, archived = append(created, e.Created...), append(updated, e.Updated...), append(archived, e.Archived...)
	}
	if strings.Join(created, ",") != "hc-70009" || strings.Join(updated, ",") != "hc-70005" || strings.Join(archived, ",") != "hc-70003" {
		t.Fatalf("created %v, updated %v, archived %v; want hc-70009, hc-70005, hc-70003", created, updated, archived)
	}
}

func mustEvents(t *testing.T, h *harness) []rappel.RecordEvents {
	t.Helper()
	evs, err := h.store.RecordEvents(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}
