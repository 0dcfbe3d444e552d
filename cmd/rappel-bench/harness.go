package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

// Harness runs the comparison. NewHarness sets the defaults of a full run.
type Harness struct {
	Quick     bool
	Rounds    int
	WrkDur    time.Duration
	LatDur    time.Duration
	Conns     int
	MaxRate   float64
	MinSample int // fewest requests a latency run sends
	ServerCPU string
	LoadCPU   string
	Systems   []string // which systems to run, of rappel, bare, postgres, bleve, sqlite
	Scales    []float64
	Startups  int
	MixedDur  time.Duration // the mixed load run before rappel's memory is read
	Rebuild   bool          // measure the scale curve's one-time index builds again
	Builds    bool          // time make build, fresh and after a one-line change
	WorkDir   string        // by default build/bench in Repo
	Out       string        // the Markdown file to rewrite between the markers; by default Repo's BENCHMARKS.md
	GoBench   string        // file holding `go test -bench` output to include
	FromJSON  string        // an earlier run's results.json to render, measuring nothing
	Repo      string        // the rappel module's root, for building rappel; by default the one above the working directory

	Stdout, Stderr io.Writer
	args           []string // as given, for the report
	commit         string   // the repository's, for the report
	cleanup        sync.WaitGroup
}

// AllSystems are the systems compared, rappel first.
var AllSystems = []string{"rappel", "bare", "postgres", "bleve", "sqlite"}

const benchKey = "bench-key"

// NewHarness returns a Harness with the defaults of a full run.
func NewHarness() *Harness {
	return &Harness{
		Rounds: 5, WrkDur: 2 * time.Second, LatDur: 2 * time.Second, Conns: 16, MaxRate: 1000, MinSample: 30,
		ServerCPU: "0", LoadCPU: "1", Systems: AllSystems, Scales: []float64{1, 200000.0 / 41000, 1000000.0 / 41000},
		Startups: 5, MixedDur: 10 * time.Second, Builds: true, Stdout: os.Stdout, Stderr: os.Stderr,
	}
}

