package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCORS_Preflight(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	ts := MustHTTP(t, s.Handler())
	for _, c := range []struct{ path, method, headers string }{
		{"/recall/hc-73841", "GET", "x-gateway-key"},
		{"/recall", "GET", "x-gateway-key, if-none-match, x-request-id"},
		{"/recall/alerts/subscribe", "POST", "content-type, x-gateway-key"},
		{"/nowhere", "GET", ""},
	} {
		// No key: browsers never send one on a preflight.
		resp, body := exchangeHTTP(t, http.MethodOptions, ts.URL+c.path, false, map[string]string{
			"Origin":                         "https://app.example",
			"Access-Control-Request-Method":  c.method,
			"Access-Control-Request-Headers": c.headers,
		})
		h := resp.Header
		if resp.StatusCode != http.StatusNoContent || body != "" {
			t.Errorf("preflight %s %s = %d %q, want 204 without a body", c.method, c.path, resp.StatusCode, body)
		}
		if h.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("preflight %s: Access-Control-Allow-Origin %q", c.path, h.Get("Access-Control-Allow-Origin"))
		}
		if !containsToken(h.Values("Access-Control-Allow-Methods"), c.method) {
			t.Errorf("preflight %s: Access-Control-Allow-Methods %q lacks %s", c.path, h.Get("Access-Control-Allow-Methods"), c.method)
		}
		for _, name := range strings.Split(c.headers, ",") {
			if name = strings.TrimSpace(name); name != "" && !containsToken(h.Values("Access-Control-Allow-Headers"), name) {
				t.Errorf("preflight %s: Access-Control-Allow-Headers %q lacks %s", c.path, h.Get("Access-Control-Allow-Headers"), name)
			}
		}
		if h.Get("Access-Control-Max-Age") == "" {
			t.Errorf("preflight %s: no Access-Control-Max-Age", c.path)
		}
	}
	t.Run("NotAPreflight", func(t *testing.T) {
		resp, body := exchangeHTTP(t, http.MethodOptions, ts.URL+"/recall", true, nil)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") == "" || !strings.Contains(body, `"detail"`) {
			t.Errorf("OPTIONS without Access-Control-Request-Method = %d, Allow %q, %s; want the router's 405",
				resp.StatusCode, resp.Header.Get("Allow"), body)
		}
	})
	t.Run("AdminKeyNotAllowed", func(t *testing.T) {
		resp, _ := exchangeHTTP(t, http.MethodOptions, ts.URL+"/admin/refresh", false, map[string]string{
			"Origin": "https://app.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-admin-key",
		})
		if containsToken(resp.Header.Values("Access-Control-Allow-Headers"), "x-admin-key") {
			t.Error("pages may send x-admin-key")
		}
	})
}

func TestCORS_Responses(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	ts := MustHTTP(t, s.Handler())
	for _, c := range []struct {
		path   string
		key    bool
		status int
	}{
		{"/recall/hc-73841", true, http.StatusOK},
		{"/recall/hc-73841", false, http.StatusForbidden}, // a page must be able to read why
		{"/recall?limit=0", true, http.StatusUnprocessableEntity},
		{"/health", false, http.StatusOK},
	} {
		resp, _ := exchangeHTTP(t, http.MethodGet, ts.URL+c.path, c.key, map[string]string{"Origin": "https://app.example"})
		if resp.StatusCode != c.status {
			t.Errorf("GET %s = %d, want %d", c.path, resp.StatusCode, c.status)
		}
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
			t.Errorf("GET %s: Access-Control-Allow-Origin %q, want *", c.path, got)
		}
		for _, name := range []string{"ETag", "RateLimit", "RateLimit-Policy", "Retry-After", "X-Request-Id"} {
			if !containsToken(resp.Header.Values("Access-Control-Expose-Headers"), name) {
				t.Errorf("GET %s: Access-Control-Expose-Headers %q lacks %s", c.path, resp.Header.Get("Access-Control-Expose-Headers"), name)
			}
		}
	}
}

var encodedTag = regexp.MustCompile(`^"[0-9a-f]{16}(-zst|-br|-gz)?"$`)

// TestCORS_Chromium loads a page from one origin in headless Chromium whose
// script calls the API on another with a key, so the browser itself runs
// the preflight and enforces the answer.
func TestCORS_Chromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium on PATH; install Debian's chromium package (.ci/run does)")
	}
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	h := s.Handler()
	var mu sync.Mutex
	var seen []string
	api := MustHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	script := fmt.Sprintf(`
const api = %q, key = %q, out = {};
async function call(name, path, init) {
  try {
    const r = await fetch(api + path, init);
    out[name] = {status: r.status, etag: r.headers.get("ETag"), id: r.headers.get("X-Request-Id"), body: await r.json()};
  } catch (e) {
    out[name] = {error: String(e)};
  }
}
(async () => {
  await call("record", "/recall/hc-73841", {headers: {"x-gateway-key": key}});
  await call("nokey", "/recall/hc-73841", {headers: {"if-none-match": "\"x\""}});
  await call("subscribe", "/recall/alerts/subscribe", {method: "POST", headers: {"x-gateway-key": key, "content-type": "application/json"}, body: "{}"});
  await call("admin", "/admin/refresh", {method: "POST", headers: {"x-admin-key": "k"}});
  document.getElementById("out").textContent = JSON.stringify(out);
})();`, api.URL, testKey)
	page := MustHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body><pre id="out">pending</pre><script>%s</script></body></html>`, script)
	}))

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=20000", "--dump-dom", page.URL)
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	m := regexp.MustCompile(`(?s)<pre id="out">(.*?)</pre>`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("no output element in the page:\n%.2000s", dom)
	}
	var out map[string]struct {
		Status int            `json:"status"`
		ETag   string         `json:"etag"`
		ID     string         `json:"id"`
		Body   map[string]any `json:"body"`
		Error  string         `json:"error"`
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &out); err != nil {
		t.Fatalf("page output %q: %v", m[1], err)
	}
	rec := out["record"]
	// The record is over a kilobyte, so the browser got it encoded (zstd
	// for Chromium) and decoded it: the body parsed.
	if rec.Status != http.StatusOK || rec.Body["record_id"] != "hc-73841" || !encodedTag.MatchString(rec.ETag) || rec.ID == "" {
		t.Errorf("record from the page: %d %q, ETag %q, request id %q; want 200 with the record, its ETag and request id readable",
			rec.Status, rec.Body["record_id"], rec.ETag, rec.ID)
	}
	if nk := out["nokey"]; nk.Status != http.StatusForbidden || nk.Body["detail"] == nil {
		t.Errorf("request without a key from the page: %+v; want a readable 403", nk)
	}
	// No alerts service in this server: the POST passes CORS and gets 503.
	if sub := out["subscribe"]; sub.Status != http.StatusServiceUnavailable {
		t.Errorf("subscribe from the page: %+v; want the API's answer (503), not a CORS failure", sub)
	}
	if adm := out["admin"]; adm.Error == "" {
		t.Errorf("admin call from the page: %+v; want the browser to refuse it", adm)
	}
	mu.Lock()
	defer mu.Unlock()
	var preflights int
	for _, r := range seen {
		if strings.HasPrefix(r, "OPTIONS ") {
			preflights++
		}
		if r == "POST /admin/refresh" {
			t.Error("the browser sent the admin POST although its preflight refused x-admin-key")
		}
	}
	if preflights < 3 {
		t.Errorf("the API saw %d preflights (%q); the keyed calls need one each", preflights, seen)
	}
}
