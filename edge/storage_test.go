package edge

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/internal/logtest"
	"github.com/rappel-ca/rappel/kv/kvtest"
	"github.com/rappel-ca/rappel/kv/storetest"
)

// TestServer_StorageFull fills the disk under a real Pebble store (errorfs
// injecting ENOSPC) behind the real router: subscribing and unsubscribing
// answer 503 with a sentence and Retry-After instead of hanging, GET
// /health says degraded while reads go on, and once the disk has room
// again writes succeed and /health is ok without a restart.
func TestServer_StorageFull(t *testing.T) {
	full := storetest.DiskFull()
	logs := &logtest.Buffer{}
	st := kvtest.New(t)
	st.FS = errorfs.Wrap(vfs.Default, full)
	st.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	st.ProbeInterval = 20 * time.Millisecond
	kvtest.MustOpen(t, st)
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	svc := alerts.NewService(st)
	svc.Logger = slog.New(slog.DiscardHandler)
	svc.Now = stepClock()
	s, serverLogs := MustServer(t, MustCatalog(t, testRecords()))
	s.Alerts = svc
	s.StorageFault = st.StorageFault
	s.AdminKey = metricsAdminKey
	ts := MustHTTP(t, s.Handler())
	degraded := func() float64 {
		m := series(scrape(t, ts.URL+"/metrics", map[string]string{"x-admin-key": metricsAdminKey}), "rappel_storage_degraded", nil)
		if m == nil {
			t.Fatal("no rappel_storage_degraded in /metrics")
		}
		return m.GetGauge().GetValue()
	}
	subscribe := func() (int, string, string) {
		code, body, h := do(t, "POST", ts.URL+"/recall/alerts/subscribe", `{"email":"ana@example.ca","q":"peas"}`, keyHdr)
		return code, body, h.Get("Retry-After")
	}
	healthOf := func() (status string, storage map[string]string) {
		code, body, _ := do(t, "GET", ts.URL+"/health", "", nil)
		var h struct {
			Status  string            `json:"status"`
			Storage map[string]string `json:"storage"`
		}
		if err := json.Unmarshal([]byte(body), &h); code != 200 || err != nil {
			t.Fatalf("GET /health: %d %s (%v)", code, body, err)
		}
		return h.Status, h.Storage
	}

	code, body, _ := subscribe()
	if code != 200 {
		t.Fatalf("subscribing on a healthy disk: %d %s", code, body)
	}
	var res rappel.SubscribeResult
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatal(err)
	}
	if status, _ := healthOf(); status != "ok" {
		t.Fatalf("health on a healthy disk: %s", status)
	}
	if v := degraded(); v != 0 {
		t.Fatalf("rappel_storage_degraded on a healthy disk = %v, want 0", v)
	}

	full.On()
	for i := range 2 { // the write that finds the fault, then one refused at once
		code, body, retry := subscribe()
		var e struct{ Detail string }
		if err := json.Unmarshal([]byte(body), &e); code != 503 || err != nil || retry == "" ||
			!strings.Contains(e.Detail, "The node's storage is failing: no space left on device") || !strings.Contains(e.Detail, "try again later") {
			t.Fatalf("subscribe #%d on a full disk: %d, Retry-After %q, %s", i+1, code, retry, body)
		}
	}
	code, body, _ = do(t, "POST", ts.URL+"/recall/alerts/unsubscribe?token="+res.Token, "List-Unsubscribe=One-Click",
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if code != 503 || !strings.Contains(body, "storage is failing") {
		t.Fatalf("unsubscribe on a full disk: %d %s", code, body)
	}
	// Both answers are as the API description says.
	d := mustOpenAPI(t)
	for _, c := range []docCase{
		{"GET", "/health", "", nil, 200},
		{"POST", "/recall/alerts/subscribe", `{"email":"bo@example.ca"}`, keyHdr, 503},
	} {
		resp, body := docRequest(t, ts.URL, c)
		if resp.StatusCode != c.status {
			t.Fatalf("%s %s: %d %s", c.method, c.target, resp.StatusCode, body)
		}
		d.checkResponse(t, c, resp, body)
	}
	status, storage := healthOf()
	if status != "degraded" || !strings.Contains(storage["error"], "no space left on device") || storage["since"] == "" {
		t.Fatalf("health on a full disk: %s %v", status, storage)
	}
	if v := degraded(); v != 1 {
		t.Fatalf("rappel_storage_degraded on a full disk = %v, want 1", v)
	}
	if code, body, _ := do(t, "GET", ts.URL+"/readyz", "", nil); code != 200 {
		t.Fatalf("readyz on a full disk: %d %s", code, body)
	}
	// Reads go on.
	n := 0
	if err := st.ForEachSubscription(context.Background(), func(*rappel.Subscription) error { n++; return nil }); err != nil || n == 0 {
		t.Fatalf("reading the subscriptions on a full disk: %d, %v", n, err)
	}
	if code, body, _ := do(t, "GET", ts.URL+"/recall/"+testRecords()[0].RecordID, "", keyHdr); code != 200 {
		t.Fatalf("reading a record on a full disk: %d %s", code, body)
	}

	full.Off()
	deadline := time.Now().Add(time.Minute)
	for {
		if status, _ := healthOf(); status == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store did not recover once the disk had room:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, body, _ := subscribe(); code != 200 {
		t.Fatalf("subscribing after recovery: %d %s", code, body)
	}
	if v := degraded(); v != 0 {
		t.Fatalf("rappel_storage_degraded after recovery = %v, want 0", v)
	}
	code, body, _ = do(t, "POST", ts.URL+"/recall/alerts/unsubscribe?token="+res.Token, "List-Unsubscribe=One-Click",
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if code != 200 || !strings.Contains(body, rappel.SubUnsubscribed) {
		t.Fatalf("unsubscribe after recovery: %d %s", code, body)
	}
	if n := strings.Count(logs.String(), "storage failing"); n != 1 {
		t.Errorf("%d log lines say the storage fails, want 1 for the one fault:\n%s", n, logs)
	}
	if n := strings.Count(logs.String(), "storage recovered"); n != 1 {
		t.Errorf("%d log lines say the storage recovered, want 1:\n%s", n, logs)
	}
	// The refused requests are in the access log, not one error line each.
	if n := strings.Count(serverLogs.String(), "request failed"); n != 0 {
		t.Errorf("%d requests refused on a full disk were logged as failures:\n%s", n, serverLogs)
	}
	if n := strings.Count(serverLogs.String(), `"status":503`); n < 3 {
		t.Errorf("the access log has %d of the refused requests:\n%s", n, serverLogs)
	}
}
