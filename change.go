package rappel

import (
	"context"
	"time"
)

// ChangeListener is told when the stored data has changed, so that what is
// derived from it (the read index, alert matching) follows without anyone
// in between: the feeds' refresher calls every listener it was given after
// each refresh, in order.
type ChangeListener interface {
	// DataChanged is called after a refresh committed to the store.
	// records is true when records changed since the listener last
	// caught up, false when only the dataset's info (its refresh time)
	// moved. An error is logged by the caller, and the next refresh calls
	// again with records true.
	DataChanged(ctx context.Context, records bool) error
}

// Kinds of change the change log tells apart (docs/api.md, "Change feed, Atom
// and export"): a record put where none was (created), put over an earlier
// version (updated), put with status archived over a version that was not
// (archived), or removed from the dataset (deleted).
const (
	ChangeCreated  = "created"
	ChangeUpdated  = "updated"
	ChangeArchived = "archived"
	ChangeDeleted  = "deleted"
)

// ChangeKinds are the kinds of change, in the order above.
var ChangeKinds = Vocabulary{ChangeCreated, ChangeUpdated, ChangeArchived, ChangeDeleted}

// Archives reports whether putting r over prev, a stored version, is a
// change of kind ChangeArchived: r is archived and prev was not.
func Archives(prev, r *Record) bool {
	return r.Status == StatusArchived && prev.Status != StatusArchived
}

// ChangeEntry is one entry of the change log: one record changed by one
// committed write.
type ChangeEntry struct {
	// Seq numbers the entry: entries are numbered in commit order, and
	// no number is used twice.
	Seq uint64
	// RecordID is the record changed.
	RecordID string
	// Kind is one of ChangeKinds.
	Kind string
	// At is when the write was committed; zero for an entry written by a
	// version of the program that did not record it.
	At time.Time
	// Record is the record as the store holds it when the entry is read
	// (a later entry may have changed it again), nil when it is no longer
	// stored.
	Record *Record
}

// ChangePage is what ChangeReader.ReadChanges read from one consistent
// view of the store.
type ChangePage struct {
	// Gen is the store's generation: a full load of the dataset starts a
	// new one, and the entries of the old one are gone.
	Gen uint64
	// Floor is the highest number trimmed from the log (or dropped by the
	// full load that started Gen): entries at or below it are not kept.
	Floor uint64
	// Last is the number of the last entry committed, at least Floor.
	Last uint64
	// Entries are the entries asked for, in order; none when Gen is not
	// the generation asked for.
	Entries []ChangeEntry
}

// ChangeReader reads the store's change log for GET /recall/changes.
type ChangeReader interface {
	// ReadChanges returns, from one view of the store, its generation,
	// floor and last number and, when gen is the store's generation, the
	// first limit entries numbered above after, each with the record as
	// stored in that view.
	ReadChanges(ctx context.Context, gen, after uint64, limit int) (*ChangePage, error)
}
