package edge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rappel-ca/rappel"
)

// Authentication headers, in canonical form so that lookups do not allocate.
const (
	headerKey  = "X-Gateway-Key"
	headerHost = "X-Gateway-Host"
)

// errMissingKey is the exact 403 docs/api.md gives for a request without a key.
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
				"Wrong gateway host %s: send x-gateway-host: %s.", rappel.Quote(host), s.GatewayHost)
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

// staticPlan is the plan of every static key: they are the operator's own,
// for development, and not limited.
const staticPlan = rappel.PlanDev

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
	if a, ok := k.byHash[hashKey(key)]; ok {
		return a, nil
	}
	return nil, errUnknownKey
}

var errUnknownKey = &rappel.Error{
	Code:    rappel.EFORBIDDEN,
	Message: "Unknown API key: the key in the x-gateway-key header is not valid here; check it, or get one from the gateway provider.",
}

var errRevokedKey = &rappel.Error{
	Code:    rappel.EFORBIDDEN,
	Message: "Revoked API key: the key in the x-gateway-key header was revoked; get a new one from the gateway provider.",
}

// hashKey returns the SHA-256 of key. Keys up to 128 bytes (every issued
// key, and any sane development key) are hashed from a copy on the stack:
// converting a string longer than 32 bytes to a []byte would allocate.
func hashKey(key string) [sha256.Size]byte {
	if len(key) > 128 {
		return sha256.Sum256([]byte(key))
	}
	var buf [128]byte
	return sha256.Sum256(buf[:copy(buf[:], key)])
}

// DefaultKeyRefresh is the KeyService.Refresh interval NewKeyService sets.
const DefaultKeyRefresh = 2 * time.Second

// KeyService is the rappel.KeyService of a running server: the keys of a
// rappel.KeyStore (rappel keys add) and the static development keys, held
// in memory as one map by SHA-256, so that authenticating is a hash and a
// map lookup, without reading the store or allocating.
//
// The map is replaced, whole, every Refresh interval with the store's
// current keys; the store answers from memory when nothing changed (the
// data dir's key database stats its files; a fleet's shared store reads a
// change counter), so a quiet store costs a few stat calls or one
// single-row query. A key revoked by `rappel keys revoke`, on any node of a
// fleet, is refused within one interval (2 s by default), and a new key is
// accepted within one.
type KeyService struct {
	// Store holds the issued keys; nil serves the static keys only.
	Store rappel.KeyStore
	// Static are the development keys (--api-keys); nil for none.
	Static *StaticKeys
	// Refresh is the time between two reads of the store.
	Refresh time.Duration
	// Logger receives failures to read the store; the last good keys keep
	// serving meanwhile.
	Logger *slog.Logger

	byHash atomic.Pointer[map[[sha256.Size]byte]*rappel.APIKey]
	// mu serializes Reload; stored is the store's map last swapped in.
	mu     sync.Mutex
	stored map[[sha256.Size]byte]*rappel.APIKey
	stop   context.CancelFunc
	done   chan struct{}
}

// NewKeyService returns a KeyService over store and static with
// DefaultKeyRefresh and the default logger. Open it before use.
func NewKeyService(store rappel.KeyStore, static *StaticKeys) *KeyService {
	return &KeyService{Store: store, Static: static, Refresh: DefaultKeyRefresh, Logger: slog.Default()}
}

// Open reads the keys once, failing when the store cannot be read, then
// re-reads them every Refresh until Close.
func (k *KeyService) Open(ctx context.Context) error {
	if err := k.Reload(ctx); err != nil {
		return err
	}
	if k.Store == nil || k.Refresh <= 0 {
		return nil
	}
	ctx, k.stop = context.WithCancel(context.WithoutCancel(ctx))
	k.done = make(chan struct{})
	go func() {
		defer close(k.done)
		t := time.NewTicker(k.Refresh)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := k.Reload(ctx); err != nil && ctx.Err() == nil {
					k.Logger.Warn("reading API keys; the last ones read keep serving", "error", err)
				}
			}
		}
	}()
	return nil
}

// Close stops the refreshes. It is safe after a failed Open and twice.
func (k *KeyService) Close() error {
	if k.stop != nil {
		k.stop()
		<-k.done
		k.stop = nil
	}
	return nil
}

// Reload reads the store's keys now and swaps them in with the static
// keys; on error the keys in use stay.
func (k *KeyService) Reload(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	var stored map[[sha256.Size]byte]*rappel.APIKey
	if k.Store != nil {
		var err error
		if stored, err = k.Store.KeysByHash(ctx); err != nil {
			return fmt.Errorf("reading keys: %w", err)
		}
	}
	if k.byHash.Load() != nil && sameMap(k.stored, stored) {
		return nil
	}
	k.stored = stored
	m := make(map[[sha256.Size]byte]*rappel.APIKey, len(stored))
	for h, a := range stored {
		m[h] = a
	}
	if k.Static != nil {
		// A development key shadows an issued key with the same hash,
		// which only the same secret could have.
		for h, a := range k.Static.byHash {
			m[h] = a
		}
	}
	k.byHash.Store(&m)
	return nil
}

// sameMap reports whether a holds exactly b's entries (the store returns
// the same map, with the same values, when nothing changed).
func sameMap(a, b map[[sha256.Size]byte]*rappel.APIKey) bool {
	if len(a) != len(b) {
		return false
	}
	for h, v := range b {
		if a[h] != v {
			return false
		}
	}
	return true
}

// Authenticate returns the APIKey for key, shared between calls: callers
// must not change it. An unknown or revoked key is an EFORBIDDEN
// *rappel.Error with its own sentence. It never blocks, so it does not look
// at ctx.
func (k *KeyService) Authenticate(_ context.Context, key string) (*rappel.APIKey, error) {
	m := k.byHash.Load()
	if m == nil {
		return nil, errUnknownKey
	}
	a, ok := (*m)[hashKey(key)]
	switch {
	case !ok:
		err := rappel.CheckKey(key)
		switch {
		case err == nil:
			return nil, errUnknownKey
		case k.Static != nil && len(k.Static.byHash) > 0:
			// The operator's own keys may have any form: a key unlike
			// an issued one may be one of them, mistyped.
			return nil, rappel.Errorf(rappel.EFORBIDDEN, "Unknown API key: the key in the x-gateway-key header is not valid here, "+
				"nor in the form of the keys this service issues (%s); check that the header holds the whole key, or get one from the gateway provider.", err)
		}
		return nil, rappel.Errorf(rappel.EFORBIDDEN,
			"Malformed API key: %s; check that the x-gateway-key header holds the whole key.", err)
	case a.Revoked:
		return nil, errRevokedKey
	}
	return a, nil
}
