package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/internal/logline"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/shipped"
)

// BundleCommand normalizes a corpus in the upstream formats with the
// shipped plugins' code, through the plugin host as the live feeds do, and
// writes the data bundle that the next build embeds. The code runs
// natively, compiled into rappel, not as the Wasm modules: the same Go
// code, several times faster (README, "Two commands"); the modules are still
// read, to be bundled and to name the records' maker.
//
// The corpus is generated (cmd/rappel-synth) or, with Fetch, fetched from
// the agencies' feeds first, by the fetcher a refresh uses, into the same
// layout (feeds.Refresher.FetchCorpus): one code path normalizes both, and
// the manifest's provenance says which it was.
type BundleCommand struct {
	Corpus     string
	PluginsDir string
	Out        string
	BuiltAt    string
	LogLevel   slog.Level
	// Fetch fetches the corpus from Feeds' URLs into Corpus first, the
	// detail documents at most Feeds.DetailRate a second for at most
	// Feeds.DetailBudget.
	Fetch bool
	Feeds FeedsConfig
}

// NewBundleCommand returns a BundleCommand with its defaults, the paths the
// Makefile uses and rappel serve's feed URLs and detail rate and budget.
func NewBundleCommand() *BundleCommand {
	c := &BundleCommand{
		Corpus:     "build/corpus",
		PluginsDir: "build/plugins",
		Out:        "bundle/data",
	}
	c.Feeds.defaults()
	return c
}

// ParseFlags reads the command line and environment into c.
func (c *BundleCommand) ParseFlags(args []string) error {
	return parseFlags(c.flagSet(), args)
}

// flagSet defines bundle's flags on c's fields.
func (c *BundleCommand) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("rappel bundle", flag.ContinueOnError)
	fs.StringVar(&c.Corpus, "corpus", c.Corpus, "`directory` holding the corpus (hc/, tc/, detail/)")
	fs.StringVar(&c.PluginsDir, "plugins", c.PluginsDir, "`directory` holding <source>.wasm for every source")
	fs.StringVar(&c.Out, "out", c.Out, "`directory` to write records.ndjson.zst, _partials/, _raw/, sst/, index.seg.zst, plugins/ and manifest.json to")
	fs.StringVar(&c.BuiltAt, "built-at", c.BuiltAt, "RFC 3339 `time` to stamp as fetched_at (default: when a fetched corpus was fetched; else SOURCE_DATE_EPOCH, or the corpus's reference date)")
	fs.Var(levelFlag{&c.LogLevel}, "log-level", "least `level` the plugin host logs: debug, info, warn or error")
	fs.BoolVar(&c.Fetch, "fetch", c.Fetch, "fetch the corpus from the agencies' feeds (--feed-*) into --corpus first, replacing a corpus fetched there before")
	c.Feeds.registerURLs(fs)
	fs.Float64Var(&c.Feeds.DetailRate, "detail-rate", c.Feeds.DetailRate, "with --fetch, detail document `requests` a second at most (0 for no limit)")
	fs.DurationVar(&c.Feeds.DetailBudget, "detail-budget", c.Feeds.DetailBudget, "with --fetch, `time` spent at most fetching detail documents (0 for none); the notices left are fetched by the node's first refreshes")
	return fs
}

// validate reports the first setting that cannot work, before a fetch
// that may take an hour.
func (c *BundleCommand) validate() error {
	if c.BuiltAt != "" {
		if _, err := time.Parse(time.RFC3339, c.BuiltAt); err != nil {
			return fmt.Errorf("--built-at %q is not an RFC 3339 time", c.BuiltAt)
		}
	}
	switch {
	case !c.Fetch:
		return nil
	case c.Feeds.DetailRate < 0:
		return fmt.Errorf("--detail-rate is %g; give 0 or more", c.Feeds.DetailRate)
	case c.Feeds.DetailBudget < 0:
		return fmt.Errorf("--detail-budget is %s; give 0 or a positive duration such as 30m", c.Feeds.DetailBudget)
	}
	for _, s := range c.Feeds.sources() {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("feed URLs: %w", err)
		}
	}
	return nil
}

