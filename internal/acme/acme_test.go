package acme

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// TestRedirectHTTPS checks the redirect's status by method, that the port
// is written unless it is 443, and that a Host other than the domains is
// never echoed.
func TestRedirectHTTPS(t *testing.T) {
	for _, tc := range []struct {
		port, method, host, target string
		status                     int
	}{
		{"443", http.MethodGet, "api.example.ca", "/recall?q=x", http.StatusMovedPermanently},
		{"443", http.MethodHead, "API.example.ca:80", "/health", http.StatusMovedPermanently},
		{"8443", http.MethodPost, "api.example.ca", "/recall/alerts/subscribe", http.StatusPermanentRedirect},
		{"443", http.MethodGet, "attacker.example", "/health", http.StatusMovedPermanently},
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(tc.method, "http://"+tc.host+tc.target, nil)
		r.Host = tc.host
		RedirectHTTPS([]string{"api.example.ca", "www.example.ca"}, tc.port).ServeHTTP(w, r)
		want := "https://api.example.ca" + tc.target
		if tc.port != "443" {
			want = "https://api.example.ca:" + tc.port + tc.target
		}
		if w.Code != tc.status || w.Header().Get("Location") != want {
			t.Errorf("%s %s%s = %d %q, want %d %q", tc.method, tc.host, tc.target, w.Code, w.Header().Get("Location"), tc.status, want)
		}
		if body := w.Body.String(); (tc.method == http.MethodHead) != (body == "") || tc.method != http.MethodHead && !strings.Contains(body, want) {
			t.Errorf("%s %s: body %q", tc.method, tc.target, body)
		}
	}
}

// TestServerErrorLog checks that TLS handshake errors are logged at debug
// level and anything else as a warning.
func TestServerErrorLog(t *testing.T) {
	var b bytes.Buffer
	l := ServerErrorLog(slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})))
	l.Print("http: TLS handshake error from 192.0.2.1:5555: EOF")
	l.Print("http: Accept error: too many open files")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "level=DEBUG") || !strings.Contains(lines[1], "level=WARN") {
		t.Errorf("levels of the server's errors:\n%s", b.String())
	}
}

// TestSlogCore checks that certmagic's zap lines reach slog at their
// level, with their fields and logger name, and without any e-mail
// address in the message, the fields or the fields added by With.
func TestSlogCore(t *testing.T) {
	var b bytes.Buffer
	zl := zap.New(slogCore{log: slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	zl = zl.Named("acme").With(zap.String("account", "Ops+ACME@Rappel.test"))
	zl.Debug("not logged")
	zl.Warn("registering account ops@rappel.test", zap.String("path", "acme/ops_plus_acme@rappel.test/key"), zap.Int("attempt", 2))
	out := b.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, `"level":"WARN"`) || !strings.Contains(out, `"logger":"acme"`) || !strings.Contains(out, `"attempt":2`) {
		t.Errorf("zap line through slog: %s", out)
	}
	if strings.Contains(strings.ToLower(out), "@rappel.test") || strings.Count(out, redactedEmail) != 3 {
		t.Errorf("an e-mail address was not redacted: %s", out)
	}
}
