package edge

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/buildinfo"
	"github.com/rappel-ca/rappel/match"
)

// Server serves the recall API. Set its fields before calling Handler or
// HTTPServer, and do not change them afterwards.
type Server struct {
	// Catalog hands out the records to serve. Required.
	Catalog rappel.Catalog
	// Lookup finds records by barcode and by vehicle for GET /recall/upc
	// and GET /recall/vin, which answer 503 while it is nil.
	Lookup rappel.Lookup
	// Changes reads the store's change log for GET /recall/changes, which
	// answers 503 while it is nil.
	Changes rappel.ChangeReader
	// Keys checks the x-gateway-key of every route that needs a key.
	Keys rappel.KeyService
	// GatewayHost, when set, is the value x-gateway-host must hold on every
	// route that needs a key; a request with another value gets 403. When
	// empty, the header is ignored.
	GatewayHost string
	// PublicURL is the base URL clients reach the API by, such as
	// https://recalls.example.ca: the Atom feed's self link is made
	// under it. Empty makes that link relative.
	PublicURL string
	// Logger receives the access log and the causes of 5xx responses. API
	// keys are never logged.
	Logger *slog.Logger
	// Now is the clock, replaced in tests.
	Now func() time.Time
	// QueryBudget bounds the evaluation of one search (GET /recall); a
	// search that takes longer gets 504 (docs/api.md, "Searching").
	QueryBudget time.Duration
	// Alerts serves subscribe, confirm and unsubscribe, which answer 503
	// while it is nil.
	Alerts rappel.Alerts
	// Webhooks serves /recall/webhooks, which answers 503 while it is nil.
	Webhooks rappel.Webhooks
	// Watchlists serves /recall/watchlists, which answers 503 while it is
	// nil.
	Watchlists rappel.Watchlists
	// Idempotency, when set, keeps the answers of POSTs sent with an
	// Idempotency-Key (idempotency.go), for replay: the node's store, or
	// a fleet's shared one. While it is nil the header is ignored.
	Idempotency rappel.IdempotencyStore
	// WebhookStats, when set, counts webhook delivery outcomes, and
	// WebhookDepth the deliveries waiting, for /metrics.
	WebhookStats func() rappel.WebhookStats
	WebhookDepth func(ctx context.Context) (int, error)
	// Feeds, when set, returns every live feed's state for GET /health.
	Feeds func() []rappel.FeedState
	// PluginStats, StorageStats and IndexStats, when set, return what the
	// plugins, the store and the read index count about themselves, and
	// Certificates, when set (the node serves TLS), the expiry of the
	// certificate served for each name, for /metrics (nodemetrics.go):
	// read at each scrape.
	PluginStats  func() []rappel.PluginStats
	StorageStats func() rappel.StorageStats
	IndexStats   func() rappel.IndexStats
	Certificates func() map[string]time.Time
	// Fleet, when set, returns the node's place in its fleet for /health
	// (fleet.Status): the node then serves the fleet's feeds.
	Fleet func() any
	// FleetStats, on a node of a fleet, returns its figures: /health says
	// "degraded" while they do, /readyz answers 503 until the node is
	// ready and serves the version it caught up at, and the metrics
	// report them.
	FleetStats func() rappel.FleetStats
	// StorageFault, when set, returns why and since when the node's
	// storage fails its writes (kv.Store.StorageFault), nil while it works;
	// GET /health then says "degraded".
	StorageFault func() (err error, since time.Time)
	// Refresh, when set, refreshes the feeds now and returns when done or
	// when ctx is; POST /admin/refresh answers 503 while it is nil.
	Refresh func(ctx context.Context) error
	// Plugins, when set, returns the plugin registry's report for GET
	// /admin/plugins (a plugins.Report: each source's active plugin, its
	// candidates and the last swaps); the endpoint answers 503 while it is
	// nil.
	Plugins func() any
	// ApprovePlugin, when set with Plugins, activates a candidate held for
	// approval, for POST /admin/plugins/{source}/approve; the endpoint
	// answers 503 while it is nil.
	ApprovePlugin ApprovePlugin
	// UploadPlugin, when set with Plugins and UploadStaging, takes a
	// plugin uploaded with PUT /admin/plugins/{source}, whose parts were
	// streamed into files of UploadStaging (the plugins dir's
	// plugins.StagingDir); RemoveSource is DELETE's removal of a source a
	// plugin added, or of its refused plugins.
	UploadPlugin  UploadPlugin
	UploadStaging string
	RemoveSource  RemoveSource
	// UploadSlots is how many plugin uploads are taken at once, and
	// UploadBytes how many bytes of their bodies, as their Content-Length
	// declares them (the largest a body may be when it declares none);
	// one over either is answered 503. 0 means DefaultUploadSlots and
	// DefaultUploadBytes; UploadBytes is never less than one upload of
	// the largest size.
	UploadSlots int
	UploadBytes int64
	// Backups, when set, takes the backups of POST /admin/backup
	// (admin_backup.go) and keeps the last success, which /metrics
	// reports; the endpoint answers 503 while it is nil.
	Backups Backups
	// AdminKey opens the admin endpoints to requests carrying it in
	// x-admin-key; empty keeps them closed (403).
	AdminKey string
	// Plans is the plan table keys are limited by (limit.go); NewServer
	// sets rappel.DefaultPlans. Keys of rappel.PlanDev are not limited.
	Plans map[string]rappel.Plan
	// Quota, when set, keeps the monthly request counts across restarts
	// (LoadUsage, SaveUsage, PersistUsage); without it they start at 0.
	Quota rappel.QuotaStore
	// TracerProvider, when set, gives every request a server span
	// ("GET /recall/{record_id}") through otelhttp; nil leaves tracing out
	// of the middleware chain altogether (trace.go).
	TracerProvider trace.TracerProvider
	// OutboxDepth and ConfirmDepth, when set, count the alert and the
	// confirmation e-mails waiting to be sent, for the
	// rappel_alert_outbox_* and rappel_confirmation_outbox_* metrics
	// (outboxmetrics.go); read at each scrape.
	OutboxDepth, ConfirmDepth func(ctx context.Context) (rappel.OutboxDepth, error)
	// ExpensiveCost is the estimated cost, in cost units, from which a
	// search runs in the pool of expensive searches (admission.go); 0
	// means DefaultExpensiveCost.
	ExpensiveCost int
	// ExpensiveSlots is how many expensive searches run at once; 0 means
	// half of GOMAXPROCS, at least 1.
	ExpensiveSlots int
	// ExpensiveQueue is how many expensive searches may wait for a slot;
	// 0 means DefaultExpensiveQueue.
	ExpensiveQueue int
	// ExpensiveWait is the longest an expensive search waits for a slot
	// (never past its query budget); 0 means DefaultExpensiveWait.
	ExpensiveWait time.Duration
	// AnonymousPlan limits searches without a key (the Atom feed) per
	// client address, in cost units (Rate and Burst; Monthly is not
	// used); a zero plan means DefaultAnonymousPlan.
	AnonymousPlan rappel.Plan
	// ExportSlots is how many exports (GET /recall/export) stream at once;
	// one more is answered 503. 0 means DefaultExportSlots per core.
	ExportSlots int
	// StallTimeout is how long a streamed export waits for its client to
	// take more bytes before it is cut; 0 means DefaultStallTimeout.
	StallTimeout time.Duration
	// Build is the binary's version, commit, build date and Go version,
	// shown in GET /health and as the rappel_build_info metric; NewServer
	// sets the running binary's.
	Build buildinfo.Info
	// OpenAPI is the API description the deprecated routes and parameters
	// are read from (deprecation.go); nil means the embedded
	// edge/openapi.json, the one GET /openapi.json serves. Tests set a
	// copy that marks something deprecated.
	OpenAPI []byte

	// deprecationTable is what OpenAPI marks deprecated, read once
	// (deprecations).
	deprecationOnce  sync.Once
	deprecationTable deprecationTable
	// metrics is the Prometheus registry behind GET /metrics (metrics.go).
	metrics metrics
	// draining is set by Drain; GET /readyz answers 503 once it is.
	draining atomic.Bool
	// lim is the state of the rate limits and quotas, built from Plans on
	// first use (limit.go).
	limitOnce sync.Once
	lim       *limiter
	// anon limits searches without a key per client address, built from
	// AnonymousPlan on first use (anonymous.go).
	anonOnce   sync.Once
	anon       *anonymousLimiter
	adminGuard adminGuard
	// admit is the pool of expensive searches, built on first use.
	admitOnce sync.Once
	admit     *admission
	// exports holds a token per export streaming, built on first use.
	exportsOnce sync.Once
	exports     chan struct{}
	// uploads is what the plugin uploads being taken hold (admin_upload.go).
	uploads uploadBudget
	// backupState is the last successful backup and the failures, for
	// /metrics (admin_backup.go).
	backupState backupState
	// matchRecords are the current snapshot's records as POST
	// /recall/match prepared them (match.go).
	matchRecords atomic.Pointer[match.Cache]
	// answers keeps the results of the VIN and barcode lookups
	// (answers.go).
	answers answers
	// active counts the requests running (counted, WaitRequests).
	active sync.WaitGroup
	// stopping is set by StopStreams: the node is closing its
	// connections, and a stream cut from then on was cut by the shutdown.
	stopping atomic.Bool
}

