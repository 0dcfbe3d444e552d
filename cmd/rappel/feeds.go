package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/fleet"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/plugins"
)

// FeedsConfig is the live feed settings of rappel serve; --feeds (on or
// off) is ServeCommand.Feeds.
type FeedsConfig struct {
	HCDumpEN, HCDumpFR, VRDB, Detail string
	// HCDumpENCSV and HCDumpFRCSV are the dump's CSV forms, read when its
	// JSON does not parse: "" for the CSV beside the JSON
	// (feeds.CSVBeside), "off" for none.
	HCDumpENCSV, HCDumpFRCSV string
	// VRDBDaily is the vehicle file's 60-day extract, overlaying VRDB:
	// "" for Transport Canada's when VRDB is Transport Canada's full file
	// (and none otherwise), "off" for none (vrdbDaily). VRDBFullEvery is
	// then how often the full file is fetched.
	VRDBDaily     string
	VRDBFullEvery time.Duration
	// Page is the URL template of a notice's recall page, PageFrom the
	// first NID read from its page before the old API (-1 for no pages).
	Page     string
	PageFrom int
	// Interval is the time between refreshes; seconds work, for tests.
	Interval time.Duration
	// MaxRemoval is the share of a source's records one refresh may remove.
	MaxRemoval float64
	// AdminKey opens POST /admin/refresh; empty keeps it closed.
	AdminKey string
	// AdminKeyAllowShort accepts an AdminKey shorter than minAdminKey.
	AdminKeyAllowShort bool
	// PluginsCacheDir keeps the plugins' compiled machine code; empty is
	// the data dir's wazero-cache.
	PluginsCacheDir string
	// PluginsDir is watched for new plugins (<source>.wasm).
	PluginsDir string
	// PluginKeys is the file of the public keys whose signatures make a
	// plugin from PluginsDir trusted (plugins.ParseTrustedKeys).
	PluginKeys string
	// AllowUnsigned lets unsigned plugins from PluginsDir go live: for
	// development only.
	AllowUnsigned bool
	// MaxChange is the share of the records a candidate plugin may change
	// in any one field before it is held for approval.
	MaxChange float64
	// DetailRate is detail document requests a second; 0 for no limit.
	DetailRate float64
	// DetailBudget is the time a refresh spends at most fetching detail
	// documents.
	DetailBudget time.Duration
	// PluginTimeout, PluginMemoryMiB and PluginOutputMiB are the limits of
	// a plugin run (plugins.Host's Timeout, MemoryLimitPages, MaxOutput).
	PluginTimeout                    time.Duration
	PluginMemoryMiB, PluginOutputMiB int64
	// DocumentsAllowLoopback lets a plugin's documents be fetched from
	// loopback addresses, for development; DocumentsBudgetMiB is what one
	// refresh of a plugin's source may fetch (docs/operations.md,
	// "Plugins' documents").
	DocumentsAllowLoopback bool
	DocumentsBudgetMiB     int64
}

// DefaultDocumentsBudgetMiB is --plugin-documents-budget's default: four
// times a document's default cap (plugins.DefaultDocumentMax), far above
// what the openFDA example fetches, and a bound on the memory a refresh
// of a plugin's source takes that a node of the documented size holds.
const DefaultDocumentsBudgetMiB = 256

// maxDocumentsBudgetMiB is the most a manifest can ask for: 16 documents
// at the largest cap one may have.
const maxDocumentsBudgetMiB = 16 * (plugins.MaxDocumentMax >> 20)

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
		c.PageFrom = feeds.DefaultPageFrom
		c.MaxChange = plugins.DefaultMaxChange
		host := plugins.NewHost()
		c.PluginTimeout = host.Timeout
		c.PluginMemoryMiB = int64(host.MemoryLimitPages) >> 4 // 16 pages of 64 KiB a MiB
		c.PluginOutputMiB = host.MaxOutput >> 20
	}
	if c.DocumentsBudgetMiB == 0 {
		c.DocumentsBudgetMiB = DefaultDocumentsBudgetMiB
	}
	if c.DetailBudget == 0 {
		c.DetailBudget = feeds.DefaultDetailBudget
	}
	if c.VRDBFullEvery == 0 {
		c.VRDBFullEvery = feeds.DefaultVRDBFullEvery
	}
}

