package edge

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
)

// metrics holds the Server's Prometheus registry and the series the request
// path updates. It lives in a private registry, not the global one, so that
// two Servers in one process (tests) and libraries registering globally do
// not collide.
type metrics struct {
	once     sync.Once
	registry *prometheus.Registry
	duration *prometheus.HistogramVec
	limited  *prometheus.CounterVec
	admitted *prometheus.CounterVec
	// idempotent counts the requests with an Idempotency-Key by outcome
	// (idemOutcomes).
	idempotent *prometheus.CounterVec
	// exports count the streamed exports by format, their bytes, and those
	// cut short by format and why (exportCutReasons).
	exports, exportBytes, exportCuts *prometheus.CounterVec
	// deprecated counts the requests using a deprecated feature by
	// feature and key, the keys bounded by deprecatedKeys.
	deprecated     *prometheus.CounterVec
	deprecatedKeys deprecatedKeys
	// api serves /metrics on the API's listener, leaving compression to
	// its compress middleware; own serves the metrics listener, which has
	// none, and compresses itself.
	api, own http.Handler

	// observers caches the histogram child per label set: looking a child
	// up through WithLabelValues hashes its labels on every request.
	observers sync.Map // durationKey → prometheus.Observer
}

// durationKey is the label set of one request-duration series. Every field
// takes few values: methods are reduced to the standard ones, routes to the
// routes table's patterns, statuses to those the API writes.
type durationKey struct {
	method, route string
	code          int
}

// durationBuckets span a cache-hot GET /recall/{record_id} (tens of
// microseconds) to a search at the end of its 2 s budget.
var durationBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}

// initMetrics builds the registry once. Handler and MetricsHandler call it;
// countRateLimited may run before either only in tests, so it calls it too.
func (s *Server) initMetrics() *metrics {
	m := &s.metrics
	m.once.Do(func() {
		m.registry = prometheus.NewRegistry()
		m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rappel_http_request_duration_seconds",
			Help:    "Time to answer a request, by method, route pattern (\"unmatched\" for none) and status code.",
			Buckets: durationBuckets,
		}, []string{"method", "route", "code"})
		m.limited = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rappel_rate_limited_requests_total",
			Help: "Requests refused with 429 by a key's rate limit or quota, by the key's plan.",
		}, []string{"plan"})
		m.admitted = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rappel_expensive_searches_total",
			Help: "Searches whose estimated cost put them in the pool of expensive searches, by outcome: admitted at once, queued then admitted, refused with 503 (queue_full, wait_expired) or 504 while waiting (timeout), or given up by a client that closed the connection while waiting (client_closed).",
		}, []string{"outcome"})
		m.exports = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rappel_export_streams_total",
			Help: "Exports (GET /recall/export) whose body began to stream, by format (ndjson, csv).",
		}, []string{"format"})
		m.exportBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rappel_export_written_bytes_total",
			Help: "Body bytes of exports the connections took (compressed when the client asked for it), by format.",
		}, []string{"format"})
		m.exportCuts = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rappel_export_streams_cut_total",
			Help: "Exports ended before their data, by format and reason: client_closed (the client closed the connection), client_stalled (it took no bytes for the stall timeout), page_budget (a page missed its query budget), shutdown, server_error.",
		}, []string{"format", "reason"})
		m.deprecated = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rappel_deprecated_requests_total",
			Help: "Requests using a route or query parameter the OpenAPI document marks deprecated, by feature (\"GET /recall\", \"GET /recall?date_from\") and caller's key id (\"anonymous\" without a key, \"other\" past 1000 keys).",
		}, []string{"feature", "key"})
		m.idempotent = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rappel_idempotent_requests_total",
			Help: "POSTs sent with an Idempotency-Key, by outcome: first (run, its answer kept), replayed (the kept answer sent again), busy (409, the first still running), mismatch (422, the key sent with another request), not_kept (run, its answer a 5xx, 409 or 429 not kept).",
		}, []string{"outcome"})
		s.precreateCounters(m)
		m.registry.MustRegister(
			m.duration,
			m.limited,
			m.admitted,
			m.idempotent,
			s.buildInfoGauge(),
			s.storageDegradedGauge(),
			&feedCollector{s: s},
			&pluginCollector{s: s},
			&storageCollector{s: s},
			&indexCollector{s: s},
			&certificateCollector{s: s},
			&coverageCollector{s: s},
			&fleetCollector{s: s},
			&backupCollector{s: s},
			m.exports, m.exportBytes, m.exportCuts,
			m.deprecated,
			collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		)
		m.api, m.own = s.promHandler(m.registry, false), s.promHandler(m.registry, true)
		m.registry.MustRegister(&mailOutboxCollector{s: s})
		// Registered whatever the fields hold now: the webhooks are wired
		// after the metrics listener may have started, and the fields are
		// read at each scrape.
		m.registry.MustRegister(s.webhookCounters()...)
		m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "rappel_webhook_outbox_pending",
			Help: "Webhook deliveries waiting in the outbox (pending rows, retries included).",
		}, func() float64 {
			if s.WebhookDepth == nil {
				return 0
			}
			return s.countDepth(s.WebhookDepth, "webhook")
		}))
	})
	return m
}

