package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/internal/buildinfo"
	"github.com/rappel-ca/rappel/kv"
)

// TelemetryConfig is rappel serve's observability: traces over OTLP, set by
// the standard OTEL_* variables (StartTelemetry), and Prometheus metrics at
// GET /metrics, behind the admin key on the API's listener or without a key
// on a listener of their own.
type TelemetryConfig struct {
	// MetricsAddr, when set, serves GET /metrics without a key on this
	// host:port, meant for a private address; /metrics on the API's
	// listener still works with the admin key.
	MetricsAddr string
	// MetricsReady, when set, receives the metrics listener's address.
	MetricsReady func(addr net.Addr)

	ln net.Listener // bound by bind, before the data loads
}

// bind listens on MetricsAddr, when set, so that a taken port fails the
// start at once, as the API's listeners do; start serves on it later.
func (c *TelemetryConfig) bind() error {
	if c.MetricsAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", c.MetricsAddr)
	if err != nil {
		return listenError("--metrics-addr", c.MetricsAddr, err)
	}
	c.ln = ln
	return nil
}

// unbind closes a listener bind opened that start never served on.
func (c *TelemetryConfig) unbind() {
	if c.ln != nil {
		_ = c.ln.Close()
		c.ln = nil
	}
}

func (c *TelemetryConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.MetricsAddr, "metrics-addr", c.MetricsAddr, "`host:port` serving GET /metrics without a key (keep it private); empty: only /metrics on --addr with the admin key")
}

// start wires the Server's telemetry fields (the tracer provider of tel,
// nil when tracing is off, and the e-mail outboxes' counts) and starts the
// metrics listener. stop closes the listener.
func (c *TelemetryConfig) start(ctx context.Context, tel *Telemetry, store *kv.Store, srv *edge.Server, log *slog.Logger) (stop func(), err error) {
	srv.TracerProvider = tel.TracerProvider()
	srv.OutboxDepth, srv.ConfirmDepth = store.AlertDepth, store.ConfirmDepth
	if c.MetricsAddr == "" {
		return func() {}, nil
	}
	ms, err := c.listen(srv, log)
	if err != nil {
		return nil, err
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := ms.Shutdown(sctx); err != nil {
			log.Warn("closing the metrics listener", "err", err)
		}
	}, nil
}

// listen serves srv's MetricsHandler on MetricsAddr in the background.
func (c *TelemetryConfig) listen(srv *edge.Server, log *slog.Logger) (*http.Server, error) {
	if c.ln == nil {
		if err := c.bind(); err != nil {
			return nil, err
		}
	}
	ln := c.ln
	c.ln = nil // served from here on; Shutdown closes it
	hs := &http.Server{
		Handler:           srv.MetricsHandler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("serving metrics", "addr", ln.Addr().String())
	if c.MetricsReady != nil {
		c.MetricsReady(ln.Addr())
	}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("serving metrics", "err", err)
		}
	}()
	return hs, nil
}

// defaultServiceName is service.name when OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES do not give one.
const defaultServiceName = "rappel"

// Telemetry is the OpenTelemetry SDK that exports traces. The packages
// only use the API; this is the one place that installs an SDK.
type Telemetry struct {
	// Provider is the SDK's tracer provider, also installed as the global
	// one.
	Provider *sdktrace.TracerProvider
}

// tracesExporter is the exporter OTEL_TRACES_EXPORTER names: "otlp",
// "console" or "none"; empty when it is unset, and then tracing is on
// only when tracingWanted says so.
func tracesExporter(environ []string) (string, error) {
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if name != "OTEL_TRACES_EXPORTER" {
			continue
		}
		switch v := strings.ToLower(strings.TrimSpace(value)); v {
		case "", "otlp", "console", "none":
			return v, nil
		default:
			return "", fmt.Errorf("OTEL_TRACES_EXPORTER is %q; give otlp, console or none", value)
		}
	}
	return "", nil
}

// tracingWanted reports whether the environment asks for traces:
// OTEL_TRACES_EXPORTER otlp or console, any OTEL_EXPORTER_OTLP_*ENDPOINT
// variable or OTEL_SERVICE_NAME set to a non-empty value, unless
// OTEL_SDK_DISABLED is true or OTEL_TRACES_EXPORTER none. Without them the
// exporter would send to localhost:4318, where usually nothing listens, and
// every span would cost for nothing.
func tracingWanted(environ []string) bool {
	want := false
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case value == "":
		case name == "OTEL_SDK_DISABLED":
			if strings.EqualFold(strings.TrimSpace(value), "true") {
				return false
			}
		case name == "OTEL_TRACES_EXPORTER":
			if strings.EqualFold(strings.TrimSpace(value), "none") {
				return false
			}
			want = true
		case name == "OTEL_SERVICE_NAME",
			strings.HasPrefix(name, "OTEL_EXPORTER_OTLP_") && strings.HasSuffix(name, "ENDPOINT"):
			want = true
		}
	}
	return want
}