// vrdbDaily is the URL of the vehicle file's daily extract; "" for none.
// Transport Canada's is the default only beside its full file: a full file
// from elsewhere (a mirror, a test) says nothing of where its extract is.
func (c *FeedsConfig) vrdbDaily() string {
	switch {
	case c.VRDBDaily == "off":
		return ""
	case c.VRDBDaily != "":
		return c.VRDBDaily
	case c.VRDB == feeds.DefaultVRDB:
		return feeds.DefaultVRDBDaily
	}
	return ""
}

func (c *FeedsConfig) register(fs *flag.FlagSet) {
	c.defaults()
	c.registerURLs(fs)
	fs.DurationVar(&c.Interval, "refresh-interval", c.Interval, "`time` between two refreshes of the feeds (for example 15m, or 2s in tests)")
	fs.Float64Var(&c.MaxRemoval, "max-removal", c.MaxRemoval, "largest `share` of a source's records one refresh may remove; more is refused as suspicious")
	fs.StringVar(&c.AdminKey, "admin-key", c.AdminKey, "`key` for the admin endpoints (POST /admin/refresh, GET, PUT and DELETE /admin/plugins, POST /admin/plugins/{source}/approve, POST /admin/backup), sent in x-admin-key; at least 32 characters; empty keeps them closed")
	fs.BoolVar(&c.AdminKeyAllowShort, "admin-key-allow-short", c.AdminKeyAllowShort, "accept an --admin-key shorter than 32 characters (development only: a short key can be guessed)")
	fs.StringVar(&c.PluginsCacheDir, "plugins-cache-dir", c.PluginsCacheDir, "`directory` keeping the plugins' compiled machine code, which several nodes on one host may share (compiling is most of a first start); empty is the data dir's wazero-cache")
	fs.StringVar(&c.PluginsDir, "plugins-dir", c.PluginsDir, "`directory` watched for new plugins (<source>.wasm), tried on the last good data before they replace the running ones")
	fs.StringVar(&c.PluginKeys, "plugin-keys", c.PluginKeys, "`file` of the trusted public keys (minisign format, one a line, # for comments); a plugin from --plugins-dir goes live only with a signature (FILE.wasm.minisig) by one of them, and a plugin kept in the data dir runs at start only while the signature kept beside it still verifies")
	fs.BoolVar(&c.AllowUnsigned, "plugins-allow-unsigned", c.AllowUnsigned, "let plugins from --plugins-dir without a signature go live (development only; a signature that is there is still checked)")
	fs.Float64Var(&c.MaxChange, "plugin-max-change", c.MaxChange, "largest `share` of the records a candidate plugin from --plugins-dir may change in any one field (title, hazard, what to do, allergens, units, dates...) and still go live; more holds it until POST /admin/plugins/{source}/approve")
	fs.Float64Var(&c.DetailRate, "feed-detail-rate", c.DetailRate, "detail document `requests` a second at most (0 for no limit)")
	fs.DurationVar(&c.PluginTimeout, "plugin-timeout", c.PluginTimeout, "`time` one plugin run may take; past it the run is stopped and fails")
	fs.Int64Var(&c.PluginMemoryMiB, "plugin-memory", c.PluginMemoryMiB, "`MiB` of memory a plugin may use; past it the run fails (its process may use twice that, twice the input and 512 MiB more)")
	fs.Int64Var(&c.PluginOutputMiB, "plugin-output", c.PluginOutputMiB, "`MiB` a plugin run may write to its output, and to its log; past it the run is stopped and fails")
	fs.BoolVar(&c.DocumentsAllowLoopback, "plugin-documents-allow-loopback", c.DocumentsAllowLoopback, "for development: let the documents a plugin's manifest names be fetched from loopback addresses (127.0.0.1, ::1, localhost); other private, link-local and reserved addresses stay refused")
	fs.Int64Var(&c.DocumentsBudgetMiB, "plugin-documents-budget", c.DocumentsBudgetMiB, "`MiB` the documents a plugin's manifest names may come to, after decompression, in one refresh of its source; past it the refresh fails and the source keeps its last good data")
	fs.DurationVar(&c.VRDBFullEvery, "feed-tc-vrdb-full-interval", c.VRDBFullEvery, "least `time` between two fetches of --feed-tc-vrdb while --feed-tc-vrdb-daily overlays it (the full file is monthly; the daily extract is fetched at every refresh)")
	fs.DurationVar(&c.DetailBudget, "feed-detail-budget", c.DetailBudget, "`time` a refresh spends at most fetching detail documents, after the dumps' changes are served; the notices left wait for the next refreshes")
}

