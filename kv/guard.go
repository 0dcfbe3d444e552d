package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
)

// Failing storage. Pebble's file system is wrapped (guardFS) so that an
// operation on the store's own files that fails is held, not returned to
// Pebble (a checkpoint's files are not the store's, and fail alone): a
// write, create, rename or preallocation is retried at every probe tick,
// a sync or close that failed never is. While anything is held the store is faulted: every
// write answers at once an EUNAVAILABLE *rappel.Error naming the reason, a
// write already inside Pebble returns after WriteTimeout (its commit goes
// on in the background on a copy of the batch; the change log allows it,
// see commitLogged), and a probe write ends the fault. Reads are not
// guarded. What an operator sees is in docs/operations.md, "When the disk
// fills up or fails"; why it is built so, in RATIONALE.md, "Storage".

// Defaults of Store.WriteTimeout and Store.ProbeInterval.
const (
	DefaultWriteTimeout  = 5 * time.Second
	DefaultProbeInterval = 3 * time.Second
)

// faultRetryAfter is the Retry-After of a write refused while the storage
// fails: freeing space takes an operator minutes, not seconds.
const faultRetryAfter = 10 * time.Second

// faultLogEvery is the least time between two log lines about one fault,
// after the line that says it started.
const faultLogEvery = time.Minute

// probeKey is written, synced, by each probe of a failing storage.
var probeKey = []byte(metaPrefix + "probe")

// guard tracks whether the store's storage fails, holds the failed file
// operations of its Pebble database, and bounds the wait of every write.
type guard struct {
	log      *slog.Logger
	timeout  time.Duration
	interval time.Duration
	// now is the clock of the fault's times and log lines.
	now func() time.Time

	mu sync.Mutex
	// err is the first error of the current fault, nil while the storage
	// works; since is when it came.
	err   error
	since time.Time
	// errs counts the errors of this fault, unlogged those since the last
	// log line about it, written at lastLog.
	errs, unlogged int
	lastLog        time.Time
	// down is closed when a fault starts, waking the writes waiting on
	// Pebble; a new one is made when it ends.
	down chan struct{}
	// retry is closed and replaced at every probe tick of a fault, waking
	// the held operations to try again.
	retry chan struct{}

	// armed is set once Pebble has opened: a failure while it opens is
	// returned, so that Open fails instead of waiting for the disk.
	// closing is set when the store closes, for the same reason.
	armed, closing atomic.Bool
	// held counts the operations held now.
	held atomic.Int64
	// probing is set while a probe write runs: one at a time, however
	// long the storage takes to answer.
	probing atomic.Bool
	db      *pebble.DB
	stop    chan struct{}
	stopped chan struct{}
}

func newGuard(log *slog.Logger, timeout, interval time.Duration) *guard {
	if timeout <= 0 {
		timeout = DefaultWriteTimeout
	}
	if interval <= 0 {
		interval = DefaultProbeInterval
	}
	return &guard{log: log, timeout: timeout, interval: interval, now: time.Now, down: make(chan struct{}), retry: make(chan struct{})}
}

// start arms the guard on the opened db and starts the probe loop.
func (g *guard) start(db *pebble.DB) {
	g.db = db
	g.stop, g.stopped = make(chan struct{}), make(chan struct{})
	g.armed.Store(true)
	go g.run()
}

// close stops the probe loop and disarms the holds. It reports whether
// the database may be closed: not while the storage fails, since closing
// syncs the write-ahead log, and Pebble stops the process when that fails
// or waits forever on a held operation.
func (g *guard) close() error {
	if g.stop != nil {
		close(g.stop)
		<-g.stopped
	}
	g.mu.Lock()
	err := g.err
	g.mu.Unlock()
	if err != nil {
		return fmt.Errorf("the storage is failing (%w), so the database is left as a crash would leave it: every acknowledged write is synced", err)
	}
	g.closing.Store(true)
	return nil
}

