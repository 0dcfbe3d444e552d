// Package logline makes the logger of rappel's commands: slog's text or
// JSON handler with durations a log pipeline can read, the trace and span
// ids of the line's context, a fast path that writes an access line's
// plain parts without slog's per-value work, and Writer, which buffers the
// server's lines and writes them in batches. It depends on the standard
// library and the OpenTelemetry API.
package logline

import (
	"context"
	"io"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// New returns the logger of a command writing to out: JSON lines for
// format json, logfmt-like text otherwise, from level up.
//
// A JSON line writes every duration as seconds, a float ("took": 1.234),
// which a log pipeline can sum, compare and plot; slog's default, integer
// nanoseconds, reads wrong without a unit. The text format keeps Go's
// duration strings (took=1.234s), which carry their unit.
//
// A line logged with a context that holds a valid span (a request's, a
// refresh's) carries its trace_id and span_id (traceHandler).
//
// A line whose parts are all plain, as an access-log line is, is written
// by plainHandler when out is a *Writer (the server's log), the others by
// slog's handler; the bytes are the same.
func New(out io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	if format == "json" {
		opts.ReplaceAttr = durationSeconds
		h = slog.NewJSONHandler(out, opts)
	} else {
		h = slog.NewTextHandler(out, opts)
	}
	if lw, ok := out.(*Writer); ok {
		h = plainHandler{h, lw, format == "json"}
	}
	return slog.New(traceHandler{h})
}

// durationSeconds is the JSON handler's ReplaceAttr: a time.Duration
// becomes its seconds, to the microsecond. Dividing whole microseconds
// gives the float nearest the decimal, which JSON writes short (3.236);
// Duration.Seconds adds two rounded parts and can write 3.2359999999999998.
// Attributes inside groups come here one by one too.
func durationSeconds(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.Float64Value(float64(a.Value.Duration().Round(time.Microsecond).Microseconds()) / 1e6)
	}
	return a
}

// traceHandler adds trace_id and span_id to a line whose context holds a
// valid span, so that a log line leads to its trace and a trace to its
// lines. Lines logged without a context (or with one outside any span)
// are left as they are.
type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone()
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}
