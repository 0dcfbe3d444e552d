package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/cockroachdb/pebble/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/jsonx"
)

// valueVersion is the first byte of every stored value: 1 means the rest is
// JSON.
const valueVersion = 1

// PutRecords writes recs, replacing the stored versions of their record_ids
// and the index keys of those versions, in one batch committed with
// pebble.Sync. When recs holds a record_id more than once the last one wins.
// A record whose encoding equals the stored one is left alone. ctx is checked
// between records; when it is done nothing is written.
func (s *Store) PutRecords(ctx context.Context, recs []*rappel.Record) error {
	last := make(map[string]int, len(recs))
	for i, r := range recs {
		if r == nil || r.RecordID == "" {
			return rappel.Errorf(rappel.EINVALID, "Record %d of %d has no record_id.", i+1, len(recs))
		}
		if !utf8.ValidString(r.RecordID) {
			// JSON would store it altered, under a key that no longer
			// matches it.
			return rappel.Errorf(rappel.EINVALID, "Record %d of %d has a record_id %q that is not UTF-8.", i+1, len(recs), r.RecordID)
		}
		last[r.RecordID] = i
	}
	return s.writeLocked(ctx, "PutRecords", func(ctx context.Context, span trace.Span, b *pebble.Batch) error {
		var ch changed
		var val []byte
		for i, r := range recs {
			if err := ctx.Err(); err != nil {
				return err
			}
			if last[r.RecordID] != i {
				continue
			}
			var err error
			if val, err = encodeValue(val[:0], r); err != nil {
				return fmt.Errorf("encoding record %q: %w", r.RecordID, err)
			}
			if err := s.putRecord(b, &ch, r, val); err != nil {
				return fmt.Errorf("putting record %q: %w", r.RecordID, err)
			}
		}
		return endWrite(span, b, s.commitLogged(b, &ch, "putting records"))
	})
}

// putRecord adds to b the writes that replace r's stored version by r,
// encoded as val, and adds r to ch unless the stored version is the same.
func (s *Store) putRecord(b *pebble.Batch, ch *changed, r *rappel.Record, val []byte) error {
	key := recordKey(r.RecordID)
	prev, same, err := s.storedRecord(key, val)
	if err != nil || same {
		return err
	}
	var oldKeys [][]byte
	if prev != nil {
		oldKeys = indexKeys(prev)
	}
	if err := applyIndexDiff(b, oldKeys, indexKeys(r)); err != nil {
		return err
	}
	ch.add(r.RecordID, putKind(prev, r))
	return b.Set(key, val, nil)
}

// storedRecord reads the record stored under key. same reports that its
// stored value equals val, in which case it is not decoded. prev is nil when
// there is none.
func (s *Store) storedRecord(key, val []byte) (prev *rappel.Record, same bool, err error) {
	old, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading stored version: %w", err)
	}
	defer closer.Close()
	if val != nil && bytes.Equal(old, val) {
		return nil, true, nil
	}
	prev = &rappel.Record{}
	if err := decodeValue(old, prev); err != nil {
		return nil, false, fmt.Errorf("decoding stored version: %w", err)
	}
	return prev, false, nil
}

// applyIndexDiff deletes the keys of oldKeys that are not in newKeys and
// sets the keys of newKeys that are not in oldKeys. Both are sorted without duplicates.
func applyIndexDiff(b writer, oldKeys, newKeys [][]byte) error {
	i, j := 0, 0
	for i < len(oldKeys) || j < len(newKeys) {
		c := 0
		switch {
		case i == len(oldKeys):
			c = 1
		case j == len(newKeys):
			c = -1
		default:
			c = bytes.Compare(oldKeys[i], newKeys[j])
		}
		var err error
		switch {
		case c < 0:
			err = b.Delete(oldKeys[i], nil)
			i++
		case c > 0:
			err = b.Set(newKeys[j], nil, nil)
			j++
		default:
			i, j = i+1, j+1
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// DeleteRecords removes the records with ids and their index keys in one
// batch committed with pebble.Sync. Ids with no record are ignored. ctx is
// checked between records; when it is done nothing is deleted.
func (s *Store) DeleteRecords(ctx context.Context, ids []string) error {
	return s.writeLocked(ctx, "DeleteRecords", func(ctx context.Context, span trace.Span, b *pebble.Batch) error {
		var ch changed
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := s.deleteRecord(b, &ch, id); err != nil {
				return err
			}
		}
		return endWrite(span, b, s.commitLogged(b, &ch, "deleting records"))
	})
}

// commit commits b, a batch of d, with pebble.Sync unless it is empty,
// through the guard (guard.go), which bounds the wait.
func (d *guardedDB) commit(b *pebble.Batch, doing string) error {
	if b.Empty() {
		return nil
	}
	if err := d.commitCopy(b, pebble.Sync); err != nil {
		return fmt.Errorf("%s: committing batch of %d operations: %w", doing, b.Count(), err)
	}
	return nil
}

// Record returns the record with id, or an *rappel.Error with code
// ENOTFOUND.
func (s *Store) Record(ctx context.Context, id string) (*rappel.Record, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	r, err := snapshotRecord(s.db, id)
	if err == nil && r == nil {
		return nil, &rappel.Error{Code: rappel.ENOTFOUND, Message: fmt.Sprintf("No recall has record_id %q.", id)}
	}
	return r, err
}

// ForEachRecord calls fn for every record in record_id order, as of the
// moment it starts (writes made meanwhile are not seen), and stops at the
// first error fn returns, returning it. ctx is checked between records.
func (s *Store) ForEachRecord(ctx context.Context, fn func(*rappel.Record) error) error {
	return s.scan(ctx, []byte(recordPrefix), func(key, val []byte) error {
		r := &rappel.Record{}
		if err := decodeValue(val, r); err != nil {
			return fmt.Errorf("decoding record %q: %w", recordKeyID(key), err)
		}
		return fn(r)
	})
}

// encodeValue appends to dst the version byte and v's JSON, the bytes
// encoding/json writes (jsonx): PutRecords compares them with those stored
// by any earlier version of the program.
func encodeValue(dst []byte, v any) ([]byte, error) {
	js, err := jsonx.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(append(dst, valueVersion), js...), nil
}

// decodeValue decodes a value written by encodeValue into v, as
// encoding/json does (jsonx). Strings are copied, so that a string kept from
// a record (the read index keeps ids and field values) does not hold the
// whole value in memory.
func decodeValue(val []byte, v any) error {
	if len(val) == 0 {
		return errors.New("empty value")
	}
	if val[0] != valueVersion {
		return fmt.Errorf("unknown value version %d (this program reads version %d)", val[0], valueVersion)
	}
	return jsonx.Unmarshal(val[1:], v)
}

// deleteRecord adds to b the deletion of the stored record id and of every
// index key it had, and id to ch; an id with no stored record, or one ch
// holds as deleted already, adds nothing.
func (s *Store) deleteRecord(b *pebble.Batch, ch *changed, id string) error {
	if ch.deleted(id) {
		return nil
	}
	key := recordKey(id)
	prev, _, err := s.storedRecord(key, nil)
	if err != nil {
		return fmt.Errorf("deleting record %q: %w", id, err)
	}
	if prev == nil {
		return nil
	}
	if err := applyIndexDiff(b, indexKeys(prev), nil); err != nil {
		return fmt.Errorf("deleting record %q: %w", id, err)
	}
	if err := b.Delete(key, nil); err != nil {
		return fmt.Errorf("deleting record %q: %w", id, err)
	}
	ch.add(id, changeDeleted)
	return nil
}
