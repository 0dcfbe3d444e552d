package edge

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rappel-ca/rappel"
)

// Searches without a key (the Atom feed, which feed readers fetch without
// a header) are limited per client address, in the cost units keys pay
// (docs/api.md, "Limits"): a bucket of AnonymousPlan per address, IPv6
// addresses counted by their /64, since one host holds a whole /64. The
// buckets live in memory only, are never pushed to a QuotaStore, and a
// bucket that has refilled is forgotten, so that the table holds only
// the addresses of the last minute or so.

// DefaultAnonymousPlan is the per-address limit of searches without a
// key: a feed reader polls every few minutes, and a person opening feeds
// in a browser sends a few at a time.
var DefaultAnonymousPlan = rappel.Plan{Name: "anonymous", Rate: 1, Burst: 30}

// anonymousLimiter holds the buckets of client addresses.
type anonymousLimiter struct {
	plan  *planLimits
	addrs sync.Map // netip.Prefix → *keyState
	// sweptAt is when the table was last swept of full buckets (unix ns).
	sweptAt atomic.Int64
}

// anonymous returns the limiter of searches without a key, built on first
// use.
func (s *Server) anonymous() *anonymousLimiter {
	s.anonOnce.Do(func() {
		p := s.AnonymousPlan
		if p.Rate <= 0 || p.Burst <= 0 {
			p = DefaultAnonymousPlan
		}
		interval := max(1, int64(float64(time.Second)/p.Rate))
		s.anon = &anonymousLimiter{plan: &planLimits{plan: p, interval: interval, capacity: int64(p.Burst) * interval}}
	})
	return s.anon
}

// clientPrefix is the address a client's requests are counted under: its
// IPv4 address, or the /64 of its IPv6 address. ok is false for an
// address net/http did not give (a test's handler called directly).
func clientPrefix(remote string) (netip.Prefix, bool) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{}, false
	}
	a = a.Unmap()
	if a.Is4() {
		return netip.PrefixFrom(a, 32), true
	}
	p, _ := a.WithZone("").Prefix(64)
	return p, true
}

// limitAnonymous takes units from the bucket of the client at remote, and
// returns a 429 with Retry-After when it holds fewer. A request pays its
// first unit before its search is estimated and the rest of cost, the
// search's estimate (0 before it), after: a search is charged its cost, at
// most the bucket's burst, so that a full bucket can always pay for it.
func (s *Server) limitAnonymous(w http.ResponseWriter, remote string, units, cost int) error {
	addr, ok := clientPrefix(remote)
	if !ok || units <= 0 {
		return nil
	}
	l := s.anonymous()
	now := s.Now().UnixNano()
	l.sweep(now)
	v, ok := l.addrs.Load(addr)
	if !ok {
		v, _ = l.addrs.LoadOrStore(addr, new(keyState))
	}
	p := l.plan
	n := int64(units)
	if cost > 0 {
		// The units beyond the first, of a search charged its cost at
		// most the burst.
		n = min(n, int64(p.plan.Burst)-1)
		if n <= 0 {
			return nil
		}
	}
	if _, next, ok := p.take(v.(*keyState), now, n); !ok {
		wait := ceilSeconds(time.Duration(next))
		w.Header()[headerRetryAfter] = []string{strconv.FormatInt(wait, 10)}
		s.countRateLimited(p.plan.Name)
		what := "a request costs 1 unit"
		if cost > 0 {
			what = "this search costs " + strconv.Itoa(cost) + " units"
		}
		return rappel.Errorf(rappel.ERATELIMIT,
			"Too many searches without an API key from this address: %s, and an address may spend %s units a second with bursts of %d; retry in %d s (Retry-After), or send an API key in x-gateway-key.",
			what, strconv.FormatFloat(p.plan.Rate, 'f', -1, 64), p.plan.Burst, wait)
	}
	return nil
}

// sweepEvery is how often the table of addresses is swept of the buckets
// that have refilled, which hold nothing worth keeping.
const sweepEvery = time.Minute

// sweep forgets the full buckets, at most once every sweepEvery.
func (l *anonymousLimiter) sweep(now int64) {
	last := l.sweptAt.Load()
	if now-last < int64(sweepEvery) || !l.sweptAt.CompareAndSwap(last, now) {
		return
	}
	l.addrs.Range(func(k, v any) bool {
		if v.(*keyState).tat.Load() <= now {
			l.addrs.Delete(k)
		}
		return true
	})
}
