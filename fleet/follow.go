package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/rappel-ca/rappel"
)

// follow applies every publication after the version the store holds, in
// order, each in one write, and then tells the listeners once. Applying is
// idempotent (puts and deletes of whole records), so a publication applied
// twice, after a crash between its write and the version's, is harmless.
func (n *Node) follow(ctx context.Context) error {
	info, err := n.Store.DatasetInfo(ctx)
	if err != nil {
		return fmt.Errorf("reading the dataset version: %w", err)
	}
	have := info.Version
	latest, err := n.Log.LatestVersion(ctx)
	if err != nil {
		return fmt.Errorf("reading the fleet's dataset version: %w", err)
	}
	n.setVersions(have, latest, nil)
	applied := 0
	for have < latest {
		pubs, err := n.Log.Publications(ctx, have, pageSize)
		if err != nil {
			return fmt.Errorf("reading the fleet's publications after version %d: %w", have, err)
		}
		if len(pubs) == 0 {
			break
		}
		n.setVersions(have, latest, pubs[0])
		for _, p := range pubs {
			if p.Version != have+1 {
				return fmt.Errorf("the fleet's publications jump from version %d to %d", have, p.Version)
			}
			if err := n.apply(ctx, p); err != nil {
				return fmt.Errorf("applying the fleet's version %d: %w", p.Version, err)
			}
			have = p.Version
			applied++
		}
	}
	n.setVersions(have, latest, nil)
	n.mu.Lock()
	if !n.caughtUp && have >= latest {
		n.caughtUp, n.caughtAt = true, have
	}
	n.status.LastContact = n.Now()
	n.mu.Unlock()
	if applied > 0 {
		n.Logger.Info("applied the fleet's publications", "publications", applied, "version", have)
		n.untold = true
	}
	if !n.untold {
		return nil
	}
	// Listeners that failed are told again at the next poll, with nothing
	// new applied: the store holds the version, they must catch up with it.
	var errs []error
	for _, l := range n.Listeners {
		if err := l.DataChanged(ctx, true); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		n.Logger.Warn("telling the listeners of the fleet's version", "version", have, "err", errors.Join(errs...))
		return fmt.Errorf("telling the listeners of version %d: %w", have, errors.Join(errs...))
	}
	n.untold = false
	return nil
}

// apply writes one publication to the store: its records, and the
// dataset info, which carries its version, in one durable batch.
func (n *Node) apply(ctx context.Context, p *rappel.Publication) error {
	for _, a := range p.Agencies {
		if err := rappel.RegisterAgency(a); err != nil {
			n.Logger.Warn("an agency of the fleet's leader cannot be registered", "agency", a.Name, "err", err)
		}
	}
	st, err := n.Store.SourceState(ctx, Source)
	if err != nil {
		return err
	}
	st.Feed.Source, st.Feed.Live = Source, true
	st.Feed.LastAttempt, st.Feed.LastSuccess, st.Feed.LastError, st.Feed.LastErrorReason = n.Now(), n.Now(), "", ""
	st.Followed = strconv.FormatInt(p.Version, 10)
	info := p.Info
	info.Version = p.Version
	if p.Replace {
		// The whole dataset: nothing of the store's own survives, its
		// bundle's partial records included; the leader's sources'
		// partial records, raw records and states, when the publication
		// carries them (from a leader that publishes them), take their
		// place.
		raw := map[string][]rappel.RawRecord{}
		for src, rs := range p.Raw {
			raw[src] = rappel.Unpublished(rs)
		}
		states := append(slices.DeleteFunc(slices.Clone(p.States), func(s rappel.SourceState) bool { return s.Feed.Source == Source }), st)
		return n.Store.ReplacePublished(ctx, p.Put, p.Partials, raw, states, info, p.Gen, p.Seq)
	}
	c := &rappel.SourceChange{State: st, PutRecords: p.Put, DeleteRecords: p.Delete, Info: &info}
	if ps := p.Source; ps != nil && ps.State.Feed.Source != Source {
		// A source's refresh: its state, partial and raw records as the
		// leader wrote them, and the follower's own state of the log.
		c.State, c.PutPartials, c.DeletePartials = ps.State, ps.PutPartials, ps.DeletePartials
		c.PutRaw, c.DeleteRaw = rappel.Unpublished(ps.PutRaw), ps.DeleteRaw
		return n.Store.ApplyPublished(ctx, c, p.Gen, p.Changes, st)
	}
	return n.Store.ApplyPublished(ctx, c, p.Gen, p.Changes)
}

// setVersions records what the node serves and what the fleet has; next,
// when set, is the oldest publication not applied yet, for the lag.
func (n *Node) setVersions(have, latest int64, next *rappel.Publication) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.status.Version, n.status.Latest = have, max(latest, have)
	if n.status.Role == "" {
		n.status.Role = "follower"
	}
	switch {
	case have >= latest:
		n.status.Lag = 0
	case next != nil:
		n.status.Lag = n.Now().Sub(next.At).Seconds()
	}
}
