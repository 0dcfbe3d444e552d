package edge

import (
	"net/http"
	"strconv"

	"github.com/rappel-ca/rappel"
)

// exchange is one request's state, created by the requestID middleware: the
// response writer that records the status for the access log, the request
// id, the caller's key once authenticated, and the route's query parameters
// once parsed. One allocation holds it all.
//
// It travels as the ResponseWriter, not in the request context: a context
// value would cost a context and a copy of the *http.Request per request
// (two allocations out of the handful this package adds), and keeping the
// same *http.Request lets the access log read the r.Pattern the ServeMux
// sets. A middleware that wraps the writer below requestID must implement
// Unwrap, as http.ResponseController expects anyway.
type exchange struct {
	http.ResponseWriter
	id     string
	status int // 0 until the response starts
	key    *rappel.APIKey
	params params

	// idHeader backs the X-Request-Id header value, saving an allocation.
	idHeader [1]string
}

// exchangeOf returns the exchange under w, unwrapping writers that wrap it,
// or nil outside Server's middleware chain.
func exchangeOf(w http.ResponseWriter) *exchange {
	for {
		switch v := w.(type) {
		case *exchange:
			return v
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return nil
		}
	}
}

// WriteHeader records the first final status.
func (x *exchange) WriteHeader(code int) {
	if x.status == 0 && code >= 200 {
		x.status = code
	}
	x.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200.
func (x *exchange) Write(b []byte) (int, error) {
	if x.status == 0 {
		x.status = http.StatusOK
	}
	return x.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (x *exchange) Unwrap() http.ResponseWriter { return x.ResponseWriter }

// writeJSON writes status and the JSON b, with its length; HEAD gets the
// headers only.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		// An error here means the client went away; there is no one left
		// to tell.
		_, _ = w.Write(b)
	}
}