// DefaultQueryBudget is the QueryBudget NewServer sets.
const DefaultQueryBudget = 2 * time.Second

// NewServer returns a Server with defaults: the default logger, the real
// clock, a key service that accepts no key and DefaultQueryBudget. Catalog
// must still be set.
func NewServer() *Server {
	return &Server{
		Keys:        NewStaticKeys(nil),
		Plans:       rappel.DefaultPlans(),
		Logger:      slog.Default(),
		Now:         time.Now,
		QueryBudget: DefaultQueryBudget,
		Build:       buildinfo.Read(),
	}
}

// Handler returns the whole API: the router behind its middlewares. It panics
// when a required field is unset, which is a wiring mistake.
func (s *Server) Handler() http.Handler {
	return s.handler(s.routes())
}

// handler builds the middleware chain around a router for routes; tests
// call it with extra routes.
//
// Recovery sits inside the request id and the access log, not outside them,
// so that a panic's log line carries the request id and the access log
// records the 500 it became. A panic in those two small middlewares is still
// caught by net/http's per-connection recovery: the process never crashes.
func (s *Server) handler(routes []route) http.Handler {
	switch {
	case s.Catalog == nil:
		panic("edge: Server.Catalog is nil")
	case s.Keys == nil:
		panic("edge: Server.Keys is nil")
	case s.Logger == nil:
		panic("edge: Server.Logger is nil")
	case s.Now == nil:
		panic("edge: Server.Now is nil")
	case s.QueryBudget <= 0:
		panic("edge: Server.QueryBudget is not positive")
	}
	h := s.router(routes)
	h = s.recoverPanics(h)
	// Compression sits outside recovery, so that a panic's 500 is encoded
	// like any response; CORS outside compression answers preflights
	// without compressing, recovering or routing them, and gives every
	// other response its headers.
	h = compress(h)
	h = s.limitHeaders(h)
	h = cors(h)
	h = s.accessLog(h)
	h = s.measure(h)
	if t := s.tracing(); t != nil {
		h = t(s.annotateSpan(h))
	}
	h = s.requestID(h)
	return s.counted(h)
}