// state returns the current fault, if any, and the channel closed when the
// next one starts.
func (g *guard) state() (err error, since time.Time, down chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err, g.since, g.down
}

// fail records err, a storage failure: it starts a fault, or counts one
// more error of the current one. The log says when a fault starts, then
// at most once every faultLogEvery how many errors followed.
func (g *guard) fail(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if g.err == nil {
		g.err, g.since, g.errs, g.unlogged, g.lastLog = err, now, 1, 0, now
		close(g.down)
		g.log.Error("storage failing: writes answer 503 until a probe write succeeds", "error", err)
		return
	}
	g.errs++
	g.unlogged++
	if now.Sub(g.lastLog) >= faultLogEvery {
		g.log.Warn("storage still failing", "error", err, "since", g.since.UTC(), "errors", g.unlogged)
		g.unlogged, g.lastLog = 0, now
	}
}

// recover ends the current fault.
func (g *guard) recover() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		return
	}
	g.log.Info("storage recovered: writes are accepted again", "failed_for", g.now().Sub(g.since).Round(time.Millisecond), "first_error", g.err, "errors", g.errs)
	g.err = nil
	g.down = make(chan struct{})
}

// run ticks every interval until the store closes: during a fault it
// wakes the held operations and starts a probe write.
func (g *guard) run() {
	defer close(g.stopped)
	t := time.NewTicker(g.interval)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		if err, _, _ := g.state(); err == nil {
			continue
		}
		g.mu.Lock()
		close(g.retry)
		g.retry = make(chan struct{})
		g.mu.Unlock()
		if g.probing.CompareAndSwap(false, true) {
			go g.probe()
		}
	}
}

// probe writes probeKey, synced, straight to Pebble, and ends the fault
// when that worked and no operation is held any more.
func (g *guard) probe() {
	defer g.probing.Store(false)
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], uint64(time.Now().UnixNano()))
	if err := g.db.Set(probeKey, v[:], pebble.Sync); err != nil {
		g.fail(fmt.Errorf("probe write: %w", err))
		return
	}
	if g.held.Load() == 0 {
		g.recover()
	}
}

// slowestDisk is the write rate, in bytes a second, below which a disk
// counts as stalled: a write of size bytes gets the write timeout and
// size/slowestDisk more, so that a large batch (a bundle replacing the
// data, hundreds of MB) is not taken for a stall.
const slowestDisk = 10 << 20

// write runs commit, which writes size bytes to Pebble, and waits for it
// at most until a fault starts or the write timeout passes. While a fault
// lasts it refuses at once. commit must own what it writes: it may run on
// after write returned.
func (g *guard) write(size int, commit func() error) error {
	err, since, down := g.state()
	if err != nil {
		return unavailable(err, since)
	}
	done := make(chan error, 1)
	go func() { done <- commit() }()
	timeout := g.timeout + time.Duration(size)*time.Second/slowestDisk
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-down:
	case <-t.C:
		g.fail(fmt.Errorf("a write did not finish within %s", timeout.Round(time.Millisecond)))
	}
	select {
	case err := <-done:
		// Finished while the fault started: it stands.
		return err
	default:
	}
	if err, since, _ = g.state(); err == nil {
		err, since = errors.New("a write was cut short by a fault that has since ended"), g.now()
	}
	return unavailable(err, since)
}

// unavailable is the error of a write refused because the storage fails.
func unavailable(err error, since time.Time) error {
	reason := err.Error()
	var errno syscall.Errno
	if errors.As(err, &errno) {
		reason = errno.Error()
	}
	return &rappel.Error{
		Code:       rappel.EUNAVAILABLE,
		Message:    fmt.Sprintf("The node's storage is failing: %s (since %s); try again later.", reason, since.UTC().Format(time.RFC3339)),
		RetryAfter: faultRetryAfter,
		Err:        err,
	}
}

