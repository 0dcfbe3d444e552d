package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/rappel-ca/rappel"
)

// The change log lets a reader that keeps its own copy of the records (the
// read index's segments, a change feed) follow the store without reading
// it in full: every write that puts or deletes records adds, in its own
// batch, one entry per record it changed, numbered in commit order. A full
// load (Load, Replace, Ingest) logs no entries; it starts a new generation
// instead, and a reader of an older one reads the dataset again.
//
// Numbers are handed out under Store.mu, which every writer of records
// holds until its batch has committed, so batches commit in the order of
// their numbers and only one holding entries is ever in flight: whatever a
// reader sees of the log is all of it up to some number, and no entry
// below a number it has seen appears later. A number is never handed out
// twice, across restarts too: Open resumes after the last entry or the
// floor, whichever is higher. A batch that fails to commit may leave a gap.

// ErrGenerationChanged is wrapped by Changes when the generation asked for
// is no longer the store's: the dataset was loaded in full since, its
// entries are gone, and the reader must read the dataset again.
var ErrGenerationChanged = errors.New("the dataset was replaced since that generation")

// Kinds of change, the first byte of an entry's value. A byte this program
// does not know is an error, never a guess, as the value version is for
// other values.
//
// The first two carry no time and do not tell a new record from a new
// version; stores written before the change feed hold them, and they read
// as updated and deleted. Every entry written now is one of the other
// four, whose kind byte is followed by the commit time (Unix milliseconds,
// 8 bytes big-endian) and then the record_id.
const (
	changePut      = 0x01
	changeDelete   = 0x02
	changeCreated  = 0x03
	changeUpdated  = 0x04
	changeArchived = 0x05
	changeDeleted  = 0x06
)

// changeKinds names the kind bytes as rappel.ChangeKinds does.
var changeKinds = map[byte]string{
	changePut: rappel.ChangeUpdated, changeDelete: rappel.ChangeDeleted,
	changeCreated: rappel.ChangeCreated, changeUpdated: rappel.ChangeUpdated,
	changeArchived: rappel.ChangeArchived, changeDeleted: rappel.ChangeDeleted,
}

// putKind returns the kind of change a put of r over prev (nil when none
// was stored) is.
func putKind(prev, r *rappel.Record) byte {
	switch {
	case prev == nil:
		return changeCreated
	case rappel.Archives(prev, r):
		return changeArchived
	}
	return changeUpdated
}

// changed collects the records one batch changes, each once, in the order
// first changed, with the kind of its last change: a record put and then
// deleted in one batch is logged once, deleted.
type changed struct {
	ids   []string
	kinds []byte
	// at indexes ids from the first delete on. Before it, puts are
	// appended unchecked: a batch puts each record once (PutRecords keeps
	// the last of a record_id, ApplySource refuses repeats), and a map
	// per put would be most of what logging costs.
	at map[string]int
}

func (c *changed) add(id string, kind byte) {
	if kind == changeDeleted && c.at == nil {
		c.at = make(map[string]int, len(c.ids)+1)
		for i, id := range c.ids {
			c.at[id] = i
		}
	}
	if c.at != nil {
		if i, ok := c.at[id]; ok {
			c.kinds[i] = kind
			return
		}
		c.at[id] = len(c.ids)
	}
	c.ids = append(c.ids, id)
	c.kinds = append(c.kinds, kind)
}

// deleted reports whether c holds id as deleted.
func (c *changed) deleted(id string) bool {
	i, ok := c.at[id]
	return ok && c.kinds[i] == changeDeleted
}

// changeValue appends to dst the value of an entry: its kind, the commit
// time and the record_id.
func changeValue(dst []byte, id string, kind byte, at time.Time) []byte {
	dst = binary.BigEndian.AppendUint64(append(dst, kind), uint64(at.UnixMilli()))
	return append(dst, id...)
}

// change is a decoded entry.
type change struct {
	id   string
	kind byte
	at   time.Time // zero for the two kinds without it
}

func (c change) deleted() bool { return c.kind == changeDelete || c.kind == changeDeleted }

