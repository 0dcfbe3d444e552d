package kv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
)

// Key store and usage keys; see the key layout in the package doc.
const (
	keyPrefix   = "k/"
	usagePrefix = "u/"
)

// DefaultLockWait is the Keys.LockWait NewKeys sets.
const DefaultLockWait = 5 * time.Second

// Keys is a rappel.KeyStore in a Pebble database of its own (the "keys"
// directory of the data dir), apart from the records' store.
//
// Pebble lets one process at a time open a database, and `rappel serve`
// holds the records' store for as long as it runs. Keys therefore opens its
// database only for the length of each call and closes it again: `rappel
// keys` can add and revoke keys while a server runs, and the server sees
// the change at its next KeysByHash, which reads the database read-only and
// only when its files changed. A call that finds the database held by
// another process (or another Keys in this one) retries for up to
// LockWait.
type Keys struct {
	// Path is the directory holding the database.
	Path string
	// FS is the file system; nil means the disk.
	FS vfs.FS
	// Logger receives Pebble's messages.
	Logger *slog.Logger
	// LockWait bounds how long a call waits while the database is held by
	// another process.
	LockWait time.Duration

	// mu serializes calls: Pebble refuses a second open in one process.
	mu sync.Mutex
	// stamp describes the database's files when byHash was read.
	stamp  string
	byHash map[[sha256.Size]byte]*rappel.APIKey
}

var _ rappel.KeyStore = (*Keys)(nil)

// NewKeys returns a Keys for the database in directory path, with
// DefaultLockWait and no logging.
func NewKeys(path string) *Keys {
	return &Keys{Path: path, LockWait: DefaultLockWait, Logger: slog.New(slog.DiscardHandler)}
}

// ErrKeysBusy is returned, wrapped, when the key database stayed held by
// another process for LockWait.
var ErrKeysBusy = errors.New("another process holds the key store")

func (k *Keys) fs() vfs.FS {
	if k.FS == nil {
		return vfs.Default
	}
	return k.FS
}

