package kv

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/rappel-ca/rappel"
)

// ApplyPublished writes c, a publication of a fleet's leader (package
// fleet), as ApplySource does, except for the change log: its entries are
// the leader's, with the leader's numbers, kinds and times, rather than
// numbers of this store's own, so that a change feed cursor read on one
// node of the fleet continues on any other. Entries numbered at or below
// the last this store handed out are already here (the publication was
// applied before a crash cut the write of its version) and are skipped.
// A store of another generation than gen (loaded from another bundle)
// numbers the entries itself, as ApplySource would: its cursors are its
// own, and a client switching to it reads the dataset again.
//
// also are states of other sources written in the same batch: the
// follower's own record of the fleet's log, beside the state of the
// source the publication refreshed.
func (s *Store) ApplyPublished(ctx context.Context, c *rappel.SourceChange, gen uint64, entries []rappel.PublishedChange, also ...rappel.SourceState) error {
	return s.applyChange(ctx, "ApplyPublished", "applying a publication", c, func(b *pebble.Batch, ch *changed, doing string) error {
		for _, st := range also {
			if err := checkSource(st.Feed.Source); err != nil {
				return err
			}
			if err := setJSON(b, stateKey(st.Feed.Source), st); err != nil {
				return fmt.Errorf("%s: encoding source state: %w", doing, err)
			}
		}
		if gen != s.gen || len(entries) == 0 {
			return s.commitLogged(b, ch, doing)
		}
		return s.commitPublished(b, entries, doing)
	})
}

// ApplyPublishing writes c as ApplySource does, for a fleet's leader, in
// two steps: it makes the batch ready, its change log entries numbered,
// and hands what it changes to publish; only if publish succeeds does it
// commit, with the dataset info publish returns (which carries the
// version the fleet gave the publication). A publish that fails leaves
// the store as it was. The numbers of a batch that was published and then
// failed to commit are not handed out again here: they are the fleet's
// now, and applying the publication (ApplyPublished) writes them.
func (s *Store) ApplyPublishing(ctx context.Context, c *rappel.SourceChange, publish func(context.Context, rappel.StagedChange) (*rappel.DatasetInfo, error)) error {
	doing := "applying refresh of " + c.State.Feed.Source
	return s.applyChange(ctx, "ApplyPublishing", doing, c, func(b *pebble.Batch, ch *changed, doing string) error {
		staged := rappel.StagedChange{Gen: s.gen}
		at := s.now()
		seq, err := s.logChanges(b, ch, at)
		if err != nil {
			return fmt.Errorf("%s: logging changes: %w", doing, err)
		}
		byID := make(map[string]*rappel.Record, len(c.PutRecords))
		for _, r := range c.PutRecords {
			byID[r.RecordID] = r
		}
		for i, id := range ch.ids {
			kind := ch.kinds[i]
			staged.Changes = append(staged.Changes, rappel.PublishedChange{Seq: s.seq + uint64(i) + 1, RecordID: id, Kind: changeKinds[kind], At: at})
			if kind == changeDeleted {
				staged.Delete = append(staged.Delete, id)
			} else if r := byID[id]; r != nil {
				staged.Put = append(staged.Put, r)
			}
		}
		info, err := publish(ctx, staged)
		if err != nil {
			return err
		}
		if info != nil {
			if err := setJSON(b, datasetKey, *info); err != nil {
				return fmt.Errorf("%s: encoding dataset info: %w", doing, err)
			}
		}
		if err := s.db.commit(b, doing); err != nil {
			return err
		}
		s.seq = seq
		return nil
	})
}

// commitPublished adds entries to b, those numbered above the last this
// store handed out, with their numbers, and commits b. s.mu must be held,
// as for commitLogged.
func (s *Store) commitPublished(b *pebble.Batch, entries []rappel.PublishedChange, doing string) error {
	seq := s.seq
	var val []byte
	for _, e := range entries {
		if e.Seq <= seq {
			continue
		}
		kind, ok := changeKindByName[e.Kind]
		if !ok {
			return fmt.Errorf("%s: change %d has the kind %q, which this program does not know", doing, e.Seq, e.Kind)
		}
		val = changeValue(val[:0], e.RecordID, kind, e.At)
		if err := b.Set(changeKey(e.Seq), val, nil); err != nil {
			return err
		}
		seq = e.Seq
	}
	err := s.db.commit(b, doing)
	s.seq = seq
	return err
}

// changeKindByName is the kind byte written for each kind a publication
// names: the kinds with a time.
var changeKindByName = map[string]byte{
	rappel.ChangeCreated: changeCreated, rappel.ChangeUpdated: changeUpdated,
	rappel.ChangeArchived: changeArchived, rappel.ChangeDeleted: changeDeleted,
}
