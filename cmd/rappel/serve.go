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
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/internal/buildinfo"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
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
	// SharedStore is the fleet's database URL (postgres://…): keys,
	// quotas, subscriptions and the alert outbox live there instead of the
	// data dir; empty keeps everything in the node's Pebble (shared.go).
	SharedStore string
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

	// Bundle is the data loaded into an empty store; the embedded one by
	// default.
	Bundle iofs.FS
	// Ready, when set, receives the API listener's address once serving
	// (the HTTPS one with --tls-domains).
	Ready  func(addr net.Addr)
	Logger *slog.Logger
}

// NewServeCommand returns a ServeCommand with its defaults.
func NewServeCommand() *ServeCommand {
	return &ServeCommand{Addr: "127.0.0.1:8080", DataDir: "data", Feeds: "off", LogFormat: "text", QueryBudget: edge.DefaultQueryBudget}
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
	fs.StringVar(&c.CursorKey, "cursor-key", c.CursorKey, "hex `key` (32+ bytes) signing search cursors; nodes behind one load balancer must share it (default: generated once into the data dir)")
	fs.StringVar(&c.SharedStore, "shared-store", c.SharedStore, "`URL` (postgres://…) of the PostgreSQL or CockroachDB database a fleet of nodes shares keys, quotas, subscriptions and the alert outbox through; empty keeps them in the data dir")
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
	case c.LogFormat != "text" && c.LogFormat != "json":
		return fmt.Errorf("--log-format is %q; it takes text or json", c.LogFormat)
	}
	if c.SharedStore != "" {
		if err := checkSharedStore(c.SharedStore); err != nil {
			return err
		}
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
// still buffers (logs.go), to call last.
func (c *ServeCommand) logger() (*slog.Logger, func()) {
	if c.Logger != nil {
		return c.Logger, func() {}
	}
	out := newLogWriter(os.Stderr)
	log := newLogger(out, c.LogFormat, c.LogLevel)
	b := buildinfo.Read()
	log.Info("starting rappel", "version", b.Version, "commit", b.Commit, "build_date", b.BuildDate, "go_version", b.GoVersion)
	return log, func() { _ = out.Close() }
}

// Run opens the store (loading the bundle into it when it is empty), builds
// the read index and serves until ctx is done, then shuts down gracefully:
// see ListenConfig.serve and the order below.
func (c *ServeCommand) Run(ctx context.Context) error {
	log, flushLog := c.logger()
	defer flushLog()
	// Tracing starts first, so that loading the bundle is traced too, and
	// is flushed last, after the alert outbox's flush.
	tel, err := StartTelemetry(ctx, log)
	if err != nil {
		return err
	}
	defer tel.close(log)
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return fmt.Errorf("creating data dir: %w", err)
	}
	store := kv.NewStore(filepath.Join(c.DataDir, "pebble"))
	store.Logger = log
	if err := store.Open(ctx); err != nil {
		return err
	}
	defer store.Close()

	if err := c.loadBundleIfEmpty(ctx, store, log); err != nil {
		return err
	}
	key, err := c.cursorKey()
	if err != nil {
		return err
	}
	catalog := &index.Catalog{}
	if err := rebuild(ctx, store, catalog, index.Options{CursorKey: key}); err != nil {
		return err
	}
	snap := catalog.Snapshot()
	log.Info("dataset ready", "records", snap.Len(), "updated_at", snap.Info().UpdatedAt, "source", snap.Info().Source)

	srv := edge.NewServer()
	srv.Catalog = catalog
	srv.Lookup = store
	srv.GatewayHost = c.GatewayHost
	srv.QueryBudget = c.QueryBudget
	srv.Logger = log
	shared, closeShared, err := openNodeState(ctx, c.SharedStore, c.DataDir, store, log)
	if err != nil {
		return err
	}
	defer closeShared()
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
	live, err := c.Upstream.start(ctx, c.Feeds == "on", c.DataDir, c.bundleFS(), store, catalog, index.Options{CursorKey: key}, srv, log)
	if err != nil {
		stopAlerts()
		return err
	}
	// Shutdown order: the listeners drain (listen returns once requests in
	// flight are done), then the feeds stop, then the alert outbox is
	// flushed, and the store, deferred above, closes last.
	err = c.Listen.listen(ctx, c.Addr, c.DataDir, srv, c.Ready, log)
	log.Info("stopping feeds")
	if cerr := live.Close(); cerr != nil {
		log.Error("stopping feeds", "error", cerr)
	}
	log.Info("flushing alert outbox")
	stopAlerts()
	return err
}

// loadBundleIfEmpty fills an empty store from the bundle.
func (c *ServeCommand) loadBundleIfEmpty(ctx context.Context, store *kv.Store, log *slog.Logger) error {
	empty, err := store.Empty(ctx)
	if err != nil || !empty {
		return err
	}
	return loadBundle(ctx, store, c.bundleFS(), log)
}

// bundleFS is the bundle: Bundle, or the embedded one.
func (c *ServeCommand) bundleFS() iofs.FS {
	if c.Bundle != nil {
		return c.Bundle
	}
	return bundle.Embedded()
}

// rebuild reads every record from the store into a new snapshot and swaps
// it into catalog.
func rebuild(ctx context.Context, store rappel.RecordStore, catalog *index.Catalog, opts index.Options) error {
	info, err := store.DatasetInfo(ctx)
	if err != nil {
		return err
	}
	var recs []*rappel.Record
	if err := store.ForEachRecord(ctx, func(r *rappel.Record) error {
		recs = append(recs, r)
		return nil
	}); err != nil {
		return fmt.Errorf("reading records: %w", err)
	}
	snap, err := index.BuildOptions(recs, info, opts)
	if err != nil {
		return err
	}
	catalog.Swap(snap)
	recs, snap = nil, nil
	// A build allocates several times the snapshot it leaves (about a
	// gigabyte for 41,000 records) and the old snapshot is garbage once its
	// readers finish. Without this the runtime hands that memory back to
	// the OS only slowly, and a node's resident size stays at its peak for
	// minutes after every rebuild.
	debug.FreeOSMemory()
	return nil
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
