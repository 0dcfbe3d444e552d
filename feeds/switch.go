package feeds

import (
	"context"
	"errors"
	"fmt"
	"time"

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
// replaces the whole store in one durable write: the records assembled
// from its output alone, its raw records and state, the other sources'
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
	info, err := r.Store.DatasetInfo(ctx)
	if err != nil {
		return false, err
	}
	return info.Synthetic(), nil
}

// errAwaitingSwitch is why a source that only enriches records cannot
// refresh over synthetic data: the switch is made by a source that creates
// records.
var errAwaitingSwitch = errors.New("waiting for a source that creates records (the dump, the vehicle file) to replace the generated data: detail documents only add to records")

// switchDataset applies p, the first live refresh over synthetic data, as
// the switch: the store is replaced by what p's source alone yields.
func (r *Refresher) switchDataset(ctx context.Context, p *plan, now time.Time) (changed bool, err error) {
	if p.src.Enriches || p.src.Template != "" {
		return false, errAwaitingSwitch
	}
	t0 := time.Now()
	// Every raw record is new: the bundle's raw index describes generated
	// documents, and nothing normalized from them survives.
	p.old = nil
	out, err := r.normalizeRaw(ctx, p, map[string]bool{}, func(string) bool { return true })
	if err != nil {
		return false, err
	}
	p.took.normalize = time.Since(t0)
	if len(out.records) == 0 {
		return false, fmt.Errorf("the upstream gave no records: refusing to replace the generated data with nothing")
	}
	t0 = time.Now()
	partials := make([]*rappel.Record, 0, len(out.records))
	for _, id := range sortedKeys(out.records) {
		partials = append(partials, out.records[id])
	}
	recs, problems := rappel.Assemble(now, partials)
	for i := range problems {
		problems[i].Source, problems[i].Reason = p.src.Name, mergeProblem+problems[i].Reason
	}
	p.took.assemble = time.Since(t0)
	raw := make([]rappel.RawRecord, 0, len(p.cur))
	for _, k := range sortedKeys(p.cur) {
		raw = append(raw, p.cur[k])
	}
	if out.plugin != "" {
		p.st.Plugin = out.plugin
	}
	if p.st.Plugin == "" && r.ActivePlugin != nil {
		p.st.Plugin = r.ActivePlugin(p.src.Name)
	}
	p.st.Followed = ""
	p.st.Rejected = append(out.problems, problems...)
	p.rejected = len(p.st.Rejected)
	p.st.Feed.Records = len(partials)
	p.st.Feed.LastChanged = len(recs)
	r.markSucceeded(&p.st, now)
	states, err := r.resetStates(ctx, p.src.Name)
	if err != nil {
		return false, err
	}
	states = append(states, p.st)
	prev, err := r.Store.DatasetInfo(ctx)
	if err != nil {
		return false, err
	}
	info := rappel.DatasetInfo{UpdatedAt: now, Source: "feeds", Kind: rappel.DatasetAgencies, Records: len(recs), Bundle: prev.Bundle, Version: prev.Version}
	t0 = time.Now()
	err = r.Store.Replace(ctx, recs, map[string][]*rappel.Record{p.src.Name: partials}, map[string][]rappel.RawRecord{p.src.Name: raw}, states, info)
	p.took.write = time.Since(t0)
	if err != nil {
		return false, fmt.Errorf("replacing the generated data with the agencies': %w", err)
	}
	for _, st := range states {
		r.setState(st.Feed)
	}
	r.Logger.InfoContext(ctx, "replaced the generated data with the agencies': the node now serves only real recalls",
		"source", p.src.Name, "records", len(recs), "was", prev.Records)
	return true, nil
}

// resetStates returns the state of every source the store knows but
// except, and of every configured one, as a source that never refreshed:
// none of its records survive the switch, so its next refresh fetches its
// documents whole and its first snapshot is Initial. Its last attempt is
// kept for /health.
func (r *Refresher) resetStates(ctx context.Context, except string) ([]rappel.SourceState, error) {
	stored, err := r.Store.SourceStates(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{except: true}
	var out []rappel.SourceState
	add := func(old rappel.FeedState) {
		if seen[old.Source] {
			return
		}
		seen[old.Source] = true
		out = append(out, rappel.SourceState{Feed: rappel.FeedState{Source: old.Source, LastAttempt: old.LastAttempt, Removed: old.Removed}})
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
	st.Feed.LastError = ""
	st.Feed.Removed = ""
	st.Feed.Plugin = st.Plugin
	if len(st.Rejected) > maxProblemsKept {
		st.Rejected = st.Rejected[:maxProblemsKept]
	}
	st.Feed.Rejected = len(st.Rejected)
	st.Feed.Problems = st.Rejected[:min(len(st.Rejected), maxProblemsShown)]
}
