// Package pgtest starts throwaway PostgreSQL servers from the system's
// binaries: for tests, one per test process, on 127.0.0.1, in a temporary
// directory, handing each test a fresh empty database on it;
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestStore(t *testing.T) {
//		s := postgres.NewStore(pgtest.DSN(t))
//		…
//	}
//
// and, through Start, for any program that needs one for a while, such as
// the benchmark harness (cmd/rappel-bench), which sets its own settings and
// pins the server to a CPU.
//
// The server binaries are looked up in $RAPPEL_PG_BIN, then
// /usr/lib/postgresql/<newest>/bin (Debian's layout), then $PATH. When none
// is found DSN skips the test, unless RAPPEL_CI is set (.ci/run sets it and
// installs PostgreSQL), where a missing server is a failure: the fleet tests
// must not pass in CI by not running.
//
// PostgreSQL refuses to run as root, so a process running as root starts
// initdb and postgres as the `postgres` system user, with the directory
// handed over to it. The server runs with fsync off: its data live only as
// long as its directory.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Options are how Start sets a server up beyond what every throwaway
// server gets (fsync off, loopback only).
type Options struct {
	// Settings are server settings, "name=value", given after pgtest's
	// own, so that they override them.
	Settings []string
	// CPU pins the server and its children to these CPUs (a taskset list:
	// "0", "0-1"); empty leaves it unpinned.
	CPU string
	// Log receives the server's log as it is written, besides the file in
	// the server's directory; nil for the file alone.
	Log io.Writer
}

// Cluster is a running PostgreSQL server: a cluster initialised in a
// temporary directory, served on a loopback port to the user postgres
// without a password.
type Cluster struct {
	Dir  string // temporary directory: data/, the socket and the log
	Port int

	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited

	mu    sync.Mutex // serializes CREATE DATABASE on admin
	admin *pgx.Conn  // opened by the first CreateDatabase
}

// testSettings size the tests' server: small, since every test process
// of a `go test ./...` may run one at once, and with room for the pools
// of many tests.
var testSettings = []string{"shared_buffers=32MB", "max_connections=200"}

var (
	startOnce sync.Once
	srv       *Cluster
	startErr  error
	// ErrMissing marks a start that failed for want of the server
	// binaries, or of the postgres user to run them as.
	ErrMissing = errors.New("no PostgreSQL server binaries")
	dbSeq      atomic.Int64
)

// DSN returns the URL of a new, empty database on the test server, starting
// the server on first use. The database is left in place (the server's
// directory goes at the end of the process, see Main). It skips tb when
// PostgreSQL is not installed, or fails it when RAPPEL_CI is set.
func DSN(tb testing.TB) string {
	tb.Helper()
	startOnce.Do(func() { srv, startErr = Start(Options{Settings: testSettings}) })
	if errors.Is(startErr, ErrMissing) {
		if os.Getenv("RAPPEL_CI") != "" {
			tb.Fatalf("pgtest: %v (RAPPEL_CI is set, so the PostgreSQL tests must run; install postgresql)", startErr)
		}
		tb.Skipf("pgtest: %v; install postgresql (Debian: apt-get install postgresql) to run this test", startErr)
	}
	if startErr != nil {
		tb.Fatalf("pgtest: %v", startErr)
	}
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := srv.CreateDatabase(name); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return srv.URL(name)
}

// Main runs the tests of m, then stops the server (when a test started one)
// and removes its directory, and exits with the tests' status. Call it from
// TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if srv != nil {
		if err := srv.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		}
	}
	os.Exit(code)
}

// URL is the connection URL of database db on the server, as the user
// postgres (a superuser; no password).
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, db)
}

// PID is the process id of the server's main process (the postmaster),
// the parent of its other processes.
func (c *Cluster) PID() int { return c.cmd.Process.Pid }

