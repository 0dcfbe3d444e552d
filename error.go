package rappel

import (
	"errors"
	"fmt"
	"time"
)

// Error codes. The edge package maps each to one HTTP status, in one place.
const (
	EINVALID     = "invalid"     // a parameter or body field is invalid: 422
	EBADREQUEST  = "bad_request" // understood but cannot be served as asked: 400
	EFORBIDDEN   = "forbidden"   // missing, unknown or revoked API key: 403
	ENOTFOUND    = "not_found"   // no such path or record: 404
	EMETHOD      = "method"      // known path, wrong method: 405
	ECONFLICT    = "conflict"    // an Idempotency-Key whose first request is in flight: 409
	EGONE        = "gone"        // a position that is no longer kept: 410
	EMEDIATYPE   = "media_type"  // a body in a format the endpoint does not read: 415
	EHEADERS     = "headers"     // request line and headers over the limit: 431
	ERATELIMIT   = "rate_limit"  // rate limit or plan quota exceeded: 429
	EINTERNAL    = "internal"    // unexpected failure: 500
	EUNAVAILABLE = "unavailable" // cannot serve at all: 503
	ETIMEOUT     = "timeout"     // the query took too long: 504
)

// Error is the error every layer returns for something a client should see.
// Message is a sentence for the client; Items carry 422 validation details;
// Err is the cause, logged and never shown. RetryAfter, when set, is how
// long a client should wait before trying again (Retry-After).
type Error struct {
	Code       string
	Message    string
	Items      []Invalid
	Err        error
	RetryAfter time.Duration
}

// Invalid is one validation error item, shaped like pydantic v2's.
type Invalid struct {
	Type  string         `json:"type"`
	Loc   []any          `json:"loc"`
	Msg   string         `json:"msg"`
	Input any            `json:"input,omitempty"`
	Ctx   map[string]any `json:"ctx,omitempty"`
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && len(e.Items) > 0 {
		msg = e.Items[0].Msg
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, msg, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with code and a formatted client message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// any other error, and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client message of the first *Error in err's chain,
// or a safe sentence for any other error.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return "Internal error: the server could not complete the request; it has been logged, please retry later."
}
