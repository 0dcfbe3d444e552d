package edge

import (
	"net/http"
	"strconv"
	"time"

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
	// remote is the client's address, as net/http gives it: a search
	// without a key is limited by it (anonymous.go).
	remote string
	params params
	// cache lets writeJSON mark a public read cacheable (cache.go).
	cache cachePolicy

	// sent counts the body bytes the connection took, for the access log.
	sent int64
	// gone marks a request whose client closed the connection before it
	// was answered: the access log says 499 for it, not the status the
	// server meant to send.
	gone bool
	// cut says why a response that had started ended before its data
	// did ("" when it did not): the access log says it, and requestID
	// closes the connection instead of ending the response, so that the
	// client can tell a cut body from a whole one.
	cut string
	// stream, when set, is the deadline control of a streamed response:
	// each write gets stall to make progress (streamWrites).
	stream   *http.ResponseController
	stall    time.Duration
	deadline time.Time

	// idHeader backs the X-Request-Id header value, saving an allocation;
	// etagHeader and lengthHeader do the same for writeJSONParts.
	idHeader     [1]string
	etagHeader   [1]string
	lengthHeader [1]string
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

// Write records an implicit 200, counts the bytes the connection takes
// and, when it takes fewer than b, why the response was cut.
func (x *exchange) Write(b []byte) (int, error) {
	if x.status == 0 {
		x.status = http.StatusOK
	}
	var n int
	var err error
	if x.stream != nil {
		n, err = x.writeStreamed(b)
	} else {
		n, err = x.ResponseWriter.Write(b)
	}
	x.sent += int64(n)
	if err != nil && x.cut == "" {
		x.writeFailed()
	}
	return n, err
}

// Why a started response was cut, as the access log says it.
const (
	cutClientClosed  = "client closed the connection"
	cutClientStalled = "client stopped reading"
	cutPageBudget    = "a page missed its query budget"
	cutShutdown      = "the node shut down"
	cutServerError   = "the server failed"
)

// statusClientClosed is the status logged for a request whose client
// closed the connection before it was answered (nginx's 499): no response
// reached anyone, and nothing failed on the server's side.
const statusClientClosed = 499

// streamChunk is the most one write of a streamed response hands the
// connection under one deadline: a client must take that much within the
// stall time, so that a large write of the compressor is not mistaken for
// a client that stopped reading.
const streamChunk = 16 << 10

// streamWrites makes every later write of the response extend the
// connection's write deadline by stall, in place of the server's fixed
// WriteTimeout: a streamed response lasts as long as its client keeps
// reading, and is cut once the client takes no bytes for stall (docs/api.md,
// "Change feed, Atom and export").
func (x *exchange) streamWrites(stall time.Duration) {
	x.stream = http.NewResponseController(x.ResponseWriter)
	x.stall = stall
}

// writeStreamed writes b in chunks of at most streamChunk, each with a
// deadline stall from its start.
func (x *exchange) writeStreamed(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		chunk := b[:min(len(b), streamChunk)]
		x.deadline = time.Now().Add(x.stall)
		// A writer without deadlines (a test's recorder) keeps the
		// server's own.
		_ = x.stream.SetWriteDeadline(x.deadline)
		m, err := x.ResponseWriter.Write(chunk)
		n += m
		if err != nil {
			return n, err
		}
		b = b[len(chunk):]
	}
	return n, nil
}

// writeFailed records why a write failed: past the stream's deadline the
// client stopped reading; otherwise the connection is gone, closed by the
// client (or by the node at shutdown, which the access log tells apart).
func (x *exchange) writeFailed() {
	if x.stream != nil && !time.Now().Before(x.deadline) {
		x.cut = cutClientStalled
		return
	}
	x.gone = true
	x.cut = cutClientClosed
}

// cutShort marks a started response as ended before its data, for reason.
func (x *exchange) cutShort(reason string) {
	if x.cut == "" {
		x.cut = reason
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (x *exchange) Unwrap() http.ResponseWriter { return x.ResponseWriter }

// writeJSON writes status and the JSON b. See writeJSONParts.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, b []byte) {
	writeJSONParts(w, r, status, b)
}

// writeJSONParts writes status and the JSON made of parts, with its length
// and its caching headers; HEAD gets the headers only. It is the one place
// JSON bodies are written. A successful read gets a strong ETag, and one
// whose If-None-Match matches it gets a 304 without a body; what may cache
// the response is decided by cacheControl.
func writeJSONParts(w http.ResponseWriter, r *http.Request, status int, parts ...[]byte) {
	writeJSONTagged(w, r, status, "", parts...)
}

// writeJSONTagged is writeJSONParts with the ETag given, when the caller
// knows one without hashing the body (a search page: see pageETag); ""
// hashes the body.
func writeJSONTagged(w http.ResponseWriter, r *http.Request, status int, etag string, parts ...[]byte) {
	h := w.Header()
	x := exchangeOf(w)
	cc, tagged := cacheControl(r, x, status)
	h["Cache-Control"] = cc
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if tagged { // x is not nil
		tag := etag
		if tag == "" {
			tag = etagOf(parts...)
		}
		if inm, ok := r.Header["If-None-Match"]; ok && !noneMatch(inm, tag) {
			// A 304 carries the tag of the representation the client
			// would get, encoded or not, and no content headers.
			x.etagHeader[0] = taggedETag(tag, wouldEncode(w, n))
			h["Etag"] = x.etagHeader[:]
			w.WriteHeader(http.StatusNotModified)
			return
		}
		// compress adds the coding's suffix when it encodes the body.
		x.etagHeader[0] = tag
		h["Etag"] = x.etagHeader[:]
	}
	h["Content-Type"] = headerJSON
	if x != nil {
		x.lengthHeader[0] = strconv.Itoa(n)
		h["Content-Length"] = x.lengthHeader[:]
	} else {
		h["Content-Length"] = []string{strconv.Itoa(n)}
	}
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	for _, p := range parts {
		// An error here means the client went away; there is no one left
		// to tell.
		if _, err := w.Write(p); err != nil {
			return
		}
	}
}
