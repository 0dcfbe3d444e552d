package kv

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
)

// Replace's write. A batch holding a whole dataset is the size of the data
// it writes, grown by doubling, and Pebble keeps a batch that large as a
// memtable of its own until it is flushed: a switch to the agencies' files
// at their real size held more than the data twice over. So Replace writes
// its keys into sstables, one per keyspace, as they are encoded, and
// ingests them in one call, which Pebble applies atomically (see Ingest):
// a crash leaves the old data or the new, as the batch did.
//
// Each table of a data keyspace (dataPrefixes) carries, beside its keys, a
// range deletion of the whole keyspace. All the keys of one ingested table
// take one sequence number, and a range deletion deletes only keys written
// before it, so the table clears what the keyspace held and keeps its own
// keys: what the batch did with its range deletions followed by the
// writes. The change log's entries are cleared the same way, and its new
// generation is one more key in the table of the meta keyspace.

// replaceStreams are the key prefixes whose keys Replace writes straight
// into their table, in order, since they are most of the bytes: the
// records, the partial records and the raw records' data. Replace sorts
// what it writes so that they come in key order. Other keys (index keys,
// raw records' index entries, states, meta keys) are held and sorted
// before their table is finished.
var replaceStreams = [][]byte{[]byte(recordPrefix), []byte(partialPrefix), []byte(dataPrefix)}

// replaceTables writes one sstable per keyspace, beside the store on its
// file system. It is the writer loadWrites fills.
type replaceTables struct {
	fs   vfs.FS
	base string
	// tables by keyspace ("r/"), in the order they were opened.
	tables map[string]*replaceTable
	order  []string
	paths  []string
}

// replaceTable is the table of one keyspace being written.
type replaceTable struct {
	w    *sstable.Writer
	path string
	// last is the last key written straight (a replaceStreams key);
	// held are the other keys, written when the table is finished, after
	// the streamed ones (in a keyspace that has both, as f/, the held
	// keys sort after the streamed).
	last []byte
	held pairs
}

func newReplaceTables(fs vfs.FS, base string) *replaceTables {
	return &replaceTables{fs: fs, base: base, tables: map[string]*replaceTable{}}
}

// table returns the table of keyspace ks, creating it, with the range
// deletion of the keyspace when clear is set.
func (t *replaceTables) table(ks string, clear bool) (*replaceTable, error) {
	if tb, ok := t.tables[ks]; ok {
		return tb, nil
	}
	path := fmt.Sprintf("%s.replace-%02d.sst", t.base, len(t.order)+1)
	w, err := newTableWriter(t.fs, path, sstable.SnappyCompression)
	if err != nil {
		return nil, err
	}
	tb := &replaceTable{w: w, path: path}
	t.tables[ks] = tb
	t.order = append(t.order, ks)
	t.paths = append(t.paths, path)
	if clear {
		if err := w.DeleteRange([]byte(ks), prefixEnd([]byte(ks))); err != nil {
			return nil, fmt.Errorf("writing table %s: %w", path, err)
		}
	}
	return tb, nil
}

// Set writes key's value into its keyspace's table: straight when key is
// of a stream, held otherwise.
func (t *replaceTables) Set(key, val []byte, _ *pebble.WriteOptions) error {
	ks := keyspace(key)
	tb, err := t.table(ks, slices.ContainsFunc(dataPrefixes, func(p []byte) bool { return string(p) == ks }))
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(replaceStreams, func(p []byte) bool { return bytes.HasPrefix(key, p) }) {
		return tb.held.Set(key, val, nil)
	}
	if bytes.Compare(key, tb.last) <= 0 {
		// Replace sorts what it writes; a key out of order is a bug here.
		return fmt.Errorf("writing table %s: key %q is out of order", tb.path, key)
	}
	tb.last = append(tb.last[:0], key...)
	return tb.w.Set(key, val)
}

func (t *replaceTables) Delete(key []byte, _ *pebble.WriteOptions) error {
	return fmt.Errorf("writing tables: a replacement deletes only whole keyspaces, yet key %q was deleted", key)
}

// finish writes the held keys of every table after its streamed ones and
// closes the tables, synced; it returns their paths in key order.
func (t *replaceTables) finish() ([]string, error) {
	for _, ks := range t.order {
		tb := t.tables[ks]
		for _, kv := range tb.held.sorted() {
			if bytes.Compare(kv.key, tb.last) <= 0 {
				return nil, fmt.Errorf("writing table %s: key %q is out of order", tb.path, kv.key)
			}
			if err := tb.w.Set(kv.key, kv.val); err != nil {
				return nil, fmt.Errorf("writing table %s: %w", tb.path, err)
			}
		}
		tb.held = nil
		err := tb.w.Close()
		tb.w = nil
		if err != nil {
			return nil, fmt.Errorf("writing table %s: %w", tb.path, err)
		}
	}
	// Ingest wants the tables in key order: keyspaces do not overlap.
	paths := make([]string, len(t.order))
	idx := make([]int, len(t.order))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(t.order[a], t.order[b]) })
	for i, j := range idx {
		paths[i] = t.paths[j]
	}
	return paths, nil
}

