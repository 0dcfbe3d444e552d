package edge

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rappel-ca/rappel"
)

// Rate limits and quotas (docs/api.md, "Plans, keys and rate limits", and the README's routes table): every key of a
// plan has a token bucket (Plan.Rate, Plan.Burst) and a monthly count
// (Plan.Monthly, calendar months in UTC). Both live in memory, in one
// keyState per key ID updated with compare-and-swap, so that a request
// takes no lock and allocates nothing here but its header values; the
// counts reach the QuotaStore every DefaultUsageInterval (PersistUsage) and
// at shutdown (SaveUsage), and come back at start (LoadUsage).
//
// In a fleet sharing one QuotaStore, each node pushes the requests it
// counted since its last push (AddUsage adds them up in the store) and
// adopts the fleet's totals that come back, keeping on top the requests it
// counted meanwhile. A node's count of a key therefore misses at most the
// requests the other nodes made since their last push before this node's
// last push: those of the last two intervals (20 s by default). The
// monthly quota can be overshot by that much, which the per-node rate
// limit bounds (nodes × (Burst + Rate × 2 × interval)); the buckets
// themselves stay per node.
//
// Headers follow draft-ietf-httpapi-ratelimit-headers-11: each keyed
// response carries
//
//	RateLimit-Policy: "burst";q=20;w=4, "monthly";q=100000;w=2592000
//	RateLimit: "burst";r=17;t=1, "monthly";r=99983;t=712345
//
// "burst" is the bucket: q tokens, refilled in w seconds (so q/w is the
// sustained rate), r whole tokens left, t seconds until the next token.
// "monthly" is the quota: q requests in the calendar month of w seconds, r
// left, t seconds until the month ends. A 429 has r=0 for the policy it
// broke and Retry-After equal to that policy's t.
//
// Both count cost units (docs/api.md, "Limits"): a request is one unit, and a
// search its estimated cost, up to the plan's burst; the units beyond the
// first are taken once the search is parsed and estimated (charge), in
// the same compare-and-swap loops, and RateLimit then says what is left.

// Header names in canonical form, so that setting them does not allocate.
const (
	headerRateLimit       = "Ratelimit"
	headerRateLimitPolicy = "Ratelimit-Policy"
	headerRetryAfter      = "Retry-After"
)

// DefaultUsageInterval is how often PersistUsage writes the monthly counts.
const DefaultUsageInterval = 10 * time.Second

// limiter is the state of every key's limits.
type limiter struct {
	plans map[string]*planLimits
	keys  sync.Map // key ID → *keyState
	// month caches the calendar month of the last request, which most
	// requests share, to spare them the date arithmetic.
	month atomic.Pointer[monthSpan]
	// saveMu serializes SaveUsage: two pushes of the same requests would
	// count them twice.
	saveMu sync.Mutex
}

// monthSpan is one calendar month (UTC).
type monthSpan struct {
	idx        int64     // monthIndex
	start, end int64     // unix ns, end exclusive
	seconds    int64     // its length
	endTime    time.Time // when the next month starts
}

// span returns the month holding now (unix ns).
func (l *limiter) span(now int64) *monthSpan {
	if m := l.month.Load(); m != nil && m.start <= now && now < m.end {
		return m
	}
	idx := monthIndex(time.Unix(0, now))
	start, end := monthStart(idx), monthStart(idx+1)
	m := &monthSpan{idx: idx, start: start.UnixNano(), end: end.UnixNano(), seconds: int64(end.Sub(start) / time.Second), endTime: end}
	l.month.Store(m)
	return m
}

// planLimits is a plan with its bucket in nanoseconds, GCRA style: a
// request costs interval, and the bucket holds capacity.
type planLimits struct {
	plan     rappel.Plan
	interval int64 // ns per token; 0 when the plan has no rate limit
	capacity int64 // Burst × interval
	window   int64 // seconds the bucket takes to refill
	// policy caches the RateLimit-Policy value, which changes with the
	// month's length.
	policy atomic.Pointer[policyValue]
}

type policyValue struct {
	month int64
	value []string // cap == len, so that appending copies
}

// keyState is one key's bucket and monthly count.
type keyState struct {
	// tat is the bucket's theoretical arrival time (unix ns): the bucket
	// is full when tat <= now and empty when tat - now > capacity -
	// interval.
	tat atomic.Int64
	// usage packs the month (monthIndex) above usageShift and the count
	// of requests in it below, so that a new month restarts the count in
	// the same compare-and-swap that counts a request.
	usage atomic.Uint64
	// saved is the usage (month and count) the QuotaStore has: the
	// requests counted above it are yet to be pushed.
	saved atomic.Uint64
}

