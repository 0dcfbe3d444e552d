// Package fleet makes the nodes that share a store refresh the feeds once,
// as one service: the node holding the feed lease (the leader) fetches the
// agencies and runs the plugins, as a single node does, and publishes each
// refresh's changes to the shared store's publication log
// (rappel.PublicationLog); every other node (a follower) fetches nothing
// and applies the publications, in order, to its own store, which its read
// index follows as it follows a local refresh. Nodes serve the same dataset
// version within a poll of its publication.
//
// Leadership is a lease with a fencing token, renewed a third of its time
// to live: a leader that dies (or stalls) loses it when it expires, another
// node takes it, catches up with the log and refreshes; whatever the old
// leader publishes after that is refused (rappel.ErrFenced), whole.
package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rappel-ca/rappel"
)

// Store is what a node's own store offers the fleet: the feed store its
// refreshes write, and its change log, from which a leader reads what a
// refresh changed.
type Store interface {
	rappel.FeedStore
	rappel.ChangeReader
	// ChangeSeq returns the change log's generation and its last number.
	ChangeSeq(ctx context.Context) (gen, seq uint64, err error)
	// ApplyPublished writes a publication as ApplySource writes a
	// refresh, its change log entries numbered as the leader's, and the
	// states also given.
	ApplyPublished(ctx context.Context, c *rappel.SourceChange, gen uint64, entries []rappel.PublishedChange, also ...rappel.SourceState) error
	// ApplyPublishing writes c as ApplySource does once publish, given
	// what it changes, succeeded, with the dataset info publish returns.
	ApplyPublishing(ctx context.Context, c *rappel.SourceChange, publish func(context.Context, rappel.StagedChange) (*rappel.DatasetInfo, error)) error
	// ReplacePublished makes the store hold the data of a publication of
	// the whole dataset and nothing else of its kind, its change log at
	// the generation gen and number seq the publication gives.
	ReplacePublished(ctx context.Context, recs []*rappel.Record, partials map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, states []rappel.SourceState, info rappel.DatasetInfo, gen, seq uint64) error
}

// Defaults of a Node.
const (
	DefaultLeaseTTL = 15 * time.Second
	DefaultPoll     = 250 * time.Millisecond
	// pageSize is how many publications a follower reads at once.
	pageSize = 20
	// stepTimeout bounds one step of Run: a poll, a lease renewal, taking
	// the lease and catching up.
	stepTimeout = 30 * time.Second
)

// Source is the name of the feed state a follower keeps of the fleet's
// log, shown in /health beside the sources a leader refreshes.
const Source = "fleet"

// Node is one node of a fleet. Configure the exported fields, then Run.
type Node struct {
	// Name identifies the node in the lease and in publications; unique
	// in the fleet (host name and pid).
	Name  string
	Log   rappel.PublicationLog
	Store Store
	// Listeners are told after a follower applied publications, as a
	// refresh tells them (the read index): records changed.
	Listeners []rappel.ChangeListener
	// Kick asks the node's feeds for a refresh now: called when the node
	// becomes the leader.
	Kick func()
	// Plugins keeps the plugins the leaders activated; Adopt makes one
	// this node's (plugins.Registry.Adopt), as it becomes the leader.
	Plugins PluginLog
	Adopt   func(ctx context.Context, source string, wasm, sig []byte, why string) error
	// LeaseTTL is how long the lease lasts unless renewed; Poll how often
	// a follower looks for new publications and for a free lease.
	LeaseTTL, Poll time.Duration
	Now            func() time.Time
	Logger         *slog.Logger

	mu     sync.Mutex
	lease  rappel.Lease // held while leading; Expires by this node's clock
	leader bool
	// term is cancelled when the node stops leading: the refreshes it
	// holds (Hold) end with it.
	term            context.Context
	endTerm         context.CancelFunc
	status          Status
	publishFailures atomic.Int64
	// leaderUntil is when the lease last seen held by another node runs
	// out, by that lease; caughtUp that a poll has applied the log to
	// its head, once.
	leaderUntil time.Time
	caughtUp    bool
	caughtAt    int64 // the version then
	// untold is set while the listeners have not caught up with what was
	// applied (only Run's goroutine uses it).
	untold bool
}