// remove closes what is open and removes every table written.
func (t *replaceTables) remove() error {
	var errs []error
	for _, ks := range t.order {
		if tb := t.tables[ks]; tb.w != nil {
			_ = tb.w.Close()
		}
	}
	for _, p := range t.paths {
		if err := t.fs.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// replace is Replace's (and ReplacePublished's) write, as load describes
// it, through tables (see above). s.mu must be held.
func (s *Store) replace(ctx context.Context, recs []*rappel.Record, partials map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, states []rappel.SourceState, info rappel.DatasetInfo, at *[2]uint64) error {
	t := newReplaceTables(s.fs(), s.Path)
	recs, partials, raw, states = sortedLoad(recs, partials, raw, states)
	err := loadWrites(ctx, t, recs, partials, raw, states, info)
	// Every data keyspace is cleared, whether or not anything is written
	// into it.
	for _, p := range dataPrefixes {
		if err == nil {
			_, err = t.table(string(p), true)
		}
	}
	gen, seq := s.gen+1, s.seq
	if at != nil {
		// A follower takes its leader's generation and number
		// (ReplacePublished).
		gen, seq = at[0], at[1]
	}
	if err == nil && s.seq > s.floor {
		_, err = t.table(changePrefix, true)
	}
	if err == nil {
		err = t.Set(changesKey, encodeChanges(gen, seq), nil)
	}
	var paths []string
	if err == nil {
		paths, err = t.finish()
	}
	if err != nil {
		return errors.Join(fmt.Errorf("replacing records: %w", err), t.remove())
	}
	err = s.db.Ingest(ctx, paths)
	// An ingestion cut short by the guard may still go on (as a batch's
	// commit does): the generation is taken either way.
	s.gen = gen
	if err != nil {
		// Ingest removes its input only when it succeeds.
		return errors.Join(fmt.Errorf("replacing records: ingesting %d tables: %w", len(paths), err), t.remove())
	}
	s.seq, s.floor = seq, seq
	return nil
}

// sortedLoad returns the arguments of a load sorted as the tables of a
// replacement take them: records by record_id, states by source (the last
// of one source kept), each source's partial records by record_id and raw
// records by key (the last of one kept, as a batch keeps the last write of
// a key). The arguments are not changed.
func sortedLoad(recs []*rappel.Record, partials map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, states []rappel.SourceState) ([]*rappel.Record, map[string][]*rappel.Record, map[string][]rappel.RawRecord, []rappel.SourceState) {
	recs = slices.SortedStableFunc(slices.Values(recs), func(a, b *rappel.Record) int { return cmp.Compare(a.RecordID, b.RecordID) })
	states = lastOf(states, func(s rappel.SourceState) string { return s.Feed.Source })
	ps := make(map[string][]*rappel.Record, len(partials))
	for src, p := range partials {
		ps[src] = lastOf(p, func(r *rappel.Record) string { return r.RecordID })
	}
	rs := make(map[string][]rappel.RawRecord, len(raw))
	for src, r := range raw {
		rs[src] = lastOf(r, func(r rappel.RawRecord) string { return r.Key })
	}
	return recs, ps, rs, states
}

// lastOf returns a copy of vs sorted by key, keeping the last of those of
// one key.
func lastOf[T any](vs []T, key func(T) string) []T {
	out := slices.SortedStableFunc(slices.Values(vs), func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	kept := out[:0]
	for i, v := range out {
		if i+1 < len(out) && key(out[i+1]) == key(v) {
			continue
		}
		kept = append(kept, v)
	}
	return kept
}

// newTableWriter creates the sstable path on fs, its blocks compressed as
// compression says; closing the writer syncs it.
func newTableWriter(fs vfs.FS, path string, compression *sstable.CompressionProfile) (*sstable.Writer, error) {
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, fmt.Errorf("writing table: %w", err)
	}
	return sstable.NewWriter(objstorageprovider.NewFileWritable(f), sstable.WriterOptions{
		TableFormat: tableFormat,
		Comparer:    pebble.DefaultComparer,
		Compression: compression,
	}), nil
}
