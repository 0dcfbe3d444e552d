// Package lograte keeps a failure that repeats from filling the log: one
// line per cause per interval, the lines of that cause in between held
// back and counted, and the count said by the next line logged for it,
//
//	alert e-mail deferred (and 149 more like it in the last 1m0s)
//
// either the next line of that cause once the interval has passed, or the
// last one held back, which Flush logs then. A cause is whatever the
// caller says makes two lines alike: an error's class, say, not its text,
// which may name an address or a queue id. It imports only the standard
// library, so that any package may use it.
package lograte

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// MaxCauses bounds the causes a Limiter tracks at once: past it, the
// lines of a new cause are logged as they come. Flush forgets the causes
// quiet for an interval.
const MaxCauses = 256

// Limiter lets one line per cause through every Every. The zero Limiter
// logs every line; set Every before the first Log. It is safe for
// concurrent use.
type Limiter struct {
	// Every is the least time between two lines of one cause.
	Every time.Duration

	mu     sync.Mutex
	causes map[string]*cause
}

// cause is where one cause's lines stand.
type cause struct {
	last time.Time // when its last line was logged
	held int       // its lines held back since
	// level, msg and args are the last line held back, which Flush logs.
	level slog.Level
	msg   string
	args  []any
}

// Log logs msg at level with args through log, unless a line of the same
// cause (key) was logged less than Every before now: then the line is held
// back and counted. A line logged after some were held back says how many,
// and since when, in its message and in the attribute "suppressed".
func (l *Limiter) Log(ctx context.Context, log *slog.Logger, now time.Time, key string, level slog.Level, msg string, args ...any) {
	if l.Every <= 0 {
		log.Log(ctx, level, msg, args...)
		return
	}
	l.mu.Lock()
	c := l.causes[key]
	if c != nil && now.Sub(c.last) < l.Every {
		c.held++
		c.level, c.msg, c.args = level, msg, args
		l.mu.Unlock()
		return
	}
	if c == nil {
		if l.causes == nil {
			l.causes = map[string]*cause{}
		}
		if len(l.causes) >= MaxCauses {
			l.forgetQuiet(now)
		}
		if len(l.causes) >= MaxCauses {
			l.mu.Unlock()
			log.Log(ctx, level, msg, args...)
			return
		}
		c = &cause{}
		l.causes[key] = c
	}
	held, since := c.held, c.last
	c.last, c.held, c.args = now, 0, nil
	l.mu.Unlock()
	log.Log(ctx, level, withHeld(msg, held, now.Sub(since)), withHeldAttr(args, held)...)
}

// Flush logs, for every cause whose last line was logged at least Every
// before now and that has lines held back since, the last of them, saying
// how many others were held back; and forgets the causes that have none.
// Call it when a run of work ends (a pass of a queue), so that a count is
// told even when the failure does not come again.
func (l *Limiter) Flush(ctx context.Context, log *slog.Logger, now time.Time) {
	type line struct {
		level slog.Level
		msg   string
		args  []any
	}
	var lines []line
	l.mu.Lock()
	for _, c := range l.causes {
		if c.held == 0 || now.Sub(c.last) < l.Every {
			continue
		}
		lines = append(lines, line{c.level, withHeld(c.msg, c.held-1, now.Sub(c.last)), withHeldAttr(c.args, c.held-1)})
		c.last, c.held, c.args = now, 0, nil
	}
	l.forgetQuiet(now)
	l.mu.Unlock()
	for _, ln := range lines {
		log.Log(ctx, ln.level, ln.msg, ln.args...)
	}
}

// forgetQuiet forgets the causes with nothing held back whose last line is
// an interval old: their next line would be logged anyway. l.mu is held.
func (l *Limiter) forgetQuiet(now time.Time) {
	for k, c := range l.causes {
		if c.held == 0 && now.Sub(c.last) >= l.Every {
			delete(l.causes, k)
		}
	}
}

// withHeld is msg saying that held more lines like it were held back in
// the time d.
func withHeld(msg string, held int, d time.Duration) string {
	if held <= 0 {
		return msg
	}
	return fmt.Sprintf("%s (and %d more like it in the last %s)", msg, held, roundDuration(d))
}

func withHeldAttr(args []any, held int) []any {
	if held <= 0 {
		return args
	}
	return append(args[:len(args):len(args)], "suppressed", held)
}

// roundDuration rounds d to the second, or to the millisecond under one.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}
