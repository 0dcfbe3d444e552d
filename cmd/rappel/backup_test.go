package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/archive"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

const testAdminKey = "admin-secret-for-the-backup-tests-0123456789"

// servedDataDir serves a data dir holding one record and one API key
// (added with rappel keys into the data dir's key database) with the admin
// key set, and returns its base URL, the record's id and the key.
func servedDataDir(t *testing.T) (base, id, key string) {
	t.Helper()
	dir, id := mustDataDir(t)
	key, _, _ = strings.Cut(mustKeys(t, dir, "add", "--plan", "free", "--label", "backup"), "\n")
	c := NewServeCommand()
	c.DataDir, c.Bundle = dir, os.DirFS(t.TempDir())
	c.Upstream.AdminKey = testAdminKey
	base, _ = serve(t, c)
	return base, id, key
}

// backupTo runs rappel backup against base into file.
func backupTo(ctx context.Context, base, file string) error {
	c := NewBackupCommand()
	if err := c.ParseFlags([]string{"--to", file, "--node", base, "--admin-key", testAdminKey}); err != nil {
		return err
	}
	c.Stdout = io.Discard
	return c.Run(ctx)
}

// restoreInto runs rappel restore of file into dir.
func restoreInto(file, dir string) error {
	c := NewRestoreCommand()
	if err := c.ParseFlags([]string{"--from", file, "--data-dir", dir}); err != nil {
		return err
	}
	c.Stdout = io.Discard
	return c.Run(context.Background())
}

// serveRestored starts a node on a restored data dir.
func serveRestored(t *testing.T, dir string) string {
	t.Helper()
	c := NewServeCommand()
	c.DataDir, c.Bundle, c.APIKeys = dir, os.DirFS(t.TempDir()), "k1"
	base, _ := serve(t, c)
	return base
}

// TestBackup_RestoreServes backs up a running node over its API, restores
// the archive into a new data dir and starts a node on it: the record and
// the API key of the original are served.
func TestBackup_RestoreServes(t *testing.T) {
	base, id, key := servedDataDir(t)
	file := filepath.Join(t.TempDir(), "node.tar")
	if err := backupTo(context.Background(), base, file); err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if err := restoreInto(file, restored); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pebble", "keys", "cursor.key", "index"} {
		if _, err := os.Stat(filepath.Join(restored, want)); err != nil {
			t.Errorf("the restored data dir lacks %s: %v", want, err)
		}
	}
	rbase := serveRestored(t, restored)
	if h := health(t, rbase); h.Status != "ok" {
		t.Fatalf("GET /health on the restored node: %+v", h)
	}
	if code, body := get(t, rbase+"/recall/"+id, key); code != http.StatusOK || !strings.Contains(string(body), "Honda Civic") {
		t.Fatalf("GET /recall/%s on the restored node with the original's key = %d %s", id, code, body)
	}

	t.Run("AdminKey", func(t *testing.T) {
		code, body := adminPost(t, base+"/admin/backup", "wrong", "")
		if code != http.StatusForbidden || !strings.Contains(string(body), "admin key") {
			t.Fatalf("POST /admin/backup with a wrong key = %d %s", code, body)
		}
	})
	t.Run("NotEmpty", func(t *testing.T) {
		err := restoreInto(file, restored)
		if err == nil || !strings.Contains(err.Error(), "is not empty") {
			t.Fatalf("restore into a used data dir: %v", err)
		}
	})
	t.Run("Corrupt", func(t *testing.T) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		// Flip one byte of the first file's content (after its header
		// and the PAX records, well inside the first 512-byte block of
		// data), leaving the tar structure whole.
		bad := bytes.Clone(b)
		off := firstDataOffset(t, b)
		bad[off] ^= 0xff
		testRestoreRefused(t, bad, "does not match its SHA-256")
		testRestoreRefused(t, b[:len(b)/2], "cut short")
		testRestoreRefused(t, b[:len(b)-2048], "manifest")
	})
}