// counted keeps count of the requests h is running (Server.active), so
// that a shutdown that closed their connections can wait for their
// access lines (WaitRequests).
func (s *Server) counted(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.active.Add(1)
		defer s.active.Done()
		h.ServeHTTP(w, r)
	})
}

// WaitRequests waits, at most d, for the requests still running to return,
// and reports whether they all did. A shutdown calls it after closing the
// connections of the requests that outlived its timeout: each then fails
// at its next read or write and returns, logging itself as cut, before
// the process goes on to close the store and exit.
func (s *Server) WaitRequests(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		s.active.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// Server timeouts and limits. Requests are small GETs (and small JSON bodies
// for alerts), so reading gets little time; writing covers the query budget
// (2 s by default) plus a large page to a slow client. An export replaces
// the write timeout with its own, which moves as long as the client reads
// (StallTimeout). maxHeaderBytes is the API's limit on the request line
// and headers, which limitHeaders answers with a JSON 431; net/http reads
// up to readHeaderBytes, so that such a request reaches it, and answers a
// plain-text 431 past that.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 32 << 10
	readHeaderBytes   = 256 << 10
)

// StopStreams tells the server that its connections are about to be
// closed at the end of a shutdown whose requests did not all finish in
// time: the streams cut then are logged as cut by the shutdown rather
// than by their clients. Call it just before http.Server.Close.
func (s *Server) StopStreams() { s.stopping.Store(true) }

// HTTPServer returns an *http.Server for Handler on addr with explicit
// timeouts and a header size limit, logging its own errors to Logger.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s.Handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    readHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.Logger.Handler(), slog.LevelWarn),
	}
}
