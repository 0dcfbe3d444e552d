package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/plugins"
)

// FeedsConfig is the live feed settings of rappel serve; --feeds (on or
// off) is ServeCommand.Feeds.
type FeedsConfig struct {
	HCDumpEN, HCDumpFR, VRDB, Detail string
	// Interval is the time between refreshes; seconds work, for tests.
	Interval time.Duration
	// MaxRemoval is the share of a source's records one refresh may remove.
	MaxRemoval float64
	// AdminKey opens POST /admin/refresh; empty keeps it closed.
	AdminKey string
	// PluginsDir is watched for new plugins (<source>.wasm).
	PluginsDir string
	// DetailRate is detail document requests a second; 0 for no limit.
	DetailRate float64
}

// defaults sets the defaults of the URLs left empty and, on a config never
// set (no interval), of the numbers.
func (c *FeedsConfig) defaults() {
	for _, f := range []struct {
		v   *string
		def string
	}{{&c.HCDumpEN, feeds.DefaultHCDumpEN}, {&c.HCDumpFR, feeds.DefaultHCDumpFR}, {&c.VRDB, feeds.DefaultVRDB}, {&c.Detail, feeds.DefaultDetail}} {
		if *f.v == "" {
			*f.v = f.def
		}
	}
	if c.Interval == 0 {
		c.Interval, c.MaxRemoval, c.DetailRate = 15*time.Minute, 0.2, 10
	}
}

func (c *FeedsConfig) register(fs *flag.FlagSet) {
	c.defaults()
	fs.StringVar(&c.HCDumpEN, "feed-hc-en", c.HCDumpEN, "`URL` of Health Canada's recalls open data in English (JSON)")
	fs.StringVar(&c.HCDumpFR, "feed-hc-fr", c.HCDumpFR, "`URL` of Health Canada's recalls open data in French (JSON)")
	fs.StringVar(&c.VRDB, "feed-tc-vrdb", c.VRDB, "`URL` of Transport Canada's vehicle recall database (CSV)")
	fs.StringVar(&c.Detail, "feed-detail", c.Detail, "`URL template` of a notice's detail document, with {id} and {lang}")
	fs.DurationVar(&c.Interval, "refresh-interval", c.Interval, "`time` between two refreshes of the feeds (for example 15m, or 2s in tests)")
	fs.Float64Var(&c.MaxRemoval, "max-removal", c.MaxRemoval, "largest `share` of a source's records one refresh may remove; more is refused as suspicious")
	fs.StringVar(&c.AdminKey, "admin-key", c.AdminKey, "`key` for the admin endpoints (POST /admin/refresh), sent in x-admin-key; empty keeps them closed")
	fs.StringVar(&c.PluginsDir, "plugins-dir", c.PluginsDir, "`directory` watched for new plugins (<source>.wasm), tried on the last good data before they replace the running ones")
	fs.Float64Var(&c.DetailRate, "feed-detail-rate", c.DetailRate, "detail document `requests` a second at most (0 for no limit)")
}

// validate reports the first setting that cannot work.
func (c *FeedsConfig) validate() error {
	c.defaults()
	switch {
	case c.Interval <= 0:
		return fmt.Errorf("--refresh-interval is %s; give a positive duration such as 15m", c.Interval)
	case c.MaxRemoval < 0 || c.MaxRemoval > 1:
		return fmt.Errorf("--max-removal is %g; give a share between 0 and 1 such as 0.2", c.MaxRemoval)
	case c.DetailRate < 0:
		return fmt.Errorf("--feed-detail-rate is %g; give 0 or more", c.DetailRate)
	}
	for _, s := range c.sources() {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("feed URLs: %w", err)
		}
	}
	return nil
}

func (c *FeedsConfig) sources() []*feeds.Source {
	return []*feeds.Source{feeds.HCDump(c.HCDumpEN, c.HCDumpFR), feeds.VRDB(c.VRDB), feeds.Detail(c.Detail)}
}

