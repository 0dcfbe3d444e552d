package feeds

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/rappel-ca/rappel"
)

// Plugins is what Live needs of the plugins that normalize the sources (a
// plugins.Registry): their runs, and which plugin runs or waits per
// source. It is an interface so that feeds depends on the domain alone.
type Plugins interface {
	rappel.Normalizer
	// Active returns the SHA-256 of the plugin source's next run uses.
	Active(source string) string
	// Pending returns the SHA-256 of a candidate plugin of source waiting
	// for a payload to be tried on; "" when none waits.
	Pending(source string) string
	// Prime runs source's active plugin on the source's whole last good
	// payload, which a waiting candidate is then tried on and judged
	// against.
	Prime(ctx context.Context, source string, full fs.FS) (*rappel.Normalized, error)
	// Rejection says why source's last candidate plugin was not
	// activated; "" when none was refused.
	Rejection(source string) string
	// Holding says which candidate plugin of source waits, and for what;
	// "" when none does.
	Holding(source string) string
	// NotRun lists, with why, the sources a plugin added whose plugin
	// cannot run (it no longer verifies): the feeds do not know them, and
	// /health must say why they are not refreshed.
	NotRun() map[string]string
	// Offer gives source's documents as fetched, whole, that the active
	// plugin failed on with err, for a candidate to be tried on.
	Offer(source string, current fs.FS, err error)
}

// Live runs a node's live feeds: a Refresher of Sources into Store through
// Plugins, refreshing at Open and every Interval and telling Listeners
// after each refresh; a refresh as soon as a candidate plugin replaced a
// source's plugin, so that its effect shows at once; and the priming of a
// candidate plugin waiting for input with its source's last good payload.
// With Off set it runs nothing: States reads the states earlier runs
// stored. Configure the exported fields, then Open; Close stops it.
type Live struct {
	Store   rappel.FeedStore
	Plugins Plugins
	Sources []*Source
	// Interval, MaxRemoval, DetailRate and DetailBudget are the
	// Refresher's; a DetailBudget of 0 is DefaultDetailBudget.
	Interval     time.Duration
	MaxRemoval   float64
	DetailRate   float64
	DetailBudget time.Duration
	// ManifestLoopback is the Fetcher's: a plugin's documents may be
	// fetched from loopback addresses, for development.
	ManifestLoopback bool
	// Listeners are told after every refresh (Refresher.Listeners).
	Listeners []rappel.ChangeListener
	// Off keeps the feeds from running.
	Off bool
	// Paused is the Refresher's: a follower in a fleet refreshes nothing
	// while it returns true.
	Paused func() bool
	// Lead is the Refresher's: a fleet's leader refreshes under its term.
	Lead   func(ctx context.Context) (context.Context, func(), error)
	Logger *slog.Logger

	mu        sync.Mutex // guards refresher and, before Open, Sources
	refresher *Refresher
	stop      context.CancelFunc
	wg        sync.WaitGroup
}

// pluginPoll is how often Live looks for a swapped plugin and a candidate
// waiting for its payload.
const pluginPoll = time.Second