// ParseFlags reads the command line into h; -quick changes the defaults
// of the flags not given.
func (h *Harness) ParseFlags(args []string) error {
	fs := flag.NewFlagSet("rappel-bench run", flag.ContinueOnError)
	fs.SetOutput(h.Stderr)
	fs.BoolVar(&h.Quick, "quick", false, "one short round of a few classes, no scale curve: for development")
	fs.IntVar(&h.Rounds, "rounds", h.Rounds, "alternating `rounds`; figures are their medians")
	fs.DurationVar(&h.WrkDur, "wrk-duration", h.WrkDur, "`time` of each wrk run (whole seconds)")
	fs.DurationVar(&h.LatDur, "latency-duration", h.LatDur, "`time` of each constant-rate run")
	fs.IntVar(&h.Conns, "conns", h.Conns, "wrk keep-alive `connections`")
	fs.Float64Var(&h.MaxRate, "max-rate", h.MaxRate, "highest constant `rate` (requests/s) of a latency run")
	fs.StringVar(&h.ServerCPU, "server-cpu", h.ServerCPU, "taskset `cpus` of the servers (empty: no pinning)")
	fs.StringVar(&h.LoadCPU, "load-cpu", h.LoadCPU, "taskset `cpus` of wrk and of this harness (empty: no pinning)")
	systems := fs.String("systems", strings.Join(h.Systems, ","), "comma-separated `systems` to run")
	scales := fs.String("scales", "", "comma-separated data set `sizes` as multiples of the bundle (default 1,4.88,24.39: 41k, 200k, 1M records; 1 in -quick)")
	fs.IntVar(&h.Startups, "startups", h.Startups, "start-up measurements of each kind")
	fs.DurationVar(&h.MixedDur, "mixed-duration", h.MixedDur, "`time` of the mixed load (every class in turn) after which rappel's memory is read")
	fs.BoolVar(&h.Rebuild, "rebuild", false, "start the scale curve's sizes from their loaded stores, so that their one-time index builds are measured again rather than reported from the run that measured them")
	fs.BoolVar(&h.Builds, "builds", h.Builds, "time `make build` on a fresh clone with empty caches, then after a one-line change (minutes; false in -quick)")
	fs.StringVar(&h.WorkDir, "work", h.WorkDir, "`directory` for binaries, data dirs and logs (default build/bench in -repo)")
	fs.StringVar(&h.Out, "out", h.Out, "Markdown `file` whose section between <!-- bench:begin --> and <!-- bench:end --> is rewritten; empty to print it (default BENCHMARKS.md in -repo)")
	fs.StringVar(&h.GoBench, "go-bench", h.GoBench, "`file` of `go test -bench` output to include")
	fs.StringVar(&h.Repo, "repo", h.Repo, "`directory` of the rappel module (default: the nearest directory above the working directory whose go.mod is rappel's)")
	fs.StringVar(&h.FromJSON, "from-json", "", "render the results.json of an earlier run into -out instead of measuring")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q; run takes flags only", fs.Args())
	}
	h.args = args
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if h.Repo == "" {
		repo, err := findRepo(".")
		if err != nil {
			return err
		}
		h.Repo = repo
	}
	if !given["work"] {
		h.WorkDir = filepath.Join(h.Repo, "build", "bench")
	}
	if !given["out"] {
		h.Out = filepath.Join(h.Repo, "BENCHMARKS.md")
	}
	if h.Quick {
		for name, set := range map[string]func(){
			"rounds":           func() { h.Rounds = 1 },
			"wrk-duration":     func() { h.WrkDur = time.Second },
			"latency-duration": func() { h.LatDur = time.Second },
			"startups":         func() { h.Startups = 1 },
			"mixed-duration":   func() { h.MixedDur = 2 * time.Second },
			"scales":           func() { h.Scales = []float64{1} },
			"builds":           func() { h.Builds = false },
		} {
			if !given[name] {
				set()
			}
		}
		h.MinSample = 20
	}
	h.Systems = strings.Split(*systems, ",")
	for _, s := range h.Systems {
		if !contains(AllSystems, s) {
			return fmt.Errorf("-systems: unknown system %q; choose among %s", s, strings.Join(AllSystems, ", "))
		}
	}
	if h.Systems[0] != "rappel" {
		return errors.New("-systems: rappel must come first (the other systems are measured against it)")
	}
	if *scales != "" {
		h.Scales = nil
		for _, f := range strings.Split(*scales, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || v <= 0 {
				return fmt.Errorf("-scales: %q is not a positive number", f)
			}
			h.Scales = append(h.Scales, v)
		}
	}
	if h.Rounds < 1 || h.Startups < 1 || h.WrkDur < time.Second || h.MixedDur < time.Second || h.LatDur <= 0 || h.Conns < 1 || h.MaxRate <= 0 {
		return errors.New("-rounds, -startups, -conns and -max-rate must be positive and durations at least 1s")
	}
	return nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// system is one system under test while the harness runs.
type system struct {
	Name  string
	Base  string            // http://host:port
	URI   map[string]string // class name → request URI
	procs []*proc
	pg    *pgtest.Cluster
	setup time.Duration // exec to ready, loading and indexing included
	// Err is why the system could not run, when it could not.
	Err error
}

// memKB is the system's memory: the resident set of its processes, with
// PostgreSQL's shared pages counted once (proportional set size).
func (s *system) memKB() int64 {
	var total int64
	for _, p := range s.procs {
		total += readMem(p.PID()).RSSKB
	}
	if s.pg != nil {
		pid := s.pg.PID()
		for _, pid := range append([]int{pid}, childPIDs(pid)...) {
			total += pssKB(pid)
		}
	}
	return total
}

// pids returns the ids of s's processes and of every process under them:
// PostgreSQL's backends and workers, a child a server started.
func (s *system) pids() []int {
	var out []int
	for _, p := range s.procs {
		out = append(out, withDescendants(p.PID())...)
	}
	if s.pg != nil {
		out = append(out, withDescendants(s.pg.PID())...)
	}
	return out
}

// settleTimeout bounds settle: a server still busy after it is measured
// anyway, and the log says so.
const settleTimeout = 5 * time.Second

// settle waits, before a constant-rate run, until the processes of systems
// have gone idle (quietBeforeLatency): wrk stops with requests in flight,
// and a server still working them off, or a peer doing so on the same
// core, would add its backlog to the latencies of the run.
func (h *Harness) settle(ctx context.Context, systems ...*system) {
	if idle, err := settleSystems(ctx, settleTimeout, systems...); err == nil && !idle {
		h.logf("  %s still using CPU after %s; measuring anyway", strings.Join(names(systems), ", "), settleTimeout)
	}
}

