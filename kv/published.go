package kv

import (
	"context"
	"fmt"

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
	if err := checkSource(c.State.Feed.Source); err != nil {
		return err
	}
	if err := checkRecords(c.PutRecords); err != nil {
		return err
	}
	ctx, span := startWrite(ctx, "ApplyPublished")
	defer span.End()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return errNotOpen
	}
	b := s.db.NewBatch()
	defer b.Close()
	var ch changed
	if err := s.addChange(ctx, b, &ch, c); err != nil {
		return endWrite(span, nil, fmt.Errorf("applying a publication: %w", err))
	}
	if gen != s.gen || len(entries) == 0 {
		return endWrite(span, b, s.commitLogged(b, &ch, "applying a publication"))
	}
	seq := s.seq
	var val []byte
	for _, e := range entries {
		if e.Seq <= seq {
			continue
		}
		kind, ok := changeKindByName[e.Kind]
		if !ok {
			return endWrite(span, nil, fmt.Errorf("applying a publication: change %d has the kind %q, which this program does not know", e.Seq, e.Kind))
		}
		val = changeValue(val[:0], e.RecordID, kind, e.At)
		if err := b.Set(changeKey(e.Seq), val, nil); err != nil {
			return endWrite(span, nil, err)
		}
		seq = e.Seq
	}
	err := s.db.commit(b, "applying a publication")
	s.seq = seq
	return endWrite(span, b, err)
}

// changeKindByName is the kind byte written for each kind a publication
// names: the kinds with a time.
var changeKindByName = map[string]byte{
	rappel.ChangeCreated: changeCreated, rappel.ChangeUpdated: changeUpdated,
	rappel.ChangeArchived: changeArchived, rappel.ChangeDeleted: changeDeleted,
}
