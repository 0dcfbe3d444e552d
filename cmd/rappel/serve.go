package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/internal/buildinfo"
	"github.com/rappel-ca/rappel/internal/logline"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/postgres"
)

// ServeCommand serves the API.
type ServeCommand struct {
	Addr        string
	DataDir     string
	APIKeys     string
	Feeds       string
	GatewayHost string
	LogFormat   string
	LogLevel    slog.Level
	CursorKey   string
	QueryBudget time.Duration
	// ExportSlots and StallTimeout are edge.Server's: how many exports
	// stream at once (0: two per core), and how long an export waits for
	// its client to take a byte before it is cut.
	ExportSlots  int
	StallTimeout time.Duration
	// SharedStore is the fleet's database URL (postgres://…): keys,
	// quotas, subscriptions and the alert outbox live there instead of the
	// data dir; empty keeps everything in the node's Pebble (shared.go).
	SharedStore string
	// FleetLease is how long the fleet's feed lease lasts unless renewed:
	// a leader that dies is replaced within it.
	FleetLease time.Duration
	// SharedStoreMaxConns caps this node's connections to the shared
	// store; 0 is postgres.DefaultMaxConns.
	SharedStoreMaxConns int
	// UsageInterval is how often the keys' request counts are pushed to
	// the store; 0 means edge.DefaultUsageInterval.
	UsageInterval time.Duration
	Alerts        AlertsConfig
	// Upstream is the live feeds' settings, used with --feeds on.
	Upstream FeedsConfig
	// Listen is TLS (--tls-domains and the ACME settings) and the
	// shutdown's timing; listen.go.
	Listen ListenConfig
	// Telemetry is tracing (OTEL_* variables) and the metrics listener
	// (--metrics-addr); telemetry.go.
	Telemetry TelemetryConfig

	// Bundle is the data bundle the store is loaded from (bundle.Load);
	// the embedded one by default.
	Bundle iofs.FS
	// MinFreeMiB is the free space, in MiB, the data dir's file system
	// must have for the node to start (--min-free-mib).
	MinFreeMiB int
	// Ready, when set, receives the API listener's address once serving
	// (the HTTPS one with --tls-domains).
	Ready  func(addr net.Addr)
	Logger *slog.Logger

	// freeSpace returns the bytes available to the node in dir's file
	// system; nil means statfs (vfs.Default.GetDiskUsage). Tests replace
	// it, since filling a real file system is not something a test does.
	freeSpace func(dir string) (uint64, error)
	// storeFS, when set, is the file system the store lives on instead of
	// the disk: tests fill it (errorfs), for the same reason.
	storeFS vfs.FS
}

// DefaultMinFreeMiB is --min-free-mib's default: room for the store to
// open, replay its write-ahead log, rotate its MANIFEST and flush, with
// some left for the first writes.
const DefaultMinFreeMiB = 64

// NewServeCommand returns a ServeCommand with its defaults.
func NewServeCommand() *ServeCommand {
	return &ServeCommand{Addr: "127.0.0.1:8080", DataDir: "data", Feeds: "off", LogFormat: "text", QueryBudget: edge.DefaultQueryBudget,
		StallTimeout: edge.DefaultStallTimeout, MinFreeMiB: DefaultMinFreeMiB}
}

// ParseFlags reads the command line and environment into c.
func (c *ServeCommand) ParseFlags(args []string) error {
	if err := parseFlags(c.flagSet(), args); err != nil {
		return err
	}
	return c.Validate()
}