const (
	usageShift = 40
	usageMask  = 1<<usageShift - 1
)

// monthIndex numbers calendar months (UTC): year × 12 + month − 1.
func monthIndex(t time.Time) int64 {
	y, m, _ := t.UTC().Date()
	return int64(y)*12 + int64(m) - 1
}

func monthStart(idx int64) time.Time {
	return time.Date(int(idx/12), time.Month(idx%12+1), 1, 0, 0, 0, 0, time.UTC)
}

func monthName(idx int64) string { return rappel.UsageMonth(monthStart(idx)) }

// limits returns the limiter, built from Plans on first use.
func (s *Server) limits() *limiter {
	s.limitOnce.Do(func() {
		plans := s.Plans
		if plans == nil {
			plans = rappel.DefaultPlans()
		}
		l := &limiter{plans: make(map[string]*planLimits, len(plans))}
		for name, p := range plans {
			pl := &planLimits{plan: p}
			if p.Rate > 0 && p.Burst > 0 {
				pl.interval = max(1, int64(float64(time.Second)/p.Rate))
				pl.capacity = int64(p.Burst) * pl.interval
				pl.window = max(1, int64(math.Ceil(float64(p.Burst)/p.Rate)))
			}
			if pl.plan.Name == "" {
				pl.plan.Name = name
			}
			l.plans[name] = pl
		}
		s.lim = l
	})
	return s.lim
}

// state returns the state of key id, creating it on first use.
func (l *limiter) state(id string) *keyState {
	if v, ok := l.keys.Load(id); ok {
		return v.(*keyState)
	}
	v, _ := l.keys.LoadOrStore(id, new(keyState))
	return v.(*keyState)
}

// take takes n tokens from the bucket at now. It returns the whole tokens
// left and the nanoseconds until the next one; ok is false, and nothing is
// taken, when the bucket holds fewer than n.
func (p *planLimits) take(st *keyState, now, n int64) (left int64, next int64, ok bool) {
	for {
		tat := st.tat.Load()
		newTat := max(tat, now) + n*p.interval
		if newTat-now > p.capacity {
			return 0, max(tat, now) - now - (p.capacity - n*p.interval), false
		}
		if st.tat.CompareAndSwap(tat, newTat) {
			free := p.capacity - (newTat - now)
			return free / p.interval, p.interval - free%p.interval, true
		}
	}
}

// peek returns what take would about the bucket at now, taking nothing.
func (p *planLimits) peek(st *keyState, now int64) (left int64, next int64) {
	free := p.capacity - max(0, st.tat.Load()-now)
	return max(0, free/p.interval), p.interval - free%p.interval
}

// count counts n units in month; ok is false, and nothing is counted,
// when the month's quota is used up. used is the count after the request.
func (p *planLimits) count(st *keyState, month, units int64) (used int64, ok bool) {
	for {
		u := st.usage.Load()
		n := int64(0)
		if int64(u>>usageShift) == month {
			n = int64(u & usageMask)
		}
		if n+units > p.plan.Monthly {
			return n, false
		}
		if st.usage.CompareAndSwap(u, uint64(month)<<usageShift|uint64(n+units)) {
			return n + units, true
		}
	}
}

// policyHeader returns the RateLimit-Policy value for month.
func (p *planLimits) policyHeader(month int64, monthSeconds int64) []string {
	if v := p.policy.Load(); v != nil && v.month == month {
		return v.value
	}
	var b []byte
	if p.interval > 0 {
		b = fmt.Appendf(b, `"burst";q=%d;w=%d`, p.plan.Burst, p.window)
	}
	if p.plan.Monthly > 0 {
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = fmt.Appendf(b, `"monthly";q=%d;w=%d`, p.plan.Monthly, monthSeconds)
	}
	v := &policyValue{month: month, value: []string{string(b)}}
	p.policy.Store(v)
	return v.value
}

// limit applies key's plan to one request at s.Now(): it sets the
// RateLimit-Policy and RateLimit headers, and returns a 429 *rappel.Error
// (with Retry-After set) when the key is over its rate or its quota.
// Development keys (rappel.PlanDev) are not limited and get no headers.
func (s *Server) limit(w http.ResponseWriter, key *rappel.APIKey) error {
	return s.limitUnits(w, key, 1, 0, pricedSearch)
}

// priced names what a cost is the price of, in a 429's sentence, and how to
// make it cost less.
type priced struct{ what, fix string }

