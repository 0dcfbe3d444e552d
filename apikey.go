package rappel

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"
)

// APIKey is what the service knows about a caller's key. The key itself is
// never stored: only its SHA-256 (KeyHash).
type APIKey struct {
	// ID names the key in logs, metrics and `rappel keys` without
	// revealing it: the hex of the first KeyIDBytes of its hash.
	ID string `json:"id"`
	// Plan names the key's entry in the plan table (Plans); PlanDev is not
	// limited.
	Plan string `json:"plan"`
	// Label is the operator's note on whose key it is.
	Label string `json:"label"`
	// Created is when the key was issued; zero for development keys.
	Created time.Time `json:"created"`
	// Revoked keys are refused with their own 403 sentence.
	Revoked bool `json:"revoked,omitempty"`
	// RevokedAt is when the key was revoked.
	RevokedAt time.Time `json:"revoked_at,omitzero"`
}

// KeyService checks API keys. Authenticate returns an *Error with code
// EFORBIDDEN for an unknown or revoked key, with a sentence saying which.
type KeyService interface {
	Authenticate(ctx context.Context, key string) (*APIKey, error)
}

// KeyStore keeps issued keys under their SHA-256. Implementations honour
// ctx while waiting for the store.
type KeyStore interface {
	// AddKey stores k under hash. A key whose ID is already taken is an
	// *Error with code EINVALID (the caller draws another key).
	AddKey(ctx context.Context, hash [sha256.Size]byte, k *APIKey) error
	// ListKeys returns every key, revoked ones included, oldest first.
	ListKeys(ctx context.Context) ([]*APIKey, error)
	// RevokeKey marks the key with id revoked at the time given and
	// returns it; an unknown id is an *Error with code ENOTFOUND. Revoking
	// a revoked key changes nothing and is not an error.
	RevokeKey(ctx context.Context, id string, at time.Time) (*APIKey, error)
	// KeysByHash returns every key, revoked ones included, by hash. The
	// map is shared between calls and must not be changed; a store that
	// has not changed since the last call may return the same map.
	KeysByHash(ctx context.Context) (map[[sha256.Size]byte]*APIKey, error)
}

// QuotaStore keeps the monthly request counts of keys, for one node or for
// a fleet of nodes sharing one store. A node counts requests in memory and
// pushes what it counted every few seconds (AddUsage), adopting the totals
// that come back, so a crash loses the requests since the last push, and
// the count a node sees lags the fleet's by what the nodes have not pushed
// yet. Implementations honour ctx while waiting for the store.
type QuotaStore interface {
	// LoadUsage returns the count of each key ID in month ("2026-11"); a
	// key without one is absent.
	LoadUsage(ctx context.Context, month string) (map[string]int64, error)
	// AddUsage adds deltas (requests by key ID, none negative) to the
	// counts of month, atomically per key, and returns the count of every
	// key in deltas after the addition, other nodes' requests included. A
	// delta of 0 adds nothing and only reads the count. A negative delta
	// is an *Error with code EINVALID and changes nothing.
	AddUsage(ctx context.Context, month string, deltas map[string]int64) (map[string]int64, error)
}

// Plan is what the keys of one plan may do: a sustained rate with bursts
// (a token bucket per key) and a number per calendar month (UTC), both in
// cost units: a request costs 1 unit, and a search its estimated cost
// (CostEstimator), at most Burst (docs/api.md, "Limits").
type Plan struct {
	Name string
	// Rate is the sustained units (requests) a second. A Rate or Burst of
	// 0 means no rate limit.
	Rate float64
	// Burst is the bucket's size: the units a key may spend at once after
	// a pause.
	Burst int
	// Monthly is the units a key may spend per calendar month (UTC); 0
	// means no quota.
	Monthly int64
}

// Plan names. PlanDev is the plan of the development keys of --api-keys:
// no rate limit, no quota, no RateLimit headers.
const (
	PlanFree = "free"
	PlanPro  = "pro"
	PlanDev  = "dev"
)

// DefaultPlans returns the plan table: free and pro. The numbers are in the
// "Plans, keys and rate limits" section of docs/api.md.
func DefaultPlans() map[string]Plan {
	return map[string]Plan{
		PlanFree: {Name: PlanFree, Rate: 5, Burst: 20, Monthly: 100_000},
		PlanPro:  {Name: PlanPro, Rate: 50, Burst: 200, Monthly: 5_000_000},
	}
}

// Key format: KeyPrefix, then KeyBytes random bytes in unpadded base64url.
const (
	KeyPrefix  = "rk_"
	KeyBytes   = 32
	KeyIDBytes = 6
)

// keyLen is the length of a key: the prefix and 43 base64url characters.
var keyLen = len(KeyPrefix) + base64.RawURLEncoding.EncodedLen(KeyBytes)

// NewKey draws a new key (256 random bits) and returns it with its hash.
func NewKey() (key string, hash [sha256.Size]byte) {
	var b [KeyBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	key = KeyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return key, sha256.Sum256([]byte(key))
}

// KeyID returns the ID of the key whose SHA-256 is hash.
func KeyID(hash [sha256.Size]byte) string { return hex.EncodeToString(hash[:KeyIDBytes]) }

// CheckKey reports whether key has the form of the keys NewKey draws; the
// error is a sentence saying what is wrong, without repeating the key. It
// speaks of issued keys only: an operator's own keys (--api-keys) may have
// any form.
func CheckKey(key string) error {
	if len(key) < len(KeyPrefix) || key[:len(KeyPrefix)] != KeyPrefix {
		return fmt.Errorf("a key issued by this service starts with %s", KeyPrefix)
	}
	if len(key) != keyLen {
		return fmt.Errorf("a key issued by this service has %d characters, this one %d", keyLen, len(key))
	}
	for i := len(KeyPrefix); i < len(key); i++ {
		if !isBase64URL(key[i]) {
			return fmt.Errorf("a key issued by this service holds only letters, digits, - and _ after %s; character %d is not one", KeyPrefix, i+1)
		}
	}
	// 32 bytes are 43 characters with 2 bits to spare in the last; a
	// canonical encoding leaves them zero.
	if _, err := base64.RawURLEncoding.Strict().DecodeString(key[len(KeyPrefix):]); err != nil {
		return fmt.Errorf("no key issued by this service ends in this key's last character")
	}
	return nil
}

func isBase64URL(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// ParseKeyID returns id in canonical form (lower case), or an *Error with
// code EINVALID saying what an ID looks like.
func ParseKeyID(id string) (string, error) {
	b, err := hex.DecodeString(id)
	if err != nil || len(b) != KeyIDBytes {
		return "", Errorf(EINVALID, "A key ID is %d hexadecimal digits, as `rappel keys list` shows it.", 2*KeyIDBytes)
	}
	return hex.EncodeToString(b), nil
}

// UsageMonth returns the calendar month (UTC) of t as QuotaStore names it.
func UsageMonth(t time.Time) string { return t.UTC().Format("2006-01") }
