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
	if errors.Is(err, errReplaced) {
		// The store was replaced since the last publication (the switch
		// from synthetic data): the fleet gets the whole dataset.
		gen, after = 0, 0
		pub, gen, last, err = n.collectAll(ctx)
	}
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
	if pub.Replace {
		n.baseGen, n.baseSeq = gen, last
	} else if n.baseGen == gen && n.baseSeq == after {
		n.baseSeq = last
	}
	n.mu.Unlock()
	n.setVersions(version, version, nil)
	n.Logger.Info("published a refresh to the fleet", "version", version, "put", len(pub.Put), "deleted", len(pub.Delete))
	return nil
}

// collect reads the change log after seq into a publication: its
// entries, the records as they now stand, and the dataset info. last is
// the number of the last entry read.
func (n *Node) collect(ctx context.Context, gen, after uint64) (pub *rappel.Publication, last uint64, err error) {
	pub = &rappel.Publication{Gen: gen}
	latest := map[string]*rappel.Record{}
	var order []string
	last = after
	for {
		page, err := n.Store.ReadChanges(ctx, gen, last, changesPage)
		if err != nil {
			return nil, last, err
		}
		if page.Gen != gen {
			return nil, last, fmt.Errorf("the store's change log is at generation %d, not %d: %w", page.Gen, gen, errReplaced)
		}
		for _, e := range page.Entries {
			pub.Changes = append(pub.Changes, rappel.PublishedChange{Seq: e.Seq, RecordID: e.RecordID, Kind: e.Kind, At: e.At})
			if _, seen := latest[e.RecordID]; !seen {
				order = append(order, e.RecordID)
			}
			latest[e.RecordID] = e.Record
			last = e.Seq
		}
		if len(page.Entries) < changesPage {
			break
		}
	}
	for _, id := range order {
		if r := latest[id]; r != nil {
			pub.Put = append(pub.Put, r)
		} else {
			pub.Delete = append(pub.Delete, id)
		}
	}
	if pub.Info, err = n.Store.DatasetInfo(ctx); err != nil {
		return nil, last, err
	}
	pub.Agencies = registeredAgencies()
	return pub, last, nil
}

// errReplaced is collect's error when the store's data was replaced since
// the node last published.
var errReplaced = errors.New("the dataset was replaced in full since this node last published")

// collectAll reads the whole dataset into a publication that replaces
// the followers' (Publication.Replace), and returns the change log's
// generation and last number it stands at. The store's write lock is not
// held: a refresh that writes meanwhile is published after, from last.
func (n *Node) collectAll(ctx context.Context) (pub *rappel.Publication, gen, last uint64, err error) {
	if gen, last, err = n.Store.ChangeSeq(ctx); err != nil {
		return nil, 0, 0, err
	}
	pub = &rappel.Publication{Gen: gen, Seq: last, Replace: true}
	if err := n.Store.ForEachRecord(ctx, func(r *rappel.Record) error {
		pub.Put = append(pub.Put, r)
		return nil
	}); err != nil {
		return nil, 0, 0, err
	}
	if pub.Info, err = n.Store.DatasetInfo(ctx); err != nil {
		return nil, 0, 0, err
	}
	pub.Agencies = registeredAgencies()
	return pub, gen, last, nil
}

// changesPage is how many change log entries a leader reads at once.
const changesPage = 1000

// registeredAgencies are the agencies known beyond the spec's.
func registeredAgencies() []rappel.Agency {
	var out []rappel.Agency
	for _, a := range rappel.AllAgencies() {
		if !rappel.Agencies.Has(a.Name) {
			out = append(out, a)
		}
	}
	return out
}
