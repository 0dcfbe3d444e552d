package logline

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// plainHandler writes the lines whose every part is plain (plainLine)
// itself and hands the others to slog's handler, which writes the same
// bytes for a plain line. The access log writes one line per request, and
// slog's handlers spend most of that line's cost on what a plain line does
// not need: resolving each value, deciding on quoting, and calling
// ReplaceAttr. A logger derived with With or WithGroup is slog's alone.
//
// Both write to out, one Write per line; out is a *Writer, whose lock
// keeps lines from the two paths from interleaving (slog's handler locks
// only its own writes).
type plainHandler struct {
	slog.Handler // slog's Text or JSON handler over out
	out          io.Writer
	json         bool
}

// linePool recycles the line buffers: an access line is a few hundred
// bytes, allocated otherwise for every request.
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func (h plainHandler) Handle(ctx context.Context, r slog.Record) error {
	bp := linePool.Get().(*[]byte)
	line, ok := plainLine((*bp)[:0], r, h.json)
	if !ok {
		linePool.Put(bp)
		return h.Handler.Handle(ctx, r)
	}
	_, err := h.out.Write(line)
	if cap(line) <= 64<<10 { // a rare huge line is not kept
		*bp = line
		linePool.Put(bp)
	}
	return err
}

func (h plainHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return h.Handler.WithAttrs(attrs)
}

func (h plainHandler) WithGroup(name string) slog.Handler {
	return h.Handler.WithGroup(name)
}

// plainLine appends r as New's handler of the format would write it
// and reports true, or reports false when r is not plain: a time that is
// zero or outside years 1 to 9999, a level other than the four named
// ones, or a message, key or string value that is not a plainWord, or a
// value other than a string, an integer or a duration (whose JSON seconds
// are plain decimals). Those are slog's to write.
func plainLine(b []byte, r slog.Record, json bool) ([]byte, bool) {
	t := r.Time.Round(0)
	if y := t.Year(); t.IsZero() || y < 1 || y > 9999 || !namedLevel(r.Level) || !plainWord(r.Message) {
		return b, false
	}
	if json {
		b = append(b, `{"time":"`...)
		b = t.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":"`...)
		b = append(b, r.Level.String()...)
		b = append(b, `","msg":"`...)
		b = append(b, r.Message...)
		b = append(b, '"')
	} else {
		b = append(b, "time="...)
		b = appendMillis(b, t)
		b = append(b, " level="...)
		b = append(b, r.Level.String()...)
		b = append(b, " msg="...)
		b = append(b, r.Message...)
	}
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		b, ok = appendPlainAttr(b, a, json)
		return ok
	})
	if !ok {
		return b, false
	}
	if json {
		b = append(b, '}')
	}
	return append(b, '\n'), true
}

// appendPlainAttr appends a as the next attribute of a plain line, or
// reports false when it is not plain. An empty attribute is skipped, as
// slog skips it.
func appendPlainAttr(b []byte, a slog.Attr, json bool) ([]byte, bool) {
	if a.Equal(slog.Attr{}) {
		return b, true
	}
	if !plainWord(a.Key) {
		return b, false
	}
	if json {
		b = append(b, `,"`...)
		b = append(b, a.Key...)
		b = append(b, `":`...)
	} else {
		b = append(b, ' ')
		b = append(b, a.Key...)
		b = append(b, '=')
	}
	v := a.Value
	switch v.Kind() {
	case slog.KindString:
		s := v.String()
		if !plainWord(s) {
			return b, false
		}
		if json {
			return append(append(append(b, '"'), s...), '"'), true
		}
		return append(b, s...), true
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10), true
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10), true
	case slog.KindDuration:
		if !json {
			return append(b, v.Duration().String()...), true
		}
		// As durationSeconds makes it: a float, which the JSON handler
		// writes as encoding/json does, in plain decimals from 1e-6 to
		// 1e21.
		f := durationSeconds(nil, a).Value.Float64()
		if abs := max(f, -f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
			return b, false
		}
		return strconv.AppendFloat(b, f, 'f', -1, 64), true
	}
	return b, false
}

// appendMillis appends t as the text handler does: RFC 3339 to the
// millisecond, three digits always. RFC 3339 without a fraction is the
// layout time formats fastest; the fraction goes in before the zone, which
// starts after the 19 bytes of a date and time of a four-digit year.
func appendMillis(b []byte, t time.Time) []byte {
	start := len(b)
	b = t.AppendFormat(b, time.RFC3339)
	var zone [8]byte // "Z" or "+hh:mm"
	n := copy(zone[:], b[start+19:])
	ms := t.Nanosecond() / int(time.Millisecond)
	b = append(b[:start+19], '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(b, zone[:n]...)
}

// namedLevel reports whether l is one of the four levels slog names
// without an offset.
func namedLevel(l slog.Level) bool {
	return l == slog.LevelDebug || l == slog.LevelInfo || l == slog.LevelWarn || l == slog.LevelError
}

// plainWord reports whether s is written the same, unquoted in the text
// format and unescaped in JSON's quotes: not empty, ASCII letters, digits
// and - _ . / : { } only. Route patterns, methods, request and key ids,
// trace ids and most messages are.
func plainWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == '/' || c == ':' || c == '{' || c == '}'
		if !ok {
			return false
		}
	}
	return true
}