// admissionOutcomes are the outcomes countAdmission is called with.
var admissionOutcomes = []string{"admitted", "queued", "queue_full", "wait_expired", "timeout", "client_closed"}

// precreateCounters creates the counters' series at zero for every label
// value known at start: a series that appears only with its first event
// reads as "no data" in a rule such as rate(x[5m]) > 0, which then can
// neither fire on that first burst nor be told from a scrape that failed.
func (s *Server) precreateCounters(m *metrics) {
	for plan := range s.Plans {
		if plan != rappel.PlanDev { // dev keys are never limited
			m.limited.WithLabelValues(plan)
		}
	}
	for _, outcome := range admissionOutcomes {
		m.admitted.WithLabelValues(outcome)
	}
	for _, outcome := range idemOutcomes {
		m.idempotent.WithLabelValues(outcome)
	}
	for _, format := range exportFormats {
		m.exports.WithLabelValues(format)
		m.exportBytes.WithLabelValues(format)
		for _, reason := range exportCutReasons {
			m.exportCuts.WithLabelValues(format, reason)
		}
	}
}

// exportCutReasons name, as a label, why an export was cut (the exchange's
// cut, a sentence for the access log).
var exportCutReasons = map[string]string{
	cutClientClosed:  "client_closed",
	cutClientStalled: "client_stalled",
	cutPageBudget:    "page_budget",
	cutShutdown:      "shutdown",
	cutServerError:   "server_error",
}

// countExport counts an export of format that begins to stream on x, and
// returns what counts its end: the bytes x sent meanwhile, and its cut, if
// it was.
func (s *Server) countExport(format string, x *exchange) (end func()) {
	m := s.initMetrics()
	m.exports.WithLabelValues(format).Inc()
	sentBefore := x.sent
	return func() { m.exportEnded(format, x, sentBefore) }
}

// exportEnded counts the end of an export countExport counted.
func (m *metrics) exportEnded(format string, x *exchange, sentBefore int64) {
	m.exportBytes.WithLabelValues(format).Add(float64(x.sent - sentBefore))
	if reason, ok := exportCutReasons[x.cut]; ok {
		m.exportCuts.WithLabelValues(format, reason).Inc()
	}
}

// storageDegradedGauge is rappel_storage_degraded: 1 while the storage
// fails its writes (GET /health then says "degraded"), read from
// StorageFault at each scrape; always 0 without a StorageFault.
func (s *Server) storageDegradedGauge() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rappel_storage_degraded",
		Help: "1 while the node's storage fails its writes (GET /health says \"degraded\": reads served, writes answer 503), else 0.",
	}, func() float64 {
		if s.StorageFault == nil {
			return 0
		}
		err, _ := s.StorageFault()
		return boolValue(err != nil)
	})
}

// webhookCounters are the webhook delivery counters, read from
// WebhookStats at each scrape.
func (s *Server) webhookCounters() []prometheus.Collector {
	counter := func(name, help string, v func(rappel.WebhookStats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 {
			if s.WebhookStats == nil {
				return 0
			}
			return float64(v(s.WebhookStats()))
		})
	}
	return []prometheus.Collector{
		counter("rappel_webhook_deliveries_total", "Webhook deliveries a receiver accepted (2xx), by this node.",
			func(st rappel.WebhookStats) int64 { return st.Delivered }),
		counter("rappel_webhook_retries_total", "Webhook delivery attempts that failed and were scheduled again.",
			func(st rappel.WebhookStats) int64 { return st.Retried }),
		counter("rappel_webhook_failures_total", "Webhook deliveries given up: retries exhausted or the endpoint disabled.",
			func(st rappel.WebhookStats) int64 { return st.Failed }),
		counter("rappel_webhook_endpoints_disabled_total", "Webhook endpoints disabled (410 Gone, or failing for days).",
			func(st rappel.WebhookStats) int64 { return st.Disabled }),
	}
}