// registerURLs defines the feed URL flags, which rappel bundle --fetch
// takes too, with c's values (the defaults, once c.defaults ran) as their
// defaults.
func (c *FeedsConfig) registerURLs(fs *flag.FlagSet) {
	fs.StringVar(&c.HCDumpEN, "feed-hc-en", c.HCDumpEN, "`URL` of Health Canada's recalls open data in English (JSON)")
	fs.StringVar(&c.HCDumpFR, "feed-hc-fr", c.HCDumpFR, "`URL` of Health Canada's recalls open data in French (JSON)")
	fs.StringVar(&c.HCDumpENCSV, "feed-hc-en-csv", c.HCDumpENCSV, "`URL` of the same English open data as CSV, read only when the JSON does not parse; empty for the CSV beside the JSON (its path's .json made .csv: "+feeds.DefaultHCDumpENCSV+" beside the default), off for none")
	fs.StringVar(&c.HCDumpFRCSV, "feed-hc-fr-csv", c.HCDumpFRCSV, "`URL` of the same French open data as CSV, read only when the JSON does not parse; empty for the CSV beside the JSON ("+feeds.DefaultHCDumpFRCSV+" beside the default), off for none")
	fs.StringVar(&c.VRDB, "feed-tc-vrdb", c.VRDB, "`URL` of Transport Canada's vehicle recall database (CSV), the full file")
	fs.StringVar(&c.VRDBDaily, "feed-tc-vrdb-daily", c.VRDBDaily, "`URL` of the vehicle recall database's 60-day extract (CSV, the full file's columns), fetched at every refresh and merged over the full file by recall number; off for none (default: "+feeds.DefaultVRDBDaily+" when --feed-tc-vrdb is its default, none otherwise)")
	fs.StringVar(&c.Detail, "feed-detail", c.Detail, "`URL template` of a notice's detail document, with {id} and {lang}, in the old detail API (frozen since 2021-10-29)")
	fs.StringVar(&c.Page, "feed-page", c.Page, "`URL template` of a notice's recall page, with {id} and {lang}, where the dump's URL is not on its site (default: /{lang}/node/{id} on the site of --feed-hc-en)")
	fs.IntVar(&c.PageFrom, "feed-page-from", c.PageFrom, "first `NID` whose recall page is fetched before the old detail API's documents; older notices try the API first, and each falls back to the other when the first has nothing (0: pages first for every notice; -1: no pages)")
}

// validate reports the first setting that cannot work.
// minAdminKey is the length an admin key must have at least: 32
// characters of a random key are beyond guessing, even at the thousands of
// guesses a second one connection can send.
const minAdminKey = 32

