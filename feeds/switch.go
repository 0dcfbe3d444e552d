package feeds

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
)

// The switch: the first live refresh of a node whose data is synthetic.
//
// A generated bundle is a demo; none of it may be served once a node has
// gone live. Replacing it source by source, as a refresh replaces one
// source's records, would leave every other source's generated
// contributions merged into the real records (a generated detail document
// titling a real notice, a made-up barcode finding it) until that source's
// own first live refresh, and a detail source may take days to fetch every
// notice. So the first source to refresh live over a synthetic dataset
// replaces the whole store in one durable write (together with every other
// source that creates records and is due in the same refresh: switchNow):
// the records assembled from their output alone, its raw records and state, the other sources'
// states reset to "never refreshed" (no partial records, no raw records),
// and the dataset info marked as the agencies'. The read index, the
// lookups, suggestions, facets, statistics and exports follow from the
// records; the change log starts a new generation, so that a cursor of the
// generated data is answered 410.
//
// The switch is a new dataset, not news: it writes no batch of new
// recalls (no alert e-mail) and no record events (no webhook delivery per
// record), only one dataset event for the webhooks. The sources that
// refresh after it find no records of theirs stored, so their first
// snapshots are Initial and announce nothing either.

// synthetic reports whether the store's dataset is synthetic (or from
// before datasets had a kind: rappel.DatasetInfo.Synthetic).
func (r *Refresher) synthetic(ctx context.Context) (bool, error) {
	info, err := r.store().DatasetInfo(ctx)
	if err != nil {
		return false, err
	}
	return info.Synthetic(), nil
}

// errAwaitingSwitch is why a source that only enriches records cannot
// refresh over synthetic data: the switch is made by a source that creates
// records.
var errAwaitingSwitch error = &rappel.FeedError{Reason: rappel.FailureWaiting, Err: errors.New("waiting for a source that creates records (the dump, the vehicle file) to replace the generated data: detail documents only add to records")}

// switchPlan is a creating source's part of the switch: its plan, fetched
// whole, and its plugin's output over every raw record.
type switchPlan struct {
	p     *plan
	out   *run
	start time.Time
}

// switchNow makes the switch with every creating source that is due: each
// is fetched and normalized, and those that succeed replace the generated
// data together, in one write, so that the node goes from the bundle to
// every agency's records at once instead of serving the vehicle file alone
// until the dump's turn. A source that fails is recorded as failed, like
// any failed refresh, and switches later on its own (apply). handled are
// the sources it refreshed or tried to.
func (r *Refresher) switchNow(ctx context.Context) (handled map[string]bool, changed bool, errs []error) {
	handled = map[string]bool{}
	var parts []switchPlan
	for _, src := range r.Sources {
		if src.Enriches || src.Template != "" || !r.due(src) {
			continue
		}
		handled[src.Name] = true
		sp, err := r.planSwitch(ctx, src)
		if err != nil {
			errs = append(errs, fmt.Errorf("refreshing %s: %w", src.Name, err))
			continue
		}
		parts = append(parts, sp)
	}
	if len(parts) == 0 {
		return handled, false, errs
	}
	if err := r.switchDataset(ctx, parts, r.Now()); err != nil {
		for _, sp := range parts {
			r.failed(ctx, sp.p.src, sp.p.st, sp.p, err, sp.start)
			errs = append(errs, fmt.Errorf("refreshing %s: %w", sp.p.src.Name, err))
		}
		return handled, false, errs
	}
	for _, sp := range parts {
		r.succeeded(ctx, sp.p, true, r.Now().Sub(sp.start), sp.start)
	}
	return handled, true, errs
}

// planSwitch fetches src's documents and normalizes all of them, for the
// switch; a failure is recorded in src's state.
func (r *Refresher) planSwitch(ctx context.Context, src *Source) (sp switchPlan, err error) {
	ctx, span := tracer.Start(ctx, "feeds.RefreshSource", trace.WithAttributes(attribute.String("rappel.feed.source", src.Name)))
	defer func() { endSpan(span, err) }()
	sp.start = r.Now()
	st, err := r.store().SourceState(ctx, src.Name)
	if err != nil {
		return sp, err
	}
	st.Feed.LastAttempt, st.Feed.Note = sp.start, ""
	p, err := r.planDocs(ctx, src, st)
	if err == nil {
		p.took.fetch = r.Now().Sub(sp.start)
		sp.p = p
		sp.out, err = r.normalizeSwitch(ctx, p)
	}
	if err != nil {
		r.failed(ctx, src, st, p, err, sp.start)
		return sp, err
	}
	return sp, nil
}

// normalizeSwitch runs p's plugin over every raw record: the bundle's raw
// index describes generated documents, and nothing normalized from them
// survives.
func (r *Refresher) normalizeSwitch(ctx context.Context, p *plan) (*run, error) {
	t0 := time.Now()
	p.old = nil
	out, err := r.normalizeRaw(ctx, p, map[string]bool{}, func(string) bool { return true })
	if err != nil {
		return nil, err
	}
	p.took.normalize = time.Since(t0)
	if len(out.records) == 0 {
		return nil, rappel.Fail(rappel.FailureSuspiciousRemoval, errors.New("the upstream gave no records: refusing to replace the generated data with nothing"))
	}
	return out, nil
}

