package acme

import (
	"context"
	"encoding/json"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// RedirectHTTPS redirects every request to the same path and query over
// HTTPS: 301 for GET and HEAD, 308 otherwise, so that a client repeats the
// method and body. A Host that is not one of the domains is sent to the
// first domain, so that the redirect never points elsewhere. The HTTPS port
// is written when it is not 443.
func RedirectHTTPS(domains []string, httpsPort string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.ToLower(r.Host)
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if !slices.Contains(domains, host) {
			host = domains[0]
		}
		if httpsPort != "443" {
			host = net.JoinHostPort(host, httpsPort)
		}
		target := "https://" + host + r.URL.RequestURI()
		status := http.StatusMovedPermanently
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			status = http.StatusPermanentRedirect
		}
		b, _ := json.Marshal(struct {
			Detail string `json:"detail"`
		}{"This API is served over HTTPS only; use " + target + "."})
		w.Header().Set("Location", target)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			_, _ = w.Write(b)
		}
	})
}

// ServerErrorLog is the error log of an HTTPS server (http.Server's
// ErrorLog) writing to log (serverErrorLog).
func ServerErrorLog(log *slog.Logger) *stdlog.Logger {
	return stdlog.New(serverErrorLog{log}, "", 0)
}

// serverErrorLog is the HTTPS server's error log. It logs TLS handshake
// errors at debug level: on a public port they come from scanners, clients
// asking for other names and TCP health checks, many a minute, and the
// failures that matter (no certificate obtained) certmagic logs itself as
// errors. Anything else is a warning.
type serverErrorLog struct{ log *slog.Logger }

func (w serverErrorLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	level := slog.LevelWarn
	if strings.HasPrefix(msg, "http: TLS handshake error") {
		level = slog.LevelDebug
	}
	w.log.Log(context.Background(), level, msg)
	return len(p), nil
}

// ValidDomain reports whether d is a DNS name an ACME CA can validate over
// HTTP-01 or TLS-ALPN-01: dotted labels of letters, digits and inner
// hyphens, no wildcard (that needs DNS-01), no IP address.
func ValidDomain(d string) bool {
	if len(d) > 253 || !strings.Contains(d, ".") || net.ParseIP(d) != nil {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			ch := label[i]
			if !('a' <= ch && ch <= 'z' || '0' <= ch && ch <= '9' || ch == '-') {
				return false
			}
		}
	}
	return true
}