// open opens the database, waiting while another process holds it. A
// read-only open of a database that does not exist yet returns nil, nil.
func (k *Keys) open(ctx context.Context, readOnly bool) (*pebble.DB, error) {
	if k.Path == "" {
		return nil, errors.New("opening key store: no path")
	}
	logger := k.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if readOnly {
		if _, err := k.fs().Stat(k.Path); err != nil {
			return nil, nil // no key was ever added
		}
	}
	deadline := time.Now().Add(k.LockWait)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		db, err := pebble.Open(k.Path, &pebble.Options{
			FS:       k.FS,
			Logger:   quietLogger{pebbleLogger{logger}},
			ReadOnly: readOnly,
		})
		if err == nil {
			return db, nil
		}
		if !isLocked(err) {
			return nil, fmt.Errorf("opening key store %q: %w", k.Path, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("opening key store %q: %w for more than %s; try again in a moment", k.Path, ErrKeysBusy, k.LockWait)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("opening key store %q: %w", k.Path, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// quietLogger drops Pebble's informational messages: the key database is
// opened every time it changes, and its WAL replay notes would fill the log.
type quietLogger struct{ pebbleLogger }

func (quietLogger) Infof(string, ...any) {}

// isLocked reports whether err is Pebble's failure to take the directory
// lock: fcntl's EAGAIN or EACCES from another process, or Pebble's own
// refusal within this one.
func isLocked(err error) bool {
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) ||
		strings.Contains(err.Error(), "lock held by current process")
}

func keyKey(hash [sha256.Size]byte) []byte { return append([]byte(keyPrefix), hash[:]...) }

// AddKey stores key under hash, synced. An ID already taken is an EINVALID
// *rappel.Error.
func (k *Keys) AddKey(ctx context.Context, hash [sha256.Size]byte, key *rappel.APIKey) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	db, err := k.open(ctx, false)
	if err != nil {
		return err
	}
	defer db.Close()
	taken := false
	if err := scanKeys(ctx, db, func(_ []byte, a *rappel.APIKey) error {
		taken = taken || a.ID == key.ID
		return nil
	}); err != nil {
		return err
	}
	if taken {
		return rappel.Errorf(rappel.EINVALID, "A key with ID %s exists already; draw another key.", key.ID)
	}
	val, err := encodeValue(nil, key)
	if err != nil {
		return fmt.Errorf("encoding key: %w", err)
	}
	if err := db.Set(keyKey(hash), val, pebble.Sync); err != nil {
		return fmt.Errorf("storing key: %w", err)
	}
	return nil
}

// ListKeys returns every key, oldest first (then by ID).
func (k *Keys) ListKeys(ctx context.Context) ([]*rappel.APIKey, error) {
	byHash, err := k.KeysByHash(ctx)
	if err != nil {
		return nil, err
	}
	keys := make([]*rappel.APIKey, 0, len(byHash))
	for _, a := range byHash {
		c := *a
		keys = append(keys, &c)
	}
	slices.SortFunc(keys, func(a, b *rappel.APIKey) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return keys, nil
}

// RevokeKey marks the key with id revoked, synced.
func (k *Keys) RevokeKey(ctx context.Context, id string, at time.Time) (*rappel.APIKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	db, err := k.open(ctx, false)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var found *rappel.APIKey
	var dbKey []byte
	if err := scanKeys(ctx, db, func(key []byte, a *rappel.APIKey) error {
		if a.ID == id {
			found, dbKey = a, bytes.Clone(key)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if found == nil {
		return nil, rappel.Errorf(rappel.ENOTFOUND, "No key has ID %s; `rappel keys list` shows the IDs.", id)
	}
	if found.Revoked {
		return found, nil
	}
	found.Revoked, found.RevokedAt = true, at.UTC()
	val, err := encodeValue(nil, found)
	if err != nil {
		return nil, fmt.Errorf("encoding key: %w", err)
	}
	if err := db.Set(dbKey, val, pebble.Sync); err != nil {
		return nil, fmt.Errorf("revoking key: %w", err)
	}
	return found, nil
}

// KeysByHash returns every key by hash. It stats the database's files
// first and, when none changed since the last call, returns the same map
// without opening the database; otherwise it reads it read-only.
func (k *Keys) KeysByHash(ctx context.Context) (map[[sha256.Size]byte]*rappel.APIKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	stamp := k.filesStamp()
	if k.byHash != nil && stamp == k.stamp {
		return k.byHash, nil
	}
	db, err := k.open(ctx, true)
	if err != nil {
		return nil, err
	}
	byHash := map[[sha256.Size]byte]*rappel.APIKey{}
	if db != nil {
		err = scanKeys(ctx, db, func(key []byte, a *rappel.APIKey) error {
			var h [sha256.Size]byte
			copy(h[:], key[len(keyPrefix):])
			byHash[h] = a
			return nil
		})
		err = errors.Join(err, db.Close())
		if err != nil {
			return nil, err
		}
	}
	k.byHash, k.stamp = byHash, stamp
	return byHash, nil
}

// Checkpoint writes a consistent copy of the key database into dir, which
// must not exist, waiting like every open while another process holds it.
// It reports false, writing nothing, when no key was ever added. The open
// is a writable one: a read-only Pebble names an OPTIONS file it never
// wrote, which its checkpoint then fails to copy.
func (k *Keys) Checkpoint(ctx context.Context, dir string) (bool, error) {
	if _, err := k.fs().Stat(k.Path); err != nil {
		return false, nil // no key was ever added
	}
	db, err := k.open(ctx, false)
	if err != nil {
		return false, err
	}
	defer db.Close()
	if err := db.Checkpoint(dir); err != nil {
		return false, fmt.Errorf("checkpointing key store %q into %q: %w", k.Path, dir, err)
	}
	return true, nil
}

// filesStamp describes the database's files (name, size, modification
// time), leaving out the lock file, which every open touches. Pebble
// writes a new WAL or manifest entry on every change, so a change changes
// the stamp; a read-only open changes nothing.
func (k *Keys) filesStamp() string {
	fs := k.fs()
	names, err := fs.List(k.Path)
	if err != nil {
		return ""
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		if n == "LOCK" {
			continue
		}
		fi, err := fs.Stat(fs.PathJoin(k.Path, n))
		if err != nil {
			return "" // a file went away mid-listing: read again
		}
		fmt.Fprintf(&b, "%s:%d:%d;", n, fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String()
}

// scanKeys calls fn with every key record and its database key.
func scanKeys(ctx context.Context, db *pebble.DB, fn func(key []byte, a *rappel.APIKey) error) error {
	it, err := db.NewIterWithContext(ctx, prefixOptions([]byte(keyPrefix)))
	if err != nil {
		return fmt.Errorf("reading keys: %w", err)
	}
	for it.First(); it.Valid(); it.Next() {
		if len(it.Key()) != len(keyPrefix)+sha256.Size {
			continue // not a key record; nothing else lives under k/ today
		}
		a := new(rappel.APIKey)
		if err := decodeValue(it.Value(), a); err != nil {
			return errors.Join(fmt.Errorf("decoding key: %w", err), it.Close())
		}
		if err := fn(it.Key(), a); err != nil {
			return errors.Join(err, it.Close())
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return fmt.Errorf("reading keys: %w", err)
	}
	return nil
}

var _ rappel.QuotaStore = (*Store)(nil)

// usageKey is u/<month>/<key id>.
func usageKey(month, id string) []byte {
	return []byte(usagePrefix + month + "/" + id)
}

// LoadUsage returns the request counts of month by key ID.
func (s *Store) LoadUsage(ctx context.Context, month string) (map[string]int64, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	prefix := usageKey(month, "")
	it, err := s.db.NewIterWithContext(ctx, prefixOptions(prefix))
	if err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	counts := map[string]int64{}
	for it.First(); it.Valid(); it.Next() {
		if len(it.Value()) != 8 {
			return nil, errors.Join(fmt.Errorf("reading usage of %q: %d bytes, want 8", it.Key(), len(it.Value())), it.Close())
		}
		counts[string(it.Key()[len(prefix):])] = int64(binary.BigEndian.Uint64(it.Value()))
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	return counts, nil
}

// usageMu serializes AddUsage's read-modify-write of the counts. It is
// one lock for every Store of the process, not a field of Store: usage is
// pushed every few seconds, so the lock is never contended enough to
// matter, and Store's own mu is held through whole feed refreshes.
var usageMu sync.Mutex

// AddUsage adds deltas to month's counts in one batch and returns the new
// counts. The batch is not synced: a crash losing the last pushes only
// lets a key make those requests again.
func (s *Store) AddUsage(ctx context.Context, month string, deltas map[string]int64) (map[string]int64, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	if err := checkDeltas(deltas); err != nil {
		return nil, err
	}
	usageMu.Lock()
	defer usageMu.Unlock()
	return writeBatch(s, func(b *pebble.Batch) (map[string]int64, error) {
		totals := make(map[string]int64, len(deltas))
		for id, d := range deltas {
			n, err := s.usage(month, id)
			if err != nil {
				return nil, err
			}
			totals[id] = n + d
			if d == 0 {
				continue
			}
			var v [8]byte
			binary.BigEndian.PutUint64(v[:], uint64(n+d))
			if err := b.Set(usageKey(month, id), v[:], nil); err != nil {
				return nil, fmt.Errorf("adding usage: %w", err)
			}
		}
		if b.Empty() {
			return totals, nil
		}
		// Through the guard, as every write: refused at once while the
		// storage fails, instead of waiting behind a held log write.
		if err := s.db.commitCopy(b, pebble.NoSync); err != nil {
			return nil, fmt.Errorf("adding usage: %w", err)
		}
		return totals, nil
	})
}

// usage reads one key's count of month; 0 when it has none.
func (s *Store) usage(month, id string) (int64, error) {
	v, closer, err := s.db.Get(usageKey(month, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading usage: %w", err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("reading usage of %s in %s: %d bytes, want 8", id, month, len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// checkDeltas refuses a negative delta: counts only grow.
func checkDeltas(deltas map[string]int64) error {
	for id, d := range deltas {
		if d < 0 {
			return rappel.Errorf(rappel.EINVALID, "The usage of key %s cannot shrink: its delta is %d; push only requests counted.", id, d)
		}
	}
	return nil
}
