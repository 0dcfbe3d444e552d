package index

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rappel-ca/rappel"
)

// SegmentOpenBuckets are the bounds, in seconds, of the histogram of
// segment openings: mapping a file and checking its header takes well
// under a millisecond, one on a cold or failing disk much longer.
var SegmentOpenBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5}

// segmentStats are what Stats reports beyond the current view. They have
// their own lock: m.mu is held for a whole merge, and a scrape must not
// wait for one.
type segmentStats struct {
	merges atomic.Uint64
	// checked counts the background checks passed (verifyLater);
	// rebuilding is set while one that failed has the index rebuilt.
	checked    atomic.Uint64
	rebuilding atomic.Bool
	mu         sync.Mutex
	opens      rappel.Histogram
}

// opened times the opening of one segment that began at start.
func (s *segmentStats) opened(start time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opens.Counts == nil {
		s.opens = rappel.NewHistogram(SegmentOpenBuckets)
	}
	s.opens.ObserveDuration(time.Since(start))
}

// Stats returns the read index's figures for /metrics: the records in the
// current view's delta, the merges of a delta into a new base since Open,
// and the segment openings' durations.
func (m *Segments) Stats() rappel.IndexStats {
	st := rappel.IndexStats{Merges: m.stats.merges.Load(), Checked: m.stats.checked.Load(), Rebuilding: m.stats.rebuilding.Load()}
	if d := m.Catalog.Current().delta; d != nil {
		st.DeltaRecords = d.Len()
	}
	m.stats.mu.Lock()
	defer m.stats.mu.Unlock()
	if m.stats.opens.Counts == nil {
		st.SegmentOpenSeconds = rappel.NewHistogram(SegmentOpenBuckets)
	} else {
		st.SegmentOpenSeconds = m.stats.opens.Clone()
	}
	return st
}