func (c *FeedsConfig) validate() error {
	if c.AdminKey != "" && len(c.AdminKey) < minAdminKey && !c.AdminKeyAllowShort {
		return fmt.Errorf("--admin-key is %d characters long; give one of at least %d (for example the output of `openssl rand -hex 32`), or add --admin-key-allow-short for development", len(c.AdminKey), minAdminKey)
	}
	c.defaults()
	switch {
	case c.Interval <= 0:
		return fmt.Errorf("--refresh-interval is %s; give a positive duration such as 15m", c.Interval)
	case c.MaxRemoval < 0 || c.MaxRemoval > 1:
		return fmt.Errorf("--max-removal is %g; give a share between 0 and 1 such as 0.2", c.MaxRemoval)
	case c.MaxChange < 0 || c.MaxChange > 1:
		return fmt.Errorf("--plugin-max-change is %g; give a share between 0 and 1 such as 0.05", c.MaxChange)
	case c.DetailRate < 0:
		return fmt.Errorf("--feed-detail-rate is %g; give 0 or more", c.DetailRate)
	case c.PageFrom < -1:
		return fmt.Errorf("--feed-page-from is %d; give a NID, 0 for pages first for every notice, or -1 for no pages", c.PageFrom)
	case c.DetailBudget < 0:
		return fmt.Errorf("--feed-detail-budget is %s; give a positive duration such as 5m", c.DetailBudget)
	case c.VRDBFullEvery < 0:
		return fmt.Errorf("--feed-tc-vrdb-full-interval is %s; give a positive duration such as 24h", c.VRDBFullEvery)
	case c.PluginTimeout <= 0:
		return fmt.Errorf("--plugin-timeout is %s; give a positive duration such as 2m", c.PluginTimeout)
	case c.PluginMemoryMiB < 16 || c.PluginMemoryMiB > 4096:
		return fmt.Errorf("--plugin-memory is %d; give the MiB a plugin may use, from 16 to 4096 (a Wasm memory holds at most 4 GiB), such as 1024", c.PluginMemoryMiB)
	case c.PluginOutputMiB <= 0:
		return fmt.Errorf("--plugin-output is %d; give the MiB a plugin run may write, such as 512", c.PluginOutputMiB)
	case c.DocumentsBudgetMiB <= 0 || c.DocumentsBudgetMiB > maxDocumentsBudgetMiB:
		return fmt.Errorf("--plugin-documents-budget is %d; give the MiB one refresh of a plugin's source may fetch, from 1 to %d, such as %d", c.DocumentsBudgetMiB, maxDocumentsBudgetMiB, DefaultDocumentsBudgetMiB)
	}
	for _, s := range c.sources() {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("feed URLs: %w", err)
		}
	}
	_, err := c.pluginVerifier()
	return err
}

// pluginVerifier reads --plugin-keys into the check a candidate from
// --plugins-dir passes before it is tried, and a kept plugin at start; nil
// without --plugins-dir or --plugin-keys. A watched directory needs
// trusted keys or, for development, --plugins-allow-unsigned: anyone who
// can write there would otherwise choose what the server serves.
func (c *FeedsConfig) pluginVerifier() (*plugins.Verifier, error) {
	switch {
	case c.PluginsDir == "" && c.PluginKeys == "":
		return nil, nil
	case c.PluginKeys == "" && !c.AllowUnsigned:
		return nil, errors.New("--plugins-dir needs --plugin-keys FILE, the public keys whose signatures make a plugin trusted (rappel plugin keygen writes a pair), or --plugins-allow-unsigned for development")
	case c.PluginKeys == "":
		return &plugins.Verifier{AllowUnsigned: true}, nil
	}
	v, err := plugins.LoadTrustedKeys(c.PluginKeys)
	if err != nil {
		return nil, fmt.Errorf("--plugin-keys: %w", err)
	}
	v.AllowUnsigned = c.AllowUnsigned
	return v, nil
}

func (c *FeedsConfig) sources() []*feeds.Source {
	detail := feeds.Detail(c.Detail)
	if c.PageFrom >= 0 {
		page := c.Page
		if page == "" {
			// The pages are on the site that publishes the dump, which a
			// test's or a mirror's --feed-hc-en moves with it.
			page = feeds.PageTemplate(c.HCDumpEN)
		}
		detail = feeds.DetailPages(c.Detail, page, c.PageFrom)
	}
	return []*feeds.Source{feeds.HCDumpWithCSV(c.HCDumpEN, c.HCDumpFR, csvURL(c.HCDumpENCSV, c.HCDumpEN), csvURL(c.HCDumpFRCSV, c.HCDumpFR)),
		feeds.VRDBDaily(c.VRDB, c.vrdbDaily(), c.VRDBFullEvery), detail}
}

