package kv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
)

// schemaVersion is the version of the key layout and of the derivation of
// index keys from a record. Bump it whenever either changes, and say in
// upgrade what a store written under an older one needs: Open does it, and
// refuses a store written under a newer one, whose writes this code would
// not keep whole (it would put records without logging them).
const schemaVersion = 4

// Versions that changed something a store must be upgraded for.
const (
	// indexSchema is the last version that changed how index keys derive
	// from a record: an older store has its index rebuilt. 4 dropped the
	// keys of eight filter fields, which nothing read.
	indexSchema = 4
	// changesSchema added the change log: an older store starts one, as
	// a new generation, since its records were written unlogged.
	changesSchema = 3
)

// errNotOpen is returned by every method of a Store that is not open.
var errNotOpen = errors.New("kv: store is not open")

// ready is the check every method of a Store makes before reading or
// writing: ctx's error when it is done, errNotOpen when the store is not
// open.
func (s *Store) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.db == nil {
		return errNotOpen
	}
	return nil
}

// get calls fn with the value at key, which is valid only during the
// call; found is false when there is none.
func (s *Store) get(ctx context.Context, key []byte, fn func(val []byte) error) (found bool, err error) {
	if err := s.ready(ctx); err != nil {
		return false, err
	}
	val, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer closer.Close()
	return true, fn(val)
}

// getValue decodes the value at key into v; found is false when there is
// none.
func (s *Store) getValue(ctx context.Context, key []byte, v any) (found bool, err error) {
	return s.get(ctx, key, func(val []byte) error { return decodeValue(val, v) })
}

// putValue stores v at key, synced, outside any batch; what names v in
// errors. The caller checks that the store is open.
func (s *Store) putValue(key []byte, v any, what string) error {
	val, err := encodeValue(nil, v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", what, err)
	}
	if err := s.db.Set(key, val, pebble.Sync); err != nil {
		return fmt.Errorf("storing %s: %w", what, err)
	}
	return nil
}

// setValue adds to b the write of v at key.
func setValue(b *pebble.Batch, key []byte, v any) error {
	val, err := encodeValue(nil, v)
	if err != nil {
		return err
	}
	return b.Set(key, val, nil)
}

// write calls fill with a new batch of the open store and closes the batch
// when fill returns; errNotOpen when the store is not open. fill adds the
// writes and commits the batch itself, since writers commit differently
// (through the guard, with the change log's entries, synced or not), and
// the caller holds whatever lock its write needs.
func (s *Store) write(fill func(b *pebble.Batch) error) error {
	_, err := writeBatch(s, func(b *pebble.Batch) (struct{}, error) { return struct{}{}, fill(b) })
	return err
}

// writeLocked is write for the writes that hold mu until their batch has
// committed, traced: it starts the span op, which fill ends with endWrite,
// and gives fill the span's ctx.
func (s *Store) writeLocked(ctx context.Context, op string, fill func(ctx context.Context, span trace.Span, b *pebble.Batch) error) error {
	_, err := lockedWrite(ctx, s, op, func(ctx context.Context, span trace.Span, b *pebble.Batch) (struct{}, error) {
		return struct{}{}, fill(ctx, span, b)
	})
	return err
}

// lockedWrite is writeLocked for a fill that returns a value with its
// error.
func lockedWrite[T any](ctx context.Context, s *Store, op string, fill func(ctx context.Context, span trace.Span, b *pebble.Batch) (T, error)) (T, error) {
	ctx, span := startWrite(ctx, op)
	defer span.End()
	s.mu.Lock()
	defer s.mu.Unlock()
	return writeBatch(s, func(b *pebble.Batch) (T, error) { return fill(ctx, span, b) })
}

// writeBatch is write for a fill that returns a value with its error.
func writeBatch[T any](s *Store, fill func(b *pebble.Batch) (T, error)) (T, error) {
	if s.db == nil {
		var none T
		return none, errNotOpen
	}
	b := s.db.NewBatch()
	defer b.Close()
	return fill(b)
}

