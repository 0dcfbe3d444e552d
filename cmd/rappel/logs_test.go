package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/rappel-ca/rappel/internal/logtest"
)

// steps is a LogValuer of durations, as a feed refresh logs its steps.
type steps struct{ fetch, write time.Duration }

func (s steps) LogValue() slog.Value {
	return slog.GroupValue(slog.Duration("fetch", s.fetch), slog.Duration("write", s.write))
}

func TestNewLogger(t *testing.T) {
	logOne := func(format string, level slog.Level) string {
		var b bytes.Buffer
		log := newLogger(&b, format, level)
		log.Debug("debugging")
		log.Info("refreshed", "took", 1234*time.Millisecond, "records", 7, "steps", steps{250 * time.Millisecond, 2 * time.Second},
			slog.Group("http", slog.Duration("wait", 1500*time.Microsecond)))
		log.Warn("slow")
		return b.String()
	}
	t.Run("JSONSeconds", func(t *testing.T) {
		lines := strings.Split(strings.TrimSpace(logOne("json", slog.LevelInfo)), "\n")
		if len(lines) != 2 {
			t.Fatalf("%d lines at info, want 2 (no debug):\n%s", len(lines), strings.Join(lines, "\n"))
		}
		var got struct {
			Took    any `json:"took"`
			Records any `json:"records"`
			Steps   struct {
				Fetch, Write any
			} `json:"steps"`
			HTTP struct {
				Wait any `json:"wait"`
			} `json:"http"`
		}
		if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
			t.Fatal(err)
		}
		for name, c := range map[string]struct{ got, want any }{
			"took": {got.Took, 1.234}, "records": {got.Records, 7.0},
			"steps.fetch": {got.Steps.Fetch, 0.25}, "steps.write": {got.Steps.Write, 2.0}, "http.wait": {got.HTTP.Wait, 0.0015},
		} {
			if c.got != c.want {
				t.Errorf("%s = %#v, want %#v (seconds, a number): %s", name, c.got, c.want, lines[0])
			}
		}
	})
	t.Run("TextDurations", func(t *testing.T) {
		out := logOne("text", slog.LevelInfo)
		for _, want := range []string{"took=1.234s", "steps.fetch=250ms", "steps.write=2s", "http.wait=1.5ms"} {
			if !strings.Contains(out, want) {
				t.Errorf("text log lacks %s:\n%s", want, out)
			}
		}
	})
	t.Run("Levels", func(t *testing.T) {
		for _, tc := range []struct {
			level slog.Level
			want  []string
		}{
			{slog.LevelDebug, []string{"debugging", "refreshed", "slow"}},
			{slog.LevelInfo, []string{"refreshed", "slow"}},
			{slog.LevelWarn, []string{"slow"}},
			{slog.LevelError, nil},
		} {
			out := logOne("json", tc.level)
			var msgs []string
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var m struct{ Msg string }
				if line != "" && json.Unmarshal([]byte(line), &m) == nil {
					msgs = append(msgs, m.Msg)
				}
			}
			if strings.Join(msgs, ",") != strings.Join(tc.want, ",") {
				t.Errorf("at %s logged %q, want %q", tc.level, msgs, tc.want)
			}
		}
	})
}

// TestNewLogger_ShortSeconds checks that a JSON duration is written as the
// decimal it is, not as the float noise of Duration.Seconds.
func TestNewLogger_ShortSeconds(t *testing.T) {
	var b bytes.Buffer
	newLogger(&b, "json", slog.LevelInfo).Info("refresh done", "took", 3236*time.Millisecond, "wait", 153*time.Microsecond)
	if !strings.Contains(b.String(), `"took":3.236,"wait":0.000153}`) {
		t.Errorf("durations not written short: %s", b.String())
	}
}

