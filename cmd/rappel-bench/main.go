// Command rappel-bench measures rappel side by side with what it is
// compared to, on one machine in one run, and writes the results into
// BENCHMARKS.md between the markers <!-- bench:begin --> and
// <!-- bench:end -->.
//
//	rappel-bench run  [-quick] [-rounds N] [-out BENCHMARKS.md] ...
//	rappel-bench check [run's flags]
//	rappel-bench bare  -bodies FILE -addr HOST:PORT
//	rappel-bench pg    -dsn URL -addr HOST:PORT
//	rappel-bench bleve -index DIR -addr HOST:PORT
//	rappel-bench sqlite -db FILE -addr HOST:PORT
//	rappel-bench abuse [-attackers 64] [-duration 20s] [-budget 2s] [-plan dev|free|pro]
//	rappel-bench abuse -exports 20 [-export-rate 1048576] [-export-format ndjson|csv]
//
// run is the harness. It builds the rappel binary, starts every system as
// its own process pinned to one core (taskset, GOMAXPROCS=1) while the load
// generators run pinned to the other, and measures each query class on
// each system in alternating rounds:
//
//   - rappel: `rappel serve`, started several times on an empty data dir
//     (the embedded bundle loaded into it, its index segment served from
//     the binary) and several times on the data dir a first start left,
//     each start timed from exec to its first 200 of GET /recall, its
//     memory read from /proc after a mixed load of every class; the last
//     warm-started node is the one compared;
//   - bare: the physical limit, a net/http handler serving from a map the
//     exact bytes rappel answered for each request of the query set;
//   - postgres: Debian's PostgreSQL, initialised in a temporary directory
//     and started on a loopback port by the tests' launcher
//     (kv/postgres/pgtest), holding the same records with a
//     tsvector (English and French configurations with unaccent), GIN and
//     B-tree indexes, behind a minimal Go HTTP server (pgx) answering the
//     same query set with the same JSON shape;
//   - bleve: the same records indexed by Bleve in the server's process;
//   - sqlite: the same records in a SQLite database file (the pure-Go
//     driver modernc.org/sqlite), with an FTS5 table per language and
//     B-tree indexes, queried in the server's process.
//
// The scale curve generates larger data sets (bundle/synth), loads them
// into a store, lets rappel's first start on it build the read index (a
// one-time cost, reported apart) and measures warm starts, memory and
// every class on it.
//
// Throughput comes from wrk (keep-alive); latency percentiles from an
// open-loop client sending at a constant rate and timing each request from
// when it was due, so that a stall shows in p99 instead of hiding it
// (coordinated omission). Every figure is the median over the rounds.
//
// The harness installs nothing: run and check fail at once, naming the
// Debian packages to install, when wrk or PostgreSQL is missing (`make
// bench` installs them when it runs as root). The harness is a module of
// its own, so that Bleve and the rest of what only it needs stay out of
// rappel's go.mod; it runs from its directory, `go run . run`, and finds
// the rappel repository above it.
//
// The bare, pg, bleve and sqlite subcommands are those servers; the harness starts
// them as processes of this same binary.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "rappel-bench:", err)
		}
		os.Exit(2)
	}
}

const usage = `usage: rappel-bench <command> [flags]

commands:
  run     run the side-by-side benchmarks and write BENCHMARKS.md
  check   fail, naming the Debian packages to install, when wrk or PostgreSQL is missing (takes run's flags)
  bare    serve recorded response bodies from a map (the physical limit)
  pg      serve the query set from PostgreSQL
  bleve   serve the query set from a Bleve index
  sqlite  serve the query set from a SQLite database (FTS5)
  abuse   measure cheap requests while many clients send expensive searches,
          or (-exports N) N slow clients exporting the dataset at once
`

// run dispatches to a subcommand.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "run":
		h := NewHarness()
		h.Stdout, h.Stderr = stdout, stderr
		if err := h.ParseFlags(args[1:]); err != nil {
			return err
		}
		return h.Run(ctx)
	case "check":
		h := NewHarness()
		h.Stdout, h.Stderr = stdout, stderr
		if err := h.ParseFlags(args[1:]); err != nil {
			return err
		}
		return h.checkTools()
	case "bare":
		return runBare(ctx, args[1:], stderr)
	case "pg":
		return runPG(ctx, args[1:], stderr)
	case "bleve":
		return runBleve(ctx, args[1:], stderr)
	case "sqlite":
		return runSQLite(ctx, args[1:], stderr)
	case "judged":
		return runJudged(ctx, args[1:], stdout, stderr)
	case "abuse":
		return runAbuse(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