// settleSystems waits until the processes of systems have gone idle by
// quietBeforeLatency, and says whether they did within timeout.
func settleSystems(ctx context.Context, timeout time.Duration, systems ...*system) (bool, error) {
	return waitQuiet(ctx, func() []int {
		var pids []int
		for _, s := range systems {
			pids = append(pids, s.pids()...)
		}
		return pids
	}, quietBeforeLatency, timeout)
}

func (s *system) stop() error {
	var errs []error
	for i := len(s.procs) - 1; i >= 0; i-- {
		errs = append(errs, s.procs[i].Stop())
	}
	if s.pg != nil {
		errs = append(errs, s.pg.Stop())
		s.pg = nil
	}
	return errors.Join(errs...)
}

// readGoBench puts the output of the Go benchmarks (-go-bench) into res;
// with -from-json it adds them to an earlier run's figures.
func (h *Harness) readGoBench(res *Results) {
	if h.GoBench == "" {
		return
	}
	b, err := os.ReadFile(h.GoBench)
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("the Go benchmarks' output %s could not be read: %v", h.GoBench, err))
	}
	res.GoBench = string(b)
}

// Run runs everything and writes the report.
func (h *Harness) Run(ctx context.Context) error {
	if h.FromJSON != "" {
		b, err := os.ReadFile(h.FromJSON)
		if err != nil {
			return fmt.Errorf("reading results: %w", err)
		}
		var res Results
		if err := json.Unmarshal(b, &res); err != nil {
			return fmt.Errorf("decoding results: %w", err)
		}
		h.readGoBench(&res)
		// The report in -out may be an older run's than the one
		// results.json holds: that is the previous run then.
		if p := readPreviousRun(h.Out); p != nil && h.Out != "" && !strings.HasPrefix(res.Env.Commit, p.Commit) {
			res.Previous = p
		}
		return h.render(&res)
	}
	if err := h.checkTools(); err != nil {
		return err
	}
	res := &Results{Command: strings.TrimSpace("cd cmd/rappel-bench && go run . run " + strings.Join(h.args, " ")), Started: time.Now().UTC(), Quick: h.Quick, Rounds: h.Rounds, WrkDur: h.WrkDur, LatDur: h.LatDur, Conns: h.Conns}
	os.RemoveAll(filepath.Join(h.WorkDir, "logs")) // the last run's; rappel's access log alone is hundreds of MB
	if err := os.MkdirAll(filepath.Join(h.WorkDir, "logs"), 0o755); err != nil {
		return fmt.Errorf("creating work dir: %w", err)
	}
	if h.Out != "" {
		res.Previous = readPreviousRun(h.Out)
	}
	if h.Builds {
		// Before pinning: a build uses every core, as a developer's does.
		res.Build = h.measureBuilds(ctx)
	}
	if err := h.pin(res); err != nil {
		return err
	}
	res.Env = readEnv(h.Repo)
	h.commit = res.Env.Commit
	defer h.cleanup.Wait()
	rappelBin, size, err := h.buildRappel(ctx)
	if err != nil {
		return err
	}
	res.BinaryKB = size / 1024
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding own executable: %w", err)
	}
	m := embeddedManifest()
	samples, err := streamSamples(bundle.Embedded(), m.Records)
	if err != nil {
		return err
	}
	classes := Classes(samples)
	if h.Quick {
		var quick []Class
		for _, c := range classes {
			if c.Quick {
				quick = append(quick, c)
			}
		}
		classes = quick
	}
	res.Records = m.Records
	res.MixedDur = h.MixedDur

	systems := map[string]*system{}
	defer func() {
		for _, name := range h.Systems {
			if s := systems[name]; s != nil {
				if err := s.stop(); err != nil {
					h.logf("stopping %s: %v", name, err)
				}
			}
		}
	}()
	rp, bodies, err := h.coldAndWarm(ctx, rappelBin, classes, res)
	if err != nil {
		return err
	}
	systems["rappel"] = rp
	for _, name := range h.Systems[1:] {
		h.logf("starting %s", name)
		s, err := h.startPeer(ctx, name, self, bodies, rp.URI)
		if s == nil {
			s = &system{Name: name}
		}
		s.Err = err
		systems[name] = s
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("%s could not run: %v", name, err))
			h.logf("%s could not run: %v", name, err)
			continue
		}
		if name != "bare" {
			if _, err := h.resolve(ctx, s, classes); err != nil {
				s.Err = err
				res.Notes = append(res.Notes, fmt.Sprintf("%s could not answer the query set: %v", name, err))
			}
		}
	}
	var run []*system
	for _, name := range h.Systems {
		if systems[name].Err == nil {
			run = append(run, systems[name])
		}
	}
	res.Systems = names(run)
	res.PeerSetup = map[string]time.Duration{}
	for _, s := range run[1:] {
		res.PeerSetup[s.Name] = s.setup
	}
	if err := h.measure(ctx, run, classes, res); err != nil {
		return err
	}
	h.profiles(ctx, systems["rappel"], res)
	h.profilePeerMisses(ctx, systems["rappel"], res)
	// The scale curve's nodes need the memory the others hold.
	for _, s := range run {
		if err := s.stop(); err != nil {
			h.logf("stopping %s: %v", s.Name, err)
		}
	}
	h.scaleCurve(ctx, rappelBin, res)
	h.readGoBench(res)
	h.profileBenchMisses(ctx, res)
	res.Finished = time.Now().UTC()
	return h.write(res)
}

