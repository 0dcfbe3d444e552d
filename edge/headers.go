package edge

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/rappel-ca/rappel"
)

// headerNosniff is the X-Content-Type-Options value of every answer,
// shared (never modified) so that setting it allocates nothing.
var headerNosniff = []string{"nosniff"}

// limitHeaders answers a request whose request line and headers take more
// than maxHeaderBytes with a 431 in the API's JSON error shape, naming the
// longest part, before anything reads the request (docs/api.md, Limits).
// net/http would answer it with a plain-text 431 of its own: its limit is
// set higher (readHeaderBytes), so that the request reaches this check.
func (s *Server) limitHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every answer is what its Content-Type says: a browser must not
		// guess otherwise (an error quoting a client's input as HTML).
		w.Header()["X-Content-Type-Options"] = headerNosniff
		if size := headerSize(r); size > maxHeaderBytes {
			part, partSize := longestPart(r)
			s.fail(w, r, rappel.HeadersTooLarge(size, maxHeaderBytes, part, partSize))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// headerSize is the size of r's request line and headers as HTTP/1.1
// writes them: what net/http's MaxHeaderBytes counts.
func headerSize(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	n += len("Host: ") + len(r.Host) + 2 // net/http moves Host out of r.Header
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + 2 + len(v) + 2
		}
	}
	return n + 2
}

// longestPart names the longest part of r's request line and headers: a
// query parameter, the path, or a header, with its size.
func longestPart(r *http.Request) (string, int) {
	part, size := "the path", len(r.URL.EscapedPath())
	for _, kv := range strings.Split(r.URL.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if len(v) > size {
			if name, err := url.QueryUnescape(k); err == nil {
				k = name
			}
			part, size = "query parameter "+rappel.Quote(k), len(v)
		}
	}
	for k, vs := range r.Header {
		if n := len(strings.Join(vs, ", ")); n > size {
			part, size = "header "+rappel.Quote(k), n
		}
	}
	return part, size
}