// flagSet defines serve's flags on c's fields.
func (c *ServeCommand) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("rappel serve", flag.ContinueOnError)
	fs.StringVar(&c.Addr, "addr", c.Addr, "`host:port` to listen on")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "`directory` for the Pebble store and caches; created if missing")
	fs.StringVar(&c.APIKeys, "api-keys", c.APIKeys, "comma-separated API `keys` accepted in x-gateway-key (development)")
	fs.StringVar(&c.Feeds, "feeds", c.Feeds, "`on` to refresh from the agencies' feeds, off to serve the stored data only")
	fs.StringVar(&c.GatewayHost, "gateway-host", c.GatewayHost, "when set, requests must carry this x-gateway-host")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log `format`: text, or json (durations in seconds there)")
	fs.Var(levelFlag{&c.LogLevel}, "log-level", "least `level` logged: debug, info, warn or error")
	fs.DurationVar(&c.QueryBudget, "query-budget", c.QueryBudget, "`time` a search may take before it answers 504")
	fs.IntVar(&c.ExportSlots, "export-slots", c.ExportSlots, "`exports` streamed at once; one more is answered 503 (default: two per core)")
	fs.DurationVar(&c.StallTimeout, "stall-timeout", c.StallTimeout, "`time` an export waits for its client to take a byte before it is cut")
	fs.StringVar(&c.CursorKey, "cursor-key", c.CursorKey, "hex `key` (32+ bytes) signing search cursors; nodes behind one load balancer must share it (default: generated once into the data dir)")
	fs.DurationVar(&c.FleetLease, "fleet-lease", c.FleetLease, "`time` the feed lease of a fleet (--shared-store with --feeds on) lasts unless its leader renews it: a leader that stops is replaced within it")
	fs.IntVar(&c.SharedStoreMaxConns, "shared-store-max-conns", postgres.DefaultMaxConns, "`n` connections at most this node opens to the shared store (--shared-store); the fleet's nodes together must stay within the database's max_connections")
	fs.StringVar(&c.SharedStore, "shared-store", c.SharedStore, "`URL` (postgres://…) of the PostgreSQL or CockroachDB database a fleet of nodes shares keys, quotas, subscriptions and the alert outbox through; empty keeps them in the data dir")
	fs.IntVar(&c.MinFreeMiB, "min-free-mib", c.MinFreeMiB, "free `MiB` the data dir's file system must have for the node to start")
	fs.DurationVar(&c.UsageInterval, "usage-interval", cmp.Or(c.UsageInterval, edge.DefaultUsageInterval), "`time` between two pushes of the keys' request counts to the store; in a fleet, a node learns the others' counts at the same pace")
	c.Alerts.register(fs)
	c.Upstream.register(fs)
	c.Listen.register(fs)
	c.Telemetry.register(fs)
	return fs
}

// Validate reports the first setting that cannot work.
func (c *ServeCommand) Validate() error {
	switch {
	case c.Addr == "":
		return errors.New("--addr is empty; give a host:port such as 127.0.0.1:8080")
	case c.DataDir == "":
		return errors.New("--data-dir is empty; give a directory for the store")
	case c.Feeds != "on" && c.Feeds != "off":
		return fmt.Errorf("--feeds is %q; it takes on or off", c.Feeds)
	case c.QueryBudget <= 0:
		return fmt.Errorf("--query-budget is %s; give a positive duration such as 2s", c.QueryBudget)
	case c.ExportSlots < 0:
		return fmt.Errorf("--export-slots is %d; give a number of exports, or 0 for two per core", c.ExportSlots)
	case c.StallTimeout <= 0:
		return fmt.Errorf("--stall-timeout is %s; give a positive duration such as 30s", c.StallTimeout)
	case c.LogFormat != "text" && c.LogFormat != "json":
		return fmt.Errorf("--log-format is %q; it takes text or json", c.LogFormat)
	}
	if c.SharedStore != "" {
		if err := checkSharedStore(c.SharedStore); err != nil {
			return err
		}
	}
	if c.SharedStoreMaxConns < 2 || c.SharedStoreMaxConns > 1000 {
		return fmt.Errorf("--shared-store-max-conns is %d; give a number of connections from 2 to 1000 (the default is %d)", c.SharedStoreMaxConns, postgres.DefaultMaxConns)
	}
	if c.MinFreeMiB < 0 {
		return fmt.Errorf("--min-free-mib is %d; give a number of MiB, 0 or more", c.MinFreeMiB)
	}
	if c.UsageInterval < 0 {
		return fmt.Errorf("--usage-interval is %s; give a positive duration such as 10s", c.UsageInterval)
	}
	if err := c.Listen.validate(); err != nil {
		return err
	}
	if err := c.Alerts.Validate(); err != nil {
		return err
	}
	return c.Upstream.validate()
}

// logger returns the node's logger and a function that writes out what it
// still buffers (logline.Writer), to call last.
func (c *ServeCommand) logger() (*slog.Logger, func()) {
	if c.Logger != nil {
		return c.Logger, func() {}
	}
	out := logline.NewWriter(os.Stderr)
	log := logline.New(out, c.LogFormat, c.LogLevel)
	b := buildinfo.Read()
	log.Info("starting rappel", "version", b.Version, "commit", b.Commit, "build_date", b.BuildDate, "go_version", b.GoVersion)
	return log, func() { _ = out.Close() }
}

// logFinal writes the error that ends Run to a JSON log, as a line like
// the others, and marks it logged, so that main does not print it again
// as plain text (printFinal). A text log leaves it to main.
func (c *ServeCommand) logFinal(log *slog.Logger, err error) error {
	if err == nil || c.LogFormat != "json" {
		return err
	}
	log.Error("rappel stopped", "err", err)
	return loggedError{err}
}