// dbName is what CreateDatabase accepts: it is quoted, not bound.
var dbName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// CreateDatabase creates an empty database name on the server. The name is
// letters, digits and _, not starting with a digit.
func (c *Cluster) CreateDatabase(name string) error {
	if !dbName.MatchString(name) {
		return fmt.Errorf("database name %q: use 1 to 63 letters, digits and _, not starting with a digit", name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c.admin == nil {
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err != nil {
			return fmt.Errorf("connecting to create database %s: %w", name, err)
		}
		c.admin = conn
	}
	if _, err := c.admin.Exec(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		return fmt.Errorf("creating database %s: %w", name, err)
	}
	return nil
}

// BinDir finds the directory holding initdb and postgres: $RAPPEL_PG_BIN,
// else the newest /usr/lib/postgresql/<major>/bin (Debian's layout), else
// initdb's directory on $PATH. Its error wraps ErrMissing.
func BinDir() (string, error) {
	if d := os.Getenv("RAPPEL_PG_BIN"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err != nil {
			return "", fmt.Errorf("%w in RAPPEL_PG_BIN=%s: %w", ErrMissing, d, err)
		}
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	// Newest major version first: "15" before "9.6" by number.
	slices.SortFunc(dirs, func(a, b string) int { return majorOf(b) - majorOf(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("%w: initdb is not in /usr/lib/postgresql/*/bin nor on PATH", ErrMissing)
}

func majorOf(binDir string) int {
	v := filepath.Base(filepath.Dir(binDir))
	n, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	return n
}

// Start runs initdb in a new temporary directory and postgres on a free
// loopback port, and waits until the server takes connections. The caller
// stops it with Stop. An error for want of binaries wraps ErrMissing.
func Start(opts Options) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "rappel-pg-")
	if err != nil {
		return nil, fmt.Errorf("making the server directory: %w", err)
	}
	cred, err := runAs(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("running initdb: %w\n%s", err, out)
	}
	// A port found free may be taken before postgres binds it; try again.
	for attempt := 0; ; attempt++ {
		c, err := launch(bin, dir, cred, opts)
		if err == nil {
			return c, nil
		}
		if attempt == 4 || !strings.Contains(err.Error(), "could not bind") {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

// runAs returns the credential to run PostgreSQL with: the postgres user's
// when this process is root (PostgreSQL refuses root), after handing dir to
// it; nil otherwise.
func runAs(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("%w usable: running as root, and PostgreSQL refuses root, but there is no postgres user to run it as: %w", ErrMissing, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, fmt.Errorf("handing the server directory to the postgres user: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// baseSettings are every server's: loopback only, and no durability, since
// the data die with the directory.
var baseSettings = []string{
	"listen_addresses=127.0.0.1",
	"fsync=off", "synchronous_commit=off", "full_page_writes=off",
	"log_min_messages=warning",
}

// launch starts postgres on a free loopback port and waits for it.
func launch(bin, dir string, cred *syscall.Credential, opts Options) (*Cluster, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "postgres.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating the server log: %w", err)
	}
	argv := []string{filepath.Join(bin, "postgres"), "-D", filepath.Join(dir, "data"),
		"-p", strconv.Itoa(port), "-c", "unix_socket_directories=" + dir}
	for _, s := range append(slices.Clone(baseSettings), opts.Settings...) {
		argv = append(argv, "-c", s)
	}
	if opts.CPU != "" {
		// taskset execs postgres, so the pid stays the postmaster's, and
		// its children inherit the affinity.
		argv = append([]string{"taskset", "-c", opts.CPU}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if opts.Log != nil {
		w := io.MultiWriter(logFile, opts.Log)
		cmd.Stdout, cmd.Stderr = w, w
	}
	cmd.Dir = dir
	// Pdeathsig stops the server if this process dies without stopping it;
	// SIGQUIT is PostgreSQL's immediate shutdown. (Linux sends it when the
	// starting thread ends, which the Go runtime does only for a goroutine
	// exiting while locked to its thread; failing that, the server shuts
	// itself down within a minute of its directory's removal.)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	c := &Cluster{Dir: dir, Port: port, cmd: cmd, done: make(chan struct{})}
	// The server is started, and waited for, from a thread of its own that
	// lives as long as it does: Linux sends the death signal when the
	// thread that started the child ends, and a thread of the runtime's
	// pool ends whenever a goroutine exits locked to it (as kv/index's
	// lowered-priority refreshes do), which would stop the server under a
	// test. The log stays open until the server exits: with opts.Log, Wait
	// copies its output into it until then.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the server
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		logFile.Close()
		close(c.done)
	}()
	if err := <-started; err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting postgres: %w", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err == nil {
			conn.Close(ctx)
			return c, nil
		}
		select {
		case <-c.done:
			out, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("starting postgres: it exited: %s", bytes.TrimSpace(out))
		case <-ctx.Done():
			out, _ := os.ReadFile(logPath)
			c.halt()
			return nil, fmt.Errorf("starting postgres: no connection within a minute: %w\n%s", err, out)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Stop shuts the server down at once (its data are throwaway) and removes
// its directory.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	if c.admin != nil {
		c.admin.Close(context.Background())
		c.admin = nil
	}
	c.mu.Unlock()
	c.halt()
	if err := os.RemoveAll(c.Dir); err != nil {
		return fmt.Errorf("removing the server directory: %w", err)
	}
	return nil
}

// halt stops the server process: immediate shutdown, then a kill if it
// has not exited within 30 seconds.
func (c *Cluster) halt() {
	_ = c.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}