// decodeChange is the inverse of changeValue, and reads the entries of
// the two older kinds too.
func decodeChange(val []byte) (change, error) {
	if len(val) >= 2 && (val[0] == changePut || val[0] == changeDelete) {
		return change{id: string(val[1:]), kind: val[0]}, nil
	}
	if len(val) < 10 || changeKinds[val[0]] == "" {
		return change{}, fmt.Errorf("change log value %q is not one this program reads", val)
	}
	ms := int64(binary.BigEndian.Uint64(val[1:9]))
	return change{id: string(val[9:]), kind: val[0], at: time.UnixMilli(ms).UTC()}, nil
}

// encodeChanges is the value of changesKey: the generation, then the
// floor, 8 bytes big-endian each. The floor is the highest number whose
// entry, and every entry below it, is deleted (trimmed, or dropped by a
// full load).
func encodeChanges(gen, floor uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(make([]byte, 0, 16), gen), floor)
}

// readChanges returns the generation and floor stored in r; both are 0 in a
// store that never had them.
func readChanges(r pebble.Reader) (gen, floor uint64, err error) {
	val, closer, err := r.Get(changesKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("reading change log generation: %w", err)
	}
	defer closer.Close()
	if len(val) != 16 {
		return 0, 0, fmt.Errorf("reading change log generation: %d bytes, want 16", len(val))
	}
	return binary.BigEndian.Uint64(val), binary.BigEndian.Uint64(val[8:]), nil
}

// lastChange returns the number of the last entry in r, or 0 when the log
// is empty.
func lastChange(r pebble.Reader) (uint64, error) {
	it, err := r.NewIter(prefixOptions([]byte(changePrefix)))
	if err != nil {
		return 0, fmt.Errorf("opening iterator: %w", err)
	}
	var seq uint64
	if it.Last() {
		seq, err = changeKeySeq(it.Key())
	}
	if err := errors.Join(err, it.Error(), it.Close()); err != nil {
		return 0, fmt.Errorf("reading the last change: %w", err)
	}
	return seq, nil
}

// position returns the generation and the last number committed as r sees
// them: the last entry, or the floor when the log above it is empty.
func position(r pebble.Reader) (gen, seq uint64, err error) {
	gen, floor, err := readChanges(r)
	if err != nil {
		return 0, 0, err
	}
	last, err := lastChange(r)
	if err != nil {
		return 0, 0, err
	}
	return gen, max(last, floor), nil
}

// openChanges reads the change log's position into s, at Open.
func (s *Store) openChanges() error {
	gen, floor, err := readChanges(s.db)
	if err != nil {
		return err
	}
	last, err := lastChange(s.db)
	if err != nil {
		return err
	}
	s.gen, s.floor, s.seq = gen, floor, max(last, floor)
	return nil
}

// commitLogged adds to b one entry per record of ch, numbered after the
// last number handed out, and commits b as commit does. s.mu must be held
// from before the numbers are taken until the commit returns (see the
// ordering above). The numbers count as handed out once the commit was
// tried, even when it failed: a failed commit may still have been applied,
// and a gap is harmless where a number used twice is not.
func (s *Store) commitLogged(b *pebble.Batch, ch *changed, doing string) error {
	seq, err := s.logChanges(b, ch, s.now())
	if err != nil {
		return fmt.Errorf("%s: logging changes: %w", doing, err)
	}
	err = s.db.commit(b, doing)
	s.seq = seq
	return err
}

// benchNoLog turns the log off. Only a benchmark sets it, to measure in
// one run what the log costs a write.
var benchNoLog = false

// logChanges adds to b one entry per record of ch, numbered after s.seq,
// made at, and returns the last number.
func (s *Store) logChanges(b *pebble.Batch, ch *changed, at time.Time) (uint64, error) {
	seq := s.seq
	if benchNoLog {
		return seq, nil
	}
	var val []byte
	for i, id := range ch.ids {
		seq++
		val = changeValue(val[:0], id, ch.kinds[i], at)
		if err := b.Set(changeKey(seq), val, nil); err != nil {
			return 0, err
		}
	}
	return seq, nil
}

