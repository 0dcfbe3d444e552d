package main

import (
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
)

// Env describes the machine and the software measured.
type Env struct {
	CPU      string
	CPUs     int
	MemMiB   int64
	Kernel   string
	Go       string
	Commit   string
	Postgres string
	Wrk      string
	Bleve    string
	SQLite   string // the library's version and the driver's
}

// readEnv reads what it can; a missing piece is left empty.
func readEnv(repo string) Env {
	e := Env{CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				e.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	e.MemMiB = memTotalKB() >> 10
	e.Kernel = output("uname", "-r")
	commit := output("git", "-C", repo, "rev-parse", "--short=12", "HEAD")
	if commit != "" && output("git", "-C", repo, "status", "--porcelain", "--untracked-files=no") != "" {
		commit += " (with uncommitted changes)"
	}
	e.Commit = commit
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres"); len(m) > 0 {
		e.Postgres = output(m[len(m)-1], "--version")
	}
	if v := output("wrk", "--version"); v != "" {
		e.Wrk = strings.SplitN(v, "\n", 2)[0]
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/blevesearch/bleve/v2":
				e.Bleve = d.Version
			case "modernc.org/sqlite":
				e.SQLite = "modernc.org/sqlite " + d.Version
			}
		}
	}
	if db, err := sql.Open("sqlite", ":memory:"); err == nil {
		var v string
		if db.QueryRow(`SELECT sqlite_version()`).Scan(&v) == nil {
			e.SQLite = strings.TrimSpace("SQLite " + v + " " + e.SQLite)
		}
		db.Close()
	}
	return e
}

// output runs a command and returns its trimmed output, or "" on error.
// wrk --version exits 1 after printing its version, so output is kept.
func output(name string, args ...string) string {
	out, _ := exec.Command(name, args...).CombinedOutput()
	s := strings.TrimSpace(string(out))
	if strings.Contains(s, "not found") || strings.HasPrefix(s, "fatal:") {
		return ""
	}
	return s
}