// liveFeeds is the running feeds of a node: the plugin registry and the
// refresher.
type liveFeeds struct {
	host      *plugins.Host
	registry  *plugins.Registry
	refresher *feeds.Refresher
	stop      context.CancelFunc
	wg        sync.WaitGroup
}

// start wires the feeds into srv: /health lists every source's state and,
// when on, POST /admin/refresh runs a refresh. When on, it opens the plugin
// host and registry (the bundled plugins, and candidates from PluginsDir)
// and refreshes at start and then every Interval until ctx ends or Close,
// which waits for the refresh under way.
func (c *FeedsConfig) start(ctx context.Context, on bool, dataDir string, bundled iofs.FS, store *kv.Store, catalog *index.Catalog, opts index.Options, srv *edge.Server, log *slog.Logger) (*liveFeeds, error) {
	c.defaults()
	srv.AdminKey = c.AdminKey
	if !on {
		srv.Feeds = func() []rappel.FeedState { return storedStates(store, log) }
		return &liveFeeds{}, nil
	}
	ctx, stop := context.WithCancel(ctx)
	lf := &liveFeeds{host: plugins.NewHost(), stop: stop}
	lf.host.CacheDir = filepath.Join(dataDir, "wazero-cache")
	lf.host.Logger = log
	if err := lf.host.Open(ctx); err != nil {
		return nil, err
	}
	mods, err := bundle.Plugins(bundled)
	if err != nil {
		lf.Close()
		return nil, err
	}
	lf.registry = plugins.NewRegistry(lf.host, mods)
	lf.registry.Dir = c.PluginsDir
	lf.registry.Logger = log
	r := feeds.NewRefresher(store, lf.registry, c.sources()...)
	lf.refresher = r
	// A plugin activated at run time shows its effect at once: the
	// refresh it triggers sees a new plugin and normalizes everything.
	lf.registry.OnActivate = func(string, *rappel.Normalized) { r.Kick() }
	if err := lf.registry.Open(ctx); err != nil {
		lf.Close()
		return nil, err
	}
	r.Interval, r.MaxRemoval, r.DetailRate = c.Interval, c.MaxRemoval, c.DetailRate
	r.Logger = log.With("component", "feeds")
	r.Fetcher.Logger = r.Logger
	r.ActivePlugin = lf.activePlugin
	r.Changed = func(ctx context.Context, changed bool) error {
		if changed {
			return rebuild(ctx, store, catalog, opts)
		}
		info, err := store.DatasetInfo(ctx)
		if err != nil {
			return err
		}
		catalog.Swap(catalog.Current().WithInfo(info))
		return nil
	}
	if err := r.Open(ctx); err != nil {
		lf.Close()
		return nil, err
	}
	srv.Feeds = lf.states
	srv.Refresh = r.Trigger
	lf.wg.Add(2)
	go func() {
		defer lf.wg.Done()
		_ = r.Run(ctx)
	}()
	go func() {
		defer lf.wg.Done()
		lf.primeCandidates(ctx, log)
	}()
	return lf, nil
}

// activePlugin is the SHA-256 of source's running plugin.
func (lf *liveFeeds) activePlugin(source string) string {
	for _, st := range lf.registry.Status() {
		if st.Source == source {
			return st.Active
		}
	}
	return ""
}

// states is every source's state for /health, with why the last candidate
// plugin was not activated, if it was not.
func (lf *liveFeeds) states() []rappel.FeedState {
	out := lf.refresher.States()
	for _, ps := range lf.registry.Status() {
		for i := range out {
			if out[i].Source == ps.Source && ps.Rejected != "" {
				out[i].PluginRejected = fmt.Sprintf("%s (%s): %s", ps.Rejected, ps.RejectedAt.UTC().Format(time.RFC3339), ps.RejectedReason)
			}
		}
	}
	return out
}

