package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/rappel-ca/rappel"
)

// Publisher is the listener a leader's feeds tell first after every
// refresh: it publishes what the refresh changed. Put it before the other
// listeners, so that it reads the change log before any of them trims it.
func (n *Node) Publisher() rappel.ChangeListener { return publisher{n} }

type publisher struct{ n *Node }

// DataChanged publishes the records the node's store changed since the
// last publication (or since the node became the leader), whole, with the
// dataset info, in one fenced publication. A refresh that changed no
// record is published too, with the dataset info alone: its time moved,
// and every node must serve the same (the page ETags are made of it). On
// a follower it does nothing: its store changes only by applying
// publications.
func (p publisher) DataChanged(ctx context.Context, records bool) error {
	n := p.n
	n.mu.Lock()
	lead, lease, gen, after := n.leader, n.lease, n.baseGen, n.baseSeq
	n.mu.Unlock()
	if !lead {
		return nil
	}
	pub, last, err := n.collect(ctx, gen, after)
	if err != nil {
		return fmt.Errorf("publishing the refresh: %w", err)
	}
	pub.Node, pub.Token, pub.At = n.Name, lease.Token, n.Now()
	version, err := n.Log.Publish(ctx, pub)
	if errors.Is(err, rappel.ErrFenced) {
		n.stepDown("a publication was fenced: another node leads")
		return fmt.Errorf("publishing the refresh: %w", err)
	}
	if err != nil {
		return fmt.Errorf("publishing the refresh: %w", err)
	}
	// The version is written after the records: a crash between the two
	// applies the publication again, which changes nothing.
	pub.Info.Version = version
	if err := n.Store.SetDatasetInfo(ctx, pub.Info); err != nil {
		return fmt.Errorf("recording the dataset version %d: %w", version, err)
	}
	n.mu.Lock()
	if n.baseGen == gen && n.baseSeq == after {
		n.baseSeq = last
	}
	n.mu.Unlock()
	n.setVersions(version, version, nil)
	n.Logger.Info("published a refresh to the fleet", "version", version, "put", len(pub.Put), "deleted", len(pub.Delete))
	return nil
}

// collect reads the change log after seq into a publication of the
// records as they now stand, and the dataset info. last is the number of
// the last entry read.
func (n *Node) collect(ctx context.Context, gen, after uint64) (pub *rappel.Publication, last uint64, err error) {
	deleted := map[string]bool{}
	var order []string
	last = after
	err = n.Store.Changes(ctx, gen, after, func(seq uint64, id string, del bool) error {
		if _, seen := deleted[id]; !seen {
			order = append(order, id)
		}
		deleted[id] = del
		last = seq
		return nil
	})
	if err != nil {
		return nil, last, err
	}
	pub = &rappel.Publication{}
	for _, id := range order {
		if deleted[id] {
			pub.Delete = append(pub.Delete, id)
			continue
		}
		r, err := n.Store.Record(ctx, id)
		if rappel.ErrorCode(err) == rappel.ENOTFOUND {
			pub.Delete = append(pub.Delete, id)
			continue
		}
		if err != nil {
			return nil, last, err
		}
		pub.Put = append(pub.Put, r)
	}
	if pub.Info, err = n.Store.DatasetInfo(ctx); err != nil {
		return nil, last, err
	}
	return pub, last, nil
}