// fetch fetches the corpus from the feeds into c.Corpus, as a refresh
// fetches it, each source's documents in its shipped corpus directory.
func (c *BundleCommand) fetch(ctx context.Context) error {
	r := feeds.NewRefresher(nil, nil, c.Feeds.sources()...)
	r.DetailRate, r.DetailBudget = c.Feeds.DetailRate, c.Feeds.DetailBudget
	r.Logger = logline.New(os.Stderr, "text", c.LogLevel)
	r.Fetcher.Logger = r.Logger
	dirs := map[string]string{}
	for name, src := range shipped.Sources {
		dirs[name] = src.CorpusDir
	}
	m, err := r.FetchCorpus(ctx, c.Corpus, dirs)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "fetched %d documents and the detail documents of %d notices (%d left for the node) -> %s\n",
		len(m.Provenance.Fetched), m.Provenance.Details, m.Provenance.DetailsLeft, c.Corpus)
	return nil
}

// bundleHost is the plugin host the bundle's sources run in.
func bundleHost(level slog.Level) *plugins.Host {
	host := plugins.NewHost()
	// The shipped plugins, at build time: trusted, and run natively, which
	// nothing could stop anyway.
	host.Timeout = 0
	host.Logger = logline.New(os.Stderr, "text", level)
	return host
}

// Run builds the bundle.
func (c *BundleCommand) Run(ctx context.Context) error {
	if err := c.validate(); err != nil {
		return err
	}
	if c.Fetch {
		if err := c.fetch(ctx); err != nil {
			return err
		}
	}
	fetched, err := feeds.ReadCorpusManifest(c.Corpus)
	if err != nil {
		return err
	}
	builtAt, err := c.builtAt(fetched)
	if err != nil {
		return err
	}
	host := bundleHost(c.LogLevel)
	results, shas, mods, err := c.runSources(ctx, host)
	if err != nil {
		return err
	}
	if err := bundle.WritePlugins(c.Out, mods); err != nil {
		return err
	}
	parts := make([][]*rappel.Record, 0, len(rappel.SourcePrecedence))
	bySource := make(map[string][]*rappel.Record, len(results))
	m := bundle.Manifest{BuiltAt: builtAt, Problems: map[string]int{}, Plugins: shas}
	for _, name := range rappel.SourcePrecedence {
		res := results[name]
		parts = append(parts, res.Records)
		bySource[name] = res.Records
		m.AddProblems(res.Problems)
		fmt.Fprintf(os.Stderr, "%-7s %7d records, %5d problems, %s\n", name, len(res.Records), len(res.Problems), res.Duration.Round(time.Millisecond))
	}
	// Each source's own records are kept too, before merging: a node
	// loading the bundle knows which records each source gave, so that the
	// source's first live refresh replaces exactly those.
	if err := bundle.WritePartials(c.Out, bySource, &m); err != nil {
		return err
	}
	// And the raw records they came from, as the feeds cut them, so that
	// a node's first live refresh normalizes only what differs upstream.
	corpus := map[string]iofs.FS{}
	for name, src := range shipped.Sources {
		dir := src.CorpusDir
		corpus[name] = os.DirFS(filepath.Join(c.Corpus, dir))
	}
	raw, err := feeds.BundleRaw(corpus)
	if err != nil {
		return err
	}
	if err := bundle.WriteRaw(c.Out, raw, &m); err != nil {
		return err
	}
	recs, problems := rappel.Assemble(builtAt, parts...)
	m.AddProblems(problems)
	if fetched != nil {
		m.Provenance = fetched.Provenance
	} else {
		if ref, err := os.ReadFile(filepath.Join(c.Corpus, "manifest.json")); err == nil {
			m.ReferenceDate = referenceDate(ref)
		}
		m.Provenance = &rappel.Provenance{Kind: rappel.DatasetSynthetic, Seed: corpusSeed(filepath.Join(c.Corpus, "manifest.json")), ReferenceDate: m.ReferenceDate}
	}
	if err := bundle.Write(c.Out, recs, m); err != nil {
		return err
	}
	// And the sstables a node with an empty store ingests: the keys and
	// values loading the bundle writes, prebuilt here rather than written
	// through a batch at every first start.
	if err := bundle.WriteTables(c.Out, func(dir string, b bundle.Contents) ([]string, error) {
		return kv.WriteTables(ctx, dir, b.Records, b.Partials, b.Raw, b.States, b.Info)
	}); err != nil {
		return err
	}
	// And the read index of those records, which a node serves from the
	// binary without building anything.
	if err := bundle.WriteIndex(c.Out, func(path string, b bundle.Contents) error {
		snap, err := index.Build(b.Records, b.Info)
		if err != nil {
			return err
		}
		if err := snap.WriteSegment(path); err != nil {
			return err
		}
		// Checked here in full, bytes and structure, as the file is
		// written: a node serves it on the word of the bundle's hashes
		// and checks its bytes only after it serves.
		written, err := index.OpenSegment(path, index.Options{})
		if err != nil {
			return fmt.Errorf("the index just written fails its checks: %w", err)
		}
		return written.Close()
	}); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bundle  %7d records, %5d problems after merging -> %s\n", len(recs), len(problems), c.Out)
	return nil
}

