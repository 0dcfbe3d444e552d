package edge

import (
	"encoding/json"
	"net/http"
)

// Probe bodies. They are constant, so that a probe costs no encoding.
var (
	liveBody     = []byte(`{"status":"ok"}`)
	readyBody    = []byte(`{"status":"ready"}`)
	drainingBody = mustErrorBody("This node is shutting down and takes no new requests; send them to another node.")
	noDataBody   = mustErrorBody("No recall data is loaded yet, so this node cannot answer; retry shortly or use another node.")
	rebuildBody  = mustErrorBody("This node found its read index damaged on disk and is rebuilding it from its store, so its answers may be wrong until it has; retry shortly or use another node.")
	joiningBody  = mustErrorBody("This node is joining its fleet and has not yet applied the fleet's dataset up to its latest version, so it would serve older data; retry shortly or use another node.")
)

func mustErrorBody(detail string) []byte {
	b, err := json.Marshal(errorBody{Detail: detail})
	if err != nil {
		panic(err)
	}
	return b
}

// Drain marks the server as draining: from now on GET /readyz answers 503,
// so that a load balancer stops sending new requests while those in flight
// finish. It is called at the start of a graceful shutdown and cannot be
// undone. It is safe to call from any goroutine, more than once.
func (s *Server) Drain() { s.draining.Store(true) }

// Draining reports whether Drain was called.
func (s *Server) Draining() bool { return s.draining.Load() }

// livez answers 200 for as long as the process serves HTTP at all: a
// liveness probe that fails means the process should be restarted, which
// neither a missing dataset nor a drain calls for.
func (s *Server) livez(w http.ResponseWriter, r *http.Request) error {
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	writeJSON(w, r, http.StatusOK, liveBody)
	return nil
}

// readyz answers 200 when this node should receive traffic: a dataset is
// loaded, the read index is not being rebuilt after failing its check,
// and the node is not draining. Unlike GET /health, which stays 200
// while any data can be served, readiness also turns 503 during a graceful
// shutdown.
//
// Its 503 is written here rather than returned as an error: it is an
// expected state polled every few seconds, not a failure for the error log.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	switch {
	case s.draining.Load():
		writeJSON(w, r, http.StatusServiceUnavailable, drainingBody)
	case s.Catalog.Snapshot().Len() == 0:
		writeJSON(w, r, http.StatusServiceUnavailable, noDataBody)
	case s.IndexStats != nil && s.IndexStats().Rebuilding:
		writeJSON(w, r, http.StatusServiceUnavailable, rebuildBody)
	case s.FleetStats != nil && !s.fleetReady(s.Catalog.Snapshot().Info().Version):
		writeJSON(w, r, http.StatusServiceUnavailable, joiningBody)
	default:
		writeJSON(w, r, http.StatusOK, readyBody)
	}
	return nil
}

// fleetReady reports whether a node of a fleet, serving the dataset
// version served, has caught up with it.
func (s *Server) fleetReady(served int64) bool {
	st := s.FleetStats()
	return st.Ready && served >= st.ReadyAt
}