// storageError reports whether err, from a file operation, says the
// storage fails rather than something Pebble expects and handles: a file
// that exists or does not, or a link across file systems, which Pebble
// answers by copying.
func storageError(err error) bool {
	return !errors.Is(err, os.ErrExist) && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.EXDEV)
}

// hold runs op. When it fails with a storage error once the guard is
// armed, the failure is recorded and kept from the caller: op is tried
// again at every probe tick when retry is set, and never again otherwise,
// until it succeeds (or the store closes, which a failing store does not).
func (g *guard) hold(what string, retry bool, op func() error) error {
	err := op()
	if err == nil || !g.armed.Load() || g.closing.Load() || !storageError(err) {
		return err
	}
	g.held.Add(1)
	defer g.held.Add(-1)
	for {
		g.fail(&opError{what: what, err: err})
		g.mu.Lock()
		wake := g.retry
		g.mu.Unlock()
		if !retry {
			wake = nil // wait for the end of the process
		}
		<-wake
		if err = op(); err == nil {
			return nil
		}
	}
}

// opError is a held operation's failure. It says what failed on which
// file of the database and the system's reason, without the data dir's
// path, which GET /health shows to anyone.
type opError struct {
	what string
	err  error
}

func (e *opError) Error() string {
	var errno syscall.Errno
	if errors.As(e.err, &errno) {
		return e.what + ": " + errno.Error()
	}
	return e.what + ": " + e.err.Error()
}

func (e *opError) Unwrap() error { return e.err }

// guardFS is the file system Pebble gets: every operation that writes
// the store's own files, those in its directory (dir), goes through
// guard.hold. Pebble writes outside it only for a checkpoint
// (Store.Checkpoint: the copy's directory, its files, and the parent it
// syncs), and those operations are the checkpoint's alone: their errors
// go back to Pebble, which removes the partial copy and returns the error
// to the caller, and the store does not count as failing. A backup that
// finds the disk full fails by itself, fast, while the store goes on
// taking writes.
type guardFS struct {
	vfs.FS
	g   *guard
	dir string
}

func (fs guardFS) Unwrap() vfs.FS { return fs.FS }

// own reports whether name is the store's directory or inside it.
func (fs guardFS) own(name string) bool {
	name, dir := filepath.Clean(name), filepath.Clean(fs.dir)
	return name == dir || strings.HasPrefix(name, dir+string(filepath.Separator))
}

func (fs guardFS) file(f vfs.File, name string) vfs.File {
	if f == nil || !fs.own(name) {
		return f
	}
	return &guardFile{File: f, g: fs.g, name: fs.PathBase(name)}
}

// hold is guard.hold for an operation on name, which runs op as it is
// when name is not the store's own.
func (fs guardFS) hold(name, what string, retry bool, op func() error) error {
	if !fs.own(name) {
		return op()
	}
	return fs.g.hold(what, retry, op)
}

func (fs guardFS) Create(name string, c vfs.DiskWriteCategory) (f vfs.File, err error) {
	err = fs.hold(name, "creating "+fs.PathBase(name), true, func() (err error) {
		f, err = fs.FS.Create(name, c)
		return err
	})
	return fs.file(f, name), err
}

