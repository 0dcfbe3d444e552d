package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/rappel-ca/rappel"
)

// statuses maps every rappel error code to its HTTP status. It is the only
// place that does.
var statuses = map[string]int{
	rappel.EINVALID:     http.StatusUnprocessableEntity,
	rappel.EBADREQUEST:  http.StatusBadRequest,
	rappel.EFORBIDDEN:   http.StatusForbidden,
	rappel.ENOTFOUND:    http.StatusNotFound,
	rappel.EMETHOD:      http.StatusMethodNotAllowed,
	rappel.ECONFLICT:    http.StatusConflict,
	rappel.EGONE:        http.StatusGone,
	rappel.EMEDIATYPE:   http.StatusUnsupportedMediaType,
	rappel.EHEADERS:     http.StatusRequestHeaderFieldsTooLarge,
	rappel.ERATELIMIT:   http.StatusTooManyRequests,
	rappel.EINTERNAL:    http.StatusInternalServerError,
	rappel.EUNAVAILABLE: http.StatusServiceUnavailable,
	rappel.ETIMEOUT:     http.StatusGatewayTimeout,
}

// statusOf returns the HTTP status of an error code; an unknown code is a
// 500.
func statusOf(code string) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// errorBody is every error response: detail is a sentence, or the list of
// validation items of a 422.
type errorBody struct {
	Detail any `json:"detail"`
}

// fail turns err into the response: the status of its code, the error's
// Retry-After when it has one, and a JSON body whose detail is the error's
// message, or its items for a 422. Any error that is not a *rappel.Error
// is a 500 with a safe sentence. The cause of a 5xx, and of a 4xx that
// carries one, goes to the log only. When the response has already
// started, fail only logs. An error that is the client closing the
// connection is no failure: nothing is sent, and the access log says 499.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	x := exchangeOf(w)
	if clientClosed(r, err) {
		if x != nil {
			x.gone = true
		}
		return
	}
	status := statusOf(rappel.ErrorCode(err))
	s.logFailure(r, x, status, err)
	if x != nil && x.status != 0 {
		return
	}
	var detail any = rappel.ErrorMessage(err)
	var e *rappel.Error
	if errors.As(err, &e) {
		if status == http.StatusUnprocessableEntity && len(e.Items) > 0 {
			detail = e.Items
		}
		if e.RetryAfter > 0 {
			w.Header().Set(headerRetryAfter, strconv.FormatInt(ceilSeconds(e.RetryAfter), 10))
		}
	}
	b, jerr := json.Marshal(errorBody{Detail: detail})
	if jerr != nil {
		// An item's input or ctx holds something JSON cannot encode: a
		// programming mistake, answered as one.
		s.logFailure(r, x, http.StatusInternalServerError, fmt.Errorf("encoding error body: %w", jerr))
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{Detail: rappel.ErrorMessage(jerr)})
	}
	writeJSON(w, r, status, b)
}

// clientClosed reports whether err is the request's context ending
// because its client closed the connection (or, over HTTP/2, cancelled
// the stream): a search or a read that stopped for want of anyone to
// answer, whatever status its error would otherwise map to.
func clientClosed(r *http.Request, err error) bool {
	return errors.Is(err, context.Canceled) && errors.Is(r.Context().Err(), context.Canceled)
}

// logFailure logs a 5xx, or a 4xx whose error carries a cause, with the
// request id; a panic's stack goes in its own attribute. A 503 that says
// when to retry is a refusal the node announced, such as a write while
// its storage fails: its cause is logged once where it arises (a failing
// store logs when the fault starts, then a count a minute), and the access
// log has the requests, so it is not logged per request. A 503 with the
// node's own sentence and no cause is a refusal too (POST /admin/refresh
// with the feeds off, or on a follower): the client is told why, and the
// access log records it.
func (s *Server) logFailure(r *http.Request, x *exchange, status int, err error) {
	if (status < 500 || status == http.StatusServiceUnavailable) && errors.Unwrap(err) == nil {
		return
	}
	var announced *rappel.Error
	if status == http.StatusServiceUnavailable && errors.As(err, &announced) && announced.RetryAfter > 0 {
		return
	}
	level := slog.LevelWarn
	if status >= 500 {
		level = slog.LevelError
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method),
		slog.String("path", rappel.Clip(r.URL.Path)),
		slog.Int("status", status),
		slog.String("error", err.Error()),
	}
	if x != nil {
		attrs = append(attrs, slog.String("request_id", x.id))
	}
	var p *panicError
	if errors.As(err, &p) {
		attrs = append(attrs, slog.String("stack", string(p.stack)))
	}
	s.Logger.LogAttrs(r.Context(), level, "request failed", attrs...)
}

// panicError is a recovered panic, with the stack where it happened.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }
