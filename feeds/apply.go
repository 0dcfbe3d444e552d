package feeds

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/rappel-ca/rappel"
)

// maxProblemsShown is how many of a source's problems /health shows.
const maxProblemsShown = 20

// maxProblemsKept is how many problems a source's state keeps.
const maxProblemsKept = 5000

// apply normalizes what p found changed, checks that the result is safe to
// serve, re-assembles the records whose partial records changed and writes
// everything in one batch. changed reports that assembled records changed.
func (r *Refresher) apply(ctx context.Context, p *plan) (changed bool, err error) {
	now := r.Now()
	if p.unchanged {
		return false, r.write(ctx, p, &rappel.SourceChange{}, nil, now)
	}
	// Over synthetic data, the first live refresh replaces all of it
	// (switch.go).
	if synth, err := r.synthetic(ctx); err != nil {
		return false, err
	} else if synth {
		return r.switchOne(ctx, p, now)
	}
	stored := map[string]string{} // the source's partial records: record_id → hash
	if err := r.store().PartialHashes(ctx, p.src.Name, func(id, h string) error {
		stored[id] = h
		return nil
	}); err != nil {
		return false, err
	}
	// A first live refresh over a bundle that remembers its raw records
	// normalizes only what differs from them; without them, everything.
	_, whole := p.src.format.(wholeFormat)
	full := len(p.old) == 0 || whole || r.pluginChanged(p.src, p.st)
	for k := range p.old {
		if _, ok := p.cur[k]; structural(k) && (!ok || p.cur[k].Hash != p.old[k].Hash) {
			full = true
		}
	}
	for k, raw := range p.cur {
		if o, ok := p.old[k]; structural(k) && (!ok || o.Hash != raw.Hash) {
			full = true
		}
	}
	t0 := time.Now()
	norm, err := r.normalizeChanged(ctx, p, stored, full)
	if err != nil {
		return false, err
	}
	out, affected := norm.out, norm.affected
	if !p.st.Feed.Live {
		// The first live refresh replaces the bundled records entirely:
		// those no live raw record yields go.
		yielded := map[string]bool{}
		for _, raw := range p.cur {
			for _, id := range raw.IDs {
				yielded[id] = true
			}
		}
		for id := range stored {
			if !yielded[id] {
				affected[id] = true
			}
		}
	}
	p.took.normalize = time.Since(t0)
	t0 = time.Now()
	c := &rappel.SourceChange{}
	puts := map[string]*rappel.Record{}
	dels := map[string]bool{}
	for id := range affected {
		n, h := out.records[id], stored[id]
		switch {
		case n != nil:
			nh, err := rappel.ContentHash(n)
			if err != nil {
				// A record the plugin emitted that cannot be written.
				return false, rappel.Fail(rappel.FailurePlugin, fmt.Errorf("hashing record %s: %w", id, err))
			}
			if nh != h {
				puts[id] = n
			}
		case h != "":
			dels[id] = true
		}
	}
	if err := r.checkSafe(p, stored, puts, dels); err != nil {
		return false, err
	}
	// The source's own records, before merging: what changed upstream.
	p.st.Feed.LastChanged = len(puts) + len(dels)
	for _, id := range sortedKeys(puts) {
		c.PutPartials = append(c.PutPartials, puts[id])
	}
	c.DeletePartials = sortedKeys(dels)
	asm, err := r.assemble(ctx, p.src, puts, dels, now)
	if err != nil {
		return false, err
	}
	p.took.assemble = time.Since(t0)
	c.PutRecords, c.DeleteRecords = asm.put, asm.del
	// A snapshot is Initial only when the source held no records to
	// compare it with: its records are then new to the node, not to the
	// world. A first live refresh over the bundle's records is compared
	// with them, and what it finds changed since the bundle was built
	// changed in the world: it is announced like any later refresh's.
	initial := !p.st.Feed.Live && len(stored) == 0
	if len(asm.added) > 0 {
		c.NewRecalls = &rappel.NewRecalls{At: now, Source: p.src.Name, Initial: initial, RecordIDs: asm.added}
	}
	// The webhooks' events; the store writes none when there are none.
	c.Events = &rappel.RecordEvents{At: now, Source: p.src.Name, Initial: initial,
		Created: asm.added, Updated: asm.updated, Archived: asm.archived}
	if err := r.addRaw(ctx, p, c); err != nil {
		return false, err
	}
	added := 0
	for id := range puts {
		if stored[id] == "" {
			added++
		}
	}
	p.st.Feed.Records = len(stored) + added - len(dels)
	if out.plugin != "" {
		p.st.Plugin = out.plugin
	}
	r.keepProblems(p, affected, norm.full, append(out.problems, asm.problems...))
	info, err := r.store().DatasetInfo(ctx)
	if err != nil {
		return false, err
	}
	info.Records += asm.delta
	c.Info = &info
	t0 = time.Now()
	err = r.write(ctx, p, c, c.Info, now)
	p.took.write = time.Since(t0)
	return len(c.PutRecords)+len(c.DeleteRecords) > 0, err
}