// buildInfoGauge is rappel_build_info: always 1, the build in its labels,
// the usual Prometheus way to join a version to any other series
// (`* on(instance) group_left(version) rappel_build_info`).
func (s *Server) buildInfoGauge() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rappel_build_info",
		Help: "Always 1; the labels say which build of rappel the node runs.",
		ConstLabels: prometheus.Labels{
			"version":    s.Build.Version,
			"commit":     s.Build.Commit,
			"build_date": s.Build.BuildDate,
			"go_version": s.Build.GoVersion,
		},
	}, func() float64 { return 1 })
}

// countDepth reads an outbox's depth for a scrape; a failure reads as NaN,
// which Prometheus shows as a gap rather than a false zero.
func (s *Server) countDepth(depth func(context.Context) (int, error), what string) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := depth(ctx)
	if err != nil {
		s.Logger.Warn("counting the "+what+" outbox for /metrics", "err", err)
		return math.NaN()
	}
	return float64(n)
}

// countRateLimited counts one request refused with 429 for a key of plan,
// for the rate-limited-requests metric.
func (s *Server) countRateLimited(plan string) {
	s.initMetrics().limited.WithLabelValues(plan).Inc()
}

// countAdmission counts one expensive search by its outcome in the pool.
func (s *Server) countAdmission(outcome string) {
	s.initMetrics().admitted.WithLabelValues(outcome).Inc()
}

// measure is the middleware that observes each request's duration by
// method, route pattern and status. It sits inside the tracing middleware
// and outside the router, whose ServeMux sets r.Pattern on this same
// request.
func (s *Server) measure(next http.Handler) http.Handler {
	m := s.initMetrics()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		next.ServeHTTP(w, r)
		status := http.StatusOK // net/http sends 200 for a handler that wrote nothing
		if x := exchangeOf(w); x != nil {
			status, _ = s.outcome(x, r)
		}
		observe(m.observer(durationKey{knownMethod(r.Method), routeOf(r), status}), r, time.Since(start).Seconds())
	})
}

// observe counts a request's duration v with o, and, when the request's
// span is sampled, the span's trace as the observation's exemplar, which
// an OpenMetrics scrape shows beside its bucket: from a slow bucket on a
// dashboard to the trace of one of its requests. Without a sampled span
// it allocates nothing.
func observe(o prometheus.Observer, r *http.Request, v float64) {
	if sc := trace.SpanContextFromContext(r.Context()); sc.IsSampled() {
		if eo, ok := o.(prometheus.ExemplarObserver); ok {
			eo.ObserveWithExemplar(v, prometheus.Labels{"trace_id": sc.TraceID().String()})
			return
		}
	}
	o.Observe(v)
}

// observer returns the histogram child for k, cached.
func (m *metrics) observer(k durationKey) prometheus.Observer {
	if o, ok := m.observers.Load(k); ok {
		return o.(prometheus.Observer)
	}
	o := m.duration.WithLabelValues(k.method, k.route, strconv.Itoa(k.code))
	m.observers.Store(k, o)
	return o
}

// getMetrics answers GET /metrics on the API's listener: the Prometheus
// text exposition, behind the admin key like the other admin endpoints.
func (s *Server) getMetrics(w http.ResponseWriter, r *http.Request) error {
	if err := s.authenticateAdmin(r); err != nil {
		return err
	}
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	s.initMetrics().api.ServeHTTP(w, r)
	return nil
}

// promHandler serves reg, gzipping for clients that accept it when
// compressed.
func (s *Server) promHandler(reg *prometheus.Registry, compressed bool) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:           promLogger{s},
		ErrorHandling:      promhttp.ContinueOnError,
		DisableCompression: !compressed,
		// A scraper that asks for OpenMetrics gets it, with the request
		// histogram's exemplars (observe); others get the text format.
		EnableOpenMetrics: true,
	})
}

// MetricsHandler returns the handler of a separate metrics listener
// (--metrics-addr): GET /metrics without a key, since that listener is
// meant for a private address, and a JSON 404 or 405 for anything else.
// Its requests are not in the request-duration histogram, which is about
// the API.
func (s *Server) MetricsHandler() http.Handler {
	prom := s.initMetrics().own
	return s.requestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/metrics":
			s.fail(w, r, rappel.Errorf(rappel.ENOTFOUND,
				"There is no path %s on the metrics listener; scrape /metrics.", rappel.Quote(r.URL.Path)))
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			w.Header().Set("Allow", "GET, HEAD")
			s.fail(w, r, rappel.Errorf(rappel.EMETHOD,
				"Method %s is not allowed on /metrics; use GET.", rappel.Clip(r.Method)))
		default:
			prom.ServeHTTP(w, r)
		}
	}))
}

// promLogger sends the registry's collection errors to the Server's log.
type promLogger struct{ s *Server }

func (l promLogger) Println(v ...any) { l.s.Logger.Warn("collecting metrics", "err", v) }

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