// restartChanges adds to b, the batch of a full load, the start of a new
// generation: every entry is deleted and the floor raised to the last
// number handed out, so that numbers are not reused; at, when set, is the
// generation and number to start at instead. It returns the new
// generation, which the caller sets in s.gen once the commit was tried,
// and the number, which it sets in s.seq and s.floor once it succeeded.
// s.mu must be held.
func (s *Store) restartChanges(b *pebble.Batch, at *[2]uint64) (gen, seq uint64, err error) {
	if s.seq > s.floor {
		if err := b.DeleteRange([]byte(changePrefix), prefixEnd([]byte(changePrefix)), nil); err != nil {
			return 0, 0, fmt.Errorf("clearing change log: %w", err)
		}
	}
	gen, seq = s.gen+1, s.seq
	if at != nil {
		// A follower takes its leader's generation and number
		// (ReplacePublished).
		gen, seq = at[0], at[1]
	}
	if err := b.Set(changesKey, encodeChanges(gen, seq), nil); err != nil {
		return 0, 0, fmt.Errorf("starting change log generation: %w", err)
	}
	return gen, seq, nil
}

// trimChanges deletes the entries up to upTo, at most s.seq and none
// younger than s.KeepChanges, in one synced batch that raises the floor
// to the last deleted. s.mu must be held.
func (s *Store) trimChanges(upTo uint64) error {
	upTo = min(upTo, s.seq)
	if upTo <= s.floor {
		return nil // deleted already
	}
	if s.KeepChanges > 0 {
		var err error
		if upTo, err = s.keptFrom(upTo); err != nil {
			return err
		}
		if upTo <= s.floor {
			return nil
		}
	}
	return s.write(func(b *pebble.Batch) error {
		if err := b.DeleteRange([]byte(changePrefix), changeKey(upTo+1), nil); err != nil {
			return fmt.Errorf("trimming change log: %w", err)
		}
		if err := b.Set(changesKey, encodeChanges(s.gen, upTo), nil); err != nil {
			return fmt.Errorf("trimming change log: %w", err)
		}
		if err := s.db.commit(b, "trimming change log"); err != nil {
			return err
		}
		s.floor = upTo
		return nil
	})
}

// now reads the store's clock.
func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// keptFrom returns the highest number, at most upTo, up to which every
// entry is older than s.KeepChanges: entries are in commit order, so
// the first young one ends the scan. An entry without a time is old.
func (s *Store) keptFrom(upTo uint64) (uint64, error) {
	cutoff := s.now().Add(-s.KeepChanges)
	last := s.floor
	errYoung := errors.New("young")
	err := scanChanges(context.Background(), s.db, s.floor, upTo, func(seq uint64, c change) error {
		if !c.at.IsZero() && !c.at.Before(cutoff) {
			return errYoung
		}
		last = seq
		return nil
	})
	if err != nil && !errors.Is(err, errYoung) {
		return 0, fmt.Errorf("trimming change log: %w", err)
	}
	return max(last, s.floor), nil
}

