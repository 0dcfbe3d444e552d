package feeds

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
)

// Refresher keeps a store fresh from the upstream feeds: at every refresh it
// fetches each source, normalizes what changed through the source's plugin
// and applies the result in one durable write per source, then tells its
// Listeners (the read index, the alerts) that the data changed. A source
// that fails keeps its
// last good data. Configure the exported fields, then Open; Run refreshes
// on a schedule, Refresh and Trigger once.
type Refresher struct {
	Store      rappel.FeedStore
	Normalizer rappel.Normalizer
	// Sources are refreshed in order; a source that Follows another comes
	// after it.
	Sources []*Source
	Fetcher *Fetcher

	// Interval is the time between two refreshes, and Deadline bounds
	// one; 0 means two thirds of Interval, but at least a minute, so that
	// the plugins have time on short test intervals.
	Interval time.Duration
	Deadline time.Duration
	// MaxRemoval is the share of a live source's records one refresh may
	// remove; a snapshot that would remove more is refused as suspicious.
	MaxRemoval float64
	// Parallelism is how many plugin runs normalize one source at once
	// when many of its records changed.
	Parallelism int
	// DetailConcurrency and DetailRate (requests a second, 0 for no limit)
	// keep the per-notice detail requests polite. DetailBudget bounds the
	// time one refresh spends fetching them, after it has published what
	// the other sources changed; the notices left are fetched by the next
	// refreshes. 0 fetches none.
	DetailConcurrency int
	DetailRate        float64
	DetailBudget      time.Duration

	// ActivePlugin, when set, returns the SHA-256 of the plugin a source's
	// next run would use, so that a refresh that fetched nothing new still
	// normalizes everything again after a plugin was swapped.
	ActivePlugin func(source string) string
	// OfferPayload, when set, is given a source's documents as fetched,
	// whole, when the fetch succeeded but the plugin failed on them, with
	// the plugin's error: only another plugin can make that refresh
	// succeed, so a candidate is tried on them (plugins.Registry.Offer).
	OfferPayload func(source string, docs fs.FS, err error)
	// Listeners are told after every refresh, in order, that the data
	// changed: records is true when records changed since every listener
	// last caught up, false when only the dataset info moved. Errors are
	// logged and returned, and until every listener has caught up the
	// next refresh tells them all again with records true.
	Listeners []rappel.ChangeListener
	// Paused, when set and true, makes a refresh do nothing: a follower in
	// a fleet fetches nothing, its leader does (package fleet).
	Paused func() bool
	// Lead, when set, is asked once a refresh holds the refreshes' lock
	// (the one before it has ended): it returns the context the refresh
	// runs under, which ends when the node stops leading, and its
	// release; an error (a node that no longer leads) drops the refresh,
	// whole, before it reads anything (fleet.Node.Hold).
	Lead func(ctx context.Context) (context.Context, func(), error)

	Now    func() time.Time
	Logger *slog.Logger

	mu sync.Mutex // serializes refreshes
	// told is the dataset version the listeners were last told of.
	told    int64
	dirty   bool // records changed and a listener has not caught up yet
	smu     sync.RWMutex
	states  map[string]rappel.FeedState
	stats   map[string]*rappel.RefreshStats // by source, for /metrics (stats.go)
	started time.Time
	kick    chan struct{}
	base    context.Context // Run's, for Trigger
	// yieldDetails, while detail documents are being fetched, ends that
	// fetch early so that a refresh asked for does not wait for it.
	yieldDetails context.CancelFunc
	// added are sources added at run time (AddSource), which the next
	// refresh adopts.
	added []*Source
}

// DefaultDetailBudget is the time a refresh spends at most fetching detail
// documents: at the default rate, about 1,500 notices, more than a day's
// changes upstream.
const DefaultDetailBudget = 5 * time.Minute

// NewRefresher returns a Refresher of sources with defaults: every 15
// minutes, at most 20% of a source removed per refresh, as many parallel
// plugin runs as CPUs, and detail documents four at a time, ten a second,
// for at most DefaultDetailBudget a refresh.
func NewRefresher(store rappel.FeedStore, n rappel.Normalizer, sources ...*Source) *Refresher {
	return &Refresher{
		Store:             store,
		Normalizer:        n,
		Sources:           sources,
		Fetcher:           NewFetcher(),
		Interval:          15 * time.Minute,
		MaxRemoval:        0.2,
		Parallelism:       runtime.GOMAXPROCS(0),
		DetailConcurrency: 4,
		DetailRate:        10,
		DetailBudget:      DefaultDetailBudget,
		Now:               time.Now,
		Logger:            slog.Default(),
	}
}