// StartTelemetry installs the SDK when the environment asks for traces
// and returns nil, nil otherwise; console spans go to stdout.
func StartTelemetry(ctx context.Context, log *slog.Logger) (*Telemetry, error) {
	return startTelemetry(ctx, os.Environ(), os.Stdout, log)
}

// startTelemetry is StartTelemetry over environ, printing console spans to
// console. OTEL_TRACES_EXPORTER picks the exporter: otlp, console (each
// span as JSON on console, no collector needed) or none; unset, traces go
// over OTLP when tracingWanted. OTEL_SDK_DISABLED=true turns tracing off
// whatever the exporter. The OTLP exporter reads the standard
// OTEL_EXPORTER_OTLP_* variables itself (endpoint, headers, timeout,
// compression, TLS), the sampler OTEL_TRACES_SAMPLER and the batch
// processor OTEL_BSP_*; the resource takes OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES over its defaults (serviceResource). Export
// failures are logged to log once per outage (quietExporter). Shutdown
// flushes what is buffered.
func startTelemetry(ctx context.Context, environ []string, console io.Writer, log *slog.Logger) (*Telemetry, error) {
	kind, err := tracesExporter(environ)
	if err != nil {
		return nil, err
	}
	if !tracingWanted(environ) {
		return nil, nil
	}
	var exp sdktrace.SpanExporter
	if kind == "console" {
		exp, err = stdouttrace.New(stdouttrace.WithWriter(console))
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("creating the %s trace exporter: %w", cmp.Or(kind, "otlp"), err)
	}
	res, err := serviceResource(ctx)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("describing the service for traces: %w", err), exp.Shutdown(ctx))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(&quietExporter{SpanExporter: exp, log: log}),
		sdktrace.WithResource(res),
	)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		if !errors.As(err, new(exportError)) {
			log.Warn("tracing", "err", err)
		}
	}))
	log.Info("tracing on", "service", serviceName(res), "exporter", cmp.Or(kind, "otlp"))
	return &Telemetry{Provider: tp}, nil
}

// serviceResource describes this process in every span: service.name
// "rappel", service.version the build's, service.instance.id the host name
// and pid (as the alert outbox names its claims), then the SDK, then the
// environment's OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, last so
// that they win.
func serviceResource(ctx context.Context) (*resource.Resource, error) {
	return resource.New(ctx,
		resource.WithAttributes(
			attribute.String("service.name", defaultServiceName),
			attribute.String("service.version", buildinfo.Read().Version),
			attribute.String("service.instance.id", alerts.DefaultNode()),
		),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
}

// exportError is an export failure quietExporter has dealt with: the
// error handler leaves it out of the log.
type exportError struct{ error }

func (e exportError) Unwrap() error { return e.error }

// quietExporter logs an exporter's failures once per outage: a warning at
// the first failed export, a line when an export succeeds again, nothing
// in between. The batch processor exports every few seconds, so a
// collector that is down would otherwise write a warning each time.
type quietExporter struct {
	sdktrace.SpanExporter
	log *slog.Logger

	mu      sync.Mutex
	failing bool
	lost    int // spans not exported since the outage began
}

func (q *quietExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := q.SpanExporter.ExportSpans(ctx, spans)
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case err != nil && !q.failing:
		q.failing, q.lost = true, len(spans)
		q.log.Warn("exporting traces failed; spans are dropped until the collector answers, and the next failures are not logged", "err", err)
	case err != nil:
		q.lost += len(spans)
	case q.failing:
		q.log.Info("exporting traces again", "spans_lost", q.lost)
		q.failing, q.lost = false, 0
	}
	if err != nil {
		return exportError{err}
	}
	return nil
}

// TracerProvider is the provider for edge.Server.TracerProvider: nil, so
// that tracing stays out of the request path, when t is nil.
func (t *Telemetry) TracerProvider() trace.TracerProvider {
	if t == nil {
		return nil
	}
	return t.Provider
}

// Shutdown flushes the spans still buffered and stops the exporter,
// waiting until ctx is done at most. It is a no-op on a nil Telemetry.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.Provider.Shutdown(ctx); err != nil {
		return fmt.Errorf("flushing traces: %w", err)
	}
	return nil
}

// close flushes the traces at the end of Run, for at most 10 s, logging a
// failure: the spans are lost, the shutdown goes on.
func (t *Telemetry) close(log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		log.Warn("stopping tracing", "err", err)
	}
}

func serviceName(res *resource.Resource) string {
	if v, ok := res.Set().Value("service.name"); ok {
		return v.Emit()
	}
	return defaultServiceName
}
