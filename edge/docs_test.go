package edge

import (
	"bytes"
	"context"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDocs_Files checks the page and its files through the real router: the
// page names the document, every file it loads is served with its type,
// and every response carries the page's Content-Security-Policy.
func TestDocs_Files(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	ts := MustHTTP(t, s.Handler())
	get := func(path string, hdr ...string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
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
		return resp, b
	}

	resp, page := get("/docs")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /docs: %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("GET /docs: Content-Security-Policy %q", csp)
	}
	for _, want := range []string{html.EscapeString(openAPIInfo.Title) + " " + openAPIInfo.Version, `data-spec-url="/openapi.json"`} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the page does not hold %q:\n%s", want, page)
		}
	}
	if _, again := get("/docs/"); !bytes.Equal(again, page) {
		t.Errorf("GET /docs/ is not the page")
	}

	t.Run("Files", func(t *testing.T) {
		refs := regexp.MustCompile(`(?:src|href)="(/[^"]+)"`).FindAllStringSubmatch(string(page), -1)
		if len(refs) < 4 {
			t.Fatalf("the page loads %d files: %v", len(refs), refs)
		}
		types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
			".png": "image/png", ".json": "application/json"}
		for _, ref := range refs {
			resp, b := get(ref[1])
			want := types[ref[1][strings.LastIndex(ref[1], "."):]]
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != want || len(b) == 0 {
				t.Errorf("GET %s: %d %q, %d bytes; want 200 %q", ref[1], resp.StatusCode, resp.Header.Get("Content-Type"), len(b), want)
			}
		}
		resp, b := get("/docs/assets/swagger-ui-bundle.js")
		if !bytes.Contains(b, []byte("SwaggerUIBundle")) || resp.Header.Get("Content-Security-Policy") != docsPolicy {
			t.Errorf("GET /docs/assets/swagger-ui-bundle.js is not Swagger UI, or lacks the policy")
		}
	})

	t.Run("Revalidation", func(t *testing.T) {
		for _, path := range []string{"/docs", "/docs/assets/swagger-ui.css", "/openapi.json"} {
			resp, _ := get(path)
			etag := resp.Header.Get("ETag")
			if !strings.HasPrefix(etag, `"`) {
				t.Fatalf("GET %s: ETag %q", path, etag)
			}
			resp, b := get(path, "If-None-Match", `"other", W/`+etag)
			if resp.StatusCode != http.StatusNotModified || len(b) != 0 {
				t.Errorf("GET %s with its ETag: %d with %d bytes, want 304 without a body", path, resp.StatusCode, len(b))
			}
			if resp, _ := get(path, "If-None-Match", `"other"`); resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s with another ETag: %d, want 200", path, resp.StatusCode)
			}
		}
	})

	t.Run("OpenAPI", func(t *testing.T) {
		resp, b := get("/openapi.json")
		want := servedOpenAPI() // the embedded document, unless a test registered an agency
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || !bytes.Equal(b, want) {
			t.Errorf("GET /openapi.json: %d %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(b))
		}
		req, _ := http.NewRequest(http.MethodHead, ts.URL+"/openapi.json", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(want)) {
			t.Errorf("HEAD /openapi.json: %d, length %d", resp.StatusCode, resp.ContentLength)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		for path, status := range map[string]int{
			"/docs/assets/missing.js":  http.StatusNotFound,
			"/docs/index.html":         http.StatusNotFound, // the template, never served raw
			"/docs/assets/.gitkeep":    http.StatusNotFound,
			"/docs?url=https://x.test": http.StatusUnprocessableEntity,
			"/openapi.json?v=2":        http.StatusUnprocessableEntity,
		} {
			resp, b := get(path)
			if resp.StatusCode != status || resp.Header.Get("Content-Type") != "application/json" || !bytes.HasPrefix(b, []byte(`{"detail":`)) {
				t.Errorf("GET %s: %d %q %s, want %d with a JSON detail", path, resp.StatusCode, resp.Header.Get("Content-Type"), b, status)
			}
		}
	})
}

// chromium returns the path of Debian's headless-capable Chromium. Without
// one the test is skipped, except under CI (RAPPEL_CI, set by .ci/run, which
// installs it), where it fails.
func chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("RAPPEL_CI") != "" {
		tb.Fatal("chromium is not installed, and CI must render the docs page: apt-get install -y chromium")
	}
	tb.Skip("chromium is not installed (apt-get install -y chromium); skipping the rendering of /docs")
	return ""
}