// csvURL is the URL of the CSV form of the dump at jsonURL that flag
// gives: the CSV beside the JSON when it is empty, none when it is off.
func csvURL(flag, jsonURL string) string {
	switch flag {
	case "":
		return feeds.CSVBeside(jsonURL)
	case "off":
		return ""
	}
	return flag
}

// startFeeds wires the feeds into srv and starts them: /health lists every
// source's state and, with --feeds on, POST /admin/refresh runs a refresh.
// With --feeds on it opens the plugins (the bundled ones, and candidates
// from --plugins-dir) and the live feeds, which refresh at start and then
// every --refresh-interval and tell listeners after every refresh. stop
// stops the feeds, waiting for the refresh under way, then the plugins.
func (c *ServeCommand) startFeeds(ctx context.Context, store *kv.Store, listeners []rappel.ChangeListener, node *fleet.Node, srv *edge.Server, log *slog.Logger) (stop func() error, err error) {
	u := &c.Upstream
	u.defaults()
	live := &feeds.Live{
		Store: store, Sources: u.sources(), Listeners: listeners, Off: c.Feeds != "on", Logger: log,
		Interval: u.Interval, MaxRemoval: u.MaxRemoval, DetailRate: u.DetailRate, DetailBudget: u.DetailBudget,
		ManifestLoopback: u.DocumentsAllowLoopback,
	}
	closePlugins := func() error { return nil }
	if !live.Off {
		// A plugin whose manifest describes a new source adds it to the
		// feeds, at start for those kept from before (docs/feeds.md, "Live
		// feeds").
		onSource := func(m *plugins.Manifest) error { return live.AddSource(manifestSource(m, u.DocumentsBudgetMiB<<20)) }
		var onActivated func(string, []byte, []byte, string)
		if node != nil {
			// The leader's plugins are the fleet's: its successor runs
			// them (docs/operations.md, "One refresh for the fleet").
			onActivated = node.PluginActivated
		}
		// Compiling the plugins takes seconds (tens on a first start,
		// before the data dir caches them): the log says what the start
		// waits for.
		log.Info("opening plugins", "plugins_dir", u.PluginsDir)
		start := time.Now()
		reg, closeReg, err := u.openPlugins(ctx, c.DataDir, c.bundleFS(), onSource, onActivated, log)
		if err != nil {
			return nil, err
		}
		log.Info("plugins open", "took", time.Since(start).Round(time.Millisecond))
		live.Plugins, closePlugins = reg, closeReg
		if node != nil {
			node.Adopt = reg.Adopt
		}
		srv.Plugins = func() any { return reg.Report() }
		srv.PluginStats = reg.Stats
		srv.ApprovePlugin = reg.Approve
		if u.PluginsDir != "" {
			srv.UploadPlugin = reg.Upload
			srv.UploadStaging = filepath.Join(u.PluginsDir, plugins.StagingDir)
		}
		srv.RemoveSource = func(ctx context.Context, source, reason string) error {
			return removeSource(ctx, live, reg, source, reason)
		}
	}
	if node != nil {
		// A follower refreshes nothing: its leader's refreshes reach it.
		// and a leader's refreshes run under its term, their writes
		// published to the fleet before they are stored (package fleet).
		live.Paused = func() bool { return !node.Leading() }
		live.Lead, live.Store = node.Hold, node.FeedStore()
		node.Kick = live.Kick
	}
	if err := live.Open(ctx); err != nil {
		return nil, errors.Join(err, closePlugins())
	}
	srv.AdminKey = u.AdminKey
	srv.Feeds = live.States
	if !live.Off {
		srv.Refresh = live.Trigger
	}
	if node != nil && !live.Off {
		srv.Fleet = func() any { return node.Status() }
		srv.FleetStats = node.Stats
		srv.Refresh = func(ctx context.Context) error {
			elsewhere := func() error {
				return fmt.Errorf("%w: this node follows its fleet, whose leader %q refreshes the feeds; send POST /admin/refresh to it", edge.ErrRefreshedElsewhere, node.Status().Leader)
			}
			if !node.Leading() {
				return elsewhere()
			}
			err := live.Trigger(ctx)
			if errors.Is(err, fleet.ErrNotLeading) && !errors.Is(err, rappel.ErrUnpublished) {
				return elsewhere() // it stopped leading before the refresh began
			}
			return err
		}
	}
	return func() error { return errors.Join(live.Close(), closePlugins()) }, nil
}

