package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/internal/archive"
	"github.com/rappel-ca/rappel/kv"
)

// Backup and restore (docs/operations.md, "Backup and restore"). Pebble lets one
// process open a store, so a backup is taken by the running node: POST
// /admin/backup checkpoints its store and key database and streams them
// with the rest of the data dir; rappel backup saves that stream, and
// rappel restore unpacks it into an empty data dir for a node to start on.

// backupSkip reports whether the data dir's entry name stays out of a
// backup: the store and the key database, archived from checkpoints;
// wazero's cache of compiled plugins, rebuilt at start; the bundle's
// read index unpacked from the binary, which the restored node's binary
// unpacks again (or replaces, if it carries another bundle); the record
// of the last backup (lastBackupFile), which is the node's, not its
// data's; and dot-names, which are files being written (temporary names)
// and the checkpoints of backups in progress.
func backupSkip(name string) bool {
	return name == "pebble" || name == "keys" || name == "wazero-cache" || name == "bundle" || name == lastBackupFile || strings.HasPrefix(name, ".")
}

// backupPrefix names the temporary directory a backup checkpoints into,
// inside the data dir (hard links need the same file system).
const backupPrefix = ".backup-"

// removeUnfinishedBackups deletes the checkpoints of backups that a
// crash or a SIGKILL interrupted: hard links that would otherwise keep
// deleted sstables on disk for ever (and a record of the last backup
// that was being written, Keep). At start no backup can be running.
func removeUnfinishedBackups(dataDir string, log *slog.Logger) {
	dirs, _ := filepath.Glob(filepath.Join(dataDir, backupPrefix+"*"))
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			log.Warn("could not remove an unfinished backup's checkpoint; delete it by hand", "dir", d, "err", err)
			continue
		}
		log.Info("removed the checkpoint of a backup the node did not finish", "dir", d)
	}
}

// lastBackupFile is where the node keeps its last successful backup
// (edge.Backups.Keep), so that its metrics say when its data was last
// saved across restarts. It stays out of backups: a node restored from
// one has not been backed up itself.
const lastBackupFile = "last-backup.json"

// dataBackup takes backups of one node's data dir (edge.Backups).
type dataBackup struct {
	dataDir string
	store   *kv.Store
	// keys is the data dir's key database, nil when the keys live in the
	// fleet's shared store, which is backed up with its database.
	keys *kv.Keys
	now  func() time.Time
}

var _ edge.Backups = (*dataBackup)(nil)

// Start takes the checkpoints of the store and of the key database (hard
// links into a temporary directory of the data dir, which the archive's
// Close removes). One that fails removes what it wrote and is answered
// 503 with a sentence: the store's own files are untouched, so the node
// goes on serving and taking writes (kv.Store.Checkpoint).
func (b *dataBackup) Start(ctx context.Context) (edge.BackupArchive, error) {
	tmp, err := os.MkdirTemp(b.dataDir, backupPrefix)
	if err != nil {
		return nil, backupRefused("creating the directory of its checkpoints", err)
	}
	a := &dataArchive{b: b, tmp: tmp}
	if err := b.store.Checkpoint(filepath.Join(tmp, "pebble")); err != nil {
		return nil, errors.Join(backupRefused("the checkpoint of the store", err), a.Close())
	}
	if b.keys != nil {
		if _, err := b.keys.Checkpoint(ctx, filepath.Join(tmp, "keys")); err != nil {
			return nil, errors.Join(backupRefused("the checkpoint of the key database", err), a.Close())
		}
	}
	a.at = b.now()
	return a, nil
}

// backupRefused is the error of a backup whose what failed with err: a
// sentence that names the system's reason without the data dir's paths,
// and says what to do.
func backupRefused(what string, err error) error {
	reason, advice := "see the node's log (backup failed)", "Look at the node's log, then try again."
	var errno syscall.Errno
	switch {
	case errors.Is(err, kv.ErrKeysBusy):
		reason, advice = "another process holds the key database", "Try again once rappel keys is done."
	case errors.As(err, &errno):
		reason = errno.Error()
		if errno == syscall.ENOSPC || errno == syscall.EDQUOT {
			advice = "Free space on the data dir's file system, then try again."
		}
	}
	return &rappel.Error{
		Code:    rappel.EUNAVAILABLE,
		Message: fmt.Sprintf("The backup could not be taken: %s failed (%s). %s The node goes on serving and taking writes.", what, reason, advice),
		Err:     err,
	}
}