func names(ss []*system) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

func (h *Harness) logf(format string, args ...any) {
	fmt.Fprintf(h.Stderr, "%s %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// pin moves the harness (its open-loop client) to the load generator's
// core, and gives it one P, as the servers have.
func (h *Harness) pin(res *Results) error {
	runtime.GOMAXPROCS(1)
	if runtime.NumCPU() < 2 && (h.ServerCPU != "" || h.LoadCPU != "") {
		res.Notes = append(res.Notes, "the machine has one CPU: servers and load generators were not pinned apart")
		h.ServerCPU, h.LoadCPU = "", ""
	}
	if h.LoadCPU == "" {
		return nil
	}
	out, err := exec.Command("taskset", "-a", "-p", "-c", h.LoadCPU, strconv.Itoa(os.Getpid())).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pinning the harness to cpu %s: %w: %s", h.LoadCPU, err, out)
	}
	return nil
}

// buildRappel builds the rappel binary into the work dir with the flags of
// `make build` (no cgo, -trimpath), and returns its path and the size of
// the binary `make build` makes: the same linked without its symbol table
// and DWARF (-s -w), as every node pulls it. The binary run keeps its
// symbol table, which the code does not read, so that perf names the
// functions of its profiles.
func (h *Harness) buildRappel(ctx context.Context) (string, int64, error) {
	bin, err := filepath.Abs(filepath.Join(h.WorkDir, "rappel"))
	if err != nil {
		return "", 0, err
	}
	h.logf("building rappel")
	link := func(out, ldflags string) error {
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, "./cmd/rappel")
		cmd.Dir = h.Repo
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stdout, cmd.Stderr = h.Stderr, h.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building rappel: %w", err)
		}
		return nil
	}
	stripped := bin + "-stripped"
	if err := link(stripped, "-s -w"); err != nil {
		return "", 0, err
	}
	fi, err := os.Stat(stripped)
	if err != nil {
		return "", 0, err
	}
	os.Remove(stripped)
	if err := link(bin, ""); err != nil {
		return "", 0, err
	}
	return bin, fi.Size(), nil
}

// logFile opens the work dir's log of name.
func (h *Harness) logFile(name string) io.Writer {
	f, err := os.OpenFile(filepath.Join(h.WorkDir, "logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return io.Discard
	}
	return f // closed at exit
}

func keyHeader() http.Header { return http.Header{"X-Gateway-Key": {benchKey}} }

// resolve fills s.URI for every class (walking s's own cursors for the
// deep class) and returns the bodies s answered, by URI.
func (h *Harness) resolve(ctx context.Context, s *system, classes []Class) (Bodies, error) {
	client := loadClient()
	bodies := Bodies{}
	get := func(uri string) ([]byte, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Base+uri, nil)
		req.Header = keyHeader()
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("requesting %s from %s: %w", uri, s.Name, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s answered %s with %d: %.300s", s.Name, uri, resp.StatusCode, b)
		}
		return b, err
	}
	if s.URI == nil {
		s.URI = map[string]string{}
	}
	for _, c := range classes {
		uri := c.Path
		if c.Deep {
			for range CursorDepth {
				b, err := get(uri)
				if err != nil {
					return nil, err
				}
				var page struct {
					Next *string `json:"next_cursor"`
				}
				if err := json.Unmarshal(b, &page); err != nil {
					return nil, fmt.Errorf("walking %s's cursors for %s: %w", s.Name, c.Path, err)
				}
				if page.Next == nil {
					break // a small data set: its last page is the deepest
				}
				uri = c.Path + "&cursor=" + url.QueryEscape(*page.Next)
			}
		}
		b, err := get(uri)
		if err != nil {
			return nil, err
		}
		s.URI[c.Name] = uri
		bodies[uri] = b
	}
	return bodies, nil
}

