package edge

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
)

// probe GETs path on ts and returns the status and the decoded body.
func probe(t *testing.T, base, path string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET %s: Content-Type %q, want application/json", path, ct)
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("GET %s: body %q is not a JSON object: %v", path, b, err)
	}
	return resp.StatusCode, body
}

func TestServer_Probes(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		s, _ := MustServer(t, MustCatalog(t, testRecords()))
		ts := MustHTTP(t, s.Handler())
		if code, body := probe(t, ts.URL, "/livez"); code != http.StatusOK || body["status"] != "ok" {
			t.Errorf("GET /livez = %d %v, want 200 status ok", code, body)
		}
		if code, body := probe(t, ts.URL, "/readyz"); code != http.StatusOK || body["status"] != "ready" {
			t.Errorf("GET /readyz = %d %v, want 200 status ready", code, body)
		}
	})
	t.Run("Draining", func(t *testing.T) {
		s, _ := MustServer(t, MustCatalog(t, testRecords()))
		ts := MustHTTP(t, s.Handler())
		s.Drain()
		s.Drain() // idempotent
		if !s.Draining() {
			t.Fatal("Draining() is false after Drain")
		}
		code, body := probe(t, ts.URL, "/readyz")
		if code != http.StatusServiceUnavailable || !strings.Contains(body["detail"].(string), "shutting down") {
			t.Errorf("GET /readyz while draining = %d %v, want 503 saying the node is shutting down", code, body)
		}
		// Liveness is not readiness: a draining process is still alive.
		if code, _ := probe(t, ts.URL, "/livez"); code != http.StatusOK {
			t.Errorf("GET /livez while draining = %d, want 200", code)
		}
	})
	t.Run("NoData", func(t *testing.T) {
		s, _ := MustServer(t, &index.Catalog{})
		ts := MustHTTP(t, s.Handler())
		code, body := probe(t, ts.URL, "/readyz")
		if code != http.StatusServiceUnavailable || !strings.Contains(body["detail"].(string), "No recall data") {
			t.Errorf("GET /readyz without data = %d %v, want 503 saying no data is loaded", code, body)
		}
		if code, _ := probe(t, ts.URL, "/livez"); code != http.StatusOK {
			t.Errorf("GET /livez without data = %d, want 200", code)
		}
	})
	t.Run("NoKeyNeeded", func(t *testing.T) {
		// The probes are public: load balancers hold no API key. The test
		// server's clients send none, so a key check would be a 403.
		s, _ := MustServer(t, MustCatalog(t, testRecords()))
		s.GatewayHost = "gateway.example"
		ts := MustHTTP(t, s.Handler())
		for _, p := range []string{"/livez", "/readyz"} {
			if code, _ := probe(t, ts.URL, p); code != http.StatusOK {
				t.Errorf("GET %s without a key = %d, want 200", p, code)
			}
		}
	})
	t.Run("UnknownParam", func(t *testing.T) {
		s, _ := MustServer(t, MustCatalog(t, testRecords()))
		ts := MustHTTP(t, s.Handler())
		if code, _ := probe(t, ts.URL, "/readyz?verbose=1"); code != http.StatusUnprocessableEntity {
			t.Errorf("GET /readyz?verbose=1 = %d, want 422", code)
		}
	})
	t.Run("Method", func(t *testing.T) {
		s, _ := MustServer(t, MustCatalog(t, testRecords()))
		ts := MustHTTP(t, s.Handler())
		resp, err := http.Post(ts.URL+"/livez", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST /livez = %d, want 405", resp.StatusCode)
		}
	})
}

// TestServer_ReadyzIndexRebuilding checks that a node whose read index
// failed its background check is out of rotation while it is rebuilt:
// /readyz is 503 and says why, /livez stays 200.
func TestServer_ReadyzIndexRebuilding(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	var rebuilding atomic.Bool
	rebuilding.Store(true)
	s.IndexStats = func() rappel.IndexStats { return rappel.IndexStats{Rebuilding: rebuilding.Load()} }
	ts := MustHTTP(t, s.Handler())
	code, body := probe(t, ts.URL, "/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body["detail"].(string), "rebuilding it from its store") {
		t.Errorf("GET /readyz while the index is rebuilt = %d %v, want 503 saying so", code, body)
	}
	if code, _ := probe(t, ts.URL, "/livez"); code != http.StatusOK {
		t.Errorf("GET /livez while the index is rebuilt = %d, want 200", code)
	}
	rebuilding.Store(false)
	if code, _ := probe(t, ts.URL, "/readyz"); code != http.StatusOK {
		t.Errorf("GET /readyz once rebuilt = %d, want 200", code)
	}
}