// dataArchive is a backup whose checkpoints are taken.
type dataArchive struct {
	b   *dataBackup
	tmp string
	at  time.Time
}

// Write streams an archive of the data dir as of the checkpoints to w:
// the checkpoints first, then the other files. The segment files of the
// read index are immutable once named; one that a refresh removes
// mid-backup is left out, and the restored node rebuilds what its store
// names and lacks.
func (a *dataArchive) Write(ctx context.Context, w io.Writer) (int, error) {
	aw := archive.NewWriter(w, a.at)
	if err := aw.AddTree(ctx, a.tmp, func(string) bool { return false }); err != nil {
		return 0, err
	}
	if err := aw.AddTree(ctx, a.b.dataDir, backupSkip); err != nil {
		return 0, err
	}
	return aw.Files(), aw.Close()
}

// Close removes the checkpoints.
func (a *dataArchive) Close() error { return os.RemoveAll(a.tmp) }

// write is Start and Write in one, for tests that take a backup without
// a node.
func (b *dataBackup) write(ctx context.Context, w io.Writer) error {
	a, err := b.Start(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	_, err = a.Write(ctx, w)
	return err
}

// lastBackup is lastBackupFile's content.
type lastBackup struct {
	EndedAt         time.Time `json:"ended_at"`
	DurationSeconds float64   `json:"duration_seconds"`
	Files           int       `json:"files"`
	Bytes           int64     `json:"bytes"`
}

// Last reads lastBackupFile; a data dir without one never had a backup.
func (b *dataBackup) Last() (edge.BackupResult, error) {
	data, err := os.ReadFile(filepath.Join(b.dataDir, lastBackupFile))
	if errors.Is(err, os.ErrNotExist) {
		return edge.BackupResult{}, nil
	}
	if err != nil {
		return edge.BackupResult{}, err
	}
	var l lastBackup
	if err := json.Unmarshal(data, &l); err != nil {
		return edge.BackupResult{}, fmt.Errorf("reading %s: %w", lastBackupFile, err)
	}
	return edge.BackupResult{EndedAt: l.EndedAt, Duration: time.Duration(l.DurationSeconds * float64(time.Second)), Files: l.Files, Bytes: l.Bytes}, nil
}

// Keep replaces lastBackupFile with res, whole or not at all: written
// under a temporary name that a start removes if a crash left it
// (removeUnfinishedBackups), synced, then renamed.
func (b *dataBackup) Keep(res edge.BackupResult) error {
	data, err := json.Marshal(lastBackup{EndedAt: res.EndedAt.UTC(), DurationSeconds: res.Duration.Seconds(), Files: res.Files, Bytes: res.Bytes})
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(b.dataDir, backupPrefix+"record-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // once renamed, there is nothing to remove
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := syncClose(f); err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(b.dataDir, lastBackupFile))
}

// BackupCommand saves a running node's backup into a file.
type BackupCommand struct {
	To       string
	Node     string
	AdminKey string
	// Timeout bounds the whole backup, from the request to the file's
	// rename (--timeout); 0 means no limit.
	Timeout time.Duration
	Client  *http.Client
	// Stdout receives the line that says the backup is written, Stderr
	// the progress lines, one every ProgressEvery (0 means
	// DefaultBackupProgress).
	Stdout, Stderr io.Writer
	ProgressEvery  time.Duration
}

// DefaultBackupTimeout is --timeout's default: a data dir of a few hundred
// MiB takes seconds over a LAN, so ten minutes is room for a slow link
// while a node that never answers ends the command before a cron job's
// next run.
const DefaultBackupTimeout = 10 * time.Minute

// DefaultBackupProgress is how often rappel backup says how far it got.
const DefaultBackupProgress = 5 * time.Second

// NewBackupCommand returns a BackupCommand with its defaults.
func NewBackupCommand() *BackupCommand {
	return &BackupCommand{Node: "http://127.0.0.1:8080", Timeout: DefaultBackupTimeout, Stdout: os.Stdout, Stderr: os.Stderr}
}

func (c *BackupCommand) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("rappel backup", flag.ContinueOnError)
	fs.StringVar(&c.To, "to", c.To, "`file` to write the backup into (written whole or not at all)")
	fs.StringVar(&c.Node, "node", c.Node, "base `URL` of the running node to back up")
	fs.StringVar(&c.AdminKey, "admin-key", c.AdminKey, "the node's admin `key`, sent in x-admin-key")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "longest the whole backup may take, such as 30m; 0 for no limit")
	return fs
}

