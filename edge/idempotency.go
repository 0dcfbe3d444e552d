package edge

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/rappel-ca/rappel"
)

// A POST of a route with an idempotent body limit may carry an
// Idempotency-Key (docs/api.md, "Retrying a POST safely"; the rules are
// the domain's, idempotency.go of package rappel): the first request with
// a key claims it in Server.Idempotency, runs, and its answer is stored;
// a retry gets that answer again, marked with Idempotent-Replayed, without
// running; a retry while the first runs is a 409, and the key sent with
// another request a 422.

// Header names of idempotent POSTs.
const (
	headerIdempotencyKey = "Idempotency-Key"
	headerReplayed       = "Idempotent-Replayed"
)

// replayedHeaders are the headers of an answer a replay repeats: what the
// client reads the answer by. The rate-limit headers and the request id
// are the retry's own.
var replayedHeaders = []string{"Content-Type", "Content-Language", "Location", "Cache-Control"}

// The outcomes of requests with an Idempotency-Key, for the
// rappel_idempotent_requests_total metric.
const (
	idemFirst    = "first"    // run, its answer stored
	idemReplayed = "replayed" // the stored answer sent again
	idemBusy     = "busy"     // 409: the first request still in flight
	idemMismatch = "mismatch" // 422: the key used for another request
	idemNotKept  = "not_kept" // run, its answer (a 5xx, 409, 429) not stored
)

// idemOutcomes lists them, for the metric's series at zero.
var idemOutcomes = []string{idemFirst, idemReplayed, idemBusy, idemMismatch, idemNotKept}

// serveIdempotent runs rt's handler under the request's Idempotency-Key,
// or as is when it has none. The body is read first, at most rt.idempotent
// bytes and one more, since the fingerprint must be known before the
// handler runs; the handler then reads the same bytes, and what the limit
// left unread.
func (s *Server) serveIdempotent(rt *route, w http.ResponseWriter, r *http.Request) error {
	key, ok, err := rappel.ParseIdempotencyKey(r.Header.Values(headerIdempotencyKey))
	if err != nil || !ok {
		if err != nil {
			return err
		}
		return rt.handle(w, r)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, rt.idempotent+1))
	if err != nil {
		return errUnreadableBody
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	e := &rappel.IdempotentEntry{
		ID:          rappel.IdempotencyID(callerOf(w, r), key),
		Fingerprint: rappel.IdempotencyFingerprint(r.Method, r.URL.Path, r.URL.RawQuery, canonicalBody(body)),
		Claim:       newClaim(),
		CreatedAt:   s.Now(),
	}
	held, err := s.Idempotency.ClaimIdempotent(r.Context(), e, e.CreatedAt)
	if err != nil {
		return err
	}
	if held != nil {
		return s.answerHeld(w, e, held)
	}
	// The claim is settled whatever happens, a panic included: a claim
	// left in flight would hold the key for IdempotencyLease.
	rec := &recorder{ResponseWriter: w}
	defer s.settleClaim(r.Context(), e, rec)
	if err := rt.handle(rec, r); err != nil {
		s.fail(rec, r, err)
	}
	rec.finished = true
	return nil
}

// errUnreadableBody is the 400 of a body that could not be read.
var errUnreadableBody = rappel.BadRequest("the request body could not be read", "send it again")

// answerHeld answers a request whose key is held by e's entry held: the
// stored answer, replayed, when it is of the same request and done.
func (s *Server) answerHeld(w http.ResponseWriter, e, held *rappel.IdempotentEntry) error {
	switch {
	case held.Fingerprint != e.Fingerprint:
		s.countIdempotent(idemMismatch)
		return rappel.Invalids(rappel.InvalidIdempotencyReuse(rappel.HeaderLoc(headerIdempotencyKey)))
	case !held.Done:
		s.countIdempotent(idemBusy)
		return rappel.ErrIdempotencyBusy()
	}
	s.countIdempotent(idemReplayed)
	h := w.Header()
	for k, v := range held.Header {
		h.Set(k, v)
	}
	h.Set(headerReplayed, "true")
	h.Set("Content-Length", strconv.Itoa(len(held.Body)))
	w.WriteHeader(held.Status)
	// An error here means the client went away.
	_, _ = w.Write(held.Body)
	return nil
}

