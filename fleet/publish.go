package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/rappel-ca/rappel"
)

// A leader's feeds write through FeedStore, never to the store directly:
// each write (a source's refresh, or the whole dataset replaced) is made
// ready in the store, published to the fleet's log under the lease token
// its refresh began with, and only then committed, at the version the log
// gave it. So a node's store never holds what the fleet does not: a write
// that could not be published (the shared store down, the lease lost) is
// not stored at all, and the next refresh fetches it again; one that was
// published and then not stored is applied from the log, as a follower
// applies it, after the node steps down (followPublished).

// FeedStore returns the store the node's feeds write through while it
// leads: the node's own store, its writes fenced and published first.
func (n *Node) FeedStore() rappel.FeedStore { return leaderStore{n.Store, n} }

type leaderStore struct {
	Store
	n *Node
}

// ApplySource publishes c, then stores it (see above). The publication
// holds the records c changes, whole, the change log entries it adds, the
// dataset info after it and what it writes of its source (state, partial
// and raw records), so that a follower's store becomes the leader's.
func (s leaderStore) ApplySource(ctx context.Context, c *rappel.SourceChange) error {
	n := s.n
	lease, err := n.fence(ctx)
	if err != nil {
		return err
	}
	info, err := s.DatasetInfo(ctx)
	if err != nil {
		return err
	}
	if c.Info != nil {
		info = *c.Info
	}
	published := int64(0)
	err = s.ApplyPublishing(ctx, c, func(ctx context.Context, st rappel.StagedChange) (*rappel.DatasetInfo, error) {
		pub := &rappel.Publication{
			Node: n.Name, Token: lease.Token, At: n.Now(), Info: info,
			Put: st.Put, Delete: st.Delete, Gen: st.Gen, Changes: st.Changes,
			Agencies: registeredAgencies(),
			Source: &rappel.PublishedSource{
				State: c.State, PutPartials: c.PutPartials, DeletePartials: c.DeletePartials,
				PutRaw: rappel.PublishRaw(c.PutRaw), DeleteRaw: c.DeleteRaw,
			},
		}
		v, err := n.publish(ctx, pub)
		if err != nil {
			return nil, err
		}
		published = v
		out := info
		out.Version = v
		return &out, nil
	})
	return n.committed(published, err)
}

// Replace publishes the whole dataset (a Publication that Replaces the
// followers'), then stores it, its change log starting the generation the
// publication names.
func (s leaderStore) Replace(ctx context.Context, recs []*rappel.Record, partials map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, states []rappel.SourceState, info rappel.DatasetInfo) error {
	n := s.n
	lease, err := n.fence(ctx)
	if err != nil {
		return err
	}
	gen, seq, err := s.ChangeSeq(ctx)
	if err != nil {
		return err
	}
	gen++ // a full load starts a new generation, as Replace would
	pub := &rappel.Publication{
		Node: n.Name, Token: lease.Token, At: n.Now(), Info: info, Put: recs,
		Gen: gen, Seq: seq, Replace: true, Agencies: registeredAgencies(),
		Partials: partials, States: states, Raw: map[string][]rappel.PublishedRaw{},
	}
	for src, rs := range raw {
		pub.Raw[src] = rappel.PublishRaw(rs)
	}
	v, err := n.publish(ctx, pub)
	if err != nil {
		return err
	}
	info.Version = v
	return n.committed(v, s.ReplacePublished(ctx, recs, partials, raw, states, info, gen, seq))
}

// publish appends pub to the fleet's log, fenced. Any failure makes the
// node step down: fenced, another node leads; otherwise the log may hold
// the publication even though the answer was lost, and only following the
// log tells (the node takes the lease back once it has).
func (n *Node) publish(ctx context.Context, pub *rappel.Publication) (int64, error) {
	if _, err := n.fence(ctx); err != nil {
		return 0, err
	}
	v, err := n.Log.Publish(ctx, pub)
	if err != nil {
		n.publishFailures.Add(1)
		why := "a publication failed: the node follows the log until it can lead again"
		if errors.Is(err, rappel.ErrFenced) {
			why = "a publication was fenced: another node leads"
		}
		n.stepDown(why)
		return 0, fmt.Errorf("%w: %w", rappel.ErrUnpublished, err)
	}
	n.Logger.Info("published a refresh to the fleet", "version", v, "put", len(pub.Put), "deleted", len(pub.Delete), "changes", len(pub.Changes), "replace", pub.Replace)
	return v, nil
}

// committed finishes a write published as version (0 when it was not):
// one that then failed to be stored makes the node step down, so that it
// applies its own publication from the log, as a follower would.
func (n *Node) committed(version int64, err error) error {
	if err == nil {
		n.setVersions(version, version, nil)
		return nil
	}
	if version > 0 {
		n.stepDown(fmt.Sprintf("version %d was published but not stored here: the node applies it from the log", version))
	}
	return err
}

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
