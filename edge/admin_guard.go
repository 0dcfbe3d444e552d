package edge

import (
	"net/netip"
	"sync"
	"time"

	"github.com/rappel-ca/rappel"
)

// Wrong admin keys are counted per client address (its /64 for IPv6, as
// the anonymous limit counts): after adminFailures of them within
// adminFailWindow, that address's admin requests are refused with a 429
// until the window has passed, right or wrong key alike, so that guessing
// the key costs minutes per few tries rather than the thousands a second
// one connection could send. A right key clears the count.
const (
	adminFailures   = 10
	adminFailWindow = time.Minute
	// adminFailAddrs bounds the addresses remembered: past it, the
	// oldest counts are forgotten first.
	adminFailAddrs = 10000
)

type adminGuard struct {
	mu    sync.Mutex
	fails map[netip.Prefix]*adminFails
}

type adminFails struct {
	n     int
	since time.Time
}

// blocked returns how long addr must still wait, 0 when it may try.
func (g *adminGuard) blocked(addr netip.Prefix, now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.fails[addr]
	if f == nil || now.Sub(f.since) >= adminFailWindow {
		return 0
	}
	if f.n < adminFailures {
		return 0
	}
	return f.since.Add(adminFailWindow).Sub(now)
}

// failed counts a wrong key from addr.
func (g *adminGuard) failed(addr netip.Prefix, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fails == nil {
		g.fails = map[netip.Prefix]*adminFails{}
	}
	f := g.fails[addr]
	if f == nil || now.Sub(f.since) >= adminFailWindow {
		if len(g.fails) >= adminFailAddrs {
			for a, old := range g.fails {
				if now.Sub(old.since) >= adminFailWindow || len(g.fails) >= adminFailAddrs {
					delete(g.fails, a)
				}
			}
		}
		f = &adminFails{since: now}
		g.fails[addr] = f
	}
	f.n++
}

// succeeded clears addr's count.
func (g *adminGuard) succeeded(addr netip.Prefix) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.fails, addr)
}

// adminTooMany is the 429 of an address that sent too many wrong keys.
func adminTooMany(wait time.Duration) error {
	e := rappel.Errorf(rappel.ERATELIMIT, "Too many wrong admin keys from this address: %d within %d s; retry in %d s (Retry-After) with the right key in x-admin-key.", adminFailures, int(adminFailWindow/time.Second), ceilSeconds(wait))
	e.RetryAfter = wait
	return e
}