// ParseFlags reads the command line and environment into c.
func (c *BackupCommand) ParseFlags(args []string) error {
	if err := parseFlags(c.flagSet(), args); err != nil {
		return err
	}
	switch {
	case c.To == "":
		return errors.New("--to is empty; give the file to write the backup into")
	case c.AdminKey == "":
		return errors.New("--admin-key is empty; give the node's admin key (its --admin-key)")
	case c.Timeout < 0:
		return fmt.Errorf("--timeout is %s; give a positive duration such as 30m, or 0 for no limit", c.Timeout)
	}
	if u, err := url.Parse(c.Node); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--node is %q; give the node's base URL such as http://127.0.0.1:8080", c.Node)
	}
	return nil
}

// Run fetches the backup into a temporary file beside To, checking the
// archive as it arrives, and renames it to To only once it is whole: a
// stream cut short, or an archive that does not match its manifest,
// leaves no file. It gives up after Timeout, and says every ProgressEvery
// on Stderr how far it got.
func (c *BackupCommand) Run(ctx context.Context) error {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, c.Timeout, errBackupTimeout)
		defer cancel()
	}
	p := c.startProgress()
	defer p.stop()
	err := c.fetch(ctx, p)
	if err != nil && errors.Is(context.Cause(ctx), errBackupTimeout) {
		return fmt.Errorf("the backup from %s did not finish within %s (--timeout; %s received), and no %s was written: give a longer --timeout for a large data dir or a slow link, or see the node's log (backup started, backup failed) if it never answered",
			c.Node, c.Timeout, sizeText(p.bytes.Load()), c.To)
	}
	return err
}

// errBackupTimeout is the cause of a backup's context that Timeout ended.
var errBackupTimeout = errors.New("the backup's --timeout passed")

