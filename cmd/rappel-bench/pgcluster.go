package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// pgCluster is a PostgreSQL server of Debian's package, initialised in a
// temporary directory and listening on a loopback port.
type pgCluster struct {
	Bin  string // directory of initdb, pg_ctl, postgres
	Dir  string
	Port int
	// RunAs is the system user the server runs as: PostgreSQL refuses to
	// run as root, so as root it runs as the package's postgres user.
	RunAs string
	CPU   string // taskset CPU list, or "" for no pinning
	Log   io.Writer
}

// findPGBin returns the newest /usr/lib/postgresql/*/bin holding initdb,
// installing Debian's postgresql package first when there is none and the
// process may (root).
func findPGBin(ctx context.Context, log io.Writer) (string, error) {
	find := func() string {
		m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
		if len(m) == 0 {
			return ""
		}
		slices.Sort(m)
		return filepath.Dir(m[len(m)-1])
	}
	if bin := find(); bin != "" {
		return bin, nil
	}
	if os.Geteuid() != 0 {
		return "", errors.New("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb); install it with `apt-get install -y postgresql`")
	}
	fmt.Fprintln(log, "installing postgresql with apt-get")
	if err := aptInstall(ctx, log, "postgresql"); err != nil {
		return "", err
	}
	if bin := find(); bin != "" {
		return bin, nil
	}
	return "", errors.New("apt-get installed postgresql but no initdb was found under /usr/lib/postgresql")
}

// aptInstall installs Debian packages, updating the lists first.
func aptInstall(ctx context.Context, log io.Writer, pkgs ...string) error {
	for _, args := range [][]string{{"update"}, append([]string{"install", "-y", "--no-install-recommends"}, pkgs...)} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("running apt-get %s: %w", args[0], err)
		}
	}
	return nil
}

// command runs a PostgreSQL program as RunAs, pinned to CPU.
func (c *pgCluster) command(ctx context.Context, prog string, args ...string) *exec.Cmd {
	argv := append([]string{filepath.Join(c.Bin, prog)}, args...)
	if c.RunAs != "" {
		argv = append([]string{"runuser", "-u", c.RunAs, "--"}, argv...)
	}
	if c.CPU != "" {
		argv = append([]string{"taskset", "-c", c.CPU}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = c.Log, c.Log
	return cmd
}

// Start initialises the cluster and starts the server. The settings are
// Debian's defaults but for a larger shared_buffers (the whole data set
// fits), no JIT (it slows short queries) and no fsync (the data are
// throwaway; reads do not depend on it).
func (c *pgCluster) Start(ctx context.Context) error {
	if os.Geteuid() == 0 {
		c.RunAs = "postgres"
		if _, err := user.Lookup(c.RunAs); err != nil {
			return fmt.Errorf("looking up user postgres (PostgreSQL refuses to run as root): %w", err)
		}
	}
	data := filepath.Join(c.Dir, "data")
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return fmt.Errorf("creating postgres dir: %w", err)
	}
	if c.RunAs != "" {
		if err := exec.CommandContext(ctx, "chown", "-R", c.RunAs, c.Dir).Run(); err != nil {
			return fmt.Errorf("handing %s to %s: %w", c.Dir, c.RunAs, err)
		}
	}
	if err := c.command(ctx, "initdb", "-D", data, "-U", "bench", "--auth=trust", "-E", "UTF8", "--locale=C").Run(); err != nil {
		return fmt.Errorf("running initdb: %w", err)
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c shared_buffers=512MB -c work_mem=32MB -c jit=off -c fsync=off -c synchronous_commit=off -c max_parallel_workers_per_gather=0", c.Port, c.Dir)
	if err := c.command(ctx, "pg_ctl", "-D", data, "-l", filepath.Join(c.Dir, "log"), "-o", opts, "-w", "-t", "120", "start").Run(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	return nil
}

// DSN is the connection URL of the cluster's postgres database.
func (c *pgCluster) DSN() string {
	return "postgres://bench@127.0.0.1:" + strconv.Itoa(c.Port) + "/postgres?sslmode=disable"
}

// PIDs returns the process ids of the server's processes (the postmaster
// and its children), for memory figures.
func (c *pgCluster) PIDs() []int {
	b, err := os.ReadFile(filepath.Join(c.Dir, "data", "postmaster.pid"))
	if err != nil {
		return nil
	}
	var pid int
	fmt.Sscanf(string(b), "%d", &pid)
	return append([]int{pid}, childPIDs(pid)...)
}

// Stop stops the server (fast shutdown).
func (c *pgCluster) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.command(ctx, "pg_ctl", "-D", filepath.Join(c.Dir, "data"), "-m", "fast", "-w", "stop").Run(); err != nil {
		return fmt.Errorf("stopping postgres: %w", err)
	}
	return nil
}