// firstDataOffset returns the offset of the first file's first byte.
func firstDataOffset(t *testing.T, archive []byte) int64 {
	t.Helper()
	r := &countingReader{r: bytes.NewReader(archive)}
	tr := tar.NewReader(r)
	if _, err := tr.Next(); err != nil {
		t.Fatal(err)
	}
	return r.n
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// testRestoreRefused restores tarball into a new empty directory and
// expects an error saying want, and the directory left empty.
func testRestoreRefused(t *testing.T, tarball []byte, want string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "bad.tar")
	if err := os.WriteFile(file, tarball, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	err := restoreInto(file, dir)
	if !errors.Is(err, archive.ErrArchive) || !strings.Contains(err.Error(), want) {
		t.Fatalf("restore of a bad archive: %v; want an archive error saying %q", err, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Fatalf("a refused restore left %s in the data dir", entries[0].Name())
	}
}

// TestBackup_CutShort cuts the backup's stream two ways, a node whose
// answer ends midway and a client that gives up midway: neither leaves
// the file, and the error says so.
func TestBackup_CutShort(t *testing.T) {
	base, _, _ := servedDataDir(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "node.tar")

	// A proxy that passes on the first 4 KiB of the node's answer and
	// then closes the connection.
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.Path, nil)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.CopyN(w, resp.Body, 4<<10)
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}))
	defer cut.Close()
	err := backupTo(context.Background(), cut.URL, file)
	if err == nil || !strings.Contains(err.Error(), "no "+file+" was written") {
		t.Fatalf("backup over a cut stream: %v", err)
	}
	assertOnlyFile(t, dir, "")

	// A client that stops after reading a little: the slow reader below
	// lets the context end mid-stream.
	ctx, cancel := context.WithCancel(context.Background())
	var read atomic.Int64
	client := &http.Client{Transport: readHook{http.DefaultTransport, func(n int) {
		if read.Add(int64(n)) > 2<<10 {
			cancel()
		}
	}}}
	c := NewBackupCommand()
	c.To, c.Node, c.AdminKey, c.Client, c.Stdout = file, base, testAdminKey, client, io.Discard
	err = c.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "no "+file+" was written") {
		t.Fatalf("backup given up midway: %v", err)
	}
	assertOnlyFile(t, dir, "")
}

// assertOnlyFile fails unless dir holds exactly the file name ("" for
// nothing).
func assertOnlyFile(t *testing.T, dir, name string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{name}; (name == "" && len(names) != 0) || (name != "" && fmt.Sprint(names) != fmt.Sprint(want)) {
		t.Fatalf("%s holds %v; want %q", dir, names, name)
	}
}

// readHook is a transport whose response bodies report each read.
type readHook struct {
	rt     http.RoundTripper
	onRead func(n int)
}

func (h readHook) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := h.rt.RoundTrip(r)
	if err == nil {
		resp.Body = hookedBody{resp.Body, h.onRead, r.Context()}
	}
	return resp, err
}

type hookedBody struct {
	io.ReadCloser
	onRead func(int)
	ctx    context.Context
}

// Read reads at most 1 KiB; once the request's context is done it fails
// as the transport does, at once rather than when the transport notices,
// so that bytes already buffered are not read past a cancellation.
func (b hookedBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := b.ReadCloser.Read(p[:min(len(p), 1<<10)])
	b.onRead(n)
	return n, err
}

