package kv

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/jsonx"
)

// Keyspaces of the live feeds; see the key layout in the package doc.
const (
	partialPrefix = "s/"
	feedPrefix    = "f/"
	statePrefix   = feedPrefix + "state/"
	rawPrefix     = feedPrefix + "raw/"
	dataPrefix    = feedPrefix + "data/"
)

// Store keeps what the live feeds need between refreshes.
var _ rappel.FeedStore = (*Store)(nil)

// hashLen is the length of a partial record's content hash in its value.
const hashLen = 16

// partialKey is s/<source>/<record_id>.
func partialKey(source, id string) []byte {
	return append(sourcePrefix(partialPrefix, source), id...)
}

// sourcePrefix is prefix followed by source and a slash. Source names hold
// no slash (checkSource), so no source's keys run into another's.
func sourcePrefix(prefix, source string) []byte {
	k := make([]byte, 0, len(prefix)+len(source)+1+32)
	return append(append(append(k, prefix...), source...), '/')
}

// checkSource refuses a source name that could run into another's keys.
func checkSource(source string) error {
	if source == "" || bytes.ContainsAny([]byte(source), "/\x00") {
		return rappel.Errorf(rappel.EINVALID, "Source name %q is empty or holds a slash.", source)
	}
	return nil
}

// encodePartial is the value of a partial record: the version byte, the
// record's content hash (rappel.ContentHash) and its JSON. The hash is
// compared with rappel.ContentHash, which encodes with encoding/json: jsonx
// writes the same bytes.
func encodePartial(dst []byte, r *rappel.Record) ([]byte, error) {
	js, err := jsonx.Marshal(r)
	if err != nil {
		return nil, err
	}
	sum, err := hexHash(rappel.HashBytes(js))
	if err != nil {
		return nil, err
	}
	dst = append(dst, valueVersion)
	dst = append(dst, sum...)
	return append(dst, js...), nil
}

// decodePartialHash returns the hex content hash of a partial's value.
func decodePartialHash(val []byte) (string, error) {
	if len(val) < 1+hashLen || val[0] != valueVersion {
		return "", fmt.Errorf("partial record value of %d bytes, version %v: not one this program reads", len(val), val[:min(1, len(val))])
	}
	return hex.EncodeToString(val[1 : 1+hashLen]), nil
}

func decodePartial(val []byte, r *rappel.Record) error {
	if _, err := decodePartialHash(val); err != nil {
		return err
	}
	return jsonx.Unmarshal(val[1+hashLen:], r)
}

// hexHash decodes a content hash written by rappel.HashBytes.
func hexHash(h string) ([]byte, error) {
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != hashLen {
		return nil, fmt.Errorf("content hash %q is not %d hex digits", h, 2*hashLen)
	}
	return b, nil
}

// PartialHashes calls fn with the record_id and content hash of every
// partial record of source, in record_id order, as of when it starts.
func (s *Store) PartialHashes(ctx context.Context, source string, fn func(id, hash string) error) error {
	if err := checkSource(source); err != nil {
		return err
	}
	p := sourcePrefix(partialPrefix, source)
	return s.scan(ctx, p, func(key, val []byte) error {
		h, err := decodePartialHash(val)
		if err != nil {
			return fmt.Errorf("reading partial record %q of %s: %w", key[len(p):], source, err)
		}
		return fn(string(key[len(p):]), h)
	})
}