func (fs guardFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (f vfs.File, err error) {
	err = fs.hold(name, "opening "+fs.PathBase(name), true, func() (err error) {
		f, err = fs.FS.OpenReadWrite(name, c, opts...)
		return err
	})
	return fs.file(f, name), err
}

func (fs guardFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (f vfs.File, err error) {
	err = fs.hold(newname, "reusing "+fs.PathBase(oldname), true, func() (err error) {
		f, err = fs.FS.ReuseForWrite(oldname, newname, c)
		return err
	})
	return fs.file(f, newname), err
}

// OpenDir wraps the directory, whose Sync makes creates and renames
// durable.
func (fs guardFS) OpenDir(name string) (vfs.File, error) {
	f, err := fs.FS.OpenDir(name)
	return fs.file(f, name), err
}

func (fs guardFS) Link(oldname, newname string) error {
	return fs.hold(newname, "linking "+fs.PathBase(newname), true, func() error { return fs.FS.Link(oldname, newname) })
}

func (fs guardFS) Rename(oldname, newname string) error {
	return fs.hold(newname, "renaming "+fs.PathBase(oldname), true, func() error { return fs.FS.Rename(oldname, newname) })
}

func (fs guardFS) MkdirAll(dir string, perm os.FileMode) error {
	return fs.hold(dir, "creating "+fs.PathBase(dir), true, func() error { return fs.FS.MkdirAll(dir, perm) })
}

// guardFile is a file Pebble writes.
type guardFile struct {
	vfs.File
	g    *guard
	name string
}

// Write writes what is left of p after a partial write when it is tried
// again: the file's offset moved by what was written.
func (f *guardFile) Write(p []byte) (n int, err error) {
	err = f.g.hold("writing "+f.name, true, func() error {
		m, err := f.File.Write(p[n:])
		n += m
		return err
	})
	return n, err
}

func (f *guardFile) WriteAt(p []byte, off int64) (n int, err error) {
	err = f.g.hold("writing "+f.name, true, func() error {
		m, err := f.File.WriteAt(p[n:], off+int64(n))
		n += m
		return err
	})
	return n, err
}

func (f *guardFile) Preallocate(off, length int64) error {
	return f.g.hold("allocating "+f.name, true, func() error { return f.File.Preallocate(off, length) })
}

func (f *guardFile) Sync() error {
	return f.g.hold("syncing "+f.name, false, f.File.Sync)
}

func (f *guardFile) SyncData() error {
	return f.g.hold("syncing "+f.name, false, f.File.SyncData)
}

func (f *guardFile) SyncTo(length int64) (full bool, err error) {
	err = f.g.hold("syncing "+f.name, false, func() (err error) {
		full, err = f.File.SyncTo(length)
		return err
	})
	return full, err
}

func (f *guardFile) Close() error {
	return f.g.hold("closing "+f.name, false, f.File.Close)
}

// guardedDB is the store's database: Pebble's, with its writes bounded by
// the guard. Reads, snapshots and iterators are Pebble's own.
type guardedDB struct {
	*pebble.DB
	g *guard
}

// Set writes one key through the guard.
func (d *guardedDB) Set(key, value []byte, o *pebble.WriteOptions) error {
	b := d.DB.NewBatch()
	if err := b.Set(key, value, nil); err != nil {
		b.Close()
		return err
	}
	return d.commitOwned(b, o)
}

// Delete deletes one key through the guard.
func (d *guardedDB) Delete(key []byte, o *pebble.WriteOptions) error {
	b := d.DB.NewBatch()
	if err := b.Delete(key, nil); err != nil {
		b.Close()
		return err
	}
	return d.commitOwned(b, o)
}

// Ingest ingests the tables at paths through the guard. When it returns
// early the ingestion may go on; the tables are the caller's to remove,
// which makes it fail if it has not linked them yet.
func (d *guardedDB) Ingest(ctx context.Context, paths []string) error {
	return d.g.write(0, func() error { return d.DB.Ingest(ctx, paths) })
}

// commitOwned commits b, which it closes, through the guard.
func (d *guardedDB) commitOwned(b *pebble.Batch, o *pebble.WriteOptions) error {
	return d.g.write(len(b.Repr()), func() error {
		defer b.Close()
		return b.Commit(o)
	})
}

// commitCopy commits a copy of b through the guard, so that the caller
// may close b even while the commit goes on.
func (d *guardedDB) commitCopy(b *pebble.Batch, o *pebble.WriteOptions) error {
	if err, since, _ := d.g.state(); err != nil {
		return unavailable(err, since)
	}
	c := d.DB.NewBatch(pebble.WithInitialSizeBytes(min(len(b.Repr()), math.MaxInt32)))
	if err := c.Apply(b, nil); err != nil {
		c.Close()
		return err
	}
	return d.commitOwned(c, o)
}