var (
	pricedSearch = priced{"this search", "narrow the search (fewer ORed words, a filter or a date range) so that it costs less"}
	pricedBatch  = priced{"this batch", "send fewer items at once, or items with barcodes, which cost least"}
)

// charge takes from key's bucket and quota what a search of cost units
// costs beyond the unit its request was charged (docs/api.md, "Limits"), and
// sets the RateLimit header again to what is left. A cost above the
// plan's burst is charged the burst, so that a full bucket always takes
// it.
func (s *Server) charge(w http.ResponseWriter, key *rappel.APIKey, cost int, p priced) error {
	if key == nil || key.Plan == rappel.PlanDev || cost <= 1 {
		return nil
	}
	pl := s.limits().plans[key.Plan]
	if pl == nil {
		return nil // limit refused the request already
	}
	units := int64(cost)
	if pl.interval > 0 {
		units = min(units, int64(pl.plan.Burst))
	}
	if units <= 1 {
		return nil
	}
	return s.limitUnits(w, key, units-1, cost, p)
}

// limitUnits takes units from key's bucket and quota; cost, when not 0, is
// the cost of the search (or what what names) they are taken for, which a
// 429 names.
func (s *Server) limitUnits(w http.ResponseWriter, key *rappel.APIKey, units int64, cost int, what priced) error {
	if key.Plan == rappel.PlanDev {
		return nil
	}
	l := s.limits()
	p := l.plans[key.Plan]
	if p == nil {
		return &rappel.Error{Code: rappel.EINTERNAL, Message: "This key's plan is not configured on this server; tell the gateway provider.",
			Err: fmt.Errorf("limiting key %s: plan %q is not in the plan table", key.ID, key.Plan)}
	}
	if p.interval == 0 && p.plan.Monthly <= 0 {
		return nil
	}
	st := l.state(key.ID)
	nowNs := s.Now().UnixNano()
	span := l.span(nowNs)
	month, end := span.idx, span.endTime
	untilEnd := ceilSeconds(time.Duration(span.end - nowNs))

	h := w.Header()
	var err error
	var left, next int64
	overQuota := p.plan.Monthly > 0 && p.used(st, month) >= p.plan.Monthly
	if p.interval > 0 && overQuota {
		// The quota refuses this request: the bucket keeps its token.
		left, next = p.peek(st, nowNs)
	} else if p.interval > 0 {
		var ok bool
		left, next, ok = p.take(st, nowNs, units)
		if !ok {
			wait := ceilSeconds(time.Duration(next))
			if cost > 0 {
				err = rappel.Errorf(rappel.ERATELIMIT,
					"Rate limit exceeded: %s costs %d units (an ordinary request costs 1) and the %s plan allows %s units a second with bursts of %d; retry in %d s (Retry-After), or %s.",
					what.what, cost, p.plan.Name, strconv.FormatFloat(p.plan.Rate, 'f', -1, 64), p.plan.Burst, wait, what.fix)
			} else {
				err = rappel.Errorf(rappel.ERATELIMIT,
					"Rate limit exceeded: the %s plan allows %s requests a second with bursts of %d; retry in %d s (Retry-After).",
					p.plan.Name, strconv.FormatFloat(p.plan.Rate, 'f', -1, 64), p.plan.Burst, wait)
			}
			h[headerRetryAfter] = []string{strconv.FormatInt(wait, 10)}
		}
	}
	var used int64
	if p.plan.Monthly > 0 && err == nil {
		var ok bool
		used, ok = p.count(st, month, units)
		if !ok {
			err = rappel.Errorf(rappel.ERATELIMIT,
				"Monthly quota exceeded: the %s plan allows %d requests a calendar month (UTC) and this key has made them; the quota resets at %s, in %d s (Retry-After).",
				p.plan.Name, p.plan.Monthly, end.Format(time.RFC3339), untilEnd)
			h[headerRetryAfter] = []string{strconv.FormatInt(untilEnd, 10)}
		}
	} else if p.plan.Monthly > 0 {
		used = p.used(st, month)
	}

	h[headerRateLimitPolicy] = p.policyHeader(month, span.seconds)
	var buf [96]byte
	h[headerRateLimit] = []string{string(p.appendState(buf[:0], left, next, used, untilEnd))}
	if err != nil {
		s.countRateLimited(p.plan.Name)
	}
	return err
}