// Partials returns the partial records of source among ids, by record_id.
// A nil ids returns them all.
func (s *Store) Partials(ctx context.Context, source string, ids []string) (map[string]*rappel.Record, error) {
	if err := checkSource(source); err != nil {
		return nil, err
	}
	out := make(map[string]*rappel.Record, len(ids))
	decode := func(id string, val []byte) error {
		r := &rappel.Record{}
		if err := decodePartial(val, r); err != nil {
			return fmt.Errorf("decoding partial record %q of %s: %w", id, source, err)
		}
		out[id] = r
		return nil
	}
	if ids == nil {
		p := sourcePrefix(partialPrefix, source)
		err := s.scan(ctx, p, func(key, val []byte) error { return decode(string(key[len(p):]), val) })
		return out, err
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		val, closer, err := s.db.Get(partialKey(source, id))
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading partial record %q of %s: %w", id, source, err)
		}
		err = decode(id, val)
		closer.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RawIndex calls fn for every raw record of source, without its data, in
// key order.
func (s *Store) RawIndex(ctx context.Context, source string, fn func(rappel.RawRecord) error) error {
	if err := checkSource(source); err != nil {
		return err
	}
	p := sourcePrefix(rawPrefix, source)
	return s.scan(ctx, p, func(key, val []byte) error {
		var r rappel.RawRecord
		if err := decodeValue(val, &r); err != nil {
			return fmt.Errorf("decoding raw record %q of %s: %w", key[len(p):], source, err)
		}
		return fn(r)
	})
}

// RawData calls fn for every raw record of source with its data, in key
// order.
func (s *Store) RawData(ctx context.Context, source string, fn func(rappel.RawRecord) error) error {
	if err := checkSource(source); err != nil {
		return err
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	// One snapshot for both scans, so that index and data match.
	snap := s.db.NewSnapshot()
	defer snap.Close()
	dp := sourcePrefix(dataPrefix, source)
	it, err := snap.NewIterWithContext(ctx, prefixOptions(dp))
	if err != nil {
		return fmt.Errorf("opening iterator: %w", err)
	}
	defer it.Close()
	it.First()
	p := sourcePrefix(rawPrefix, source)
	return scanReader(ctx, snap, p, func(key, val []byte) error {
		var r rappel.RawRecord
		if err := decodeValue(val, &r); err != nil {
			return fmt.Errorf("decoding raw record %q of %s: %w", key[len(p):], source, err)
		}
		// Both keyspaces are in key order: advance the data iterator to
		// this record's key.
		want := append(bytes.Clone(dp), r.Key...)
		for it.Valid() && bytes.Compare(it.Key(), want) < 0 {
			it.Next()
		}
		if it.Valid() && bytes.Equal(it.Key(), want) {
			v, err := it.ValueAndErr()
			if err != nil {
				return fmt.Errorf("reading raw data %q of %s: %w", r.Key, source, err)
			}
			if len(v) == 0 || v[0] != valueVersion {
				return fmt.Errorf("reading raw data %q of %s: unknown value version", r.Key, source)
			}
			r.Data = bytes.Clone(v[1:])
		}
		return fn(r)
	})
}

// scan calls fn with every key and value under prefix, in key order.
func (s *Store) scan(ctx context.Context, prefix []byte, fn func(key, val []byte) error) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	return scanReader(ctx, s.db, prefix, fn)
}

// scanValues calls fn with every value under prefix, decoded into a new T,
// in key order; what names the values in errors.
func scanValues[T any](ctx context.Context, s *Store, prefix []byte, what string, fn func(*T) error) error {
	return s.scan(ctx, prefix, func(_, val []byte) error {
		v := new(T)
		if err := decodeValue(val, v); err != nil {
			return fmt.Errorf("decoding %s: %w", what, err)
		}
		return fn(v)
	})
}

func scanReader(ctx context.Context, r pebble.Reader, prefix []byte, fn func(key, val []byte) error) error {
	return scanRange(ctx, r, prefixOptions(prefix), fn)
}

// scanRange calls fn with every key and value within the bounds of opts,
// in key order, checking ctx between keys.
func scanRange(ctx context.Context, r pebble.Reader, opts *pebble.IterOptions, fn func(key, val []byte) error) error {
	it, err := r.NewIterWithContext(ctx, opts)
	if err != nil {
		return fmt.Errorf("opening iterator: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		val, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("reading %q: %w", it.Key(), err)
		}
		if err := fn(it.Key(), val); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("scanning %q: %w", opts.LowerBound, err)
	}
	return nil
}

// ApplySource writes c in one batch committed with pebble.Sync: the
// source's partial records, raw records and state, the assembled records
// and their index keys, the dataset info and the batch of new recalls. ctx
// is checked between records; when it is done nothing is written.
func (s *Store) ApplySource(ctx context.Context, c *rappel.SourceChange) error {
	return s.applyChange(ctx, "ApplySource", "applying refresh of "+c.State.Feed.Source, c, s.commitLogged)
}

// applyChange writes c in one batch, as ApplySource describes, and commits
// it with commit, which adds the change log's entries: op names the span,
// doing the write in errors.
func (s *Store) applyChange(ctx context.Context, op, doing string, c *rappel.SourceChange, commit func(b *pebble.Batch, ch *changed, doing string) error) error {
	source := c.State.Feed.Source
	if err := checkSource(source); err != nil {
		return err
	}
	if err := checkRecords(c.PutRecords); err != nil {
		return err
	}
	return s.writeLocked(ctx, op, func(ctx context.Context, span trace.Span, b *pebble.Batch) error {
		span.SetAttributes(attribute.String("rappel.feed.source", source))
		var ch changed
		if err := s.addChange(ctx, b, &ch, c); err != nil {
			return endWrite(span, nil, fmt.Errorf("%s: %w", doing, err))
		}
		return endWrite(span, b, commit(b, &ch, doing))
	})
}

// checkRecords refuses records that PutRecords would refuse.
func checkRecords(recs []*rappel.Record) error {
	seen := make(map[string]bool, len(recs))
	for i, r := range recs {
		if r == nil || r.RecordID == "" {
			return rappel.Errorf(rappel.EINVALID, "Record %d of %d has no record_id.", i+1, len(recs))
		}
		if seen[r.RecordID] {
			return rappel.Errorf(rappel.EINVALID, "Record %q appears twice in one change.", r.RecordID)
		}
		seen[r.RecordID] = true
	}
	return nil
}

// addChange adds c's writes to b, and the records they change to ch. s.mu
// must be held.
func (s *Store) addChange(ctx context.Context, b *pebble.Batch, ch *changed, c *rappel.SourceChange) error {
	if err := addSource(ctx, b, c); err != nil {
		return err
	}
	if err := s.addRecords(ctx, b, ch, c.PutRecords, c.DeleteRecords); err != nil {
		return err
	}
	if c.Info != nil {
		if err := setJSON(b, datasetKey, *c.Info); err != nil {
			return fmt.Errorf("encoding dataset info: %w", err)
		}
	}
	if n := c.NewRecalls; n != nil && len(n.RecordIDs) > 0 {
		if err := s.addToQueue(b, newRecallsQueue, n, func(seq uint64) { n.Seq = seq }); err != nil {
			return err
		}
	}
	if e := c.Events; e != nil && !e.Empty() {
		return s.addToQueue(b, recordEventsQueue, e, func(seq uint64) { e.Seq = seq })
	}
	return nil
}

// addSource adds the writes of c that concern its source alone, which
// need nothing read from the store: its partial records, raw records and
// state.
func addSource(ctx context.Context, w writer, c *rappel.SourceChange) error {
	source := c.State.Feed.Source
	var val []byte
	var err error
	for _, r := range c.PutPartials {
		if err := ctx.Err(); err != nil {
			return err
		}
		if val, err = encodePartial(val[:0], r); err != nil {
			return fmt.Errorf("encoding partial record %q: %w", r.RecordID, err)
		}
		if err := w.Set(partialKey(source, r.RecordID), val, nil); err != nil {
			return err
		}
	}
	for _, id := range c.DeletePartials {
		if err := w.Delete(partialKey(source, id), nil); err != nil {
			return err
		}
	}
	if err := addRaw(w, source, c.PutRaw, c.DeleteRaw); err != nil {
		return err
	}
	if err := setJSON(w, stateKey(source), c.State); err != nil {
		return fmt.Errorf("encoding source state: %w", err)
	}
	return nil
}

// addRecords adds the writes that replace the stored versions of the
// assembled records put, and their index keys, and delete those of del;
// and the records changed to ch.
func (s *Store) addRecords(ctx context.Context, b *pebble.Batch, ch *changed, put []*rappel.Record, del []string) error {
	if err := encodeRecords(ctx, put, func(r *rappel.Record, val []byte) error { return s.putRecord(b, ch, r, val) }); err != nil {
		return err
	}
	for _, id := range del {
		if err := s.deleteRecord(b, ch, id); err != nil {
			return err
		}
	}
	return nil
}

// encodeRecords calls put with each record of recs and its encoded value,
// checking ctx between records.
func encodeRecords(ctx context.Context, recs []*rappel.Record, put func(r *rappel.Record, val []byte) error) error {
	var val []byte
	var err error
	for _, r := range recs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if val, err = encodeValue(val[:0], r); err != nil {
			return fmt.Errorf("encoding record %q: %w", r.RecordID, err)
		}
		if err := put(r, val); err != nil {
			return fmt.Errorf("putting record %q: %w", r.RecordID, err)
		}
	}
	return nil
}

