package acme

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"go.uber.org/zap/zapcore"

	"github.com/rappel-ca/rappel"
)

// slogCore is a zapcore.Core writing to a *slog.Logger, so that certmagic's
// logs join the caller's, in its format.
//
// certmagic logs the ACME account's e-mail address (as email, contact,
// account, and inside storage paths), lower-cased and with "+" spelled
// "_plus_" in paths; no e-mail address goes to the logs, so anything
// shaped like an address is replaced, whatever its case or spelling, not
// only the configured one.
type slogCore struct {
	log    *slog.Logger
	fields []zapcore.Field
}

// redactedEmail replaces an e-mail address in certmagic's logs.
const redactedEmail = "[acme-email]"

// redactAddresses replaces every e-mail address in s.
func redactAddresses(s string) string { return rappel.RedactAddresses(s, redactedEmail) }

func (c slogCore) Enabled(l zapcore.Level) bool {
	return c.log.Enabled(context.Background(), slogLevel(l))
}

func (c slogCore) With(fs []zapcore.Field) zapcore.Core {
	return slogCore{log: c.log, fields: append(c.fields[:len(c.fields):len(c.fields)], fs...)}
}

func (c slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c slogCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range c.fields {
		f.AddTo(enc)
	}
	for _, f := range fs {
		f.AddTo(enc)
	}
	attrs := make([]slog.Attr, 0, len(enc.Fields)+1)
	if e.LoggerName != "" {
		attrs = append(attrs, slog.String("logger", e.LoggerName))
	}
	for k, v := range enc.Fields {
		if s := fmt.Sprint(v); strings.IndexByte(s, '@') >= 0 {
			v = redactAddresses(s)
		}
		attrs = append(attrs, slog.Any(k, v))
	}
	msg := redactAddresses(e.Message)
	c.log.LogAttrs(context.Background(), slogLevel(e.Level), msg, attrs...)
	return nil
}

func (c slogCore) Sync() error { return nil }

// slogLevel maps a zap level to slog's: debug, info, warn, and error for
// everything above.
func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	}
	return slog.LevelError
}
