package main

import (
	"context"
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
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

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
// unpacks again (or replaces, if it carries another bundle); and dot-names,
// which are files being written (temporary names) and the checkpoints
// of backups in progress.
func backupSkip(name string) bool {
	return name == "pebble" || name == "keys" || name == "wazero-cache" || name == "bundle" || strings.HasPrefix(name, ".")
}

// backupPrefix names the temporary directory a backup checkpoints into,
// inside the data dir (hard links need the same file system).
const backupPrefix = ".backup-"

// removeUnfinishedBackups deletes the checkpoints of backups that a
// crash or a SIGKILL interrupted: hard links that would otherwise keep
// deleted sstables on disk for ever. At start no backup can be running.
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

// dataBackup writes backups of one node's data dir.
type dataBackup struct {
	dataDir string
	store   *kv.Store
	// keys is the data dir's key database, nil when the keys live in the
	// fleet's shared store, which is backed up with its database.
	keys *kv.Keys
	now  func() time.Time
}

// write streams an archive of the data dir as of now to w: the store and
// the key database as checkpoints taken first (hard links into a
// temporary directory of the data dir, removed after), then the other
// files. The segment files of the read index are immutable once named; one
// that a refresh removes mid-backup is left out, and the restored node
// rebuilds what its store names and lacks.
func (b *dataBackup) write(ctx context.Context, w io.Writer) error {
	tmp, err := os.MkdirTemp(b.dataDir, backupPrefix)
	if err != nil {
		return fmt.Errorf("starting a backup: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := b.store.Checkpoint(filepath.Join(tmp, "pebble")); err != nil {
		return err
	}
	if b.keys != nil {
		if _, err := b.keys.Checkpoint(ctx, filepath.Join(tmp, "keys")); err != nil {
			return err
		}
	}
	a := archive.NewWriter(w, b.now())
	if err := archiveTree(ctx, a, tmp, "", func(string) bool { return false }); err != nil {
		return err
	}
	if err := archiveTree(ctx, a, b.dataDir, "", backupSkip); err != nil {
		return err
	}
	return a.Close()
}

// archiveTree adds the regular files under root/rel to a, skipping the
// top-level names skip reports and files that vanish while it walks.
func archiveTree(ctx context.Context, a *archive.Writer, root, rel string, skip func(string) bool) error {
	entries, err := os.ReadDir(filepath.Join(root, rel))
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		if (rel == "" && skip(name)) || strings.HasPrefix(name, ".") {
			continue
		}
		p := archivePath(rel, name)
		switch {
		case e.IsDir():
			err = archiveTree(ctx, a, root, p, skip)
		case e.Type().IsRegular():
			err = archiveFileAt(a, filepath.Join(root, filepath.FromSlash(p)), p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// archivePath joins an archive path.
func archivePath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// archiveFileAt adds the file at fsPath as name; a file gone before it is
// opened is left out.
func archiveFileAt(a *archive.Writer, fsPath, name string) error {
	f, err := os.Open(fsPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return a.Add(name, fi.Size(), int64(fi.Mode().Perm()), f)
}

// BackupCommand saves a running node's backup into a file.
type BackupCommand struct {
	To       string
	Node     string
	AdminKey string
	Client   *http.Client
	Stdout   io.Writer
}

// NewBackupCommand returns a BackupCommand with its defaults.
func NewBackupCommand() *BackupCommand {
	return &BackupCommand{Node: "http://127.0.0.1:8080", Stdout: os.Stdout}
}

func (c *BackupCommand) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("rappel backup", flag.ContinueOnError)
	fs.StringVar(&c.To, "to", c.To, "`file` to write the backup into (written whole or not at all)")
	fs.StringVar(&c.Node, "node", c.Node, "base `URL` of the running node to back up")
	fs.StringVar(&c.AdminKey, "admin-key", c.AdminKey, "the node's admin `key`, sent in x-admin-key")
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
	}
	if u, err := url.Parse(c.Node); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--node is %q; give the node's base URL such as http://127.0.0.1:8080", c.Node)
	}
	return nil
}

// Run fetches the backup into a temporary file beside To, checking the
// archive as it arrives, and renames it to To only once it is whole: a
// stream cut short, or an archive that does not match its manifest,
// leaves no file.
func (c *BackupCommand) Run(ctx context.Context) error {
	body, err := c.request(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
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
	m, err := archive.Read(io.TeeReader(body, tmp), archive.Discard)
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
		return nil, fmt.Errorf("asking %s for a backup: %s: %s", c.Node, resp.Status, strings.TrimSpace(string(b)))
	}
	return resp.Body, nil
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
