package logline

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// steps is a LogValuer of durations, as a feed refresh logs its steps.
type steps struct{ fetch, write time.Duration }

func (s steps) LogValue() slog.Value {
	return slog.GroupValue(slog.Duration("fetch", s.fetch), slog.Duration("write", s.write))
}

func TestNew(t *testing.T) {
	logOne := func(format string, level slog.Level) string {
		var b bytes.Buffer
		log := New(&b, format, level)
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

// TestNew_ShortSeconds checks that a JSON duration is written as the
// decimal it is, not as the float noise of Duration.Seconds.
func TestNew_ShortSeconds(t *testing.T) {
	var b bytes.Buffer
	New(&b, "json", slog.LevelInfo).Info("refresh done", "took", 3236*time.Millisecond, "wait", 153*time.Microsecond)
	if !strings.Contains(b.String(), `"took":3.236,"wait":0.000153}`) {
		t.Errorf("durations not written short: %s", b.String())
	}
}

// TestNew_TraceIDs checks that a line logged with a span's context
// carries its trace and span ids, in both formats, and that a line
// without one carries none.
func TestNew_TraceIDs(t *testing.T) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	ctx, span := tp.Tracer("test").Start(context.Background(), "feeds.Refresh")
	defer span.End()
	sc := span.SpanContext()
	for _, format := range []string{"json", "text"} {
		var b bytes.Buffer
		log := New(&b, format, slog.LevelInfo).With("component", "feeds")
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
