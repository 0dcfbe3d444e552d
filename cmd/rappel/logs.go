package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// newLogger returns the logger of a command writing to out: JSON lines for
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
// by plainHandler when out is a *logWriter (the server's log), the others
// by slog's handler; the bytes are the same.
func newLogger(out io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	if format == "json" {
		opts.ReplaceAttr = durationSeconds
		h = slog.NewJSONHandler(out, opts)
	} else {
		h = slog.NewTextHandler(out, opts)
	}
	if lw, ok := out.(*logWriter); ok {
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

// loggedError is an error a command has written to its JSON log already.
type loggedError struct{ error }

func (e loggedError) Unwrap() error { return e.error }

// printFinal prints the error that ends the process to stderr, unless the
// command logged it (loggedError): a JSON log stays JSON to its last line.
func printFinal(stderr io.Writer, err error) {
	if !errors.As(err, new(loggedError)) {
		fmt.Fprintln(stderr, "rappel:", err)
	}
}

// levelFlag is the flag.Value of --log-level. It takes the four names
// alone, unlike slog.Level's UnmarshalText, which also takes offsets such
// as info+2 that no one means to type.
type levelFlag struct{ l *slog.Level }

func (f levelFlag) String() string {
	if f.l == nil {
		return "info"
	}
	return strings.ToLower(f.l.String())
}

func (f levelFlag) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		*f.l = slog.LevelDebug
	case "info":
		*f.l = slog.LevelInfo
	case "warn", "warning":
		*f.l = slog.LevelWarn
	case "error":
		*f.l = slog.LevelError
	default:
		return fmt.Errorf("%q is not a log level; give debug, info, warn or error", s)
	}
	return nil
}

// logFlushEvery bounds how long a log line waits in logWriter's buffer.
const logFlushEvery = 100 * time.Millisecond

// logWriter buffers the log's lines and writes them out every
// logFlushEvery, when the buffer fills, and at Close. Written straight to
// stderr, every access-log line cost the request a write system call, a
// large part of a small read's time under load; buffered, a busy node
// writes its lines in batches. A crash loses at most the last
// logFlushEvery of lines; a shutdown loses none.
type logWriter struct {
	mu   sync.Mutex
	buf  *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

func newLogWriter(out io.Writer) *logWriter { return newLogWriterEvery(out, logFlushEvery) }

// newLogWriterEvery is newLogWriter flushing every d.
func newLogWriterEvery(out io.Writer, d time.Duration) *logWriter {
	l := &logWriter{buf: bufio.NewWriterSize(out, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go l.flushLoop(d)
	return l
}

// Write buffers one or more whole lines (slog writes a line per call).
func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logWriter) flushLoop(d time.Duration) {
	defer close(l.done)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.Flush()
		}
	}
}

// Flush writes out what is buffered. A write error is dropped: there is
// nowhere left to report that the log cannot be written.
func (l *logWriter) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.buf.Flush()
}

// Close stops the periodic flush and writes out the rest. Lines written
// after Close are still buffered and written by the next Flush or Close.
func (l *logWriter) Close() error {
	select {
	case <-l.stop:
	default:
		close(l.stop)
		<-l.done
	}
	l.Flush()
	return nil
}
