package edge

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rappel-ca/rappel"
)

// Admission of expensive searches (docs/api.md, "Limits"). A search is
// estimated before it runs (rappel.CostEstimator); one whose cost reaches
// Server.ExpensiveCost runs only in one of a few slots (half the cores,
// at least one), waiting for one in a short queue. A full queue, or a
// wait that found no slot in time, is a 503 with Retry-After; a search
// whose budget ends while it waits is a 504 like one whose budget ends
// while it runs, since the wait counts against the budget. Everything
// else (records by id, lookups, health, probes, cheap searches) never
// enters the queue, and keeps the other half of the cores.

// Defaults of the admission fields of Server.
const (
	DefaultExpensiveCost = 8
	// DefaultExpensiveWait is the longest an expensive search waits for
	// a slot: a small part of the query budget, so that a queued search
	// still has time to run.
	DefaultExpensiveWait = 300 * time.Millisecond
	// DefaultExpensiveQueue is how many expensive searches may wait. A
	// waiting search holds a goroutine and a timer, no core; a client
	// refused at once sends its next search at once, and a refusal costs
	// an estimate, so a queue as long as the clients a node expects at
	// once turns a flood of refusals into one every wait per client.
	DefaultExpensiveQueue = 64
)

// headerSearchCost carries a search's estimated cost in cost units.
const headerSearchCost = "Search-Cost"

// admission is the pool of expensive searches: a slot is a token of
// slots, and queued counts those waiting for one.
type admission struct {
	slots  chan struct{}
	queued atomic.Int64
	queue  int64
	wait   time.Duration
}

// pool returns the admission pool, built from the Server's fields on
// first use.
func (s *Server) pool() *admission {
	s.admitOnce.Do(func() {
		n := s.ExpensiveSlots
		if n <= 0 {
			n = max(1, runtime.GOMAXPROCS(0)/2)
		}
		q := s.ExpensiveQueue
		if q <= 0 {
			q = DefaultExpensiveQueue
		}
		w := s.ExpensiveWait
		if w <= 0 {
			w = DefaultExpensiveWait
		}
		s.admit = &admission{slots: make(chan struct{}, n), queue: int64(q), wait: w}
	})
	return s.admit
}

// expensive reports whether a search of cost runs in the pool.
func (s *Server) expensive(cost int) bool { return cost >= s.expensiveCost() }

// expensiveCost is the cost from which a search runs in the pool.
func (s *Server) expensiveCost() int {
	if s.ExpensiveCost <= 0 {
		return DefaultExpensiveCost
	}
	return s.ExpensiveCost
}

// How a search waits for a slot of the pool.
type waitMode int

const (
	// queued waits in the bounded queue for at most the pool's wait: a
	// keyed search whose client has not been answered yet.
	queued waitMode = iota
	// noQueue takes a free slot or is refused at once: a request without
	// a key (the Atom feed), which must not fill the queue keyed clients
	// wait in.
	noQueue
	// untilBudget waits, outside the queue's bound, as long as the
	// search's budget lasts: a later page of an export whose status is
	// sent, which a 503 would cut short.
	untilBudget
)

// acquire takes a slot for a search of cost, waiting as mode says and
// until ctx ends. It returns the release of the slot, or a 503 (the queue
// is full, or no slot came in time) or a 504 (the search's budget ended
// while it waited).
func (s *Server) acquire(ctx context.Context, w http.ResponseWriter, cost int, mode waitMode) (func(), error) {
	a := s.pool()
	release := func() { <-a.slots }
	select {
	case a.slots <- struct{}{}:
		s.countAdmission("admitted")
		return release, nil
	default:
	}
	var expired <-chan time.Time
	switch mode {
	case noQueue:
		s.countAdmission("queue_full")
		return nil, s.busy(w, cost)
	case queued:
		if a.queued.Add(1) > a.queue {
			a.queued.Add(-1)
			s.countAdmission("queue_full")
			return nil, s.busy(w, cost)
		}
		defer a.queued.Add(-1)
		t := time.NewTimer(a.wait)
		defer t.Stop()
		expired = t.C
	}
	select {
	case a.slots <- struct{}{}:
		s.countAdmission("queued")
		return release, nil
	case <-expired:
		s.countAdmission("wait_expired")
		return nil, s.busy(w, cost)
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.Canceled) {
			s.countAdmission("client_closed") // logged as a 499
		} else {
			s.countAdmission("timeout")
		}
		return nil, rappel.QueryTimeout(ctx.Err())
	}
}

// yielding is the context of a search running in a slot of the pool. The
// search looks at its deadline every few hundred documents (a fraction of
// a millisecond); each look lets the scheduler run whatever else is
// runnable first. Without it, a cheap request that becomes runnable on a
// core held by an expensive search waits for Go's preemption (10 ms), far
// more than it takes to answer; with it, it waits for the next look.
type yielding struct{ context.Context }

func (y yielding) Err() error {
	runtime.Gosched()
	return y.Context.Err()
}

// yieldingKey is the key under which a yielding context answers true, so
// that a test can tell a search ran in the pool.
type yieldingKey struct{}

func (y yielding) Value(key any) any {
	if key == (yieldingKey{}) {
		return true
	}
	return y.Context.Value(key)
}

// busy is the 503 of an expensive search the pool cannot take now. A slot
// is held at most one query budget, so one frees within that.
func (s *Server) busy(w http.ResponseWriter, cost int) error {
	retry := ceilSeconds(s.QueryBudget)
	w.Header()[headerRetryAfter] = []string{strconv.FormatInt(retry, 10)}
	return rappel.Errorf(rappel.EUNAVAILABLE,
		"This search costs %d units and too many expensive searches are running; retry in %d s (Retry-After) or narrow the search (fewer ORed words or phrases, a filter or a date range) so that it costs less than %d units.",
		cost, retry, s.expensiveCost())
}