// Status is what /health says of the node's place in the fleet.
type Status struct {
	// Role is "leader" or "follower".
	Role string `json:"role"`
	// Leader names the node holding the lease, as last seen, while that
	// lease runs; empty when none is known to run.
	Leader string `json:"leader,omitempty"`
	// Version is the dataset version this node serves; Latest the last
	// one published, as last seen. Lag is how far behind the fleet this
	// node may be, in seconds: how long ago the oldest publication it has
	// not applied yet was made, or, when it has not reached the shared
	// store for longer than a few polls, how long ago it last did (it
	// cannot know what it missed); 0 when it is caught up.
	Version int64   `json:"version"`
	Latest  int64   `json:"latest"`
	Lag     float64 `json:"lag_seconds"`
	// LastContact is when this node last read the fleet's log (a
	// follower) or renewed its lease (the leader).
	LastContact time.Time `json:"last_contact,omitzero"`
	// Degraded is set while the node cannot reach the shared store or a
	// follower is behind: /health then says "degraded".
	Degraded bool `json:"degraded,omitempty"`
	// Ready is set once the node serves the fleet's dataset: a leader, or
	// a follower that has applied the log up to its head once. A node
	// joining the fleet is not ready until then (/readyz); one that was
	// stays ready through an outage of the shared store, degraded, as it
	// still serves the last dataset it had.
	Ready bool `json:"ready"`
	// ReadyAt is the version the node had applied when it first caught
	// up.
	ReadyAt int64 `json:"-"`
	// LastError says why the last step failed, if it did.
	LastError string `json:"last_error,omitempty"`
	// PublishFailures counts the publications this node could not make.
	PublishFailures int64 `json:"publish_failures,omitempty"`
}

// Leading reports whether this node holds the lease: its feeds refresh
// only then (feeds.Refresher's Paused is its negation).
func (n *Node) Leading() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.leader
}

// Status returns the node's place in the fleet.
func (n *Node) Status() Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := n.status
	now := n.clock()
	if !n.leaderUntil.IsZero() && !now.Before(n.leaderUntil) && !n.leader {
		st.Leader = "" // that lease ran out; nobody is known to lead
	}
	stale := st.LastContact.IsZero() || now.Sub(st.LastContact) > n.staleAfter()
	if stale && !st.LastContact.IsZero() {
		st.Lag = max(st.Lag, now.Sub(st.LastContact).Seconds())
	}
	st.Degraded = stale || st.Lag > n.staleAfter().Seconds()
	st.Ready, st.ReadyAt = n.leader || n.caughtUp, n.caughtAt
	st.PublishFailures = n.publishFailures.Load()
	return st
}

// Stats returns the node's figures.
func (n *Node) Stats() rappel.FleetStats {
	st := n.Status()
	out := rappel.FleetStats{Leading: st.Role == "leader", Version: st.Version, Latest: st.Latest,
		Lag: time.Duration(st.Lag * float64(time.Second)), Degraded: st.Degraded, Ready: st.Ready, ReadyAt: st.ReadyAt,
		PublishFailures: st.PublishFailures}
	if !st.LastContact.IsZero() {
		out.SinceContact = n.clock().Sub(st.LastContact)
	}
	return out
}

// clock is Now, or time.Now before Run has set the defaults: /health may
// ask for the node's status before it runs.
func (n *Node) clock() time.Time {
	if n.Now == nil {
		return time.Now()
	}
	return n.Now()
}