// Open checks the configuration and reads every source's state.
func (r *Refresher) Open(ctx context.Context) error {
	switch {
	case r.Store == nil || r.Normalizer == nil || r.Fetcher == nil:
		return errors.New("opening feeds: Store, Normalizer and Fetcher are required")
	case r.Interval <= 0:
		return fmt.Errorf("opening feeds: interval %s is not positive", r.Interval)
	case r.MaxRemoval < 0 || r.MaxRemoval > 1:
		return fmt.Errorf("opening feeds: the removal share %g is not between 0 and 1", r.MaxRemoval)
	case r.DetailBudget < 0:
		return fmt.Errorf("opening feeds: the detail budget %s is negative", r.DetailBudget)
	}
	seen := map[string]bool{}
	for _, s := range r.Sources {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("opening feeds: %w", err)
		}
		if s.Follows != "" && !seen[s.Follows] {
			return fmt.Errorf("opening feeds: source %s follows %s, which must come before it", s.Name, s.Follows)
		}
		seen[s.Name] = true
	}
	if r.Deadline <= 0 {
		r.Deadline = max(r.Interval*2/3, time.Minute)
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	if r.Fetcher.Logger == nil {
		r.Fetcher.Logger = r.Logger
	}
	r.started = r.Now()
	r.kick = make(chan struct{}, 1)
	r.states = map[string]rappel.FeedState{}
	states, err := r.store().SourceStates(ctx)
	if err != nil {
		return fmt.Errorf("opening feeds: %w", err)
	}
	for _, st := range states {
		r.states[st.Feed.Source] = st.Feed
	}
	for _, s := range r.Sources {
		if _, ok := r.states[s.Name]; !ok {
			r.states[s.Name] = rappel.FeedState{Source: s.Name}
		}
	}
	return nil
}

// Run refreshes now, then every Interval and whenever Kick is called, until
// ctx is done. Refreshes do not pile up: one that runs past the interval
// delays the next. Refresh has logged each failure where it arose (a
// source's, a listener's), so Run does not log the joined error again.
func (r *Refresher) Run(ctx context.Context) error {
	r.smu.Lock()
	r.base = ctx
	r.smu.Unlock()
	t := time.NewTicker(r.Interval)
	defer t.Stop()
	for {
		_ = r.Refresh(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-r.kick:
		}
	}
}