// switchOne is the switch made by one source's refresh (apply), when the
// others' were not due or failed.
func (r *Refresher) switchOne(ctx context.Context, p *plan, now time.Time) (changed bool, err error) {
	if p.src.Enriches || p.src.Template != "" {
		return false, errAwaitingSwitch
	}
	out, err := r.normalizeSwitch(ctx, p)
	if err != nil {
		return false, err
	}
	if err := r.switchDataset(ctx, []switchPlan{{p: p, out: out}}, now); err != nil {
		return false, err
	}
	return true, nil
}

// switchDataset replaces the store by what parts' sources alone yield, in
// one write.
func (r *Refresher) switchDataset(ctx context.Context, parts []switchPlan, now time.Time) error {
	t0 := time.Now()
	partials := map[string][]*rappel.Record{}
	raws := map[string][]rappel.RawRecord{}
	byName := map[string]switchPlan{}
	for _, sp := range parts {
		byName[sp.p.src.Name] = sp
	}
	// The sources' partial records merge in precedence order, as the
	// assembly of any refresh merges them.
	var ordered [][]*rappel.Record
	var names []string
	for _, src := range r.assemblyOrder() {
		sp, ok := byName[src.Name]
		if !ok {
			continue
		}
		p := sp.p
		part := make([]*rappel.Record, 0, len(sp.out.records))
		for _, id := range sortedKeys(sp.out.records) {
			part = append(part, sp.out.records[id])
		}
		raw := make([]rappel.RawRecord, 0, len(p.cur))
		for _, k := range sortedKeys(p.cur) {
			raw = append(raw, p.cur[k])
		}
		partials[src.Name], raws[src.Name] = part, raw
		ordered = append(ordered, part)
		names = append(names, src.Name)
	}
	recs, problems := rappel.Assemble(now, ordered...)
	for i := range problems {
		problems[i].Source, problems[i].Reason = names[0], mergeProblem+problems[i].Reason
	}
	assembled := time.Since(t0)
	states, err := r.resetStates(ctx, names...)
	if err != nil {
		return err
	}
	for i, name := range names {
		sp := byName[name]
		p := sp.p
		if sp.out.plugin != "" {
			p.st.Plugin = sp.out.plugin
		}
		if p.st.Plugin == "" && r.ActivePlugin != nil {
			p.st.Plugin = r.ActivePlugin(name)
		}
		p.st.Followed = ""
		p.st.Rejected = sp.out.problems
		if i == 0 {
			p.st.Rejected = append(p.st.Rejected, problems...)
		}
		p.rejected = len(p.st.Rejected)
		p.st.Feed.Records = len(partials[name])
		p.st.Feed.LastChanged = len(partials[name])
		p.took.assemble = assembled
		r.markSucceeded(&p.st, now)
		states = append(states, p.st)
	}
	prev, err := r.store().DatasetInfo(ctx)
	if err != nil {
		return err
	}
	// The dataset is no longer the bundle's: with its version kept, a
	// node's read index would pair the bundle's embedded segment with the
	// new records at its next start (kv/index, fromBundle) and serve the
	// generated ones the switch replaced.
	info := rappel.DatasetInfo{UpdatedAt: now, Source: "feeds", Kind: rappel.DatasetAgencies, Records: len(recs), Version: prev.Version}
	t0 = time.Now()
	err = r.store().Replace(ctx, recs, partials, raws, states, info)
	for _, sp := range parts {
		sp.p.took.write = time.Since(t0)
	}
	if err != nil {
		return rappel.Fail(rappel.FailureStorage, fmt.Errorf("replacing the generated data with the agencies': %w", err))
	}
	for _, st := range states {
		r.setState(st.Feed)
	}
	r.Logger.InfoContext(ctx, "replaced the generated data with the agencies': the node now serves only real recalls",
		"sources", names, "records", len(recs), "was", prev.Records)
	return nil
}

// resetStates returns the state of every source the store knows but
// those in except, and of every configured one, as a source that never refreshed:
// none of its records survive the switch, so its next refresh fetches its
// documents whole and its first snapshot is Initial. Its last attempt (when,
// its error, its plugin) is kept for /health.
func (r *Refresher) resetStates(ctx context.Context, except ...string) ([]rappel.SourceState, error) {
	stored, err := r.store().SourceStates(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, name := range except {
		seen[name] = true
	}
	var out []rappel.SourceState
	add := func(old rappel.FeedState) {
		if seen[old.Source] {
			return
		}
		seen[old.Source] = true
		// What its last attempt did stays: a source whose refresh failed
		// beside the switch still says why, and which plugin failed.
		out = append(out, rappel.SourceState{Feed: rappel.FeedState{Source: old.Source, LastAttempt: old.LastAttempt,
			LastError: old.LastError, LastErrorReason: old.LastErrorReason, LastDuration: old.LastDuration, Plugin: old.Plugin, PluginRejected: old.PluginRejected,
			PluginHeld: old.PluginHeld, Removed: old.Removed}})
	}
	for _, st := range stored {
		add(st.Feed)
	}
	for _, s := range r.Sources {
		add(rappel.FeedState{Source: s.Name})
	}
	return out, nil
}

// markSucceeded sets in st what a successful refresh at now records.
func (r *Refresher) markSucceeded(st *rappel.SourceState, now time.Time) {
	st.Feed.Live = true
	st.Feed.LastSuccess = now
	st.Feed.LastError, st.Feed.LastErrorReason = "", ""
	st.Feed.Removed = ""
	st.Feed.Plugin = st.Plugin
	if len(st.Rejected) > maxProblemsKept {
		st.Rejected = st.Rejected[:maxProblemsKept]
	}
	st.Feed.Rejected = len(st.Rejected)
	st.Feed.Problems = st.Rejected[:min(len(st.Rejected), maxProblemsShown)]
}