// settleClaim stores the answer rec recorded when it is one to keep, and
// releases the claim otherwise (a 5xx, a 409 or 429, a panic, an answer
// that did not fit), so that a retry runs again. It runs after the
// client may have gone: the work was done, and its answer is what the
// client's retry is for.
func (s *Server) settleClaim(ctx context.Context, e *rappel.IdempotentEntry, rec *recorder) {
	ctx = context.WithoutCancel(ctx)
	if rec.finished && !rec.over && rappel.KeepsIdempotent(rec.status) {
		e.Done, e.Status, e.Body = true, rec.status, rec.body.Bytes()
		e.Header = map[string]string{}
		for _, k := range replayedHeaders {
			if v := rec.Header().Get(k); v != "" {
				e.Header[k] = v
			}
		}
		if err := s.Idempotency.FinishIdempotent(ctx, e); err != nil {
			// The claim lapses after IdempotencyLease; a retry then runs
			// the request again.
			s.Logger.Error("storing an idempotent answer", "error", err)
			return
		}
		s.countIdempotent(idemFirst)
		return
	}
	s.countIdempotent(idemNotKept)
	if err := s.Idempotency.ReleaseIdempotent(ctx, e.ID, e.Claim); err != nil {
		s.Logger.Error("releasing an idempotency key", "error", err)
	}
}

// callerOf is whom a key belongs to: the API key's id, or, on a route
// without a key, the client's address as the limits of searches without a
// key count it (anonymous.go).
func callerOf(w http.ResponseWriter, r *http.Request) string {
	if x := exchangeOf(w); x != nil && x.key != nil {
		return "key " + x.key.ID
	}
	if p, ok := clientPrefix(r.RemoteAddr); ok {
		return "address " + p.String()
	}
	return "anonymous"
}

// canonicalBody is the body as its fingerprint reads it: JSON without its
// insignificant white space, so that a retry re-encoded by another client
// library matches; a body that is not JSON, as sent.
func canonicalBody(body []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, body) != nil {
		return body
	}
	return b.Bytes()
}

// newClaim returns a random claim token.
func newClaim() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// maxKeptAnswer bounds the body of an answer kept for replay: the answers
// of the idempotent routes are small (an endpoint, a list's summary).
const maxKeptAnswer = 64 << 10

// recorder passes a response through and keeps a copy of its status and
// body for the store.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	// over is set when the body outgrew maxKeptAnswer: it is not kept.
	over bool
	// finished is set once the handler returned.
	finished bool
}

// Unwrap lets exchangeOf and http.ResponseController reach the writer
// below.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// WriteHeader records the first final status.
func (w *recorder) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200 and copies b.
func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if !w.over {
		if w.body.Len()+len(b) > maxKeptAnswer {
			w.over = true
			w.body = bytes.Buffer{}
		} else {
			w.body.Write(b)
		}
	}
	return w.ResponseWriter.Write(b)
}

// DefaultIdempotencySweep is how often SweepIdempotency deletes the
// expired entries: a replay checks expiry itself (IdempotentEntry.Live),
// so that the sweep only bounds what the store holds.
const DefaultIdempotencySweep = time.Hour

// SweepIdempotency deletes the entries of Idempotency that are past
// rappel.IdempotencyTTL every interval, until ctx ends; nothing while
// Idempotency is nil. In a fleet every node sweeps the shared store: a
// sweep deletes what another has not yet, and costs one indexed delete.
func (s *Server) SweepIdempotency(ctx context.Context, interval time.Duration) {
	if s.Idempotency == nil {
		return
	}
	if interval <= 0 {
		interval = DefaultIdempotencySweep
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s.sweepIdempotency(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweepIdempotency deletes the entries past rappel.IdempotencyTTL once.
func (s *Server) sweepIdempotency(ctx context.Context) {
	n, err := s.Idempotency.DeleteIdempotentBefore(ctx, s.Now().Add(-rappel.IdempotencyTTL))
	switch {
	case err != nil && ctx.Err() == nil:
		s.Logger.Warn("deleting expired idempotency entries", "error", err)
	case n > 0:
		s.Logger.Info("deleted expired idempotency entries", "entries", n)
	}
}

// countIdempotent counts one request with an Idempotency-Key by outcome.
func (s *Server) countIdempotent(outcome string) {
	s.initMetrics().idempotent.WithLabelValues(outcome).Inc()
}