// Run serves the API until ctx is done, then shuts down gracefully (see
// ListenConfig.serve and the order below). The listeners bind first, then
// the store opens and takes the bundle when it should (bundle.Load), the
// read index loads, and everything is wired before the node serves.
func (c *ServeCommand) Run(ctx context.Context) (err error) {
	log, flushLog := c.logger()
	defer flushLog()
	defer func() { err = c.logFinal(log, err) }()
	setMemoryLimit(log)
	// Tracing starts first, so that loading the bundle is traced too, and
	// is flushed last, after the alert outbox's flush.
	tel, err := StartTelemetry(ctx, log)
	if err != nil {
		return err
	}
	defer tel.close(log)
	// Binding before the data loads fails a taken port at once; requests
	// made during the load wait in the backlog until the node serves.
	lns, err := c.Listen.bind(c.Addr)
	if err != nil {
		return err
	}
	defer lns.close()
	if err := c.Telemetry.bind(); err != nil {
		return err
	}
	defer c.Telemetry.unbind()
	store, err := c.openStore(ctx, log)
	if err != nil {
		return c.storeFailed(err)
	}
	defer func() {
		if err := store.Close(); err != nil {
			log.Error("closing store", "error", err)
			return
		}
		// The last word of a clean stop: the store is flushed and closed,
		// and the next start opens it without recovery.
		log.Info("stopped: the store is closed")
	}()
	// The bundle's read index is unpacked, on a first start, while the
	// store ingests the bundle's tables; it is released after the read
	// index closes (deferred here, it runs after segments.Close).
	bundleIndex := c.openBundleIndex(log)
	defer bundleIndex.release(log)
	if err := bundle.Load(ctx, c.bundleFS(), store, log); err != nil {
		return c.storeFailed(err)
	}
	catalog, segments, err := c.readIndex(ctx, store, bundleIndex, log)
	if err != nil {
		return c.storeFailed(err)
	}
	// Deferred after the store's Close, so that it runs before it: a
	// background merge of the read index finishes with the store open.
	defer segments.Close()
	// What follows the store after every refresh, in order.
	listeners := []rappel.ChangeListener{segments}

	srv := c.server(catalog, store, log)
	srv.IndexStats = segments.Stats
	shared, closeShared, err := openNodeState(ctx, c.SharedStore, c.SharedStoreMaxConns, c.DataDir, store, log)
	if err != nil {
		return err
	}
	defer closeShared()
	// Deferred after the store's Close, so that it runs before it.
	defer startIdempotency(ctx, srv, store, shared.Shared)()
	keys, _ := shared.Keys.(*kv.Keys) // nil in a fleet: the keys are the shared store's
	srv.Backups = &dataBackup{dataDir: c.DataDir, store: store, keys: keys, now: time.Now}
	stopKeys, err := startKeys(ctx, shared.Keys, splitList(c.APIKeys), shared.Quota, c.UsageInterval, srv, log)
	if err != nil {
		return err
	}
	// Deferred after the store's Close, so that it runs before it: the
	// last monthly counts are saved once requests have drained.
	defer stopKeys()
	stopMetrics, err := c.Telemetry.start(ctx, tel, store, srv, log)
	if err != nil {
		return err
	}
	defer stopMetrics()
	alertRunner, err := c.Alerts.start(ctx, store, shared.Shared, srv, log)
	if err != nil {
		return err
	}
	stopAlerts := func() {
		if err := alertRunner.Close(); err != nil {
			log.Error("flushing alert outbox", "error", err)
		}
	}
	// A refresh tells the read index first, then the alert runner, which
	// matches the new recalls at once.
	listeners = append(listeners, alertRunner)
	// In a fleet, one node refreshes the feeds and publishes each refresh,
	// which the others apply (docs/operations.md, "Fleet mode").
	node := c.fleetNode(shared.Shared, store, listeners, log)
	stopFeeds, err := c.startFeeds(ctx, store, listeners, node, srv, log)
	if err != nil {
		stopAlerts()
		return err
	}
	stopFleet := runFleet(ctx, node)
	// Shutdown order: the listeners drain (listen returns once requests in
	// flight are done), then the feeds stop, then the alert outbox is
	// flushed, and the store, deferred above, closes last.
	err = c.Listen.listen(ctx, lns, c.DataDir, srv, c.notifyReady(ctx, log), log)
	log.Info("stopping feeds")
	if cerr := stopFeeds(); cerr != nil {
		log.Error("stopping feeds", "error", cerr)
	}
	stopFleet()
	log.Info("flushing alert outbox")
	stopAlerts()
	return err
}