// Store is a rappel.RecordStore kept in a Pebble database. Configure its
// exported fields, then Open it; Close it when done. Methods are safe for
// concurrent use once Open has returned, but not concurrently with Open or
// Close.
type Store struct {
	// Path is the directory holding the database.
	Path string
	// FS is the file system the database lives on; nil means the disk.
	// Tests may use vfs.NewMem().
	FS vfs.FS
	// Logger receives Pebble's messages and the store's own.
	Logger *slog.Logger
	// WriteTimeout bounds the wait of a write on the storage: one that
	// takes longer gets an EUNAVAILABLE error and the storage is counted
	// as failing (guard.go); 0 means DefaultWriteTimeout.
	WriteTimeout time.Duration
	// ProbeInterval is how often, while the storage fails, the store tries
	// again what failed and tries a probe write; 0 means
	// DefaultProbeInterval.
	ProbeInterval time.Duration
	// KeepChanges is how long the change log keeps an entry that
	// TrimChanges is asked to delete, so that a reader of the change feed
	// that polls at least this often never finds its place trimmed; 0
	// trims as asked. Set before Open.
	KeepChanges time.Duration
	// Now is the clock the change log's times are read from; nil is
	// time.Now.
	Now func() time.Time

	// mu serializes writes: PutRecords and DeleteRecords read the stored
	// versions of records before replacing them, and two interleaved writers
	// could otherwise leave index keys of a version neither of them sees.
	// Writers of records hold it until their batch has committed, which
	// keeps the change log in commit order (changes.go).
	mu sync.Mutex
	db *guardedDB
	// gen and floor are the change log's generation and floor, seq the
	// last number handed out; read at Open, changed under mu.
	gen, floor, seq uint64
	// depths count the outboxes' pending rows (outboxdepth.go), from
	// nothing at each Open.
	depths *depths
}

var _ rappel.RecordStore = (*Store)(nil)

// DefaultKeepChanges is the KeepChanges a serving node sets: a reader of
// the change feed that polls at least weekly never loses its place
// (docs/api.md, "Change feed, Atom and export").
const DefaultKeepChanges = 7 * 24 * time.Hour

// NewStore returns a Store for the database in directory path, logging to
// slog.Default().
func NewStore(path string) *Store {
	return &Store{Path: path, Logger: slog.Default()}
}

