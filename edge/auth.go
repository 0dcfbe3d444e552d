package edge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/rappel-ca/rappel"
)

// Authentication headers, in canonical form so that lookups do not allocate.
const (
	headerKey  = "X-Gateway-Key"
	headerHost = "X-Gateway-Host"
)

// errMissingKey is the exact 403 of DECISIONS.md for a request without a key.
var errMissingKey = &rappel.Error{
	Code:    rappel.EFORBIDDEN,
	Message: "Missing API key: send it in the x-gateway-key header.",
}

// authenticate returns the caller's key, or a 403 *rappel.Error when the key
// is missing or unknown or, with GatewayHost set, when x-gateway-host
// differs. Any other error from Keys is a failure of the key service (500).
func (s *Server) authenticate(r *http.Request) (*rappel.APIKey, error) {
	key := r.Header.Get(headerKey)
	if key == "" {
		return nil, errMissingKey
	}
	k, err := s.Keys.Authenticate(r.Context(), key)
	if err != nil {
		return nil, err
	}
	if s.GatewayHost != "" {
		host := r.Header.Get(headerHost)
		if host == "" {
			return nil, rappel.Errorf(rappel.EFORBIDDEN,
				"Missing gateway host: send x-gateway-host: %s.", s.GatewayHost)
		}
		if !strings.EqualFold(host, s.GatewayHost) {
			return nil, rappel.Errorf(rappel.EFORBIDDEN,
				"Wrong gateway host %s: send x-gateway-host: %s.", quote(host), s.GatewayHost)
		}
	}
	return k, nil
}

// StaticKeys is a rappel.KeyService over a fixed list of keys: the
// --api-keys flag, for development and small deployments. It holds only the
// keys' SHA-256 hashes, and it is safe for concurrent use.
type StaticKeys struct {
	byHash map[[sha256.Size]byte]*rappel.APIKey
}

// staticPlan is the plan of every static key: they are the operator's own.
const staticPlan = "pro"

// NewStaticKeys returns a StaticKeys accepting keys. Surrounding spaces are
// trimmed and empty entries skipped; with no keys, every key is refused.
// Each key's ID is "static-" and the start of its hash, stable across
// restarts and safe to log.
func NewStaticKeys(keys []string) *StaticKeys {
	k := &StaticKeys{byHash: make(map[[sha256.Size]byte]*rappel.APIKey, len(keys))}
	for _, key := range keys {
		key = strings.TrimSpace(key)
		if key == "" {
			continue
		}
		h := sha256.Sum256([]byte(key))
		k.byHash[h] = &rappel.APIKey{
			ID:    "static-" + hex.EncodeToString(h[:4]),
			Plan:  staticPlan,
			Label: "--api-keys",
		}
	}
	return k
}

// Authenticate returns the APIKey for key, shared between calls: callers
// must not change it. An unknown key is an *rappel.Error with code
// EFORBIDDEN. It never blocks, so it does not look at ctx.
func (k *StaticKeys) Authenticate(_ context.Context, key string) (*rappel.APIKey, error) {
	// Looking the hash up, not the key, keeps the key's bytes out of
	// timing-dependent comparisons.
	if a, ok := k.byHash[sha256.Sum256([]byte(key))]; ok {
		return a, nil
	}
	return nil, errUnknownKey
}

var errUnknownKey = &rappel.Error{
	Code:    rappel.EFORBIDDEN,
	Message: "Unknown API key: the key in the x-gateway-key header is not valid here; check it, or get one from the gateway provider.",
}