// ReadChanges returns, from one snapshot of the store, the change log's
// generation, floor and last number and, when gen is the store's
// generation, the first limit entries numbered above after (at most
// limit, which must be positive), each with its record as the snapshot
// holds it. It implements rappel.ChangeReader.
func (s *Store) ReadChanges(ctx context.Context, gen, after uint64, limit int) (*rappel.ChangePage, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	snap := s.db.NewSnapshot()
	defer snap.Close()
	cur, floor, err := readChanges(snap)
	if err != nil {
		return nil, err
	}
	last, err := lastChange(snap)
	if err != nil {
		return nil, err
	}
	page := &rappel.ChangePage{Gen: cur, Floor: floor, Last: max(last, floor)}
	if cur != gen || after >= page.Last || limit <= 0 {
		return page, nil
	}
	errFull := errors.New("full")
	err = scanChanges(ctx, snap, after, page.Last, func(seq uint64, c change) error {
		e := rappel.ChangeEntry{Seq: seq, RecordID: c.id, Kind: changeKinds[c.kind], At: c.at}
		if !c.deleted() {
			if e.Record, err = snapshotRecord(snap, c.id); err != nil {
				return err
			}
		}
		page.Entries = append(page.Entries, e)
		if len(page.Entries) == limit {
			return errFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFull) {
		return nil, err
	}
	return page, nil
}

// snapshotRecord returns the record id as r holds it, nil when none.
func snapshotRecord(r pebble.Reader, id string) (*rappel.Record, error) {
	val, closer, err := r.Get(recordKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading record %q: %w", id, err)
	}
	defer closer.Close()
	rec := &rappel.Record{}
	if err := decodeValue(val, rec); err != nil {
		return nil, fmt.Errorf("decoding record %q: %w", id, err)
	}
	return rec, nil
}

// ChangeSeq returns the store's generation and the number of the last
// change committed. A reader that keeps its own copy of the records calls
// it before it reads the dataset in full (ForEachRecord), then follows
// Changes(gen, seq): a record changed during that read is seen twice,
// never missed. seq is 0 when nothing was ever logged. Both come from one
// snapshot of the store, so that they agree with each other.
func (s *Store) ChangeSeq(ctx context.Context) (gen, seq uint64, err error) {
	if err := s.ready(ctx); err != nil {
		return 0, 0, err
	}
	snap := s.db.NewSnapshot()
	defer snap.Close()
	return position(snap)
}

// Changes calls fn with every entry of the change log numbered above
// after, in order: the record_id changed and whether it was deleted (else
// it was put). A reader looks the record up when it applies an entry: the
// entry says which record changed, the store what it now holds. Changes
// stops at the first error fn returns and returns it. ctx is checked
// between entries.
//
// gen must be the store's generation, as ChangeSeq returned it: when a
// full load has started another since, Changes returns an error wrapping
// ErrGenerationChanged before calling fn at all. The log and its
// generation are read from one snapshot, so no entry of a newer
// generation is ever passed for an older one. Every entry of a generation
// is numbered above the numbers of the one before, so after may be below
// the generation's first (0 reads all of it); entries that TrimChanges
// deleted are not passed, and their absence is not an error.
func (s *Store) Changes(ctx context.Context, gen, after uint64, fn func(seq uint64, id string, deleted bool) error) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	snap := s.db.NewSnapshot()
	defer snap.Close()
	cur, _, err := readChanges(snap)
	if err != nil {
		return err
	}
	if cur != gen {
		return fmt.Errorf("reading changes of generation %d: the store is at generation %d: %w", gen, cur, ErrGenerationChanged)
	}
	if after == ^uint64(0) {
		return nil
	}
	return scanChanges(ctx, snap, after, ^uint64(0)-1, func(seq uint64, c change) error {
		return fn(seq, c.id, c.deleted())
	})
}

// scanChanges calls fn with each entry of r numbered above after and up
// to upTo, which is below the largest number, in order.
func scanChanges(ctx context.Context, r pebble.Reader, after, upTo uint64, fn func(seq uint64, c change) error) error {
	opts := &pebble.IterOptions{LowerBound: changeKey(after + 1), UpperBound: changeKey(upTo + 1)}
	return scanRange(ctx, r, opts, func(key, val []byte) error {
		seq, err := changeKeySeq(key)
		if err != nil {
			return err
		}
		c, err := decodeChange(val)
		if err != nil {
			return fmt.Errorf("reading change %d: %w", seq, err)
		}
		return fn(seq, c)
	})
}

// TrimChanges deletes the entries numbered up to upTo, durably: a reader
// whose copy covers them (a merged segment) no longer needs them, and the
// log would otherwise grow with every write. Numbers above the last one
// handed out are not trimmed in advance, and numbers are never handed out
// again. The log keeps no reader's place: with more than one reader, trim
// only up to what every one of them has read.
func (s *Store) TrimChanges(ctx context.Context, upTo uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ready(ctx); err != nil {
		return err
	}
	return s.trimChanges(upTo)
}

// IndexState returns the bytes last given to PutIndexState, or nil and no
// error when none were. The read index keeps there what it needs to start
// from its files rather than from the records (which segments are live,
// and the generation and number they cover); the store does not read them.
func (s *Store) IndexState(ctx context.Context) ([]byte, error) {
	var state []byte
	_, err := s.get(ctx, indexStateKey, func(val []byte) error {
		if len(val) == 0 || val[0] != valueVersion {
			return errors.New("unknown value version")
		}
		state = append([]byte{}, val[1:]...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading index state: %w", err)
	}
	return state, nil
}

// PutIndexState stores b as the index state, durably (pebble.Sync), so
// that an index which writes it once its segment files are synced names,
// after a crash, only files that are whole. A full load leaves it as it
// is: the index finds the new generation in it and builds again.
func (s *Store) PutIndexState(ctx context.Context, b []byte) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	val := append([]byte{valueVersion}, b...)
	if err := s.db.Set(indexStateKey, val, pebble.Sync); err != nil {
		return fmt.Errorf("writing index state: %w", err)
	}
	return nil
}
