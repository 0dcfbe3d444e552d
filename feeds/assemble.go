package feeds

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// assembled is what re-assembling the records a refresh touched gives.
type assembled struct {
	put []*rappel.Record
	del []string
	// added are the record_ids that had no record before; updated those
	// that changed, and archived those whose status became archived.
	added, updated, archived []string
	problems                 []rappel.Problem
	// delta is the change in the number of records.
	delta int
}

// assemble merges, for every record_id whose partial record src changed
// (puts) or removed (dels), the partial records of every source in
// rappel.SourcePrecedence order. A record_id left without a partial record
// from a source that creates records is removed. A merged record that fails
// validation is reported, and its previous version, if any, kept serving.
// A record whose only change would be its fetched_at is left alone.
func (r *Refresher) assemble(ctx context.Context, src *Source, puts map[string]*rappel.Record, dels map[string]bool, now time.Time) (*assembled, error) {
	ids := append(sortedKeys(puts), sortedKeys(dels)...)
	slices.Sort(ids)
	out := &assembled{}
	if len(ids) == 0 {
		return out, nil
	}
	creates := map[string]bool{} // record_ids with a partial record of a creating source
	var parts [][]*rappel.Record
	for _, s := range r.assemblyOrder() {
		var m map[string]*rappel.Record
		if s.Name == src.Name {
			m = puts
		} else {
			var err error
			if m, err = r.store().Partials(ctx, s.Name, ids); err != nil {
				return nil, err
			}
		}
		part := make([]*rappel.Record, 0, len(m))
		for _, id := range sortedKeys(m) {
			part = append(part, m[id])
			if !s.Enriches {
				creates[id] = true
			}
		}
		parts = append(parts, part)
	}
	recs, problems := rappel.Assemble(now, parts...)
	byID := make(map[string]*rappel.Record, len(recs))
	for _, rec := range recs {
		byID[rec.RecordID] = rec
	}
	why := map[string]string{}
	for _, pr := range problems {
		why[pr.RecordID] = pr.Reason
	}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		prev, err := r.storedRecord(ctx, id)
		if err != nil {
			return nil, err
		}
		rec := byID[id]
		switch {
		case !creates[id]:
			if prev != nil {
				out.del = append(out.del, id)
				out.delta--
			}
		case rec == nil:
			reason := why[id]
			if prev != nil {
				reason += " The previous version keeps serving."
			}
			out.problems = append(out.problems, rappel.Problem{Source: src.Name, RecordID: id, Reason: mergeProblem + reason})
		case prev == nil:
			out.put = append(out.put, rec)
			out.added = append(out.added, id)
			out.delta++
		case !sameButFetched(rec, prev):
			out.put = append(out.put, rec)
			if rappel.Archives(prev, rec) {
				out.archived = append(out.archived, id)
			} else {
				out.updated = append(out.updated, id)
			}
		}
	}
	return out, nil
}

// mergeProblem starts the reason of a problem found after merging.
const mergeProblem = "After merging the sources: "

// settleMergeProblems drops the problems found after merging of records
// that now merge fine, or are gone, from every source's state. A record
// whose required fields come from two sources (a notice whose dates are in
// its detail document) fails to merge when the first source brings it and
// merges fine once the second has: its problem must not outlive that.
func (r *Refresher) settleMergeProblems(ctx context.Context) (wrote bool, err error) {
	for _, src := range r.Sources {
		st, err := r.store().SourceState(ctx, src.Name)
		if err != nil {
			return wrote, err
		}
		kept := st.Rejected[:0:0]
		for _, p := range st.Rejected {
			if strings.HasPrefix(p.Reason, mergeProblem) {
				ok, err := r.mergesFine(ctx, p.RecordID)
				if err != nil {
					return wrote, err
				}
				if ok {
					continue
				}
			}
			kept = append(kept, p)
		}
		if len(kept) == len(st.Rejected) {
			continue
		}
		st.Rejected = kept
		st.Feed.Rejected = len(kept)
		st.Feed.Problems = kept[:min(len(kept), maxProblemsShown)]
		if err := r.store().ApplySource(ctx, &rappel.SourceChange{State: st}); err != nil {
			return wrote, err
		}
		wrote = true
		r.setStoredState(st.Feed)
	}
	return wrote, nil
}

// mergesFine reports that the partial records of id merge into a valid
// record, or that none is left.
func (r *Refresher) mergesFine(ctx context.Context, id string) (bool, error) {
	var parts [][]*rappel.Record
	n := 0
	for _, s := range r.assemblyOrder() {
		m, err := r.store().Partials(ctx, s.Name, []string{id})
		if err != nil {
			return false, err
		}
		if p := m[id]; p != nil {
			parts = append(parts, []*rappel.Record{p})
			n++
		}
	}
	if n == 0 {
		return true, nil
	}
	recs, _ := rappel.Assemble(r.Now(), parts...)
	return len(recs) == 1, nil
}

// assemblyOrder is the sources in rappel.SourcePrecedence order, then any
// other configured ones in their order. A shipped source that is not
// configured still counts: its stored partial records (the bundle's) are
// merged too.
func (r *Refresher) assemblyOrder() []*Source {
	out := make([]*Source, 0, len(r.Sources))
	for _, name := range rappel.SourcePrecedence {
		if i := slices.IndexFunc(r.Sources, func(s *Source) bool { return s.Name == name }); i >= 0 {
			out = append(out, r.Sources[i])
		} else {
			out = append(out, &Source{Name: name, Enriches: name == Detail("").Name})
		}
	}
	for _, s := range r.Sources {
		if !slices.Contains(rappel.SourcePrecedence, s.Name) {
			out = append(out, s)
		}
	}
	return out
}

// storedRecord returns the assembled record with id, or nil.
func (r *Refresher) storedRecord(ctx context.Context, id string) (*rappel.Record, error) {
	rec, err := r.store().Record(ctx, id)
	if rappel.ErrorCode(err) == rappel.ENOTFOUND {
		return nil, nil
	}
	return rec, err
}

// sameButFetched reports that rec and prev differ at most in fetched_at.
func sameButFetched(rec, prev *rappel.Record) bool {
	c := *rec
	c.FetchedAt = prev.FetchedAt
	a, err1 := json.Marshal(&c)
	b, err2 := json.Marshal(prev)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}