// The live feeds run the plugins through the registry.
var _ feeds.Plugins = (*plugins.Registry)(nil)

// limit sets the host's limits from the flags; a limit left at zero (a
// config built without its flags) keeps the host's default.
func (c *FeedsConfig) limit(host *plugins.Host) {
	if c.PluginTimeout > 0 {
		host.Timeout = c.PluginTimeout
	}
	if c.PluginMemoryMiB > 0 {
		host.MemoryLimitPages = uint32(c.PluginMemoryMiB << 4)
	}
	if c.PluginOutputMiB > 0 {
		host.MaxOutput = c.PluginOutputMiB << 20
	}
}

// openPlugins opens the plugin host, its compiled modules cached in the data
// dir, and the registry of the bundled plugins, watching PluginsDir for
// candidates. closeAll closes both.
func (c *FeedsConfig) openPlugins(ctx context.Context, dataDir string, bundled iofs.FS, onSource func(*plugins.Manifest) error, onActivated func(string, []byte, []byte, string), log *slog.Logger) (reg *plugins.Registry, closeAll func() error, err error) {
	host := plugins.NewHost()
	c.limit(host)
	host.CacheDir = filepath.Join(dataDir, "wazero-cache")
	if c.PluginsCacheDir != "" {
		host.CacheDir = c.PluginsCacheDir
	}
	host.Logger = log
	if err := host.Open(ctx); err != nil {
		return nil, nil, err
	}
	closeHost := func() error { return host.Close(context.WithoutCancel(ctx)) }
	mods, err := bundle.Plugins(bundled)
	if err != nil {
		return nil, nil, errors.Join(err, closeHost())
	}
	verifier, err := c.pluginVerifier()
	if err != nil {
		return nil, nil, errors.Join(err, closeHost())
	}
	if verifier != nil && verifier.AllowUnsigned {
		log.Warn("plugins without a signature from --plugins-dir can go live (--plugins-allow-unsigned): use it for development only", "plugins_dir", c.PluginsDir, "trusted_keys", len(verifier.KeyIDs()))
	}
	reg = plugins.NewRegistry(host, mods)
	reg.Dir = c.PluginsDir
	reg.MaxChange = c.MaxChange
	if verifier != nil && c.PluginsDir != "" {
		// A candidate from the directory goes live only signed by a
		// trusted key (docs/feeds.md, "Live feeds").
		reg.Verify = verifier.Verify
	}
	if verifier != nil && len(verifier.KeyIDs()) > 0 {
		// So does a plugin kept in the data dir, at every start, and one
		// adopted from the fleet: a restored backup or a shared store
		// is no proof of who built it (docs/operations.md, "Plugins kept
		// in the data dir").
		reg.VerifyKept = verifier.Verify
	}
	// A swap outlives a restart: the active plugin of each source is kept
	// beside the store (docs/feeds.md, "Live feeds").
	reg.ActiveDir = filepath.Join(dataDir, "plugins", "active")
	reg.Logger = log
	reg.OnSource = onSource
	reg.OnActivated = onActivated
	if err := reg.Open(ctx); err != nil {
		return nil, nil, errors.Join(err, reg.Close(), closeHost())
	}
	return reg, func() error { return errors.Join(reg.Close(), closeHost()) }, nil
}
