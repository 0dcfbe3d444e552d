package edge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// testAdminKey is the admin key of test servers that have one.
const testAdminKey = "admin_7c1e0b3f"

// feedStates is what a test server's Feeds hook reports.
func feedStates() []rappel.FeedState {
	return []rappel.FeedState{
		{Source: "hcdump", Live: true, LastAttempt: datasetTime, LastSuccess: datasetTime, Records: 12, Plugin: "abc"},
		{Source: "vrdb", Live: true, LastAttempt: datasetTime.Add(time.Minute), LastError: "Fetching https://x/vrdb.csv: the upstream answered 500.", LastErrorReason: rappel.FailureFetch, Stale: true, Records: 5,
			Rejected: 1, Problems: []rappel.Problem{{Source: "vrdb", RecordID: "tc-1", Reason: "Line 3 has 2 fields."}}},
	}
}

// adminDo sends a request with the admin key, when not empty.
func adminDo(t *testing.T, method, url, adminKey string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if adminKey != "" {
		req.Header.Set("X-Admin-Key", adminKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServer_AdminRefresh(t *testing.T) {
	refreshed := 0
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	s.AdminKey = testAdminKey
	s.Feeds = feedStates
	s.Refresh = func(ctx context.Context) error {
		refreshed++
		return errors.New("refreshing vrdb: upstream answered 500") // a source failing is reported in its state
	}
	base := MustHTTP(t, s.Handler()).URL

	t.Run("OK", func(t *testing.T) {
		code, body := adminDo(t, http.MethodPost, base+"/admin/refresh", testAdminKey)
		var got struct{ Feeds []rappel.FeedState }
		if code != 200 || json.Unmarshal([]byte(body), &got) != nil || len(got.Feeds) != 2 || got.Feeds[1].LastError == "" || got.Feeds[1].LastErrorReason != rappel.FailureFetch {
			t.Fatalf("POST /admin/refresh = %d %s", code, body)
		}
		if refreshed != 1 {
			t.Fatalf("refreshed %d times", refreshed)
		}
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		for key, want := range map[string]string{"": "Missing admin key", "nope": "Wrong admin key", testKey: "Wrong admin key"} {
			code, body := adminDo(t, http.MethodPost, base+"/admin/refresh", key)
			if code != 403 || !strings.Contains(body, want) {
				t.Errorf("with key %q: %d %s, want 403 %q", key, code, body, want)
			}
		}
		if refreshed != 1 {
			t.Fatalf("refreshed %d times without a key", refreshed)
		}
	})
	t.Run("ErrMethod", func(t *testing.T) {
		code, body := adminDo(t, http.MethodGet, base+"/admin/refresh", testAdminKey)
		if code != 405 {
			t.Fatalf("GET /admin/refresh = %d %s", code, body)
		}
	})
}

func TestServer_AdminRefresh_Closed(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	s.Refresh = func(context.Context) error { t.Fatal("refreshed"); return nil }
	base := MustHTTP(t, s.Handler()).URL
	if code, body := adminDo(t, http.MethodPost, base+"/admin/refresh", "anything"); code != 403 || !strings.Contains(body, "--admin-key") {
		t.Fatalf("without an admin key configured: %d %s", code, body)
	}

	off, logs := MustServer(t, MustCatalog(t, testRecords()))
	off.AdminKey = testAdminKey
	base = MustHTTP(t, off.Handler()).URL
	if code, body := adminDo(t, http.MethodPost, base+"/admin/refresh", testAdminKey); code != 503 || !strings.Contains(body, "--feeds off") {
		t.Fatalf("with the feeds off: %d %s", code, body)
	}
	// A refusal the node chose is no failure of the node: the access log
	// has the 503, and nothing is logged at error.
	if out := logs.String(); strings.Contains(out, `"level":"ERROR"`) || !strings.Contains(out, `"status":503`) {
		t.Errorf("the 503 of POST /admin/refresh with the feeds off logged an error, or no access line:\n%s", out)
	}
}

func TestServer_Health_Feeds(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	s.Feeds = feedStates
	base := MustHTTP(t, s.Handler()).URL
	code, body := adminDo(t, http.MethodGet, base+"/health", "")
	var h struct {
		Status       string             `json:"status"`
		StaleSources []string           `json:"stale_sources"`
		Feeds        []rappel.FeedState `json:"feeds"`
	}
	// vrdb is stale: the node is degraded, and says which feed.
	if code != 200 || json.Unmarshal([]byte(body), &h) != nil || h.Status != "degraded" || len(h.StaleSources) != 1 || h.StaleSources[0] != "vrdb" {
		t.Fatalf("GET /health = %d %s", code, body)
	}
	// Each feed: last attempt and success, last error, stale, records,
	// rejected with reasons, active plugin.
	for _, want := range []string{`"source":"vrdb"`, `"last_attempt":"2025-03-04T`, `"last_success":"2025-03-04T`, `"last_error":"Fetching`,
		`"stale":true`, `"records":5`, `"rejected":1`, `"reason":"Line 3 has 2 fields."`, `"plugin":"abc"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/health lacks %s: %s", want, body)
		}
	}
	if len(h.Feeds) != 2 || h.Feeds[1].Source != "vrdb" || !h.Feeds[1].Stale {
		t.Fatalf("feeds = %+v", h.Feeds)
	}

	none, _ := MustServer(t, MustCatalog(t, testRecords()))
	base = MustHTTP(t, none.Handler()).URL
	if _, body := adminDo(t, http.MethodGet, base+"/health", ""); !strings.Contains(body, `"feeds":[]`) {
		t.Fatalf("without feeds /health = %s, want an empty list", body)
	}
}