// addRaw adds the writes of raw records: their index entry and, when they
// carry it, their data (a raw record without data leaves the stored data
// as it is).
func addRaw(b writer, source string, put []rappel.RawRecord, del []string) error {
	ip, dp := sourcePrefix(rawPrefix, source), sourcePrefix(dataPrefix, source)
	var val []byte
	for _, r := range put {
		idx := r
		idx.Data = nil
		if err := setJSON(b, append(bytes.Clone(ip), r.Key...), idx); err != nil {
			return fmt.Errorf("encoding raw record %q: %w", r.Key, err)
		}
		if r.Data == nil {
			continue // the index alone: the data, if any, stays
		}
		dk := append(bytes.Clone(dp), r.Key...)
		val = append(append(val[:0], valueVersion), r.Data...)
		if err := b.Set(dk, val, nil); err != nil {
			return err
		}
	}
	for _, k := range del {
		if err := b.Delete(append(bytes.Clone(ip), k...), nil); err != nil {
			return err
		}
		if err := b.Delete(append(bytes.Clone(dp), k...), nil); err != nil {
			return err
		}
	}
	return nil
}

// setJSON sets key to the version byte and v's JSON.
func setJSON(b writer, key []byte, v any) error {
	val, err := encodeValue(nil, v)
	if err != nil {
		return err
	}
	return b.Set(key, val, nil)
}

