// Package pgtest starts a throwaway PostgreSQL server for tests: one per
// test process, on 127.0.0.1, in a temporary directory, and hands each test
// a fresh empty database on it.
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestStore(t *testing.T) {
//		s := postgres.NewStore(pgtest.DSN(t))
//		…
//	}
//
// The server binaries are looked up in $RAPPEL_PG_BIN, then
// /usr/lib/postgresql/<newest>/bin (Debian's layout), then $PATH. When none
// is found DSN skips the test, unless RAPPEL_CI is set (.ci/run sets it and
// installs PostgreSQL), where a missing server is a failure: the fleet tests
// must not pass in CI by not running.
//
// PostgreSQL refuses to run as root, so a test process running as root
// starts initdb and postgres as the `postgres` system user, with the
// directory handed over to it. The server runs with fsync off: its data
// lives only as long as the test process.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
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

// server is the process's one PostgreSQL server.
type server struct {
	dir  string // temporary directory: data/, the socket and the log
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited

	mu    sync.Mutex // serializes CREATE DATABASE on admin
	admin *pgx.Conn
}

var (
	startOnce sync.Once
	srv       *server
	startErr  error
	// errMissing marks a start that failed for want of binaries.
	errMissing = errors.New("no PostgreSQL server binaries")
	dbSeq      atomic.Int64
)

// DSN returns the URL of a new, empty database on the test server, starting
// the server on first use. The database is left in place (the server's
// directory goes at the end of the process, see Main). It skips tb when
// PostgreSQL is not installed, or fails it when RAPPEL_CI is set.
func DSN(tb testing.TB) string {
	tb.Helper()
	startOnce.Do(func() { srv, startErr = start() })
	if errors.Is(startErr, errMissing) {
		if os.Getenv("RAPPEL_CI") != "" {
			tb.Fatalf("pgtest: %v (RAPPEL_CI is set, so the PostgreSQL tests must run; install postgresql)", startErr)
		}
		tb.Skipf("pgtest: %v; install postgresql (Debian: apt-get install postgresql) to run this test", startErr)
	}
	if startErr != nil {
		tb.Fatalf("pgtest: %v", startErr)
	}
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := srv.createDatabase(name); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return srv.url(name)
}

// Main runs the tests of m, then stops the server (when a test started one)
// and removes its directory, and exits with the tests' status. Call it from
// TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if srv != nil {
		if err := srv.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		}
	}
	os.Exit(code)
}

func (s *server) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

func (s *server) createDatabase(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// name is ours (letters, digits, _), so quoting is enough.
	if _, err := s.admin.Exec(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		return fmt.Errorf("creating database %s: %w", name, err)
	}
	return nil
}

// binDir finds the directory holding initdb and postgres.
func binDir() (string, error) {
	if d := os.Getenv("RAPPEL_PG_BIN"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err != nil {
			return "", fmt.Errorf("%w in RAPPEL_PG_BIN=%s: %w", errMissing, d, err)
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
	return "", fmt.Errorf("%w: initdb is not in /usr/lib/postgresql/*/bin nor on PATH", errMissing)
}

func majorOf(binDir string) int {
	v := filepath.Base(filepath.Dir(binDir))
	n, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	return n
}

// start runs initdb and postgres, and waits until the server takes
// connections.
func start() (*server, error) {
	bin, err := binDir()
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
		s, err := launch(bin, dir, cred)
		if err == nil {
			return s, nil
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
		return nil, fmt.Errorf("%w usable: running as root, and PostgreSQL refuses root, but there is no postgres user to run it as: %w", errMissing, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, fmt.Errorf("handing the server directory to the postgres user: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// launch starts postgres on a free loopback port and waits for it.
func launch(bin, dir string, cred *syscall.Credential) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "postgres.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating the server log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(dir, "data"),
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+dir,
		// The data dies with the test process: durability buys nothing.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "shared_buffers=32MB", "-c", "max_connections=200",
		"-c", "log_min_messages=warning")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = dir
	// Pdeathsig stops the server if the test process dies without Main
	// stopping it; SIGQUIT is PostgreSQL's immediate shutdown. (Linux sends
	// it when the starting thread ends, which the Go runtime does only for
	// a goroutine exiting while locked to its thread; failing that, the
	// server shuts itself down within a minute of its directory's removal.)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting postgres: %w", err)
	}
	s := &server{dir: dir, port: port, cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(s.done) }()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, s.url("postgres"))
		if err == nil {
			s.admin = conn
			return s, nil
		}
		select {
		case <-s.done:
			out, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("starting postgres: it exited: %s", bytes.TrimSpace(out))
		case <-ctx.Done():
			s.stop()
			out, _ := os.ReadFile(logPath)
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

// stop shuts the server down at once and removes its directory.
func (s *server) stop() error {
	if s.admin != nil {
		s.admin.Close(context.Background())
	}
	_ = s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("removing the server directory: %w", err)
	}
	return nil
}