// Kick asks Run for a refresh now, without waiting for it; a fetch of
// detail documents under way ends early for it.
func (r *Refresher) Kick() {
	r.yield()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Trigger runs a refresh now and waits until it ends or ctx is done; a
// fetch of detail documents under way ends early for it. The refresh
// itself is not tied to ctx (a client hanging up does not cut it short)
// but to Run's context, when Run is running.
func (r *Refresher) Trigger(ctx context.Context) error {
	r.yield()
	r.smu.RLock()
	base := r.base
	r.smu.RUnlock()
	if base == nil {
		base = context.WithoutCancel(ctx)
	}
	done := make(chan error, 1)
	go func() { done <- r.Refresh(base) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// yield ends the fetch of detail documents under way, if any.
func (r *Refresher) yield() {
	r.smu.RLock()
	defer r.smu.RUnlock()
	if r.yieldDetails != nil {
		r.yieldDetails()
	}
}

// Refresh refreshes every source once, in order, and tells the Listeners
// twice: once the sources fetched whole (the dumps) are written, so that
// their changes are read at once, and again when the detail documents
// fetched after that changed records. A source that fails keeps its data
// and records the failure in its state; the error returned joins every
// source's.
func (r *Refresher) Refresh(ctx context.Context) (err error) {
	if r.Paused != nil && r.Paused() {
		return nil
	}
	ctx, span := tracer.Start(ctx, "feeds.Refresh")
	defer func() { endSpan(span, err) }()
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx, release, err := r.hold(ctx)
	if err != nil {
		return err
	}
	defer release()
	rctx, cancel := context.WithTimeout(ctx, r.Deadline)
	defer cancel()
	start := r.Now()
	r.adopt()
	var errs []error
	// Over synthetic data, the sources that create records switch
	// together (switch.go).
	handled, switched := map[string]bool{}, false
	if synth, err := r.synthetic(rctx); err != nil {
		errs = append(errs, err)
	} else if synth {
		var serrs []error
		handled, switched, serrs = r.switchNow(rctx)
		errs = append(errs, serrs...)
	}
	for _, perRecord := range []bool{false, true} {
		changed := !perRecord && switched
		for _, src := range r.Sources {
			if (src.Template != "") != perRecord || handled[src.Name] || !r.due(src) {
				continue
			}
			c, err := r.refreshSource(rctx, src)
			if err != nil {
				errs = append(errs, fmt.Errorf("refreshing %s: %w", src.Name, err))
			}
			changed = changed || c
		}
		r.dirty = r.dirty || changed
		// The sources fetched per record are told of only when they
		// changed records, or moved the dataset version (a fleet's
		// leader: each write moves it), which the read index must serve.
		if perRecord && !changed && !r.moved(ctx) || ctx.Err() != nil {
			continue
		}
		if err := r.tell(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if wrote, err := r.settleMergeProblems(rctx); err != nil {
		r.Logger.WarnContext(ctx, "settling merge problems", "err", err)
		errs = append(errs, fmt.Errorf("settling merge problems: %w", err))
	} else if wrote && ctx.Err() == nil && r.moved(ctx) {
		if err := r.tell(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	r.Logger.InfoContext(ctx, "refresh done", "took", r.Now().Sub(start).Round(time.Millisecond), "failed", len(errs))
	return errors.Join(errs...)
}

// hold returns the context a refresh (or a source's removal) writes
// under, Lead's, and its release.
func (r *Refresher) hold(ctx context.Context) (context.Context, func(), error) {
	if r.Lead == nil {
		return ctx, func() {}, nil
	}
	return r.Lead(ctx)
}

// tell tells every listener, in order, what the refresh changed, and keeps
// the records marked as changed until every one of them has caught up.
func (r *Refresher) tell(ctx context.Context) error {
	info, ierr := r.store().DatasetInfo(ctx)
	var errs []error
	for _, l := range r.Listeners {
		if err := l.DataChanged(ctx, r.dirty); err != nil {
			r.Logger.ErrorContext(ctx, "telling a listener that the data changed", "listener", fmt.Sprintf("%T", l), "records", r.dirty, "err", err)
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	r.dirty = false
	if ierr == nil {
		r.told = info.Version
	}
	return nil
}

// moved reports whether the dataset version moved since the listeners
// were last told.
func (r *Refresher) moved(ctx context.Context) bool {
	info, err := r.store().DatasetInfo(ctx)
	return err == nil && info.Version != r.told
}

// refreshSource refreshes one source and records the outcome in its state.
// changed reports that assembled records changed.
func (r *Refresher) refreshSource(ctx context.Context, src *Source) (changed bool, err error) {
	ctx, span := tracer.Start(ctx, "feeds.RefreshSource", trace.WithAttributes(attribute.String("rappel.feed.source", src.Name)))
	defer func() {
		span.SetAttributes(attribute.Bool("rappel.feed.changed", changed))
		endSpan(span, err)
	}()
	start := r.Now()
	st, err := r.store().SourceState(ctx, src.Name)
	if err != nil {
		r.Logger.WarnContext(ctx, "reading a source's state before its refresh", "source", src.Name, "err", err)
		return false, err
	}
	st.Feed.LastAttempt, st.Feed.Note = start, ""
	var p *plan
	if src.Template != "" {
		p, err = r.planDetail(ctx, src, st)
	} else {
		p, err = r.planDocs(ctx, src, st)
	}
	if err == nil {
		p.took.fetch = r.Now().Sub(start)
		changed, err = r.apply(ctx, p)
	}
	if err != nil {
		r.failed(ctx, src, st, p, err, start)
		return false, err
	}
	r.succeeded(ctx, p, changed, r.Now().Sub(start), start)
	return changed, nil
}

// failed records a failed refresh of src, which started at start, in its
// state (st, as read before it); p is its plan, nil when the fetch failed.
func (r *Refresher) failed(ctx context.Context, src *Source, st rappel.SourceState, p *plan, err error, start time.Time) {
	r.offerPayload(src, p, err)
	st.Feed.LastError, st.Feed.LastErrorReason, st.Feed.Note = errorSentence(err), failureOf(err), ""
	st.Feed.LastDuration = r.Now().Sub(start)
	// /health names the plugin this refresh ran, which failed, not
	// the one that made the stored records (st.Plugin, kept).
	if r.ActivePlugin != nil {
		st.Feed.Plugin = r.ActivePlugin(src.Name)
	}
	// The refresh's context may be what failed: record the failure
	// with a context of its own.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if serr := r.store().ApplySource(sctx, &rappel.SourceChange{State: st}); serr != nil {
		r.Logger.ErrorContext(ctx, "recording a failed refresh", "source", src.Name, "err", serr)
	}
	r.setState(st.Feed)
	r.countRefresh(src.Name, p, true, start)
	r.Logger.WarnContext(ctx, "refresh failed; the last good data keeps serving", "source", src.Name, "err", redactURLs(err.Error()))
}

// succeeded counts and logs p's refresh, which took took from start.
func (r *Refresher) succeeded(ctx context.Context, p *plan, changed bool, took time.Duration, start time.Time) {
	r.tookState(p.src.Name, took)
	r.countRefresh(p.src.Name, p, false, start)
	r.Logger.InfoContext(ctx, "refreshed", "source", p.src.Name, "changed", changed, "records", p.st.Feed.Records,
		"rejected", p.st.Feed.Rejected, "took", took.Round(time.Millisecond), "steps", p.took)
}

// pluginFailure is an error of the source's plugin run, as opposed to the
// fetch, the store or the safety checks.
type pluginFailure struct{ err error }

func (f pluginFailure) Error() string { return f.err.Error() }
func (f pluginFailure) Unwrap() error { return f.err }

// offerPayload hands p's fetched documents to OfferPayload when err is the
// plugin's failure on them.
func (r *Refresher) offerPayload(src *Source, p *plan, err error) {
	var pf pluginFailure
	if r.OfferPayload == nil || !errors.As(err, &pf) {
		return
	}
	if docs := p.docs(); docs != nil {
		r.OfferPayload(src.Name, docsFS(docs), pf.err)
	}
}

// States returns every source's state, with Stale set for a source that had
// no success for three intervals (counted from start when it never had).
func (r *Refresher) States() []rappel.FeedState {
	r.smu.RLock()
	defer r.smu.RUnlock()
	now := r.Now()
	out := make([]rappel.FeedState, 0, len(r.states))
	for _, s := range r.Sources {
		st, ok := r.states[s.Name]
		if !ok {
			continue
		}
		st = r.staled(st, now)
		st.Refreshes = r.refreshStats(st.Source)
		out = append(out, st)
	}
	// Sources removed at run time stay listed, with why.
	for _, name := range sortedKeys(r.states) {
		if st := r.states[name]; st.Removed != "" && !slices.ContainsFunc(r.Sources, func(s *Source) bool { return s.Name == name }) {
			out = append(out, st)
		}
	}
	return out
}

// staled returns st with Stale set when its source had no success for
// three intervals (counted from start when it never had).
func (r *Refresher) staled(st rappel.FeedState, now time.Time) rappel.FeedState {
	since := st.LastSuccess
	if since.IsZero() {
		since = r.started
	}
	// A paused node's freshness is the fleet's, not its own sources'.
	st.Stale = now.Sub(since) > 3*max(r.Interval, r.intervalOf(st.Source)) && (r.Paused == nil || !r.Paused())
	return st
}

// tookState records how long a successful refresh took in its source's
// state, which apply set before the refresh's end was known.
func (r *Refresher) tookState(source string, took time.Duration) {
	r.smu.Lock()
	defer r.smu.Unlock()
	if st, ok := r.states[source]; ok {
		st.LastDuration = took
		r.states[source] = st
	}
}

// setStoredState sets a source's state as read back from the store, which
// does not keep the figures of its last refresh: those stay as they were.
func (r *Refresher) setStoredState(st rappel.FeedState) {
	r.smu.Lock()
	defer r.smu.Unlock()
	prev := r.states[st.Source]
	st.LastDuration, st.LastChanged = prev.LastDuration, prev.LastChanged
	r.states[st.Source] = st
}

func (r *Refresher) setState(st rappel.FeedState) {
	r.smu.Lock()
	defer r.smu.Unlock()
	r.states[st.Source] = st
}

// LastGood returns the raw documents source's plugin last ran on
// successfully, rebuilt from the store, for trying a candidate plugin.
func (r *Refresher) LastGood(ctx context.Context, source string) (fs.FS, error) {
	src := r.Source(source)
	if src == nil {
		return nil, fmt.Errorf("reading the last good payload: no source %q", source)
	}
	var recs []rappel.RawRecord
	if err := r.store().RawData(ctx, source, func(raw rappel.RawRecord) error {
		recs = append(recs, raw)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("reading the last good payload of %s: %w", source, err)
	}
	// A bundle's raw records hold keys and hashes only, no data: they
	// tell a refresh what changed, but are no payload to run a plugin on.
	if len(recs) == 0 || recs[0].Data == nil {
		return nil, fmt.Errorf("reading the last good payload of %s: the source has had no live refresh yet (the bundle keeps no raw data)", source)
	}
	docs, err := src.format.join(recs)
	if err != nil {
		return nil, fmt.Errorf("reading the last good payload of %s: %w", source, err)
	}
	return docsFS(docs), nil
}

// errorSentence makes an error, a lower-case phrase, into a sentence for
// /health.
func errorSentence(err error) string {
	// /health is public: a URL keeps neither its query string (an API
	// key, for some upstreams) nor its user info.
	s := strings.TrimSpace(redactURLs(err.Error()))
	if s == "" {
		return s
	}
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