// normalized is what normalizeChanged decided.
type normalized struct {
	out *run
	// affected are the record_ids whose partial records out decides:
	// those it yields are put, the others removed.
	affected map[string]bool
	// full reports that the plugin ran over every raw record, so that
	// out's problems replace all the source's kept ones.
	full bool
}

// normalizeChanged runs the plugin over the raw records that changed, and
// those sharing a record_id with them, and returns its output and the
// record_ids it decided. A run that yields record_ids nobody expected (a
// plugin that maps records differently) is done again over everything, as
// is a full refresh (the first live one, after a plugin swap or a change of
// structure).
func (r *Refresher) normalizeChanged(ctx context.Context, p *plan, stored map[string]string, full bool) (normalized, error) {
	if !full {
		affected := map[string]bool{}
		keys := r.changedClosure(p, affected)
		out, err := r.normalizeRaw(ctx, p, affected, func(k string) bool { return keys[k] })
		if err != nil {
			return normalized{}, err
		}
		unexpected := ""
		for id := range out.records {
			if !affected[id] {
				unexpected = id
				break
			}
		}
		switch {
		case out.plugin != "" && p.st.Plugin != "" && out.plugin != p.st.Plugin:
			r.Logger.InfoContext(ctx, "the plugin changed: normalizing every record", "source", p.src.Name)
		case unexpected != "":
			r.Logger.WarnContext(ctx, "the plugin yielded a record its input was not expected to: normalizing every record", "source", p.src.Name, "record_id", unexpected)
		default:
			return normalized{out: out, affected: affected}, nil
		}
	}
	affected := make(map[string]bool, len(stored))
	for id := range stored {
		affected[id] = true
	}
	out, err := r.normalizeRaw(ctx, p, affected, func(string) bool { return true })
	if err != nil {
		return normalized{}, err
	}
	for id := range out.records {
		affected[id] = true
	}
	return normalized{out: out, affected: affected, full: true}, nil
}

// normalizeRaw runs the plugin over the structural raw records and those
// whose key want accepts, in key order, after fillData (which may drop
// record_ids from affected).
func (r *Refresher) normalizeRaw(ctx context.Context, p *plan, affected map[string]bool, want func(key string) bool) (*run, error) {
	var structs, recs []rappel.RawRecord
	for _, k := range sortedKeys(p.cur) {
		switch {
		case structural(k):
			structs = append(structs, p.cur[k])
		case want(k):
			recs = append(recs, p.cur[k])
		}
	}
	recs, err := r.fillData(ctx, p, affected, structs, recs)
	if err != nil {
		return nil, err
	}
	out, err := r.normalize(ctx, p.src, structs, recs)
	if err != nil {
		return nil, pluginFailure{rappel.Fail(rappel.FailurePlugin, err)}
	}
	p.took.normalized += len(recs)
	return out, nil
}

// changedClosure returns the keys of the raw records to normalize again:
// those new or changed, and every one expected to yield a record_id that
// they, or the removed ones, yield or yielded. It adds those record_ids to
// affected.
func (r *Refresher) changedClosure(p *plan, affected map[string]bool) map[string]bool {
	byID := map[string][]string{}
	for k, raw := range p.cur {
		for _, id := range raw.IDs {
			byID[id] = append(byID[id], k)
		}
	}
	keys := map[string]bool{}
	var queue []string
	addIDs := func(ids []string) {
		for _, id := range ids {
			if !affected[id] {
				affected[id] = true
				queue = append(queue, byID[id]...)
			}
		}
	}
	for k, raw := range p.cur {
		if o, ok := p.old[k]; !ok || o.Hash != raw.Hash {
			keys[k] = true
			addIDs(raw.IDs)
			addIDs(o.IDs)
		}
	}
	for k, o := range p.old {
		if _, ok := p.cur[k]; !ok {
			addIDs(o.IDs)
		}
	}
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		if !keys[k] {
			keys[k] = true
			addIDs(p.cur[k].IDs)
		}
	}
	return keys
}

