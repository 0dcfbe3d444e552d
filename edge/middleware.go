package edge

import (
	"crypto/rand"
	"encoding/base32"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rappel-ca/rappel"
)

// headerRequestID is canonical, so that header lookups do not allocate.
const headerRequestID = "X-Request-Id"

// requestID starts the request's exchange (response.go) and gives it an id:
// the client's X-Request-Id when it is sane, a new one otherwise. The id is
// sent back in X-Request-Id and appears in every log line of the request.
func (s *Server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := &exchange{ResponseWriter: w, id: r.Header.Get(headerRequestID), remote: r.RemoteAddr}
		if !saneRequestID(x.id) {
			x.id = newRequestID()
		}
		x.idHeader[0] = x.id
		w.Header()[headerRequestID] = x.idHeader[:]
		next.ServeHTTP(x, r)
		if x.cut != "" {
			abortCut(w)
		}
	})
}

// abortCut ends a response that was cut short: what was written goes out,
// then the connection closes without the end of the body (HTTP/1.1's last
// chunk, HTTP/2's end of stream), so that the client sees an error rather
// than a body that looks whole. net/http closes quietly on this panic.
func abortCut(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
	panic(http.ErrAbortHandler)
}

// saneRequestID reports whether a client's id is safe to log and echo:
// 1 to 64 letters, digits and - _ . :
func saneRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == ':'
		if !ok {
			return false
		}
	}
	return true
}

var (
	// requestIDPrefix is random per process, so that ids from several
	// nodes or restarts do not collide; a counter makes them unique within
	// the process without a random read per request.
	requestIDPrefix = func() string {
		var b [10]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		return base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])
	}()
	requestSeq atomic.Uint64
)

// newRequestID returns the process prefix, a dash and the next counter value
// in base 36.
func newRequestID() string {
	var buf [48]byte
	b := append(buf[:0], requestIDPrefix...)
	b = append(b, '-')
	b = strconv.AppendUint(b, requestSeq.Add(1), 36)
	return string(b)
}

// accessLog logs one line per request once it is answered: method, route
// pattern, status, duration, body bytes sent, request id and the key's id
// (never the key). A response cut short says why in cut; a cut the node
// caused (a page over its budget, the shutdown, a failure) is a warning.
// A probe's line (probeRoutes) is at debug: an orchestrator asks every
// few seconds, and at info those lines would bury the others.
//
// The line goes to the logger's handler as a record made here, rather than
// through Logger.LogAttrs, which would read the clock again for the
// record's time and walk the stack for a source position no handler of
// the server prints; the line is the same. See accessRecord.
func (s *Server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.Now()
		next.ServeHTTP(w, r)
		level := slog.LevelInfo
		if probeRoutes[r.Pattern] {
			level = slog.LevelDebug
		}
		ctx := r.Context()
		if !s.Logger.Enabled(ctx, level) {
			return
		}
		x := exchangeOf(w)
		status, cut := s.outcome(x, r)
		if cut != "" && cut != cutClientClosed && cut != cutClientStalled {
			level = slog.LevelWarn
		}
		end := s.Now()
		rec := accessRecord(end, level, r, x, status, end.Sub(start), cut)
		// A handler's error has no one to go to: the request is answered.
		_ = s.Logger.Handler().Handle(ctx, rec)
	})
}

// accessRecord is the access log's record of a request answered at end:
// "request" with method, route, status, duration, bytes and request_id,
// then key_id when a key was checked and cut when the response was cut.
func accessRecord(end time.Time, level slog.Level, r *http.Request, x *exchange, status int, took time.Duration, cut string) slog.Record {
	// One AddAttrs call: the record keeps five attributes inline and
	// allocates the rest once.
	var buf [8]slog.Attr
	attrs := append(buf[:0],
		slog.String("method", rappel.Clip(r.Method)),
		// The ServeMux set r.Pattern on this same *http.Request.
		slog.String("route", r.Pattern),
		slog.Int("status", status),
		slog.Duration("duration", took),
		slog.Int64("bytes", x.sent),
		slog.String("request_id", x.id),
	)
	if x.key != nil {
		attrs = append(attrs, slog.String("key_id", x.key.ID))
	}
	if cut != "" {
		attrs = append(attrs, slog.String("cut", cut))
	}
	rec := slog.NewRecord(end, level, "request", 0)
	rec.AddAttrs(attrs...)
	return rec
}

// probeRoutes are the routes that health probes call.
var probeRoutes = map[string]bool{"/livez": true, "/readyz": true, "/health": true}

// outcome is how a request ended, as the access log and the metrics
// record it: the status sent (200 for a handler that wrote nothing, as
// net/http sends), or 499 when the client closed the connection before
// the answer was complete; and why a started response was cut, if it was.
// A connection that fails once the node closes its connections at the end
// of a shutdown (StopStreams) was cut by the shutdown, not by its client;
// so is any request still running then, whose answer, written after its
// connection closed, never left even when no write failed (net/http
// buffers it, and cancels no context for a request with an unread body).
func (s *Server) outcome(x *exchange, r *http.Request) (status int, cut string) {
	status, cut = x.status, x.cut
	gone := x.gone || (cut == "" && r.Context().Err() != nil) || s.stopping.Load()
	switch {
	case gone && s.stopping.Load() && status == 0:
		return http.StatusServiceUnavailable, cutShutdown
	case gone && s.stopping.Load():
		return status, cutShutdown
	case gone:
		return statusClientClosed, cut
	case status == 0:
		return http.StatusOK, cut
	}
	return status, cut
}

// recoverPanics turns a panic below it into a 500 with a safe sentence, its
// value and stack logged with the request id (Server.fail). The server keeps
// serving. http.ErrAbortHandler passes through: it asks net/http to abort
// the response on purpose.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.fail(w, r, &panicError{value: v, stack: debug.Stack()})
		}()
		next.ServeHTTP(w, r)
	})
}
