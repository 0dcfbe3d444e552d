package lograte

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// lines returns the JSON log lines in buf, decoded.
func lines(tb testing.TB, buf *bytes.Buffer) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for l := range strings.Lines(buf.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			tb.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	buf.Reset()
	return out
}

var t0 = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

// TestLimiter_OnePerCause: 300 failures of one cause within a minute make
// one line; the next, a minute on, says how many were held back; another
// cause is logged on its own.
func TestLimiter_OnePerCause(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	l := &Limiter{Every: time.Minute}
	for i := range 300 {
		l.Log(ctx, log, t0.Add(time.Duration(i)*100*time.Millisecond), "smtp 451", slog.LevelWarn, "alert e-mail deferred", "n", i)
	}
	l.Log(ctx, log, t0.Add(time.Second), "net dial", slog.LevelWarn, "alert e-mail deferred", "n", -1)
	got := lines(t, &buf)
	if len(got) != 2 || got[0]["n"] != 0.0 || got[1]["n"] != -1.0 || got[0]["suppressed"] != nil {
		t.Fatalf("lines = %v, want the first of each cause, as it came", got)
	}
	l.Log(ctx, log, t0.Add(61*time.Second), "smtp 451", slog.LevelWarn, "alert e-mail deferred", "n", 300)
	got = lines(t, &buf)
	if len(got) != 1 || got[0]["msg"] != "alert e-mail deferred (and 299 more like it in the last 1m1s)" ||
		got[0]["suppressed"] != 299.0 || got[0]["n"] != 300.0 || got[0]["level"] != "WARN" {
		t.Fatalf("line after the minute = %v, want the count of those held back", got)
	}
}

// TestLimiter_Flush: the lines held back are told once the interval has
// passed even when the failure does not come again, by the last of them;
// not before; and a cause flushed waits an interval for its next line.
func TestLimiter_Flush(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	l := &Limiter{Every: time.Minute}
	for i := range 6 {
		l.Log(ctx, log, t0.Add(time.Duration(i)*time.Second), "c", slog.LevelError, "refused", "n", i)
	}
	lines(t, &buf)
	l.Flush(ctx, log, t0.Add(59*time.Second))
	if got := lines(t, &buf); len(got) != 0 {
		t.Fatalf("flush within the minute logged %v", got)
	}
	l.Flush(ctx, log, t0.Add(time.Minute))
	got := lines(t, &buf)
	if len(got) != 1 || got[0]["msg"] != "refused (and 4 more like it in the last 1m0s)" || got[0]["n"] != 5.0 || got[0]["suppressed"] != 4.0 || got[0]["level"] != "ERROR" {
		t.Fatalf("flush = %v, want the last line held back with the count of the 4 others", got)
	}
	l.Log(ctx, log, t0.Add(90*time.Second), "c", slog.LevelError, "refused", "n", 6)
	if got := lines(t, &buf); len(got) != 0 {
		t.Fatalf("a line within the minute after the flush's: %v", got)
	}
	l.Flush(ctx, log, t0.Add(150*time.Second))
	if got := lines(t, &buf); len(got) != 1 || got[0]["msg"] != "refused" || got[0]["n"] != 6.0 {
		t.Fatalf("flush of one line held back = %v, want it as it was", got)
	}
}

// TestLimiter_Unlimited: without an interval every line is logged, and
// past MaxCauses a new cause is logged rather than held.
func TestLimiter_Unlimited(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	var zero Limiter
	for range 3 {
		zero.Log(ctx, log, t0, "c", slog.LevelWarn, "deferred")
	}
	if got := lines(t, &buf); len(got) != 3 {
		t.Fatalf("zero Limiter logged %d of 3 lines", len(got))
	}
	l := &Limiter{Every: time.Minute}
	for i := range MaxCauses + 10 {
		for range 2 {
			l.Log(ctx, log, t0, fmt.Sprint("cause ", i), slog.LevelWarn, "deferred")
		}
	}
	if got := lines(t, &buf); len(got) != MaxCauses+20 {
		t.Fatalf("%d lines for %d causes twice, want one per tracked cause and two per untracked (%d)", len(got), MaxCauses+10, MaxCauses+20)
	}
}