// staleAfter is how long without reaching the shared store makes a node
// degraded: ten polls, half a lease (a leader renews every third of it)
// and at least 5 s, so that one slow answer does not.
func (n *Node) staleAfter() time.Duration {
	poll, ttl := n.Poll, n.LeaseTTL
	if poll <= 0 {
		poll = DefaultPoll
	}
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	return max(10*poll, ttl/2, 5*time.Second)
}

func (n *Node) defaults() {
	if n.LeaseTTL <= 0 {
		n.LeaseTTL = DefaultLeaseTTL
	}
	if n.Poll <= 0 {
		n.Poll = DefaultPoll
	}
	if n.Now == nil {
		n.Now = time.Now
	}
	if n.Logger == nil {
		n.Logger = slog.New(slog.DiscardHandler)
	}
}

// Run follows the fleet's log and, whenever the lease is free, takes it and
// leads, until ctx is done; it then gives the lease up if it holds it.
func (n *Node) Run(ctx context.Context) error {
	n.defaults()
	if n.Name == "" || n.Log == nil || n.Store == nil {
		return errors.New("running a fleet node: Name, Log and Store are required")
	}
	renewEvery := n.LeaseTTL / 3
	lastTry := time.Time{}
	t := time.NewTicker(n.Poll)
	defer t.Stop()
	defer n.release()
	for {
		// A step that hangs (a database that stopped answering) must not
		// stop the node for good: each has a deadline.
		sctx, cancel := context.WithTimeout(ctx, stepTimeout)
		if n.Leading() {
			if n.Now().Sub(lastTry) >= renewEvery {
				lastTry = n.Now()
				n.renew(sctx)
			}
		} else {
			err := n.follow(sctx)
			n.setError(err)
			if err == nil && n.Now().Sub(lastTry) >= renewEvery {
				lastTry = n.Now()
				n.tryLead(sctx)
			}
		}
		cancel()
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (n *Node) setError(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.status.LastError = ""
	if err != nil {
		n.status.LastError = err.Error()
	}
}

// tryLead takes the lease when it is free: the node first applies every
// publication it lacks, so that its store is the fleet's, then notes where
// its change log stands (what it publishes starts after that) and asks its
// feeds for a refresh.
func (n *Node) tryLead(ctx context.Context) {
	asked := n.Now()
	lease, ok, err := n.Log.AcquireLease(ctx, n.Name, n.LeaseTTL)
	if err != nil {
		n.setError(fmt.Errorf("taking the feed lease: %w", err))
		return
	}
	n.mu.Lock()
	n.status.Leader, n.leaderUntil = lease.Holder, lease.Expires
	n.mu.Unlock()
	if !ok {
		return
	}
	if err := n.follow(ctx); err != nil {
		n.setError(err)
		_ = n.Log.ReleaseLease(ctx, n.Name, lease.Token)
		return
	}
	if err := n.adoptPlugins(ctx); err != nil {
		n.setError(err)
		_ = n.Log.ReleaseLease(ctx, n.Name, lease.Token)
		return
	}
	// Catching up and adopting took time: the lease runs from when it was
	// asked for, by this node's clock, and may have run out already.
	lease.Expires = asked.Add(n.LeaseTTL)
	if !n.Now().Before(lease.Expires) {
		n.setError(errors.New("taking the feed lease: it ran out while this node caught up with the log"))
		return
	}
	n.mu.Lock()
	n.lease, n.leader, n.leaderUntil = lease, true, time.Time{}
	n.term, n.endTerm = context.WithCancel(context.Background())
	n.status.Role, n.status.Leader, n.status.LastContact = "leader", n.Name, n.Now()
	n.mu.Unlock()
	n.Logger.Info("this node leads the fleet's feeds", "node", n.Name, "token", lease.Token, "version", n.Status().Version)
	if n.Kick != nil {
		n.Kick()
	}
}

// renew extends the lease; a lease lost (expired and taken, or the store
// unreachable past its time) makes the node a follower again.
func (n *Node) renew(ctx context.Context) {
	n.mu.Lock()
	token := n.lease.Token
	n.mu.Unlock()
	asked := n.Now()
	ok, err := n.Log.RenewLease(ctx, n.Name, token, n.LeaseTTL)
	switch {
	case err != nil && n.Now().Before(n.leaseExpires()):
		n.setError(fmt.Errorf("renewing the feed lease: %w", err))
		return // tried again soon; the lease still runs
	case err != nil || !ok:
		n.stepDown("the feed lease was lost")
		return
	}
	n.mu.Lock()
	n.lease.Expires = asked.Add(n.LeaseTTL)
	n.status.LastContact = n.Now()
	n.mu.Unlock()
}

func (n *Node) leaseExpires() time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lease.Expires
}

// stepDown makes the node a follower.
func (n *Node) stepDown(why string) {
	n.mu.Lock()
	was := n.leader
	n.leader = false
	n.status.Role = "follower"
	n.endLocked()
	n.mu.Unlock()
	if was {
		n.Logger.Warn("this node no longer leads the fleet's feeds", "node", n.Name, "why", why)
	}
}

// release gives the lease up at shutdown, so that another node leads at
// once rather than after the lease expires.
func (n *Node) release() {
	n.mu.Lock()
	lead, token := n.leader, n.lease.Token
	n.leader = false
	n.endLocked()
	n.mu.Unlock()
	if lead {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := n.Log.ReleaseLease(ctx, n.Name, token); err != nil {
			n.Logger.Warn("giving the feed lease up", "err", err)
		}
	}
}

// endLocked ends the term: the refreshes it held stop. n.mu is held.
func (n *Node) endLocked() {
	if n.endTerm != nil {
		n.endTerm()
		n.endTerm = nil
	}
}

// ErrNotLeading is returned by Hold, and by a write of FeedStore, on a
// node that does not lead: its feeds refresh nothing.
var ErrNotLeading = errors.New("this node does not hold the fleet's feed lease")

type termKey struct{}

// Hold returns, for a refresh about to start, a context that carries the
// lease token of the node's term and ends when the term does (the node
// steps down, or stops), and the function that releases it; FeedStore's
// writes under it are fenced by that token. On a node that does not lead
// it returns ErrNotLeading: the refresh must not run.
func (n *Node) Hold(ctx context.Context) (context.Context, func(), error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.leader || n.term == nil {
		return ctx, func() {}, ErrNotLeading
	}
	ctx, cancel := context.WithCancel(context.WithValue(ctx, termKey{}, n.lease.Token))
	stop := context.AfterFunc(n.term, cancel)
	return ctx, func() { stop(); cancel() }, nil
}

// fence returns the lease a write under ctx may be published under: the
// node must lead, under the token ctx carries (if any: one from Hold), and
// the lease must still run by the node's own clock, which catches a leader
// woken from a stall before its next renewal notices that the lease ran
// out. The shared store checks the token again as it publishes.
func (n *Node) fence(ctx context.Context) (rappel.Lease, error) {
	token, held := ctx.Value(termKey{}).(int64)
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case !n.leader:
		return rappel.Lease{}, fmt.Errorf("%w: %w", rappel.ErrUnpublished, ErrNotLeading)
	case held && token != n.lease.Token:
		return rappel.Lease{}, fmt.Errorf("%w: the refresh began under the lease token %d, and the node now holds %d: %w", rappel.ErrUnpublished, token, n.lease.Token, rappel.ErrFenced)
	case !n.Now().Before(n.lease.Expires):
		return rappel.Lease{}, fmt.Errorf("%w: the feed lease ran out %s ago by this node's clock: %w", rappel.ErrUnpublished, n.Now().Sub(n.lease.Expires).Round(time.Millisecond), rappel.ErrFenced)
	}
	if err := ctx.Err(); err != nil {
		return rappel.Lease{}, fmt.Errorf("%w: %w", rappel.ErrUnpublished, err)
	}
	return n.lease, nil
}

// sha256Hex is the hex SHA-256 of b, as plugins name modules.
func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