// dataPrefixes are the keyspaces of the data Load writes and Replace
// replaces: assembled records, their index keys, partial records, and the
// feeds' states and raw records.
var dataPrefixes = [][]byte{[]byte(recordPrefix), []byte(indexPrefix), []byte(partialPrefix), []byte(feedPrefix)}

// deleteData adds to b the deletion of all the store's data
// (dataPrefixes).
func deleteData(b *pebble.Batch) error {
	for _, p := range dataPrefixes {
		if err := b.DeleteRange(p, prefixEnd(p), nil); err != nil {
			return err
		}
	}
	return nil
}

// Replace makes the store hold the data given and nothing else of its
// kind, as Load would write it into an empty store, in one batch committed
// with pebble.Sync: every assembled record and its index keys, every
// source's partial records, raw records (index and data) and state are
// deleted and the given ones written, and the dataset info replaced, so
// that a crash leaves the old data or the new, never a mix. What is not
// data stays: subscriptions, the alert outbox and its marks, request
// counts, the index state and the schema version. The change log starts a
// new generation instead of logging each record (restartChanges).
func (s *Store) Replace(ctx context.Context, recs []*rappel.Record, partials map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, states []rappel.SourceState, info rappel.DatasetInfo) error {
	return s.load(ctx, true, recs, partials, raw, states, info, nil)
}