// primeCandidates gives a candidate plugin waiting for input the source's
// last good payload, rebuilt from the store. The registry tries candidates
// only on a payload given to Prime: a refresh normalizes only what changed
// (often nothing, or a few records), and a candidate judged on those could
// drop most of a source unnoticed. Running the active plugin on the whole
// last good payload gives the registry both the payload and the baseline to
// judge against.
func (lf *liveFeeds) primeCandidates(ctx context.Context, log *slog.Logger) {
	primed := map[string]bool{} // source/candidate
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, ps := range lf.registry.Status() {
			if ps.Pending == "" || primed[ps.Source+"/"+ps.Pending] {
				continue
			}
			primed[ps.Source+"/"+ps.Pending] = true
			payload, err := lf.refresher.LastGood(ctx, ps.Source)
			if err != nil {
				log.Info("a candidate plugin waits for its source's first live refresh", "source", ps.Source, "err", err)
				delete(primed, ps.Source+"/"+ps.Pending)
				continue
			}
			if _, err := lf.registry.Prime(ctx, ps.Source, payload); err != nil {
				log.Warn("running the active plugin on the last good payload for a candidate", "source", ps.Source, "err", err)
			}
			lf.registry.Scan(ctx)
		}
	}
}

// Close stops the feeds and waits for the refresh under way.
func (lf *liveFeeds) Close() error {
	if lf.stop != nil {
		lf.stop()
	}
	lf.wg.Wait()
	var errs []error
	if lf.registry != nil {
		errs = append(errs, lf.registry.Close())
	}
	if lf.host != nil {
		errs = append(errs, lf.host.Close(context.Background()))
	}
	return errors.Join(errs...)
}

// storedStates is every source's state as stored, for /health when the
// feeds are off.
func storedStates(store *kv.Store, log *slog.Logger) []rappel.FeedState {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	states, err := store.SourceStates(ctx)
	if err != nil {
		log.Warn("reading feed states", "err", err)
	}
	out := make([]rappel.FeedState, 0, len(states))
	for _, st := range states {
		out = append(out, st.Feed)
	}
	return out
}

// loadBundle fills an empty store from the bundle in src: the assembled
// records, each source's partial records, the raw records they came from
// (keys and hashes), and a state that is not live (the bundled records are
// provisional: a source's first live refresh replaces them), in one batch.
func loadBundle(ctx context.Context, store *kv.Store, src iofs.FS, log *slog.Logger) error {
	m, err := bundle.ReadManifest(src)
	if err != nil {
		return err
	}
	start := time.Now()
	recs := make([]*rappel.Record, 0, m.Records)
	if err := bundle.ReadRecords(src, func(r *rappel.Record) error {
		recs = append(recs, r)
		return nil
	}); err != nil {
		return err
	}
	parts := map[string][]*rappel.Record{}
	raw := map[string][]rappel.RawRecord{}
	var states []rappel.SourceState
	for _, source := range rappel.SourcePrecedence {
		if err := bundle.ReadPartials(src, source, func(r *rappel.Record) error {
			parts[source] = append(parts[source], r)
			return nil
		}); err != nil {
			return err
		}
		if err := bundle.ReadRaw(src, source, func(r rappel.RawRecord) error {
			raw[source] = append(raw[source], r)
			return nil
		}); err != nil {
			return err
		}
		st := rappel.SourceState{Feed: rappel.FeedState{Source: source, Records: len(parts[source])}, Plugin: m.Plugins[source]}
		st.Feed.Plugin = st.Plugin
		states = append(states, st)
	}
	info := rappel.DatasetInfo{UpdatedAt: m.BuiltAt, Source: "bundle", Records: len(recs)}
	if err := store.Load(ctx, recs, parts, raw, states, info); err != nil {
		return fmt.Errorf("loading bundle into store: %w", err)
	}
	log.Info("loaded bundle into empty store", "records", len(recs), "partials", m.Partials, "took", time.Since(start).Round(time.Millisecond))
	return nil
}