// fetch is Run within its timeout.
func (c *BackupCommand) fetch(ctx context.Context, p *backupProgress) error {
	body, err := c.request(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	p.answered.Store(true)
	tmp, err := os.CreateTemp(filepath.Dir(c.To), "."+filepath.Base(c.To)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing the backup: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	m, err := archive.Read(io.TeeReader(body, progressWriter{tmp, p}), archive.Discard)
	if err != nil {
		return fmt.Errorf("the backup from %s failed, and no %s was written: %w", c.Node, c.To, err)
	}
	if err := syncClose(tmp); err != nil {
		return fmt.Errorf("writing the backup: %w", err)
	}
	if err := os.Rename(tmp.Name(), c.To); err != nil {
		return fmt.Errorf("writing the backup: %w", err)
	}
	done = true
	var size int64
	for _, f := range m.Files {
		size += f.Size
	}
	fmt.Fprintf(c.Stdout, "backup of %s as of %s written to %s: %d files, %s\n", c.Node, m.CreatedAt.Format(time.RFC3339), c.To, len(m.Files), mebibytes(uint64(size), true))
	return nil
}

// backupProgress is what a backup has received, told on Stderr every
// ProgressEvery, so that a backup that takes long, or a node that does not
// answer, is seen as such rather than as a silent command.
type backupProgress struct {
	bytes    atomic.Int64
	answered atomic.Bool
	done     chan struct{}
	stopped  chan struct{}
}

// startProgress starts the progress lines.
func (c *BackupCommand) startProgress() *backupProgress {
	p := &backupProgress{done: make(chan struct{}), stopped: make(chan struct{})}
	every := c.ProgressEvery
	if every <= 0 {
		every = DefaultBackupProgress
	}
	out := c.Stderr
	if out == nil {
		out = io.Discard
	}
	start := time.Now()
	go func() {
		defer close(p.stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
			}
			took := time.Since(start).Round(time.Second)
			if !p.answered.Load() {
				fmt.Fprintf(out, "rappel backup: waiting for %s to take its checkpoints and answer (%s)\n", c.Node, took)
				continue
			}
			fmt.Fprintf(out, "rappel backup: %s received from %s (%s)\n", sizeText(p.bytes.Load()), c.Node, took)
		}
	}()
	return p
}

// stop ends the progress lines; none is written after it returns.
func (p *backupProgress) stop() {
	close(p.done)
	<-p.stopped
}

// progressWriter counts into p what it writes to w.
type progressWriter struct {
	w io.Writer
	p *backupProgress
}

func (w progressWriter) Write(b []byte) (int, error) {
	n, err := w.w.Write(b)
	w.p.bytes.Add(int64(n))
	return n, err
}

// sizeText is n bytes for a progress line: KiB below a MiB, MiB above.
func sizeText(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return mebibytes(uint64(n), false)
}

// request starts POST /admin/backup and returns the body of its 200.
func (c *BackupCommand) request(ctx context.Context) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.Node, "/")+"/admin/backup", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Admin-Key", c.AdminKey)
	client := http.DefaultClient
	if c.Client != nil {
		client = c.Client
	}
	// No redirect is followed: it would send the admin key on to
	// wherever the answer points, another host or plain http included.
	noRedirect := *client
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noRedirect.Do(req)
	if err != nil {
		return nil, fmt.Errorf("asking %s for a backup: %w", c.Node, err)
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		resp.Body.Close()
		return nil, fmt.Errorf("asking %s for a backup: it answered %s, a redirect to %s, which rappel backup does not follow, so as not to send the admin key on; give --node the address of the node itself", c.Node, resp.Status, bareURL(resp.Header.Get("Location")))
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		return nil, fmt.Errorf("asking %s for a backup: %s: %s", c.Node, resp.Status, problemDetail(b))
	}
	return resp.Body, nil
}

// problemDetail is the sentence of a node's error answer (its JSON
// "detail"), or the answer as it came when it has none.
func problemDetail(body []byte) string {
	var p struct {
		Detail string `json:"detail"`
	}
	if json.Unmarshal(body, &p) == nil && p.Detail != "" {
		return p.Detail
	}
	return strings.TrimSpace(string(body))
}

// bareURL is raw without user info and query string, for a sentence.
func bareURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an address that does not parse)"
	}
	u.User, u.RawQuery, u.ForceQuery = nil, "", false
	return u.String()
}

// syncClose syncs and closes f.
func syncClose(f *os.File) error {
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// RestoreCommand unpacks a backup into an empty data dir.
type RestoreCommand struct {
	From    string
	DataDir string
	Stdout  io.Writer
}

// NewRestoreCommand returns a RestoreCommand with its defaults.
func NewRestoreCommand() *RestoreCommand { return &RestoreCommand{Stdout: os.Stdout} }

func (c *RestoreCommand) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("rappel restore", flag.ContinueOnError)
	fs.StringVar(&c.From, "from", c.From, "backup `file` written by rappel backup")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "empty `directory` to restore into; created if missing")
	return fs
}

// ParseFlags reads the command line and environment into c.
func (c *RestoreCommand) ParseFlags(args []string) error {
	if err := parseFlags(c.flagSet(), args); err != nil {
		return err
	}
	switch {
	case c.From == "":
		return errors.New("--from is empty; give the backup file to restore")
	case c.DataDir == "":
		return errors.New("--data-dir is empty; give the empty directory to restore into")
	}
	return nil
}