// TestBackup_WhileWriting takes backups of a store that a writer keeps
// adding records to, one synced write each: every backup restores to a
// store holding exactly the records up to some point at or after the
// backup started, none missing before it and none half-written, and a
// node started on it serves the last.
func TestBackup_WhileWriting(t *testing.T) {
	dir, _ := mustDataDir(t)
	st := kvtest.OpenAt(t, filepath.Join(dir, "pebble"))
	defer st.Close()
	var written atomic.Int64
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := st.PutRecords(context.Background(), []*rappel.Record{numbered(i)}); err != nil {
				done <- err
				return
			}
			written.Store(int64(i + 1))
		}
	}()
	waitFor(t, "the first writes", func() bool { return written.Load() > 50 })
	b := &dataBackup{dataDir: dir, store: st, keys: kv.NewKeys(filepath.Join(dir, "keys")), now: time.Now}
	var archive bytes.Buffer
	before := written.Load()
	if err := b.write(context.Background(), &archive); err != nil {
		t.Fatal(err)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "b.tar")
	if err := os.WriteFile(file, archive.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if err := restoreInto(file, restored); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".backup-") {
				t.Fatalf("the backup left its checkpoint %s in the data dir", e.Name())
			}
		}
	}
	n := restoredPrefix(t, restored)
	if n < before || n > written.Load() {
		t.Fatalf("the restored store holds records 0..%d; the backup started after %d and the writer stopped at %d", n, before, written.Load())
	}
	base := serveRestored(t, restored)
	if code, body := get(t, base+"/recall/"+numbered(int(n-1)).RecordID, "k1"); code != http.StatusOK {
		t.Fatalf("GET the last record restored = %d %s", code, body)
	}
	if h := health(t, base); h.Status != "ok" {
		t.Fatalf("GET /health on the restored node: %+v", h)
	}
}

// numbered is the writer's i-th record.
func numbered(i int) *rappel.Record {
	return &rappel.Record{
		RecordID: fmt.Sprintf("hc-9%06d", i), RecallID: fmt.Sprintf("9%06d", i), RecallType: rappel.TypeConsumerProduct,
		Agency: rappel.AgencyHealthCanada, Status: rappel.StatusActive,
		EventDate: "2025-01-15", RecallDate: "2025-01-15", FetchedAt: "2025-03-04T10:00:00Z",
		Translations: rappel.Translations{EN: &rappel.Translation{Title: fmt.Sprintf("Toy %d recalled", i)}},
	}
}

// restoredPrefix opens the restored store and returns n such that it
// holds the writer's records 0..n-1 and no other.
func restoredPrefix(t *testing.T, dir string) int64 {
	t.Helper()
	st := kvtest.OpenAt(t, filepath.Join(dir, "pebble"))
	defer st.Close()
	var n int64
	for {
		got, err := st.Record(context.Background(), numbered(int(n)).RecordID)
		if err != nil || got == nil {
			break
		}
		n++
	}
	for i := n; i < n+20; i++ {
		if got, err := st.Record(context.Background(), numbered(int(i)).RecordID); err == nil && got != nil {
			t.Fatalf("the restored store holds record %d but not %d: not a point in time", i, n)
		}
	}
	return n
}