// startPeer starts a peer system; the bare server serves rappel's bodies
// at rappel's URIs.
func (h *Harness) startPeer(ctx context.Context, name, self string, bodies Bodies, rappelURI map[string]string) (*system, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	s := &system{Name: name, Base: "http://" + addr, URI: map[string]string{}}
	var argv []string
	timeout := 5 * time.Minute
	switch name {
	case "bare":
		file := filepath.Join(h.WorkDir, "bodies.json")
		b, err := json.Marshal(bodies)
		if err != nil {
			return nil, fmt.Errorf("encoding bodies: %w", err)
		}
		if err := os.WriteFile(file, b, 0o644); err != nil {
			return nil, fmt.Errorf("writing bodies: %w", err)
		}
		for k, v := range rappelURI {
			s.URI[k] = v
		}
		argv = []string{self, "bare", "-bodies", file, "-addr", addr}
	case "postgres":
		pg, err := pgtest.Start(pgtest.Options{Settings: pgSettings, CPU: h.ServerCPU, Log: h.logFile("postgres")})
		if err != nil {
			return s, err
		}
		s.pg = pg
		argv = []string{self, "pg", "-dsn", pg.URL("postgres"), "-addr", addr}
		timeout = 30 * time.Minute
	case "bleve":
		dir := filepath.Join(h.WorkDir, "bleve-index")
		os.RemoveAll(dir)
		argv = []string{self, "bleve", "-index", dir, "-addr", addr}
		timeout = 30 * time.Minute
	case "sqlite":
		file := filepath.Join(h.WorkDir, "sqlite.db")
		for _, f := range []string{file, file + "-wal", file + "-shm"} {
			os.Remove(f)
		}
		argv = []string{self, "sqlite", "-db", file, "-addr", addr}
		timeout = 30 * time.Minute
	}
	start := time.Now()
	p, err := startProc(name, addr, h.ServerCPU, 1, h.logFile(name), nil, argv...)
	if err != nil {
		return s, err
	}
	s.procs = append(s.procs, p)
	took, err := p.waitOK(ctx, s.Base+"/ready", nil, start, timeout)
	if err != nil {
		return s, err
	}
	h.logf("%s ready in %s", name, took.Round(time.Millisecond))
	s.setup = took
	return s, nil
}

// embeddedManifest is the manifest of the bundle in this binary.
func embeddedManifest() bundle.Manifest {
	m, _ := bundle.ReadManifest(bundle.Embedded())
	return m
}

// findRepo returns the nearest directory at or above dir whose go.mod
// declares the rappel module: the harness runs from its own module, inside
// rappel's.
func findRepo(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && modulePath(b) == rappelModule {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no directory at or above %s holds the go.mod of %s; run from inside the rappel repository or give -repo", abs, rappelModule)
		}
	}
}

const rappelModule = "github.com/rappel-ca/rappel"

// modulePath is the path on a go.mod's module line, or "".
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// checkTools fails at once, before anything is built or started, when a
// program the run needs is missing: wrk always, PostgreSQL's server for the
// postgres system. The harness installs nothing itself; `make bench`
// installs both from Debian when it runs as root.
func (h *Harness) checkTools() error {
	var missing, why []string
	if _, err := exec.LookPath("wrk"); err != nil {
		missing = append(missing, "wrk")
		why = append(why, "wrk is not on PATH")
	}
	if contains(h.Systems, "postgres") {
		if _, err := pgtest.BinDir(); err != nil {
			missing = append(missing, "postgresql")
			why = append(why, err.Error())
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%s; install what is missing from Debian with `apt-get install %s` (make bench does so when run as root)",
		strings.Join(why, ", and "), strings.Join(missing, " "))
}