// notifyReady returns the listeners' ready callback: systemd hears
// READY=1 once the node serves, and its watchdog's pings until the
// shutdown starts (notify.go); then Ready, when set, is called.
func (c *ServeCommand) notifyReady(ctx context.Context, log *slog.Logger) func(net.Addr) {
	sd := newSystemdNotifier(log)
	return func(a net.Addr) {
		sd.ready(ctx)
		if c.Ready != nil {
			c.Ready(a)
		}
	}
}

// openStore opens the node's Pebble store in the data dir, creating both
// when missing, once the data dir's file system has room for it.
func (c *ServeCommand) openStore(ctx context.Context, log *slog.Logger) (*kv.Store, error) {
	if err := c.checkFreeSpace(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	removeUnfinishedBackups(c.DataDir, log)
	store := kv.NewStore(filepath.Join(c.DataDir, "pebble"))
	store.Logger = log
	store.KeepChanges = kv.DefaultKeepChanges
	if c.storeFS != nil {
		store.FS = c.storeFS
	}
	if err := store.Open(ctx); err != nil {
		return nil, err
	}
	return store, nil
}

// checkFreeSpace refuses to start on a file system with less than
// --min-free-mib free, and on a first start (no store yet) less than that
// and the bundle's tables, which the store copies in: Pebble, short of
// room while it opens or loads the bundle, would stop the process in a
// panic that never says why. The data dir may not exist yet: its nearest
// existing parent is measured.
func (c *ServeCommand) checkFreeSpace() error {
	free := c.freeSpace
	if free == nil {
		free = func(dir string) (uint64, error) {
			u, err := vfs.Default.GetDiskUsage(dir)
			return u.AvailBytes, err
		}
	}
	dir := c.DataDir
	for {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	avail, err := free(dir)
	if err != nil {
		return fmt.Errorf("measuring the free space of the data directory %s: %w", c.DataDir, err)
	}
	need, why := uint64(c.MinFreeMiB)<<20, ""
	if tables := c.bundleTables(); tables > 0 {
		need += tables
		why = fmt.Sprintf(" (--min-free-mib %d and the bundle's tables and index, %s, which a first start unpacks)", c.MinFreeMiB, mebibytes(tables, true))
	}
	if avail < need {
		return &stopError{fmt.Sprintf("the data directory %s has %s free; it needs at least %s to start%s: free space or pass a --data-dir on a larger filesystem",
			c.DataDir, mebibytes(avail, false), mebibytes(need, true), why)}
	}
	return nil
}

// bundleTables returns the size of what a first start unpacks into the
// data dir: the bundle's sstables when it holds no store yet, and its
// read index when it is packed and not unpacked yet; 0 when neither. A
// bundle it cannot read counts 0: loading it says what is wrong.
func (c *ServeCommand) bundleTables() uint64 {
	m, err := bundle.ReadManifest(c.bundleFS())
	if err != nil {
		return 0
	}
	var n uint64
	if _, err := os.Stat(filepath.Join(c.DataDir, "pebble")); errors.Is(err, os.ErrNotExist) {
		for _, t := range m.Tables {
			n += uint64(max(t.Size, 0))
		}
	}
	if m.Index != nil && m.Index.Packed != "" {
		if _, err := os.Stat(filepath.Join(c.DataDir, "bundle", "index.json")); errors.Is(err, os.ErrNotExist) {
			n += uint64(max(m.Index.Size, 0))
		}
	}
	return n
}

// mebibytes writes n bytes in MiB, rounded down, or up when up is set:
// free space is never overstated, nor a need understated.
func mebibytes(n uint64, up bool) string {
	if up {
		n += 1<<20 - 1
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// storeFailed turns an error of the store while the node starts that says
// its files are corrupt, or that the disk filled up, into the sentence
// that says so and what to do, which ends the process with status 1 like
// the store's own fatal path (kv's pebbleLogger).
func (c *ServeCommand) storeFailed(err error) error {
	switch {
	case kv.IsCorrupt(err):
		return &stopError{fmt.Sprintf("the data store in %s is corrupt (%v): restore the data dir from a backup or start on an empty one (the bundle and the feeds refill it)", c.DataDir, err)}
	case errors.Is(err, syscall.ENOSPC):
		return &stopError{fmt.Sprintf("the data directory %s ran out of space while the node started (%v): free space or pass a --data-dir on a larger filesystem", c.DataDir, err)}
	}
	return err
}

// readIndex opens the read index: the segment files of the data dir's
// index/ that the store names, or the bundle's segment, with the changes
// since as a delta; its cursors are signed with the node's cursor key.
func (c *ServeCommand) readIndex(ctx context.Context, store *kv.Store, bundleIndex *bundleIndex, log *slog.Logger) (*index.Catalog, *index.Segments, error) {
	key, err := c.cursorKey()
	if err != nil {
		return nil, nil, err
	}
	catalog := &index.Catalog{Options: index.Options{CursorKey: key}}
	segments := &index.Segments{Dir: filepath.Join(c.DataDir, "index"), Store: store, Catalog: catalog, Log: log}
	if segments.Bundle, segments.BundleVersion, err = bundleIndex.wait(); err != nil {
		return nil, nil, c.storeFailed(err)
	}
	// The decoders of a first start's unpacking held tens of megabytes,
	// garbage now: they are given back to the system rather than kept as
	// the heap's high-water mark. On a warm start the heap is small and
	// this is a millisecond.
	debug.FreeOSMemory()
	if err := segments.Open(ctx); err != nil {
		return nil, nil, err
	}
	v := catalog.Current()
	log.Info("dataset ready", "records", v.Len(), "updated_at", v.Info().UpdatedAt, "source", v.Info().Source, "kind", v.Info().Kind, "bundle", v.Info().Bundle)
	if v.Info().Synthetic() {
		if c.Feeds == "on" {
			log.Warn("serving generated demo data until the first live refresh replaces all of it: every answer says so in its Rappel-Dataset header", "records", v.Len())
		} else {
			log.Warn("serving generated demo data, not real recalls (--feeds off): every answer says so in its Rappel-Dataset header", "records", v.Len())
		}
	}
	return catalog, segments, nil
}

// bundleIndex is the bundle's read index as it opens, in the background
// (bundle.IndexDir): unpacked into the data dir's bundle/ on a first
// start, then mapped from there.
type bundleIndex struct {
	done    chan struct{}
	seg     []byte
	version string
	unmap   func() error
	err     error
}

// openBundleIndex starts opening the bundle's read index.
func (c *ServeCommand) openBundleIndex(log *slog.Logger) *bundleIndex {
	b := &bundleIndex{done: make(chan struct{}), unmap: func() error { return nil }}
	dir := bundle.IndexDir{Dir: filepath.Join(c.DataDir, "bundle"), Log: log}
	go func() {
		defer close(b.done)
		b.seg, b.version, b.unmap, b.err = dir.Open(c.bundleFS())
	}()
	return b
}

// wait returns the index once it is open.
func (b *bundleIndex) wait() ([]byte, string, error) {
	<-b.done
	return b.seg, b.version, b.err
}

// release waits for the index to open, then releases it.
func (b *bundleIndex) release(log *slog.Logger) {
	<-b.done
	if err := b.unmap(); err != nil {
		log.Error("releasing the bundle's read index", "error", err)
	}
}

// server returns the API server over the catalog, with the store for
// lookups by barcode and vehicle.
func (c *ServeCommand) server(catalog *index.Catalog, store *kv.Store, log *slog.Logger) *edge.Server {
	srv := edge.NewServer()
	srv.Catalog = catalog
	srv.Lookup = store
	srv.StorageFault = store.StorageFault
	srv.StorageStats = store.StorageStats
	srv.Changes = store
	srv.GatewayHost = c.GatewayHost
	srv.QueryBudget = c.QueryBudget
	srv.PublicURL = c.Alerts.PublicURL
	srv.ExportSlots = c.ExportSlots
	srv.StallTimeout = c.StallTimeout
	srv.Logger = log
	return srv
}

// bundleFS is the bundle: Bundle, or the embedded one.
func (c *ServeCommand) bundleFS() iofs.FS {
	if c.Bundle != nil {
		return c.Bundle
	}
	return bundle.Embedded()
}

// cursorKey returns the key that signs search cursors: --cursor-key, or a
// random key generated once and kept in the data dir, so that cursors
// survive a restart.
func (c *ServeCommand) cursorKey() ([]byte, error) {
	if c.CursorKey != "" {
		k, err := hex.DecodeString(c.CursorKey)
		if err != nil || len(k) < 32 {
			return nil, errors.New("--cursor-key must be at least 32 bytes written in hex (64 hex digits)")
		}
		return k, nil
	}
	path := filepath.Join(c.DataDir, "cursor.key")
	if k, err := os.ReadFile(path); err == nil && len(k) >= 32 {
		return k, nil
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, k, 0o600); err != nil {
		return nil, fmt.Errorf("writing cursor key: %w", err)
	}
	return k, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
