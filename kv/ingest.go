package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
)

// writer receives the writes of a load: a *pebble.Batch, or the pairs
// WriteTables sorts into sstables.
type writer interface {
	Set(key, value []byte, _ *pebble.WriteOptions) error
	Delete(key []byte, _ *pebble.WriteOptions) error
}

// tableFormat is the format of the sstables WriteTables writes: the newest
// that a store of the oldest format this Pebble opens can ingest (a new
// store is created at that oldest format), so that the tables a bundle
// carries are accepted by every store the binary opens.
var tableFormat = pebble.FormatMinSupported.MaxTableFormat()

// tableTarget is how many bytes of keys and values WriteTables puts in
// one sstable before it starts the next.
var tableTarget = 64 << 20

// pair is one key and its value.
type pair struct{ key, val []byte }

// pairs collects the writes of a load, to be sorted into sstables. A load
// only sets keys: a deletion is refused.
type pairs []pair

func (p *pairs) Set(key, val []byte, _ *pebble.WriteOptions) error {
	*p = append(*p, pair{bytes.Clone(key), bytes.Clone(val)})
	return nil
}

func (p *pairs) Delete(key []byte, _ *pebble.WriteOptions) error {
	return fmt.Errorf("writing tables: a load deletes nothing, yet key %q was deleted", key)
}

