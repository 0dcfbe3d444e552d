package edge

import (
	"context"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
)

// tracer starts the package's child spans. It comes from the global
// provider: without an SDK installed (cmd/rappel installs one only when an
// OTEL_* variable asks for it) every span is a no-op.
var tracer = otel.Tracer("github.com/rappel-ca/rappel/edge")

// Span attributes of the server span that otelhttp does not set.
const (
	attrRequestID = attribute.Key("http.request.id")
	attrRoute     = attribute.Key("http.route")
)

// unmatchedRoute names requests that match no route, in span names and in
// metric labels, so that random paths cannot create unbounded names.
const unmatchedRoute = "unmatched"

// tracing returns the middleware that starts a server span per request with
// otelhttp, or nil when Server.TracerProvider is nil: then the chain does
// not include it at all, so that tracing off costs nothing per request.
//
// The span is named "METHOD /route/pattern" ("GET /recall/{record_id}"). The
// ServeMux sets r.Pattern only once it routes, below this middleware;
// otelhttp renames the span after the handler returns, through the same
// formatter, when the pattern is set. It carries the request id, so that a
// trace can be found from a log line or from the X-Request-Id a client
// reports.
//
// otelhttp records no request header and no query string: only the method,
// path, scheme, host, peer, user agent and status. API keys travel in
// headers and alert tokens in the query string, so neither reaches a span.
func (s *Server) tracing() func(http.Handler) http.Handler {
	if s.TracerProvider == nil {
		return nil
	}
	return otelhttp.NewMiddleware("",
		otelhttp.WithTracerProvider(s.TracerProvider),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			return spanName(r)
		}),
	)
}

// annotateSpan is the innermost part of the tracing middleware: it puts the
// request id on the server span and, once routed, the route pattern.
func (s *Server) annotateSpan(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		span := trace.SpanFromContext(r.Context())
		if x := exchangeOf(w); x != nil {
			span.SetAttributes(attrRequestID.String(x.id))
		}
		next.ServeHTTP(w, r)
		span.SetAttributes(attrRoute.String(routeOf(r)))
	})
}

// spanName is "METHOD /route/pattern", with the method reduced to the
// standard ones and the pattern to the routes table's.
func spanName(r *http.Request) string {
	return knownMethod(r.Method) + " " + routeOf(r)
}

// routeOf is the routes-table pattern the request matched, or
// unmatchedRoute before routing and for the catch-all (404) and unclean
// paths.
func routeOf(r *http.Request) string {
	if r.Pattern == "" || r.Pattern == "/" {
		return unmatchedRoute
	}
	return r.Pattern
}

// knownMethod returns m when it is a standard method and "_OTHER" (the
// OpenTelemetry convention) otherwise, so that a client inventing methods
// cannot create unbounded span names or metric series.
func knownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "_OTHER"
}

// startSearchSpan starts the child span of an index query. It records the
// query's shape (sort, limit, offset, whether q and a cursor were given),
// never q's words, which are the client's to keep out of telemetry.
func startSearchSpan(ctx context.Context, q *rappel.Search) (context.Context, trace.Span) {
	ctx, span := tracer.Start(ctx, "index.Search")
	if span.IsRecording() {
		span.SetAttributes(
			attribute.String("rappel.search.sort_by", q.SortBy),
			attribute.Int("rappel.search.limit", q.Limit),
			attribute.Int("rappel.search.offset", q.Offset),
			attribute.Bool("rappel.search.has_q", q.Query != nil),
			attribute.Bool("rappel.search.has_cursor", q.Cursor != ""),
		)
	}
	return ctx, span
}

// endSearchSpan ends the index query's span with the match count or the
// error's code (the code only: a message may quote the client's input).
func endSearchSpan(span trace.Span, page *rappel.Page, err error) {
	if span.IsRecording() {
		if err != nil {
			span.SetStatus(codes.Error, rappel.ErrorCode(err))
		} else if page != nil {
			span.SetAttributes(attribute.Int("rappel.search.count", page.Count))
		}
	}
	span.End()
}
