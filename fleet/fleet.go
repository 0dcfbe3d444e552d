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
	// refresh, its change log entries numbered as the leader's.
	ApplyPublished(ctx context.Context, c *rappel.SourceChange, gen uint64, entries []rappel.PublishedChange) error
	// ReplacePublished makes the store hold the records of a publication
	// of the whole dataset and nothing else of its kind, its change log
	// at the leader's generation gen and number seq.
	ReplacePublished(ctx context.Context, recs []*rappel.Record, states []rappel.SourceState, info rappel.DatasetInfo, gen, seq uint64) error
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
	Adopt   func(ctx context.Context, source string, wasm []byte, why string) error
	// LeaseTTL is how long the lease lasts unless renewed; Poll how often
	// a follower looks for new publications and for a free lease.
	LeaseTTL, Poll time.Duration
	Now            func() time.Time
	Logger         *slog.Logger

	mu     sync.Mutex
	lease  rappel.Lease // held while leading
	leader bool
	// base is the change log position the next publication starts after.
	baseGen, baseSeq uint64
	status           Status
	// untold is set while the listeners have not caught up with what was
	// applied (only Run's goroutine uses it).
	untold bool
}

// Status is what /health says of the node's place in the fleet.
type Status struct {
	// Role is "leader" or "follower".
	Role string `json:"role"`
	// Leader names the node holding the lease, as last seen.
	Leader string `json:"leader,omitempty"`
	// Version is the dataset version this node serves; Latest the last
	// one published, as last seen; Lag how long ago the oldest
	// publication this node has not applied yet was made (0 when none).
	Version int64   `json:"version"`
	Latest  int64   `json:"latest"`
	Lag     float64 `json:"lag_seconds"`
	// LastError says why the last step failed, if it did.
	LastError string `json:"last_error,omitempty"`
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
	return n.status
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
	lease, ok, err := n.Log.AcquireLease(ctx, n.Name, n.LeaseTTL)
	if err != nil {
		n.setError(fmt.Errorf("taking the feed lease: %w", err))
		return
	}
	n.mu.Lock()
	n.status.Leader = lease.Holder
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
	gen, seq, err := n.Store.ChangeSeq(ctx)
	if err != nil {
		n.setError(err)
		_ = n.Log.ReleaseLease(ctx, n.Name, lease.Token)
		return
	}
	n.mu.Lock()
	n.lease, n.leader, n.baseGen, n.baseSeq = lease, true, gen, seq
	n.status.Role, n.status.Leader = "leader", n.Name
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
	n.lease.Expires = n.Now().Add(n.LeaseTTL)
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
	n.mu.Unlock()
	if lead {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := n.Log.ReleaseLease(ctx, n.Name, token); err != nil {
			n.Logger.Warn("giving the feed lease up", "err", err)
		}
	}
}

// sha256Hex is the hex SHA-256 of b, as plugins name modules.
func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