// Open opens the database, creating it when the directory holds none, and
// checks its schema version: an older one is upgraded (upgrade), a newer
// one is refused. It then reads where the change log stands. On error
// nothing stays open.
func (s *Store) Open(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.db != nil {
		return fmt.Errorf("opening pebble %q: store is already open", s.Path)
	}
	if s.Path == "" {
		return errors.New("opening pebble: no path")
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	g := newGuard(s.Logger, s.WriteTimeout, s.ProbeInterval)
	db, err := pebble.Open(s.Path, &pebble.Options{
		FS:     guardFS{FS: s.fs(), g: g, dir: s.Path},
		Logger: pebbleLogger{s.Logger},
	})
	if err != nil {
		return fmt.Errorf("opening pebble %q: %w", s.Path, err)
	}
	g.start(db)
	s.db = &guardedDB{DB: db, g: g}
	s.depths = &depths{}
	err = s.checkSchema(ctx)
	if err == nil {
		err = s.openChanges()
	}
	if err != nil {
		err = fmt.Errorf("opening pebble %q: %w", s.Path, err)
		return errors.Join(err, s.Close())
	}
	return nil
}

// StorageFault reports whether the store's storage fails its writes (see
// guard.go): the error that started the fault and when. It is nil while
// writes work, and on a store that is not open.
func (s *Store) StorageFault() (err error, since time.Time) {
	if s.db == nil {
		return nil, time.Time{}
	}
	err, since, _ = s.db.g.state()
	return err, since
}

// IsCorrupt reports whether err, from a Store, says that its files are
// corrupt: read back other than they were written.
func IsCorrupt(err error) bool { return errors.Is(err, pebble.ErrCorruption) }

// Close closes the database. It is safe to call on a Store that was never
// opened, whose Open failed, or that is already closed.
func (s *Store) Close() error {
	if s.db == nil {
		return nil
	}
	db := s.db
	s.db = nil
	if err := db.g.close(); err != nil {
		return fmt.Errorf("closing pebble %q: %w", s.Path, err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("closing pebble %q: %w", s.Path, err)
	}
	return nil
}

// Checkpoint writes a consistent copy of the database as of now into dir,
// which must not exist and must be outside the store's directory: Pebble
// hard-links the immutable tables and copies the manifest and write-ahead
// log up to one point, so the copy opens as a store of its own while this
// one keeps taking writes. A backup of the data dir (rappel backup) starts
// with one.
//
// A checkpoint that cannot write (a full disk, an I/O error) fails alone:
// its error is returned at once, what it wrote is removed, and the store
// does not count as failing (guardFS), since its own files are untouched.
func (s *Store) Checkpoint(dir string) error {
	if s.db == nil {
		return errors.New("checkpointing pebble: store is not open")
	}
	if (guardFS{dir: s.Path}).own(dir) {
		return fmt.Errorf("checkpointing pebble %q into %q: the copy must be outside the store's directory", s.Path, dir)
	}
	switch _, err := s.fs().Stat(dir); {
	case err == nil:
		return fmt.Errorf("checkpointing pebble %q into %q: it exists already", s.Path, dir)
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("checkpointing pebble %q into %q: %w", s.Path, dir, err)
	}
	if err := s.db.Checkpoint(dir); err != nil {
		// Pebble removes the partial copy itself, unless the removal
		// fails too; this is a second try.
		if _, statErr := s.fs().Stat(dir); statErr == nil {
			err = errors.Join(err, s.fs().RemoveAll(dir))
		}
		return fmt.Errorf("checkpointing pebble %q into %q: %w", s.Path, dir, err)
	}
	return nil
}

// checkSchema writes the schema version into a new store, upgrades a store
// written under an older one, and refuses a newer one.
func (s *Store) checkSchema(ctx context.Context) error {
	v, err := s.storedSchema()
	if err != nil {
		return err
	}
	switch {
	case v == schemaVersion:
		return nil
	case v > schemaVersion:
		return fmt.Errorf("checking schema: the store has schema version %d, newer than this program's %d", v, schemaVersion)
	}
	return s.upgrade(ctx, v)
}

// storedSchema returns the store's schema version: 0 when it has none but
// holds records (written before versions were recorded), schemaVersion when
// it is new.
func (s *Store) storedSchema() (int, error) {
	val, closer, err := s.db.Get(schemaKey)
	if errors.Is(err, pebble.ErrNotFound) {
		empty, err := s.empty()
		if err != nil {
			return 0, err
		}
		if !empty {
			return 0, nil
		}
		if err := s.db.Set(schemaKey, []byte{schemaVersion}, pebble.Sync); err != nil {
			return 0, fmt.Errorf("writing schema version: %w", err)
		}
		return schemaVersion, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	defer closer.Close()
	if len(val) != 1 {
		return 0, fmt.Errorf("reading schema version: %d bytes, want 1", len(val))
	}
	return int(val[0]), nil
}

// upgrade brings a store written under schema version from to the current
// one in one synced batch: it rebuilds the index when from is older than
// indexSchema, starts the change log when older than changesSchema, and
// records the current version, so that a crash leaves the store as it was.
func (s *Store) upgrade(ctx context.Context, from int) error {
	return s.write(func(b *pebble.Batch) error {
		n := -1
		if from < indexSchema {
			var err error
			if n, err = s.rebuildIndex(ctx, b); err != nil {
				return fmt.Errorf("rebuilding index: %w", err)
			}
		}
		var gen uint64
		if from < changesSchema {
			var err error
			if gen, _, err = readChanges(s.db); err != nil {
				return err
			}
			gen++
			if err := b.Set(changesKey, encodeChanges(gen, 0), nil); err != nil {
				return fmt.Errorf("starting change log: %w", err)
			}
		}
		if err := b.Set(schemaKey, []byte{schemaVersion}, nil); err != nil {
			return fmt.Errorf("upgrading schema: %w", err)
		}
		if err := s.db.commit(b, "upgrading schema"); err != nil {
			return err
		}
		if n >= 0 {
			s.Logger.Info("rebuilt record index", "path", s.Path, "from_schema", from, "to_schema", schemaVersion, "records", n)
		}
		if gen > 0 {
			s.Logger.Info("started change log", "path", s.Path, "from_schema", from, "to_schema", schemaVersion, "generation", gen)
		}
		return nil
	})
}

// rebuildIndex adds to b the deletion of every index key and the keys
// derived again from the records, and returns the number of records.
func (s *Store) rebuildIndex(ctx context.Context, b *pebble.Batch) (int, error) {
	if err := b.DeleteRange([]byte(indexPrefix), prefixEnd([]byte(indexPrefix)), nil); err != nil {
		return 0, err
	}
	n := 0
	err := s.ForEachRecord(ctx, func(r *rappel.Record) error {
		n++
		for _, k := range indexKeys(r) {
			if err := b.Set(k, nil, nil); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// DatasetInfo returns the info last given to SetDatasetInfo, or the zero
// DatasetInfo when there was none.
func (s *Store) DatasetInfo(ctx context.Context) (rappel.DatasetInfo, error) {
	var info rappel.DatasetInfo
	if _, err := s.getValue(ctx, datasetKey, &info); err != nil {
		return info, fmt.Errorf("reading dataset info: %w", err)
	}
	return info, nil
}

// SetDatasetInfo stores info durably (pebble.Sync).
func (s *Store) SetDatasetInfo(ctx context.Context, info rappel.DatasetInfo) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	return s.putValue(datasetKey, info, "dataset info")
}

// Empty reports whether the store holds no records. Meta data such as the
// dataset info does not count: a store is empty until records are put.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	if err := s.ready(ctx); err != nil {
		return false, err
	}
	return s.empty()
}

func (s *Store) empty() (bool, error) {
	it, err := s.db.NewIter(prefixOptions([]byte(recordPrefix)))
	if err != nil {
		return false, fmt.Errorf("opening iterator: %w", err)
	}
	found := it.First()
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return false, fmt.Errorf("scanning records: %w", err)
	}
	return !found, nil
}

// prefixOptions bounds an iterator to the keys starting with p.
func prefixOptions(p []byte) *pebble.IterOptions {
	return &pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)}
}

// pebbleLogger passes Pebble's messages to a slog.Logger.
type pebbleLogger struct{ l *slog.Logger }

// Infof logs at DEBUG: Pebble's informational lines are its own
// bookkeeping ("Found 1 WALs", a warm start's "WAL … stopped reading at
// offset", which is the normal end of a replay), which alarm a reader of
// the node's log and tell an operator nothing to act on.
func (p pebbleLogger) Infof(format string, args ...any) {
	if p.l.Enabled(context.Background(), slog.LevelDebug) {
		p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
	}
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf must not return: Pebble calls it on corruption and broken
// invariants, after which the database must not be used. Like Pebble's own
// default logger, it exits the process — after writing the reason straight
// to stderr as well: the service's log writer buffers, and os.Exit would
// lose the one line that says why the node stopped. That line is the
// message's first: Pebble's errors go on with their stack traces, which
// the log keeps.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble", "fatal", true)
	reason, _, _ := strings.Cut(msg, "\n")
	fmt.Fprintf(os.Stderr, "rappel: the data store failed and the node stops: %s; if the store is corrupt, restore the data dir from a backup or start on an empty one (the bundle and the feeds refill it)\n", reason)
	os.Exit(1)
}