// Run unpacks the backup into DataDir, which must be empty or missing,
// and checks it against its manifest. Whatever fails, DataDir is left as
// it was found: what was written is removed.
func (c *RestoreCommand) Run(ctx context.Context) (err error) {
	f, err := os.Open(c.From)
	if err != nil {
		return fmt.Errorf("opening the backup: %w", err)
	}
	defer f.Close()
	made, err := prepareRestoreDir(c.DataDir)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			emptyRestoreDir(c.DataDir, made)
		}
	}()
	if err := checkRestoreSpace(f, c.DataDir); err != nil {
		return err
	}
	root, err := os.OpenRoot(c.DataDir)
	if err != nil {
		return err
	}
	defer root.Close()
	m, err := archive.Read(ctxReader{ctx, f}, func(name string, mode int64) (io.WriteCloser, error) {
		return createIn(root, name, mode)
	})
	if err != nil {
		return fmt.Errorf("restoring %s into %s failed, and nothing of it was left there: %w", c.From, c.DataDir, err)
	}
	fmt.Fprintf(c.Stdout, "restored %d files of the backup of %s into %s; start the node with --data-dir %s\n",
		len(m.Files), m.CreatedAt.Format(time.RFC3339), c.DataDir, c.DataDir)
	return nil
}

// prepareRestoreDir creates dir, or checks that it is an empty directory:
// a restore never mixes a backup with another node's files. It returns
// the topmost directory it created ("" when dir was there), which a
// failed restore removes, so that nothing it made is left behind.
func prepareRestoreDir(dir string) (made string, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		made = filepath.Clean(dir)
		for p := filepath.Dir(made); p != made; p = filepath.Dir(p) {
			if _, err := os.Lstat(p); err == nil {
				break
			}
			made = p
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("creating the data dir: %w", err)
		}
		return made, nil
	case err != nil:
		return "", fmt.Errorf("reading the data dir %s: %w", dir, err)
	case len(entries) > 0:
		return "", fmt.Errorf("the data dir %s is not empty (it holds %s); restore into an empty or new directory, and move the old one aside first if it is to be replaced", dir, entries[0].Name())
	}
	return "", nil
}

// emptyRestoreDir removes what a failed restore wrote: the directories it
// created (made), or dir's contents when dir was there.
func emptyRestoreDir(dir, made string) {
	if made != "" {
		_ = os.RemoveAll(made)
		return
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// checkRestoreSpace refuses a restore into a file system with less free
// space than the backup's size, before a byte is written: a backup is an
// uncompressed tar, so its files take about its own size, and a restore
// that fills the disk half way helps nobody.
func checkRestoreSpace(backup *os.File, dir string) error {
	st, err := backup.Stat()
	if err != nil {
		return fmt.Errorf("reading the backup's size: %w", err)
	}
	u, err := vfs.Default.GetDiskUsage(dir)
	if err != nil {
		return fmt.Errorf("measuring the free space of %s: %w", dir, err)
	}
	if need := uint64(max(st.Size(), 0)); u.AvailBytes < need {
		return fmt.Errorf("%s has %s free and the backup takes %s: free space or restore onto a larger file system",
			dir, mebibytes(u.AvailBytes, false), mebibytes(need, true))
	}
	return nil
}

// createIn creates the file name (slash separated) in root with its
// directories; root keeps every path inside the data dir.
func createIn(root *os.Root, name string, mode int64) (io.WriteCloser, error) {
	p := filepath.FromSlash(name)
	if dir := filepath.Dir(p); dir != "." {
		if err := root.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	perm := iofs.FileMode(mode) & 0o600 // the data dir is the node's own: nothing for group or others
	f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm|0o600)
	if err != nil {
		return nil, err
	}
	return syncedFile{f}, nil
}

// syncedFile is a restored file, synced when closed: a node started on
// the data dir after a crash finds every file whole.
type syncedFile struct{ *os.File }

func (f syncedFile) Close() error { return syncClose(f.File) }

// ctxReader stops a read once ctx is done, so that a restore ends on a
// signal.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}
