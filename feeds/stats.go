package feeds

import (
	"maps"
	"time"

	"github.com/rappel-ca/rappel"
)

// countRefresh adds a refresh of source to its figures for /metrics: the
// steps it completed, timed (a step that failed, or was not run, such as
// normalizing when nothing changed upstream, is not counted: its time is
// in the refresh's own duration), and, when it succeeded, the
// records it changed and rejected, or when it failed, when.
func (r *Refresher) countRefresh(source string, p *plan, failed bool, at time.Time) {
	r.smu.Lock()
	defer r.smu.Unlock()
	if r.stats == nil {
		r.stats = map[string]*rappel.RefreshStats{}
	}
	st := r.stats[source]
	if st == nil {
		fresh := newRefreshStats()
		st = &fresh
		r.stats[source] = st
	}
	if failed {
		st.LastError = at
	}
	if p == nil {
		return
	}
	for step, d := range map[string]time.Duration{"fetch": p.took.fetch, "normalize": p.took.normalize, "assemble": p.took.assemble, "write": p.took.write} {
		if d > 0 {
			h := st.Steps[step]
			h.ObserveDuration(d)
			st.Steps[step] = h
		}
	}
	if !failed {
		st.Changed += uint64(max(p.st.Feed.LastChanged, 0))
		st.Rejected += uint64(max(p.rejected, 0))
	}
}

// refreshStats returns a copy of source's figures, empty when it has had no
// refresh yet. r.smu must be held.
func (r *Refresher) refreshStats(source string) rappel.RefreshStats {
	st := r.stats[source]
	if st == nil {
		return newRefreshStats()
	}
	out := *st
	out.Steps = maps.Clone(st.Steps)
	for k, h := range out.Steps {
		out.Steps[k] = h.Clone()
	}
	return out
}

// newRefreshStats returns figures with every step's histogram empty.
func newRefreshStats() rappel.RefreshStats {
	st := rappel.RefreshStats{Steps: make(map[string]rappel.Histogram, len(rappel.RefreshSteps))}
	for _, step := range rappel.RefreshSteps {
		st.Steps[step] = rappel.NewHistogram(rappel.StepBuckets)
	}
	return st
}