// sorted returns the pairs in key order, each key once with the value set
// last, as a batch holding the same writes would leave it.
func (p pairs) sorted() pairs {
	slices.SortStableFunc(p, func(a, b pair) int { return bytes.Compare(a.key, b.key) })
	out := p[:0]
	for i, kv := range p {
		if i+1 < len(p) && bytes.Equal(kv.key, p[i+1].key) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// WriteTables writes into dir, which it creates, the keys and values that
// Load would write into an empty store from the same arguments, sorted
// into sstables named 000001.sst, 000002.sst…, and returns their paths.
// Ingest fills an empty store with them.
func WriteTables(ctx context.Context, dir string, recs []*rappel.Record, partials map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, states []rappel.SourceState, info rappel.DatasetInfo) ([]string, error) {
	return writeTables(ctx, dir, sstable.NoCompression, recs, partials, raw, states, info)
}

// writeTables is WriteTables with the tables' blocks compressed as
// compression says.
func writeTables(ctx context.Context, dir string, compression *sstable.CompressionProfile, recs []*rappel.Record, partials map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, states []rappel.SourceState, info rappel.DatasetInfo) ([]string, error) {
	if err := checkLoad(recs, states); err != nil {
		return nil, err
	}
	var p pairs
	if err := loadWrites(ctx, &p, recs, partials, raw, states, info); err != nil {
		return nil, err
	}
	kvs := p.sorted()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("writing tables: %w", err)
	}
	// A table ends at tableTarget bytes and at the end of each keyspace,
	// so that no table spans a key the store already holds, as m/schema
	// which Open writes: Pebble then puts the tables straight into the
	// bottom level, without flushing the memtable first or compacting
	// them later.
	var paths []string
	for start := 0; start < len(kvs); {
		end, size := start, 0
		for end < len(kvs) && size < tableTarget && keyspace(kvs[end].key) == keyspace(kvs[start].key) {
			size += len(kvs[end].key) + len(kvs[end].val)
			end++
		}
		path := filepath.Join(dir, fmt.Sprintf("%06d.sst", len(paths)+1))
		if err := writeTable(vfs.Default, path, kvs[start:end], compression); err != nil {
			return nil, err
		}
		paths = append(paths, path)
		start = end
	}
	return paths, nil
}

// keyspace is the table prefix of key, as "r/".
func keyspace(key []byte) string {
	if i := bytes.IndexByte(key, '/'); i >= 0 {
		return string(key[:i+1])
	}
	return string(key)
}

// writeTable writes kvs, in key order, as the sstable path on fs, synced,
// its blocks compressed as compression says.
//
// The tables of a bundle (WriteTables) have their blocks uncompressed: the
// bundle compresses each table whole, which takes a third of the room of
// Snappy blocks compressed again, and a store reads an uncompressed block
// with no decoding (RATIONALE.md, the embedded bundle). The store's
// own defaults otherwise (blocks of 4 KiB).
func writeTable(fs vfs.FS, path string, kvs pairs, compression *sstable.CompressionProfile) error {
	w, err := newTableWriter(fs, path, compression)
	if err != nil {
		return err
	}
	for _, kv := range kvs {
		if err := w.Set(kv.key, kv.val); err != nil {
			return errors.Join(fmt.Errorf("writing table %s: %w", path, err), w.Close())
		}
	}
	// Close flushes the table and syncs the file, as Ingest requires.
	if err := w.Close(); err != nil {
		return fmt.Errorf("writing table %s: %w", path, err)
	}
	return nil
}

// Ingest fills an empty store with the sstables at paths, written by
// WriteTables, which must lie on the store's file system; it refuses a
// store that holds records. The files are moved into the store.
//
// Pebble documents DB.Ingest as atomic, "semantically equivalent to
// creating a single batch containing all of the mutations in the
// sstables": the tables join the store in one edit of its manifest, so a
// crash leaves the store empty or filled, never half (see DB.Ingest at
// https://pkg.go.dev/github.com/cockroachdb/pebble/v2#DB.Ingest).
//
// The new generation of the change log that a load starts rides in the
// same ingestion, as one more table of one key, so that no reader, before
// a crash or after, sees the data without the generation that announces
// it. Entries left in the log are trimmed first.
func (s *Store) Ingest(ctx context.Context, paths []string) error {
	ctx, span := startWrite(ctx, "Ingest")
	defer span.End()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ready(ctx); err != nil {
		return err
	}
	if empty, err := s.empty(); err != nil {
		return err
	} else if !empty {
		return errors.New("ingesting tables: the store already holds records; only an empty store is filled by ingestion")
	}
	if err := s.trimChanges(s.seq); err != nil {
		return endWrite(span, nil, fmt.Errorf("ingesting tables: %w", err))
	}
	genPath, gen, err := s.writeGenerationTable()
	if err != nil {
		return endWrite(span, nil, fmt.Errorf("ingesting tables: %w", err))
	}
	err = s.db.Ingest(ctx, append(slices.Clip(paths), genPath))
	s.gen = gen
	if err != nil {
		// Ingest removes its input only when it succeeds.
		return endWrite(span, nil, errors.Join(fmt.Errorf("ingesting %d tables: %w", len(paths), err), s.fs().Remove(genPath)))
	}
	return nil
}

// writeGenerationTable writes, beside the store on its file system, the
// sstable that starts the next generation of the change log, with the
// floor at the last number handed out (as restartChanges does), and
// returns its path and the generation. Its one key, m/changes, is in no
// table WriteTables writes, so it overlaps none of them. s.mu must be held.
func (s *Store) writeGenerationTable() (string, uint64, error) {
	gen := s.gen + 1
	path := s.Path + ".changes.sst"
	if err := writeTable(s.fs(), path, pairs{{changesKey, encodeChanges(gen, s.seq)}}, sstable.SnappyCompression); err != nil {
		return "", 0, err
	}
	return path, gen, nil
}

// fs is the file system the store lives on.
func (s *Store) fs() vfs.FS {
	if s.FS == nil {
		return vfs.Default
	}
	return s.FS
}

// IngestFS fills an empty store with the sstables names in fsys (an
// embedded bundle), as Ingest does: it first copies them into a directory
// beside the store, on its file system, since Ingest takes files there.
// That directory is removed when done, and first, should an interrupted
// run have left it.
func (s *Store) IngestFS(ctx context.Context, fsys fs.FS, names []string) error {
	vfsys := s.fs()
	dir := s.Path + ".ingest"
	if err := vfsys.RemoveAll(dir); err != nil {
		return fmt.Errorf("ingesting tables: clearing %s: %w", dir, err)
	}
	if err := vfsys.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("ingesting tables: %w", err)
	}
	defer vfsys.RemoveAll(dir)
	// The tables are copied side by side, as many at once as there are
	// cores: a bundle's are unpacked as they are read, which takes a core
	// each, and the memory of a decoder.
	paths := make([]string, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, name := range names {
		paths[i] = vfsys.PathJoin(dir, fmt.Sprintf("%06d.sst", i+1))
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			if err := copyFile(vfsys, paths[i], fsys, name); err != nil {
				errs[i] = fmt.Errorf("ingesting tables: copying %s: %w", name, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return s.Ingest(ctx, paths)
}

// ReplaceFS makes the store hold the data of the sstables names in fsys
// (a newer bundle's) and none of the data it held, as Replace does with
// the records those tables were written from: the data (records, their
// index keys, partial and raw records, source states) is deleted in one
// synced batch, then the tables are ingested as IngestFS does, which
// starts a new generation of the change log. What is not data stays.
//
// Unlike Replace, this is two steps: a crash between them leaves the
// store without records, which the next start fills from the bundle as
// any empty store (bundle.Load). The node serves neither state: it loads
// the bundle before it serves.
func (s *Store) ReplaceFS(ctx context.Context, fsys fs.FS, names []string) error {
	if err := s.clearData(ctx); err != nil {
		return err
	}
	return s.IngestFS(ctx, fsys, names)
}

// clearData deletes the store's data, as Replace does before writing
// the new, in one synced batch.
func (s *Store) clearData(ctx context.Context) error {
	_, span := startWrite(ctx, "ClearData")
	defer span.End()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return errNotOpen
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := deleteData(b); err != nil {
		return fmt.Errorf("clearing records: %w", err)
	}
	return endWrite(span, b, s.db.commit(b, "clearing records"))
}

// copyFile copies name in fsys to path in vfsys, synced.
func copyFile(vfsys vfs.FS, path string, fsys fs.FS, name string) error {
	src, err := fsys.Open(name)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := vfsys.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		return errors.Join(err, dst.Close())
	}
	return errors.Join(dst.Sync(), dst.Close())
}
