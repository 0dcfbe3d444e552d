package edge

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// ErrRefreshedElsewhere is wrapped by a Refresh that this node does not run
// because another node refreshes the feeds for it (the leader of its
// fleet); its text, a sentence, says which.
var ErrRefreshedElsewhere = errors.New("another node refreshes the feeds")

// refreshRetryAfter is the Retry-After of a refresh that could not be
// published: about the time a fleet takes to settle who leads.
const refreshRetryAfter = 10 * time.Second

// headerAdminKey carries the admin key, in canonical form.
const headerAdminKey = "X-Admin-Key"

// authenticateAdmin checks the admin key of a request to an admin endpoint.
// Without an AdminKey configured the admin endpoints are closed.
func (s *Server) authenticateAdmin(r *http.Request) error {
	if s.AdminKey == "" {
		return rappel.Errorf(rappel.EFORBIDDEN, "This node has no admin key (--admin-key), so its admin endpoints are closed.")
	}
	key := r.Header.Get(headerAdminKey)
	if key == "" {
		return rappel.Errorf(rappel.EFORBIDDEN, "Missing admin key: send it in the x-admin-key header.")
	}
	addr, _ := clientPrefix(r.RemoteAddr)
	now := time.Now() // the guard's window is wall time, not s.Now
	if wait := s.adminGuard.blocked(addr, now); wait > 0 {
		return adminTooMany(wait)
	}
	// Comparing hashes keeps the comparison's time independent of where
	// the keys differ, and of their lengths.
	got, want := sha256.Sum256([]byte(key)), sha256.Sum256([]byte(s.AdminKey))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		s.adminGuard.failed(addr, now)
		return rappel.Errorf(rappel.EFORBIDDEN, "Wrong admin key in the x-admin-key header.")
	}
	s.adminGuard.succeeded(addr)
	return nil
}

// adminRefreshTimeout bounds the wait of POST /admin/refresh for its answer.
const adminRefreshTimeout = 15 * time.Minute

// adminRefresh answers POST /admin/refresh: it runs a refresh of every feed
// now, waits for it, and answers 200 with every feed's state (a source that
// failed says why in its last_error). It is 503 when the feeds are off.
func (s *Server) adminRefresh(w http.ResponseWriter, r *http.Request) error {
	if err := s.authenticateAdmin(r); err != nil {
		return err
	}
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	if s.Refresh == nil {
		return rappel.Errorf(rappel.EUNAVAILABLE, "The live feeds are off on this node (--feeds off), so there is nothing to refresh.")
	}
	// A refresh may outlast the server's write timeout (a first live
	// ingest takes tens of seconds): this one response gets longer, so
	// that the operator sees its outcome rather than a cut connection.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(adminRefreshTimeout)) // the connection's clock, not s.Now
	// A refresh's own failures are in the feeds' state, answered below; a
	// refresh this node will not run (a follower of a fleet) says why.
	if err := s.Refresh(r.Context()); err != nil {
		switch {
		case errors.Is(err, ErrRefreshedElsewhere):
			why := strings.TrimPrefix(err.Error(), ErrRefreshedElsewhere.Error()+": ")
			return rappel.Errorf(rappel.EUNAVAILABLE, "This node does not refresh the feeds: %s.", strings.TrimRight(why, ". "))
		case errors.Is(err, rappel.ErrUnpublished):
			// Nothing of it was stored: the fleet serves the same data
			// as before, and the node's next refresh fetches it again.
			e := rappel.Errorf(rappel.EUNAVAILABLE, "The refresh was not stored, because it could not be published to the fleet's shared store (it is unreachable, or another node took the feed lease); every node still serves the data of before. Retry in %d s (Retry-After), on the node that leads then (GET /health names it).", int(refreshRetryAfter/time.Second))
			e.RetryAfter = refreshRetryAfter
			e.Err = err
			return e
		case r.Context().Err() != nil:
			return err
		}
	}
	b, err := json.Marshal(struct {
		Feeds []rappel.FeedState `json:"feeds"`
	}{s.feeds()})
	if err != nil {
		return err
	}
	writeJSON(w, r, http.StatusOK, b)
	return nil
}

// adminPlugins answers GET /admin/plugins: each source's active plugin
// (digest, since when and why, bundled or from --plugins-dir), its
// candidates with their state, and the last swaps and refusals. It is 503
// when the node runs no plugins (--feeds off).
func (s *Server) adminPlugins(w http.ResponseWriter, r *http.Request) error {
	if err := s.authenticateAdmin(r); err != nil {
		return err
	}
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	if s.Plugins == nil {
		return rappel.Errorf(rappel.EUNAVAILABLE, "The live feeds are off on this node (--feeds off), so it runs no plugins.")
	}
	b, err := json.Marshal(s.Plugins())
	if err != nil {
		return err
	}
	writeJSON(w, r, http.StatusOK, b)
	return nil
}

// feeds is every feed's state, never nil.
func (s *Server) feeds() []rappel.FeedState {
	if s.Feeds == nil {
		return []rappel.FeedState{}
	}
	if f := s.Feeds(); f != nil {
		return f
	}
	return []rappel.FeedState{}
}