// Open reads every source's state and, unless Off, starts refreshing and
// watching the plugins until ctx is done or Close.
func (l *Live) Open(ctx context.Context) error {
	if l.Logger == nil {
		l.Logger = slog.Default()
	}
	if l.Off {
		return nil
	}
	if l.Plugins == nil {
		return errors.New("opening the live feeds: Plugins is required")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r := NewRefresher(l.Store, l.Plugins, l.Sources...)
	r.Interval, r.MaxRemoval, r.DetailRate = l.Interval, l.MaxRemoval, l.DetailRate
	if l.DetailBudget != 0 {
		r.DetailBudget = l.DetailBudget
	}
	r.Logger = l.Logger.With("component", "feeds")
	r.Fetcher.Logger = r.Logger
	r.Fetcher.ManifestLoopback = l.ManifestLoopback
	r.ActivePlugin = l.Plugins.Active
	r.OfferPayload = l.Plugins.Offer
	r.Listeners = l.Listeners
	r.Paused, r.Lead = l.Paused, l.Lead
	if err := r.Open(ctx); err != nil {
		return err
	}
	l.refresher = r
	ctx, l.stop = context.WithCancel(ctx)
	l.wg.Add(2)
	go func() {
		defer l.wg.Done()
		_ = r.Run(ctx)
	}()
	go func() {
		defer l.wg.Done()
		l.watchPlugins(ctx)
	}()
	return nil
}

// Close stops the feeds and waits for the refresh under way. It is safe
// after a failed Open, and with Off.
func (l *Live) Close() error {
	if l.stop != nil {
		l.stop()
	}
	l.wg.Wait()
	return nil
}

// AddSource adds src to the sources refreshed (Refresher.AddSource); before
// Open, to those Open starts with.
func (l *Live) AddSource(src *Source) error {
	l.mu.Lock()
	r := l.refresher
	if r == nil {
		defer l.mu.Unlock()
		if err := src.Validate(); err != nil {
			return err
		}
		l.Sources = slices.DeleteFunc(l.Sources, func(s *Source) bool { return s.Name == src.Name })
		l.Sources = append(l.Sources, src)
		return nil
	}
	l.mu.Unlock()
	return r.AddSource(src)
}

// RemoveSource stops refreshing a source and archives its records
// (Refresher.RemoveSource).
func (l *Live) RemoveSource(ctx context.Context, name, reason string) error {
	l.mu.Lock()
	r := l.refresher
	l.mu.Unlock()
	if r == nil {
		return errors.New("the live feeds are off")
	}
	return r.RemoveSource(ctx, name, reason)
}

// Kick asks for a refresh now, without waiting for it.
func (l *Live) Kick() {
	l.mu.Lock()
	r := l.refresher
	l.mu.Unlock()
	if r != nil {
		r.Kick()
	}
}

// Trigger runs a refresh now and waits for it (Refresher.Trigger).
func (l *Live) Trigger(ctx context.Context) error {
	if l.refresher == nil {
		return errors.New("the live feeds are off")
	}
	return l.refresher.Trigger(ctx)
}

// States returns every source's state for /health: the refresher's, with
// why a source's last candidate plugin was not activated, and a state for
// each source whose plugin cannot run, saying why; with Off, the
// states stored by earlier runs; on a fleet's follower, the states its
// store holds, which are the leader's as published.
func (l *Live) States() []rappel.FeedState {
	if l.refresher == nil {
		return l.storedStates()
	}
	out := l.refresher.States()
	if l.Paused != nil && l.Paused() {
		// A fleet's follower refreshes nothing: its store holds the
		// leader's states, as published.
		out = l.storedStates()
	}
	notRun := l.Plugins.NotRun()
	for i := range out {
		out[i].PluginRejected = l.Plugins.Rejection(out[i].Source)
		out[i].PluginHeld = l.Plugins.Holding(out[i].Source)
		delete(notRun, out[i].Source)
	}
	for _, name := range slices.Sorted(maps.Keys(notRun)) {
		out = append(out, rappel.FeedState{Source: name, PluginRejected: notRun[name]})
	}
	return out
}

// storedStates reads every source's state from the store, within a second:
// /health should answer even when the store is slow.
func (l *Live) storedStates() []rappel.FeedState {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	states, err := l.Store.SourceStates(ctx)
	if err != nil {
		l.Logger.Warn("reading feed states", "err", err)
	}
	out := make([]rappel.FeedState, 0, len(states))
	for _, st := range states {
		out = append(out, st.Feed)
	}
	return out
}

// watchPlugins looks at every source's plugins every pluginPoll until ctx
// is done: a source whose plugin changed (a candidate was activated) gets a
// refresh now, which normalizes everything again with the new plugin; a
// candidate waiting for input gets its source's last good payload.
//
// Candidates are tried only on a payload given to Prime: a refresh
// normalizes only what changed (often nothing, or a few records), and a
// candidate judged on those could drop most of a source unnoticed. Running
// the active plugin on the whole last good payload, rebuilt from the store,
// gives the plugins both the payload and the baseline to judge against.
func (l *Live) watchPlugins(ctx context.Context) {
	active := map[string]string{}
	for _, name := range l.refresher.SourceNames() {
		active[name] = l.Plugins.Active(name)
	}
	primed := map[string]string{}  // source → the candidate it was primed for
	waiting := map[string]string{} // source → the candidate logged as waiting
	t := time.NewTicker(pluginPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, name := range l.refresher.SourceNames() {
			if a := l.Plugins.Active(name); a != active[name] {
				active[name] = a
				l.refresher.Kick()
			}
			pending := l.Plugins.Pending(name)
			if pending == "" || primed[name] == pending {
				continue
			}
			payload, err := l.refresher.LastGood(ctx, name)
			if err != nil {
				// Not a wait for ever: a refresh the active plugin fails
				// gives the candidate the upstream's current payload.
				if waiting[name] != pending {
					waiting[name] = pending
					l.Logger.Debug("no last good payload to prime a candidate plugin with; it is tried on the upstream's current payload if the active plugin fails on it", "source", name, "err", err)
				}
				continue
			}
			primed[name] = pending
			if _, err := l.Plugins.Prime(ctx, name, payload); err != nil && ctx.Err() == nil {
				l.Logger.Warn("running the active plugin on the last good payload for a candidate", "source", name, "err", err)
			}
		}
	}
}

// SourceNames returns the names of the sources refreshed.
func (l *Live) SourceNames() []string {
	l.mu.Lock()
	r := l.refresher
	defer l.mu.Unlock()
	if r == nil {
		names := make([]string, len(l.Sources))
		for i, s := range l.Sources {
			names[i] = s.Name
		}
		return names
	}
	return r.SourceNames()
}