// TestBackup_NodeKilledMidBackup kills (SIGKILL) a node process while it
// streams a backup: the client says the backup failed and writes no file;
// the node, started again on the same data dir, removes the checkpoint the
// killed backup left, serves what it served, and its next backup restores
// into a node that answers as it does.
func TestBackup_NodeKilledMidBackup(t *testing.T) {
	dir, id := mustDataDir(t)
	// A file large enough that the stream outlasts the sockets' buffers,
	// so the node is killed mid-write, its checkpoint still on disk.
	filler := make([]byte, 64<<20)
	_, _ = rand.Read(filler)
	if err := os.WriteFile(filepath.Join(dir, "filler.bin"), filler, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--data-dir", dir, "--admin-key", testAdminKey, "--api-keys", "k1"}
	base, cmd, stderr := startProcess(t, fleetNodeConfig{Args: args, Bundle: t.TempDir()})

	stalled, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var read atomic.Int64
	client := &http.Client{Transport: readHook{http.DefaultTransport, func(n int) {
		if read.Add(int64(n)) > 2<<10 {
			once.Do(func() { close(stalled) })
			<-resume
		}
	}}}
	out := t.TempDir()
	file := filepath.Join(out, "node.tar")
	c := NewBackupCommand()
	c.To, c.Node, c.AdminKey, c.Client, c.Stdout = file, base, testAdminKey, client, io.Discard
	failed := make(chan error, 1)
	go func() { failed <- c.Run(context.Background()) }()
	select {
	case <-stalled:
	case err := <-failed:
		t.Fatalf("the backup ended before the node was killed: %v\n%s", err, stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("the backup did not start:\n%s", stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, backupPrefix+"*")); len(left) == 0 {
		t.Fatal("no checkpoint on disk while the backup streams")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	close(resume)
	if err := <-failed; err == nil || !strings.Contains(err.Error(), "no "+file+" was written") {
		t.Fatalf("a backup whose node was killed: %v", err)
	}
	assertOnlyFile(t, out, "")

	s := NewServeCommand()
	s.DataDir, s.Bundle, s.APIKeys = dir, os.DirFS(t.TempDir()), "k1"
	s.Upstream.AdminKey = testAdminKey
	again, _ := serve(t, s)
	if left, _ := filepath.Glob(filepath.Join(dir, backupPrefix+"*")); len(left) > 0 {
		t.Fatalf("the restarted node left the killed backup's checkpoint %v", left)
	}
	if code, body := get(t, again+"/recall/"+id, "k1"); code != http.StatusOK || !strings.Contains(string(body), "Honda Civic") {
		t.Fatalf("GET /recall/%s after the restart = %d %s", id, code, body)
	}
	if err := backupTo(context.Background(), again, file); err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if err := restoreInto(file, restored); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, serveRestored(t, restored)+"/recall/"+id, "k1"); code != http.StatusOK || !strings.Contains(string(body), "Honda Civic") {
		t.Fatalf("GET /recall/%s on the node restored after the kill = %d %s", id, code, body)
	}
}

// TestBackup_NoRedirect: a node address that answers with a redirect to
// another host (https to http included) is refused with a sentence, and
// the admin key never reaches the other host.
func TestBackup_NoRedirect(t *testing.T) {
	got := make(chan string, 4)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("X-Admin-Key")
		w.WriteHeader(http.StatusOK)
	}))
	defer other.Close()
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusFound, http.StatusPermanentRedirect} {
		node := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/steal?token=abc", code)
		}))
		c := NewBackupCommand()
		if err := c.ParseFlags([]string{"--to", filepath.Join(t.TempDir(), "b.tar"), "--node", node.URL, "--admin-key", testAdminKey}); err != nil {
			t.Fatal(err)
		}
		c.Stdout, c.Client = io.Discard, node.Client()
		err := c.Run(context.Background())
		node.Close()
		if err == nil || !strings.Contains(err.Error(), "does not follow") || strings.Contains(err.Error(), "token=abc") {
			t.Fatalf("a backup redirected with %d: %v", code, err)
		}
	}
	select {
	case key := <-got:
		t.Fatalf("the other host was asked, with the admin key %q", key)
	default:
	}
}

// TestRestore_LeavesNothing: a restore into a directory whose parents do
// not exist yet, refused for an archive whose entries clash (a file that
// would be another's directory), says so in the archive's words, not the
// file system's "file exists", and removes every directory it made; a
// backup larger than the free space is refused before anything is
// written.
func TestRestore_LeavesNothing(t *testing.T) {
	var buf bytes.Buffer
	a := archive.NewWriter(&buf, time.Now())
	for _, name := range []string{"foo", "foo/bar"} {
		if err := a.Add(name, 1, 0o600, strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	file := filepath.Join(tmp, "clash.tar")
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	err := restoreInto(file, filepath.Join(tmp, "new", "deeper", "data"))
	if !errors.Is(err, archive.ErrArchive) || !strings.Contains(err.Error(), "cannot both be files") || strings.Contains(err.Error(), "file exists") {
		t.Fatalf("restore of clashing entries: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused restore left the directories it made: %v", err)
	}

	huge := filepath.Join(tmp, "huge.tar")
	if err := os.WriteFile(huge, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 1<<50); err != nil { // a sparse file of 1 PiB
		t.Skipf("this file system cannot hold a sparse file of 1 PiB: %v", err)
	}
	dir := filepath.Join(tmp, "big")
	err = restoreInto(huge, dir)
	if err == nil || !strings.Contains(err.Error(), "free and the backup takes") {
		t.Fatalf("restore of a backup larger than the free space: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a restore refused for space left %s: %v", dir, err)
	}
}
