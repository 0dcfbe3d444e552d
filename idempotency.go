package rappel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// A POST that creates something (a subscription, a webhook endpoint, a
// watchlist) or does something (a test delivery) may carry an
// Idempotency-Key header (the IETF httpapi draft "The Idempotency-Key
// HTTP Header Field"): a retry with the same key, by the same caller, of
// the same request, is answered the first answer again, without doing
// the work twice (docs/api.md, "Retrying a POST safely"). The rules are
// here; the edge applies them, and an IdempotencyStore keeps the answers.

// IdempotencyTTL is how long an answer is replayed: a client retries
// within minutes, and a day covers a retry queue that waited out an
// outage overnight (RATIONALE.md, "Why are POST answers kept for 24 hours
// under an Idempotency-Key?").
const IdempotencyTTL = 24 * time.Hour

// IdempotencyLease is how long a request in flight holds its key: a retry
// meanwhile is a 409. A request ends well within it (the server's read and
// write timeouts are seconds), so that a claim older than it is of a node
// that died mid-request, and the next request with the key takes it over.
const IdempotencyLease = time.Minute

// MaxIdempotencyKey is the longest Idempotency-Key accepted, in bytes: a
// UUID is 36, and the draft leaves the limit to the server.
const MaxIdempotencyKey = 255

// IdempotentEntry is one key's state in an IdempotencyStore: claimed by a
// request in flight, then holding its answer.
type IdempotentEntry struct {
	// ID is IdempotencyID of the caller and the key.
	ID string `json:"id"`
	// Fingerprint is the SHA-256, in hex, of the request's method, path,
	// query and canonical body (IdempotencyFingerprint): a retry must
	// match it.
	Fingerprint string `json:"fingerprint"`
	// Claim is a random token of the request that holds the entry, so
	// that a request whose claim was taken over does not overwrite the
	// new holder's answer.
	Claim string `json:"claim"`
	// CreatedAt is when the entry was claimed; it is replayed until
	// CreatedAt + IdempotencyTTL.
	CreatedAt time.Time `json:"created_at"`
	// Done is set once the answer is stored; until then the entry is in
	// flight.
	Done bool `json:"done,omitempty"`
	// Status, Header and Body are the answer: its status, the headers a
	// replay repeats, and the body as the handler wrote it.
	Status int               `json:"status,omitempty"`
	Header map[string]string `json:"header,omitempty"`
	Body   []byte            `json:"body,omitempty"`
}

// Live reports whether e still counts at now: an answer for
// IdempotencyTTL, a claim in flight for IdempotencyLease. A stale entry is
// as good as absent, and a store replaces it.
func (e *IdempotentEntry) Live(now time.Time) bool {
	if e.Done {
		return now.Before(e.CreatedAt.Add(IdempotencyTTL))
	}
	return now.Before(e.CreatedAt.Add(IdempotencyLease))
}

// IdempotencyStore keeps the entries of Idempotency-Key, on one node (its
// Pebble store) or for a fleet (the shared store), so that a retry
// reaching another node, or a node restarted, is replayed too.
// Implementations honour ctx while waiting for the store.
type IdempotencyStore interface {
	// ClaimIdempotent stores e, in flight, unless a live entry (Live at
	// now) has e.ID: it then returns that entry and stores nothing. A
	// stale entry is replaced. Of two claims at once, one wins and the
	// other gets the winner's entry.
	ClaimIdempotent(ctx context.Context, e *IdempotentEntry, now time.Time) (held *IdempotentEntry, err error)
	// FinishIdempotent stores e, done, in place of the entry e.ID while
	// e.Claim holds it; otherwise it changes nothing.
	FinishIdempotent(ctx context.Context, e *IdempotentEntry) error
	// ReleaseIdempotent deletes the entry id while claim holds it, so
	// that a retry runs the request again.
	ReleaseIdempotent(ctx context.Context, id, claim string) error
	// DeleteIdempotentBefore deletes the entries created before t and
	// returns how many it deleted.
	DeleteIdempotentBefore(ctx context.Context, t time.Time) (int, error)
}

// IdempotencyID names the entry of key sent by caller (an API key's id):
// keys are the caller's own, so that two callers choosing the same key
// never see each other's answers. It is a digest, so that a store holds
// no key in the clear and every id has one length.
func IdempotencyID(caller, key string) string {
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(len(caller))))
	h.Write([]byte{':'})
	h.Write([]byte(caller))
	h.Write([]byte(key))
	return hex.EncodeToString(h.Sum(nil))
}