// TestDocs_Chromium loads /docs in headless Chromium from a real listener on
// 127.0.0.1 and checks that the page rendered every documented operation:
// Swagger UI ran under the page's Content-Security-Policy, fetched
// /openapi.json from the node, and drew each path with its summary. Every
// request the browser made reached this server, none was refused by the
// policy, and host names other than 127.0.0.1 do not resolve, so nothing
// was loaded from anywhere else.
func TestDocs_Chromium(t *testing.T) {
	bin := chromium(t)
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	var mu sync.Mutex
	var seen []string
	h := s.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)

	dom, logs := renderDOM(t, bin, ts.URL+"/docs")
	if p := os.Getenv("RAPPEL_DOCS_DOM"); p != "" {
		// Keeps the rendered page and the browser's log for a look when
		// Swagger UI changes.
		if err := errors.Join(os.WriteFile(p, []byte(dom), 0o644), os.WriteFile(p+".log", []byte(logs), 0o644)); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"GET /docs", "GET /docs/docs.js", "GET /docs/assets/swagger-ui-bundle.js", "GET /docs/assets/swagger-ui.css", "GET /openapi.json", "GET /health"} {
		if !slices.Contains(seen, want) {
			t.Errorf("the browser did not request %s; it requested %v", want, seen)
		}
	}
	if strings.Contains(logs, "Content Security Policy") || strings.Contains(logs, "Refused to") {
		t.Errorf("the page broke its Content-Security-Policy:\n%s", policyLines(logs))
	}
	// The test catalog's data has no kind: synthetic, which the page says.
	if !strings.Contains(dom, `id="dataset-notice"`) || !strings.Contains(dom, "generated demo data") {
		t.Error("the rendered page does not say that the node serves generated data")
	}
	if !strings.Contains(dom, html.EscapeString(openAPIInfo.Title)) {
		t.Errorf("the rendered page does not show the title %q", openAPIInfo.Title)
	}

	d := mustOpenAPI(t)
	ops := d.operations(t)
	if len(ops) < 15 {
		t.Fatalf("only %d operations documented", len(ops))
	}
	// Swagger UI draws each operation as an opblock holding its method,
	// its path (in data-path) and its summary.
	shown := map[string]string{}
	attr := regexp.MustCompile(`data-path="([^"]*)"`)
	summary := regexp.MustCompile(`class="opblock-summary-description"[^>]*>([^<]*)<`)
	for _, block := range strings.Split(dom, `class="opblock opblock-`)[1:] {
		method, _, _ := strings.Cut(block, `"`)
		method, _, _ = strings.Cut(method, " ")
		p, s := attr.FindStringSubmatch(block), summary.FindStringSubmatch(block)
		if p != nil && s != nil {
			shown[strings.ToUpper(method)+" "+html.UnescapeString(p[1])] = html.UnescapeString(s[1])
		}
	}
	for key, op := range ops {
		got, ok := shown[key]
		switch {
		case !ok:
			t.Errorf("the rendered page has no operation %s", key)
		case got != op["summary"]:
			t.Errorf("operation %s shows the summary %q, want %q", key, got, op["summary"])
		}
	}
	if len(shown) != len(ops) {
		t.Errorf("the page shows %d operations, the document has %d", len(shown), len(ops))
	}
	if t.Failed() {
		t.Logf("rendered DOM (%d bytes): %.3000s", len(dom), dom)
	}
}

// renderDOM runs headless Chromium on url with a throwaway profile and
// returns the DOM once the page settled (virtual time: the page's timers
// run as fast as it can work, not on the wall clock) and the browser's log,
// which holds the page's console messages.
func renderDOM(tb testing.TB, bin, url string) (dom, logs string) {
	tb.Helper()
	// A guard against a hung browser, not a timing assertion.
	ctx, cancel := context.WithTimeout(tb.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+tb.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
		"--enable-logging=stderr", "--v=0",
		"--virtual-time-budget=10000", "--dump-dom", url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("running %s: %v\n%s", bin, err, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// policyLines keeps the log lines about the Content-Security-Policy.
func policyLines(logs string) string {
	var out []string
	for line := range strings.SplitSeq(logs, "\n") {
		if strings.Contains(line, "Content Security Policy") || strings.Contains(line, "Refused to") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