// builtAt is the bundle's build time, which its records carry as
// fetched_at and a node serving it as its dataset time: --built-at; for a
// corpus fetched from the agencies (fetched, nil for any other), when it
// was fetched, which is how current its data is; or SOURCE_DATE_EPOCH (the reproducible-builds
// convention), or the corpus's reference date at midnight UTC; the clock
// only for a corpus without one. Never the clock otherwise, so that the
// same corpus and sources give the same bundle, byte for byte.
func (c *BundleCommand) builtAt(fetched *feeds.CorpusManifest) (time.Time, error) {
	if c.BuiltAt != "" {
		t, err := time.Parse(time.RFC3339, c.BuiltAt)
		if err != nil {
			return t, fmt.Errorf("--built-at %q is not an RFC 3339 time", c.BuiltAt)
		}
		return t.UTC(), nil
	}
	if fetched != nil {
		return fetched.FetchedAt.UTC(), nil
	}
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		secs, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds since 1970", epoch)
		}
		return time.Unix(secs, 0).UTC(), nil
	}
	if ref, err := os.ReadFile(filepath.Join(c.Corpus, "manifest.json")); err == nil {
		if day, err := time.Parse(time.DateOnly, referenceDate(ref)); err == nil {
			return day.UTC(), nil
		}
	}
	return time.Now().UTC().Truncate(time.Second), nil
}

// runSources runs every source's plugin, natively, on its corpus
// directory, in parallel, and returns the results, each module's digest
// and the modules.
func (c *BundleCommand) runSources(ctx context.Context, host *plugins.Host) (map[string]*plugins.Result, map[string]string, map[string][]byte, error) {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		results = map[string]*plugins.Result{}
		shas    = map[string]string{}
		mods    = map[string][]byte{}
		errs    []error
	)
	for name, src := range shipped.Sources {
		dir := src.CorpusDir
		wasm, err := os.ReadFile(filepath.Join(c.PluginsDir, name+".wasm"))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("reading plugin: %w", err)
		}
		mods[name] = wasm
		p := host.LoadNative(name, wasm, src.Normalize)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.Run(ctx, os.DirFS(filepath.Join(c.Corpus, dir)))
			mu.Lock()
			defer mu.Unlock()
			results[name], shas[name] = res, p.SHA256
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	return results, shas, mods, errors.Join(errs...)
}

// corpusSeed reads the generator's seed from its manifest at path; 0 when
// it says none.
func corpusSeed(path string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var m struct {
		Seed uint64 `json:"seed"`
	}
	if json.Unmarshal(b, &m) != nil {
		return 0
	}
	return m.Seed
}

// referenceDate reads the generator's reference date from its manifest.
func referenceDate(manifest []byte) string {
	var m struct {
		ReferenceDate string `json:"reference_date"`
	}
	if json.Unmarshal(manifest, &m) != nil {
		return ""
	}
	return m.ReferenceDate
}
