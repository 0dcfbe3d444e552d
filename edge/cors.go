package edge

import "net/http"

// CORS header values, shared by every response and never modified.
var (
	headerAllowOrigin = []string{"*"}
	// headerExposeHeaders lists the response headers a page's script may
	// read beyond the safelisted ones: the validator to revalidate with,
	// the rate limit state, a search's cost, the export's count and change
	// feed cursor, the id to quote in a support request, and what says a
	// feature is deprecated (deprecation.go).
	headerExposeHeaders = []string{"Deprecation, ETag, Link, RateLimit, RateLimit-Policy, Rappel-Changes-Cursor, Rappel-Count, Rappel-Dataset, Retry-After, Search-Cost, Sunset, X-Request-Id"}
	// headerAllowMethods includes POST for subscribing to alerts from a
	// web page; admin calls stay out of reach of pages because x-admin-key
	// is not an allowed header.
	headerAllowMethods = []string{"GET, HEAD, POST"}
	headerAllowHeaders = []string{"x-gateway-key, x-gateway-host, content-type, if-none-match, x-request-id"}
	// headerMaxAge lets a browser reuse a preflight for a day (browsers cap
	// it lower: Chromium at two hours).
	headerMaxAge = []string{"86400"}
)

// cors lets web pages on any origin call the API (Fetch standard, CORS
// protocol). Every response allows any origin and exposes the headers a
// client needs; a preflight (OPTIONS with Access-Control-Request-Method) is
// answered 204 here, before the router and without a key: browsers never
// send credentials on a preflight. An OPTIONS that is not a preflight goes
// on to the router, which answers 405.
//
// Allowing "*" is safe because the API uses no cookies or other ambient
// credentials: a page must hold a key and send it itself. Since the value
// does not depend on the request's Origin, responses need no Vary: Origin.
func cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Access-Control-Allow-Origin"] = headerAllowOrigin
		if r.Method == http.MethodOptions {
			if _, ok := r.Header["Access-Control-Request-Method"]; ok {
				h["Access-Control-Allow-Methods"] = headerAllowMethods
				h["Access-Control-Allow-Headers"] = headerAllowHeaders
				h["Access-Control-Max-Age"] = headerMaxAge
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		h["Access-Control-Expose-Headers"] = headerExposeHeaders
		next.ServeHTTP(w, r)
	})
}