// IdempotencyFingerprint is the digest a retry must match: the method,
// the path, the query and the body, each length-prefixed so that no two
// requests share one. The caller passes the body in its canonical form
// (the edge drops JSON's insignificant white space).
func IdempotencyFingerprint(method, path, query string, body []byte) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(method), []byte(path), []byte(query), body} {
		h.Write([]byte(strconv.Itoa(len(part))))
		h.Write([]byte{':'})
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// KeepsIdempotent reports whether an answer of status is stored for
// replay: the final answers, 2xx and 4xx, but not those a retry may
// change: 408 (the request was too slow), 409 (the key was busy), 425 and
// 429 (too early, too many), and no 5xx, so that a retry after a failure
// runs again (the draft's advice).
func KeepsIdempotent(status int) bool {
	switch status {
	case 408, 409, 425, 429:
		return false
	}
	return status >= 200 && status < 300 || status >= 400 && status < 500
}

// ParseIdempotencyKey reads the Idempotency-Key header's values: none is
// no key (ok false); one is the key, a Structured Field string as the
// draft defines it ("8e03978e-…", quoted) or the same text unquoted, as
// many clients send it. The key is 1 to MaxIdempotencyKey visible ASCII
// characters; anything else is a 400 saying what was wrong.
func ParseIdempotencyKey(values []string) (key string, ok bool, err error) {
	switch len(values) {
	case 0:
		return "", false, nil
	case 1:
	default:
		return "", false, BadIdempotencyKey("was sent "+strconv.Itoa(len(values))+" times", "send it once")
	}
	v := strings.Trim(values[0], " \t")
	if len(v) > 0 && v[0] == '"' {
		k, why := unquoteSFString(v)
		if why != "" {
			return "", false, BadIdempotencyKey(why, idempotencyKeyFix)
		}
		v = k
	} else {
		for i := 0; i < len(v); i++ {
			if c := v[i]; c <= ' ' || c >= 0x7f {
				return "", false, BadIdempotencyKey("holds a character that is not visible ASCII at byte "+strconv.Itoa(i+1), idempotencyKeyFix)
			}
		}
	}
	switch {
	case v == "":
		return "", false, BadIdempotencyKey("is empty", idempotencyKeyFix)
	case len(v) > MaxIdempotencyKey:
		return "", false, BadIdempotencyKey("is "+strconv.Itoa(len(v))+" characters long, over the "+strconv.Itoa(MaxIdempotencyKey)+" accepted", idempotencyKeyFix)
	}
	return v, true, nil
}

// idempotencyKeyFix is how to fix a malformed key.
const idempotencyKeyFix = "send a new unique value of 1 to 255 visible ASCII characters, such as a UUID, quoted or not"

// unquoteSFString reads a Structured Field string (RFC 9651, 3.3.3): in
// double quotes, printable ASCII, with \" and \\ the only escapes. why
// says what is wrong, "" when nothing is.
func unquoteSFString(v string) (s string, why string) {
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\':
			i++
			if i == len(v) || v[i] != '"' && v[i] != '\\' {
				return "", "holds a backslash that escapes neither '\"' nor '\\' at byte " + strconv.Itoa(i)
			}
			b.WriteByte(v[i])
		case c == '"':
			if i != len(v)-1 {
				return "", "has characters after its closing quote at byte " + strconv.Itoa(i+2)
			}
			s = b.String()
			for j := 0; j < len(s); j++ {
				if s[j] == ' ' {
					return "", "holds a space at byte " + strconv.Itoa(j+1) + " of the key"
				}
			}
			return s, ""
		case c < ' ' || c >= 0x7f:
			return "", "holds a character that is not visible ASCII at byte " + strconv.Itoa(i+1)
		default:
			b.WriteByte(c)
		}
	}
	return "", "opens a quote it does not close"
}

// ErrIdempotencyBusy is the 409 of a key whose first request is still in
// flight: the client waits Retry-After and sends it again.
func ErrIdempotencyBusy() *Error {
	return &Error{Code: ECONFLICT, RetryAfter: time.Second,
		Message: "A request with this Idempotency-Key is still being processed; wait for its answer, or retry in 1 s (Retry-After) to get it."}
}