// TestNewLogger_TraceIDs checks that a line logged with a span's context
// carries its trace and span ids, in both formats, and that a line
// without one carries none.
func TestNewLogger_TraceIDs(t *testing.T) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	ctx, span := tp.Tracer("test").Start(context.Background(), "feeds.Refresh")
	defer span.End()
	sc := span.SpanContext()
	for _, format := range []string{"json", "text"} {
		var b bytes.Buffer
		log := newLogger(&b, format, slog.LevelInfo).With("component", "feeds")
		log.InfoContext(ctx, "refreshed")
		log.Info("outside")
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		if !strings.Contains(lines[0], sc.TraceID().String()) || !strings.Contains(lines[0], sc.SpanID().String()) || !strings.Contains(lines[0], "trace_id") {
			t.Errorf("%s: line in a span lacks its ids %s %s: %s", format, sc.TraceID(), sc.SpanID(), lines[0])
		}
		if strings.Contains(lines[1], "trace_id") {
			t.Errorf("%s: line outside a span has a trace_id: %s", format, lines[1])
		}
	}
}

func TestLogLevelFlag(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for in, want := range map[string]slog.Level{"debug": slog.LevelDebug, "INFO": slog.LevelInfo, " warn ": slog.LevelWarn, "warning": slog.LevelWarn, "error": slog.LevelError} {
			c := NewServeCommand()
			if err := c.ParseFlags([]string{"--log-level", in}); err != nil || c.LogLevel != want {
				t.Errorf("--log-level %q: %v, %v; want %v", in, c.LogLevel, err, want)
			}
		}
		if c := NewServeCommand(); c.ParseFlags(nil) != nil || c.LogLevel != slog.LevelInfo {
			t.Errorf("default level %v, want info", c.LogLevel)
		}
	})
	t.Run("Environment", func(t *testing.T) {
		t.Setenv("RAPPEL_LOG_LEVEL", "debug")
		c := NewBundleCommand()
		if err := c.ParseFlags(nil); err != nil || c.LogLevel != slog.LevelDebug {
			t.Fatalf("RAPPEL_LOG_LEVEL=debug: %v, %v", c.LogLevel, err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, in := range []string{"verbose", "info+2", "", "-4"} {
			err := NewServeCommand().ParseFlags([]string{"--log-level=" + in})
			if err == nil || !strings.Contains(err.Error(), "give debug, info, warn or error") {
				t.Errorf("--log-level %q: %v, want a sentence naming the levels", in, err)
			}
		}
	})
}

func TestLogWriter(t *testing.T) {
	t.Run("Buffers", func(t *testing.T) {
		out := &logtest.Buffer{}
		l := newLogWriterEvery(out, time.Hour)
		fmt.Fprintln(l, "one line")
		if got := out.String(); got != "" {
			t.Fatalf("written by Write itself: %q", got)
		}
		l.Close()
		if got := out.String(); got != "one line\n" {
			t.Fatalf("after Close: %q", got)
		}
	})
	t.Run("FlushesPeriodically", func(t *testing.T) {
		out := &logtest.Buffer{}
		l := newLogWriter(out)
		defer l.Close()
		fmt.Fprintln(l, "one line")
		deadline := time.Now().Add(30 * time.Second)
		for out.String() != "one line\n" {
			if time.Now().After(deadline) {
				t.Fatalf("the periodic flush never wrote the line: %q", out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	t.Run("CloseWritesTheRest", func(t *testing.T) {
		out := &logtest.Buffer{}
		l := newLogWriter(out)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 1000 {
					fmt.Fprintf(l, "writer %d line %d\n", i, j)
				}
			}()
		}
		wg.Wait()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 8000 {
			t.Fatalf("%d lines written, want 8000", len(lines))
		}
		for _, line := range lines {
			if !strings.HasPrefix(line, "writer ") {
				t.Fatalf("a line was torn: %q", line)
			}
		}
		if err := l.Close(); err != nil { // twice is fine
			t.Fatal(err)
		}
	})
}