// appendState appends the RateLimit value: the bucket's whole tokens left
// and nanoseconds to the next, the month's count and seconds to its end.
func (p *planLimits) appendState(b []byte, left, next, used, untilEnd int64) []byte {
	if p.interval > 0 {
		b = append(b, `"burst";r=`...)
		b = strconv.AppendInt(b, left, 10)
		b = append(b, ";t="...)
		b = strconv.AppendInt(b, ceilSeconds(time.Duration(next)), 10)
	}
	if p.plan.Monthly > 0 {
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, `"monthly";r=`...)
		b = strconv.AppendInt(b, max(0, p.plan.Monthly-used), 10)
		b = append(b, ";t="...)
		b = strconv.AppendInt(b, untilEnd, 10)
	}
	return b
}

// used returns the key's count in month.
func (p *planLimits) used(st *keyState, month int64) int64 {
	u := st.usage.Load()
	if int64(u>>usageShift) != month {
		return 0
	}
	return int64(u & usageMask)
}

// ceilSeconds rounds d up to whole seconds, at least 1: a client told 0
// would retry at once.
func ceilSeconds(d time.Duration) int64 {
	return max(1, int64((d+time.Second-1)/time.Second))
}

// LoadUsage reads this month's counts from Quota (when set) into the
// limiter; call it before serving.
func (s *Server) LoadUsage(ctx context.Context) error {
	if s.Quota == nil {
		return nil
	}
	month := monthIndex(s.Now())
	counts, err := s.Quota.LoadUsage(ctx, monthName(month))
	if err != nil {
		return fmt.Errorf("loading usage: %w", err)
	}
	l := s.limits()
	for id, n := range counts {
		u := uint64(month)<<usageShift | uint64(n)&usageMask
		st := l.state(id)
		st.usage.Store(u)
		st.saved.Store(u)
	}
	return nil
}

// SaveUsage pushes to Quota (when set) the requests counted since the last
// push, with AddUsage, and adopts the totals that come back, which hold
// other nodes' requests too. Every key counted this month is sent, those
// without new requests with a delta of 0, so that the node learns what the
// fleet did with them. Call it once more after the server stopped serving.
func (s *Server) SaveUsage(ctx context.Context) error {
	if s.Quota == nil {
		return nil
	}
	l := s.limits()
	l.saveMu.Lock()
	defer l.saveMu.Unlock()
	current := monthIndex(s.Now())
	type push struct {
		st *keyState
		u  uint64 // the usage the delta was taken from
	}
	pushes := map[int64]map[string]push{}
	deltas := map[int64]map[string]int64{}
	l.keys.Range(func(k, v any) bool {
		st := v.(*keyState)
		u, saved := st.usage.Load(), st.saved.Load()
		m := int64(u >> usageShift)
		delta := int64(u & usageMask)
		if saved>>usageShift == u>>usageShift {
			delta -= int64(saved & usageMask)
		}
		// A month that ended is pushed once more if it has requests left
		// to push; those counted between the last push and the month's end
		// on a node whose first request of the new month came first are
		// left uncounted, a few seconds' worth in a month that is over.
		if delta <= 0 && m != current {
			return true
		}
		if pushes[m] == nil {
			pushes[m], deltas[m] = map[string]push{}, map[string]int64{}
		}
		pushes[m][k.(string)] = push{st, u}
		deltas[m][k.(string)] = max(0, delta)
		return true
	})
	for m, ps := range pushes {
		totals, err := s.Quota.AddUsage(ctx, monthName(m), deltas[m])
		if err != nil {
			return fmt.Errorf("saving usage: %w", err)
		}
		for id, p := range ps {
			if n, ok := totals[id]; ok {
				adopt(p.st, p.u, m, n)
			}
		}
	}
	return nil
}

// adopt sets st's count of month to total, the store's after a push of the
// requests up to u, plus the requests counted since u; the store has
// total.
func adopt(st *keyState, u uint64, month int64, total int64) {
	base := uint64(month)<<usageShift | uint64(total)&usageMask
	for {
		cur := st.usage.Load()
		if int64(cur>>usageShift) != month {
			// A new month began since the push: its requests are all
			// yet to be pushed, which saved's older month says.
			st.saved.Store(base)
			return
		}
		extra := int64(cur&usageMask) - int64(u&usageMask) // u is of month too
		next := uint64(month)<<usageShift | uint64(total+max(0, extra))&usageMask
		if st.usage.CompareAndSwap(cur, next) {
			st.saved.Store(base)
			return
		}
	}
}

// PersistUsage calls SaveUsage every interval until ctx is done, logging
// failures; the final save after shutdown is the caller's.
func (s *Server) PersistUsage(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.SaveUsage(ctx); err != nil && ctx.Err() == nil {
				s.Logger.Warn("saving usage", "error", err)
			}
		}
	}
}
