package edge

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// fetch sends a GET with the test key and returns the response and its body.
func fetch(t *testing.T, url string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Gateway-Key", testKey)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestServer_Failures(t *testing.T) {
	s, logs := MustServer(t, MustCatalog(t, testRecords()))
	routes := append(s.routes(),
		route{methods: get, pattern: "/test/panic", handle: func(w http.ResponseWriter, r *http.Request) error {
			var m map[string]int
			m["boom"]++ // a nil-map write: a runtime panic
			return nil
		}},
		route{methods: get, pattern: "/test/error", handle: func(w http.ResponseWriter, r *http.Request) error {
			return errors.New("opening pebble: disk on fire")
		}},
		route{methods: get, pattern: "/test/late-panic", handle: func(w http.ResponseWriter, r *http.Request) error {
			writeJSON(w, r, http.StatusOK, []byte(`{}`))
			panic("after the response started")
		}},
	)
	base := MustHTTP(t, s.handler(routes)).URL
	safe := `{"detail":"` + rappel.ErrorMessage(errors.New("x")) + `"}`

	t.Run("Panic", func(t *testing.T) {
		resp, body := fetch(t, base+"/test/panic", nil)
		if resp.StatusCode != 500 || body != safe || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("got %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		id := resp.Header.Get("X-Request-Id")
		line := logLine(t, logs.String(), "request failed", id)
		if !strings.Contains(line["error"].(string), "assignment to entry in nil map") ||
			!strings.Contains(line["stack"].(string), "middleware_test.go") {
			t.Errorf("log lacks the cause or the stack: %v", line)
		}
		if access := logLine(t, logs.String(), "request", id); access["status"] != 500.0 {
			t.Errorf("access log: %v", access)
		}
		// The server keeps serving.
		if resp, _ := fetch(t, base+"/health", nil); resp.StatusCode != 200 {
			t.Fatalf("after a panic, /health answers %d", resp.StatusCode)
		}
	})
	t.Run("Error", func(t *testing.T) {
		resp, body := fetch(t, base+"/test/error", nil)
		if resp.StatusCode != 500 || body != safe {
			t.Fatalf("got %d %s", resp.StatusCode, body)
		}
		line := logLine(t, logs.String(), "request failed", resp.Header.Get("X-Request-Id"))
		if line["error"] != "opening pebble: disk on fire" || line["level"] != "ERROR" {
			t.Errorf("log line %v", line)
		}
	})
	t.Run("PanicAfterStart", func(t *testing.T) {
		resp, body := fetch(t, base+"/test/late-panic", nil)
		if resp.StatusCode != 200 || body != "{}" {
			t.Fatalf("got %d %s; want the started response left alone", resp.StatusCode, body)
		}
		logLine(t, logs.String(), "request failed", resp.Header.Get("X-Request-Id"))
	})
}

func TestServer_RequestID(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	base := MustHTTP(t, s.Handler()).URL
	t.Run("Accepted", func(t *testing.T) {
		resp, _ := fetch(t, base+"/health", map[string]string{"X-Request-Id": "lb-7f3e.42:a_b"})
		if got := resp.Header.Get("X-Request-Id"); got != "lb-7f3e.42:a_b" {
			t.Fatalf("X-Request-Id %q", got)
		}
	})
	t.Run("Replaced", func(t *testing.T) {
		seen := map[string]bool{}
		for _, in := range []string{"", "has space", "<script>", strings.Repeat("a", 65)} {
			resp, _ := fetch(t, base+"/health", map[string]string{"X-Request-Id": in})
			got := resp.Header.Get("X-Request-Id")
			if got == in || !saneRequestID(got) || seen[got] {
				t.Errorf("for %q got %q", in, got)
			}
			seen[got] = true
		}
	})
}

func TestServer_AccessLog(t *testing.T) {
	s, logs := MustServer(t, MustCatalog(t, testRecords()))
	base := MustHTTP(t, s.Handler()).URL
	resp, _ := fetch(t, base+"/recall/hc-73841?lang=en", nil)
	line := logLine(t, logs.String(), "request", resp.Header.Get("X-Request-Id"))
	want := map[string]any{
		"method": "GET", "route": "/recall/{record_id}", "status": 200.0,
		"duration": 1e6, // the step clock: one millisecond
		"key_id":   NewStaticKeys([]string{testKey}).byHash[sha(testKey)].ID,
	}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s = %v, want %v", k, line[k], v)
		}
	}
	// Keys are never logged, valid or not.
	fetch(t, base+"/recall/hc-73841", map[string]string{"X-Gateway-Key": "rk_guess_0000"})
	fetch(t, base+"/nope?lang=xx", nil)
	if out := logs.String(); strings.Contains(out, testKey) || strings.Contains(out, "rk_guess_0000") {
		t.Fatalf("a key was logged:\n%s", out)
	}
}

// TestServer_AccessLog_RecordTime checks that the access line is stamped
// with the server's clock as the request ended, the reading its duration
// ends with, rather than a second reading of the wall clock; and that every
// request gets its line, one per request id.
func TestServer_AccessLog_RecordTime(t *testing.T) {
	s, logs := MustServer(t, MustCatalog(t, testRecords()))
	base := MustHTTP(t, s.Handler()).URL
	for _, path := range []string{"/recall/hc-73841", "/recall/hc-73841?lang=fr", "/nope", "/recall/hc-73841?lang=xx"} {
		resp, _ := fetch(t, base+path, nil)
		line := logLine(t, logs.String(), "request", resp.Header.Get("X-Request-Id"))
		at, err := time.Parse(time.RFC3339Nano, line["time"].(string))
		if err != nil {
			t.Fatalf("GET %s: access line's time %v: %v", path, line["time"], err)
		}
		// The step clock reads datasetTime plus a whole number of
		// milliseconds, one more at each reading.
		since := at.Sub(datasetTime)
		if since <= 0 || since > time.Hour || since%time.Millisecond != 0 {
			t.Errorf("GET %s: access line at %s, not a reading of the server's clock (from %s)", path, at, datasetTime)
		}
		if line["status"] != float64(resp.StatusCode) {
			t.Errorf("GET %s: access line status %v, response %d", path, line["status"], resp.StatusCode)
		}
	}
	if n := strings.Count(logs.String(), `"msg":"request"`); n != 4 {
		t.Errorf("%d access lines for 4 requests:\n%s", n, logs)
	}
}

// TestServer_AccessLog_Probes checks that health probes, which an
// orchestrator sends every few seconds, log their access lines at debug
// while other requests stay at info.
func TestServer_AccessLog_Probes(t *testing.T) {
	s, logs := MustServer(t, MustCatalog(t, testRecords()))
	s.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	base := MustHTTP(t, s.Handler()).URL
	for path, level := range map[string]string{"/livez": "DEBUG", "/readyz": "DEBUG", "/health": "DEBUG", "/recall/hc-73841": "INFO"} {
		resp, _ := fetch(t, base+path, nil)
		if line := logLine(t, logs.String(), "request", resp.Header.Get("X-Request-Id")); line["level"] != level {
			t.Errorf("GET %s: access line at %v, want %s", path, line["level"], level)
		}
	}
}

// logLine returns the JSON log line with msg and request_id id, failing the
// test when there is none.
func logLine(t *testing.T, logs, msg, id string) map[string]any {
	t.Helper()
	for l := range strings.Lines(logs) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %s", l)
		}
		if m["msg"] == msg && m["request_id"] == id {
			return m
		}
	}
	t.Fatalf("no %q log line for request %s in\n%s", msg, id, logs)
	return nil
}
