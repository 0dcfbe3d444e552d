package testreport

import (
	"context"
	"log/slog"
	"sync"
)

// Log is the host's log handler during a test: it keeps the plugins' own
// log lines, which the host logs as "plugin log", and drops the rest.
type Log struct {
	mu    sync.Mutex
	lines []string
}

func (l *Log) Enabled(context.Context, slog.Level) bool { return true }
func (l *Log) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *Log) WithGroup(string) slog.Handler            { return l }
func (l *Log) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "plugin log" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "line" {
			l.mu.Lock()
			l.lines = append(l.lines, a.Value.String())
			l.mu.Unlock()
		}
		return true
	})
	return nil
}

// Lines returns the plugins' log lines kept so far.
func (l *Log) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string{}, l.lines...)
}