// ReplacePublished is Replace for a fleet's follower applying a
// publication of the whole dataset (rappel.Publication.Replace), and for
// its leader once that publication is made: its change log takes the
// generation gen and number seq the publication gives, so that a change
// feed cursor stays good on every node of the fleet.
func (s *Store) ReplacePublished(ctx context.Context, recs []*rappel.Record, partials map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, states []rappel.SourceState, info rappel.DatasetInfo, gen, seq uint64) error {
	return s.load(ctx, true, recs, partials, raw, states, info, &[2]uint64{gen, seq})
}

// load is Load, or Replace when replace is set; at is ReplacePublished's.
func (s *Store) load(ctx context.Context, replace bool, recs []*rappel.Record, partials map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, states []rappel.SourceState, info rappel.DatasetInfo, at *[2]uint64) error {
	if err := checkLoad(recs, states); err != nil {
		return err
	}
	if replace {
		// Through sstables, not a batch (replace.go).
		ctx, span := startWrite(ctx, "Replace")
		defer span.End()
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.ready(ctx); err != nil {
			return err
		}
		return endWrite(span, nil, s.replace(ctx, recs, partials, raw, states, info, at))
	}
	return s.writeLocked(ctx, "Load", func(ctx context.Context, span trace.Span, b *pebble.Batch) error {
		if empty, err := s.empty(); err != nil {
			return err
		} else if !empty {
			return errors.New("loading records: the store already holds records")
		}
		if err := loadWrites(ctx, b, recs, partials, raw, states, info); err != nil {
			return err
		}
		// A load logs no entries: it starts a new generation, in the same
		// batch.
		gen, seq, err := s.restartChanges(b, at)
		if err != nil {
			return err
		}
		err = s.db.commit(b, "loading records")
		s.gen = gen
		if err == nil {
			s.seq, s.floor = seq, seq
		}
		return endWrite(span, b, err)
	})
}

// checkLoad refuses what Load and WriteTables would refuse to write.
func checkLoad(recs []*rappel.Record, states []rappel.SourceState) error {
	if err := checkRecords(recs); err != nil {
		return err
	}
	for _, st := range states {
		if err := checkSource(st.Feed.Source); err != nil {
			return err
		}
	}
	return nil
}

// loadWrites adds to w every write of a load into an empty store: the
// assembled records and their index keys, each source's partial records,
// raw records and state, and the dataset info. Load's batch and
// WriteTables' sstables both take their keys from here, so that a store
// filled either way holds the same keys and values. It writes each key as
// new, reading nothing stored.
func loadWrites(ctx context.Context, w writer, recs []*rappel.Record, partials map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, states []rappel.SourceState, info rappel.DatasetInfo) error {
	if err := encodeRecords(ctx, recs, func(r *rappel.Record, val []byte) error { return putNewRecord(w, r, val) }); err != nil {
		return fmt.Errorf("loading records: %w", err)
	}
	for _, st := range states {
		c := &rappel.SourceChange{State: st, PutPartials: partials[st.Feed.Source], PutRaw: raw[st.Feed.Source]}
		if err := addSource(ctx, w, c); err != nil {
			return fmt.Errorf("loading partial records of %s: %w", st.Feed.Source, err)
		}
	}
	if err := setJSON(w, datasetKey, info); err != nil {
		return fmt.Errorf("encoding dataset info: %w", err)
	}
	return nil
}

// putNewRecord adds to w the writes of r, encoded as val, and of all its
// index keys, where nothing is stored for r.
func putNewRecord(w writer, r *rappel.Record, val []byte) error {
	if err := applyIndexDiff(w, nil, indexKeys(r)); err != nil {
		return err
	}
	return w.Set(recordKey(r.RecordID), val, nil)
}
