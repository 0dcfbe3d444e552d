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
func (s *Store) ApplyPublished(ctx context.Context, c *rappel.SourceChange, gen uint64, entries []rappel.PublishedChange) error {
	return s.applyChange(ctx, "ApplyPublished", "applying a publication", c, func(b *pebble.Batch, ch *changed, doing string) error {
		if gen != s.gen || len(entries) == 0 {
			return s.commitLogged(b, ch, doing)
		}
		return s.commitPublished(b, entries, doing)
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