// fillData reads from the store the data of the raw records about to be
// normalized that carry none (unchanged ones), and returns recs with data.
// A structural record without data is an error. A raw record whose data
// is not stored (a detail document the bundle knew only by its hash) is
// left out of the run, its record_ids out of affected (their partial
// records stay as they are), and it is marked to be fetched again: the
// next refresh fetches and normalizes it.
func (r *Refresher) fillData(ctx context.Context, p *plan, affected map[string]bool, structs, recs []rappel.RawRecord) ([]rappel.RawRecord, error) {
	need := map[string]bool{}
	for _, set := range [][]rappel.RawRecord{structs, recs} {
		for _, raw := range set {
			if raw.Data == nil {
				need[raw.Key] = true
			}
		}
	}
	if len(need) == 0 {
		return recs, nil
	}
	data := map[string][]byte{}
	if err := r.store().RawData(ctx, p.src.Name, func(raw rappel.RawRecord) error {
		if need[raw.Key] && raw.Data != nil {
			data[raw.Key] = raw.Data
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for i := range structs {
		if structs[i].Data == nil {
			if structs[i].Data = data[structs[i].Key]; structs[i].Data == nil {
				return nil, storage(fmt.Errorf("reading stored raw record %q: it has no data", structs[i].Key))
			}
		}
	}
	kept := recs[:0]
	missing := 0
	for _, raw := range recs {
		if raw.Data == nil {
			raw.Data = data[raw.Key]
		}
		if raw.Data == nil {
			missing++
			for _, id := range raw.IDs {
				delete(affected, id)
			}
			raw.Hash, raw.Version = "", ""
			p.cur[raw.Key] = raw
			continue
		}
		p.cur[raw.Key] = raw
		kept = append(kept, raw)
	}
	if missing > 0 {
		p.st.Followed = ""
		r.Logger.InfoContext(ctx, "raw records known only by their hash are fetched again at the next refresh", "source", p.src.Name, "records", missing)
	}
	return kept, nil
}

// checkSafe refuses a refresh that would empty a source or, once the
// source is live, remove more than MaxRemoval of its records. A source's
// first live refresh replaces the bundled records whatever their number.
func (r *Refresher) checkSafe(p *plan, stored map[string]string, puts map[string]*rappel.Record, dels map[string]bool) error {
	after := len(stored) - len(dels)
	for id := range puts {
		if stored[id] == "" {
			after++
		}
	}
	if after == 0 && p.src.Template == "" {
		return rappel.Fail(rappel.FailureSuspiciousRemoval, fmt.Errorf("the upstream gave no records: refusing to empty the source, which holds %d", len(stored)))
	}
	if !p.st.Feed.Live || len(stored) == 0 {
		return nil
	}
	if share := float64(len(dels)) / float64(len(stored)); share > r.MaxRemoval {
		return rappel.Fail(rappel.FailureSuspiciousRemoval, fmt.Errorf("this refresh would remove %d of the source's %d records (%.0f%%, more than the %.0f%% allowed per refresh): refused as suspicious",
			len(dels), len(stored), 100*share, 100*r.MaxRemoval))
	}
	return nil
}

// addRaw adds to c the raw records to write (new, changed, or fetched for
// a new version; on the first live refresh every one fetched, whose data
// the bundle did not hold; the index alone of those whose hash was
// upgraded) and those to delete. A raw record whose content is unchanged
// keeps the bytes stored, even when the upstream's differ.
func (r *Refresher) addRaw(ctx context.Context, p *plan, c *rappel.SourceChange) error {
	for _, k := range sortedKeys(p.cur) {
		raw := p.cur[k]
		o, ok := p.old[k]
		switch {
		case !ok || o.Hash != raw.Hash || o.Version != raw.Version || !slices.Equal(o.IDs, raw.IDs):
		case !p.st.Feed.Live && raw.Data != nil:
		case p.rehashed[k]:
			raw.Data = nil // the index alone: the stored bytes stay
		default:
			continue
		}
		c.PutRaw = append(c.PutRaw, raw)
	}
	for _, k := range sortedKeys(p.old) {
		if _, ok := p.cur[k]; !ok {
			c.DeleteRaw = append(c.DeleteRaw, k)
		}
	}
	return ctx.Err()
}

// keepProblems updates the source's problems: those of the records
// normalized again are replaced by the new ones, the others kept.
func (r *Refresher) keepProblems(p *plan, affected map[string]bool, full bool, fresh []rappel.Problem) {
	var kept []rappel.Problem
	if !full {
		for _, pr := range p.st.Rejected {
			if pr.RecordID != "" && !affected[pr.RecordID] && !p.attempted[pr.RecordID] {
				kept = append(kept, pr)
			}
		}
	}
	p.st.Rejected = append(append(kept, fresh...), p.problems...)
	// A problem of no record (a document left out) first: /health shows
	// the first few.
	ofRecord := func(pr rappel.Problem) int {
		if pr.RecordID == "" {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(p.st.Rejected, func(a, b rappel.Problem) int { return cmp.Compare(ofRecord(a), ofRecord(b)) })
	p.rejected = len(fresh) + len(p.problems)
}

// write writes c with the state of a successful refresh.
func (r *Refresher) write(ctx context.Context, p *plan, c *rappel.SourceChange, info *rappel.DatasetInfo, now time.Time) error {
	if p.unchanged {
		r.keepProblems(p, nil, false, nil)
		i, err := r.store().DatasetInfo(ctx)
		if err != nil {
			return err
		}
		info = &i
		c.Info = info
	}
	if p.st.Plugin == "" && r.ActivePlugin != nil {
		p.st.Plugin = r.ActivePlugin(p.src.Name)
	}
	info.UpdatedAt, info.Source = now, "feeds"
	st := &p.st
	r.markSucceeded(st, now)
	c.State = *st
	if err := r.store().ApplySource(ctx, c); err != nil {
		return err
	}
	r.setState(st.Feed)
	return nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
