package rappel

import (
	"slices"
	"time"
)

// The figures below are what the node's parts count about themselves for
// /metrics. Each part keeps them as plain numbers and hands out a copy;
// the HTTP layer turns the copy into Prometheus series at each scrape, so
// that no part but the HTTP layer depends on a metrics library, and no
// series appears only after its first event.

// Histogram counts observations (in seconds, or bytes) in buckets. It is
// not safe for concurrent use: its owner guards it with its own lock and
// hands out a Clone.
type Histogram struct {
	// Bounds are the buckets' inclusive upper bounds, ascending; Counts
	// has one count per bound and a last one for what is above them all.
	Bounds []float64
	Counts []uint64
	Count  uint64
	Sum    float64
}

// NewHistogram returns an empty histogram over bounds, which it shares and
// never changes.
func NewHistogram(bounds []float64) Histogram {
	return Histogram{Bounds: bounds, Counts: make([]uint64, len(bounds)+1)}
}

// Observe counts v.
func (h *Histogram) Observe(v float64) {
	i, _ := slices.BinarySearch(h.Bounds, v)
	h.Counts[i]++
	h.Count++
	h.Sum += v
}

// ObserveDuration counts d in seconds.
func (h *Histogram) ObserveDuration(d time.Duration) { h.Observe(d.Seconds()) }

// Clone returns a copy that shares nothing changing with h.
func (h Histogram) Clone() Histogram {
	h.Counts = slices.Clone(h.Counts)
	return h
}

// Cumulative returns the count of observations at or below each bound, as
// Prometheus's buckets count them.
func (h Histogram) Cumulative() map[float64]uint64 {
	out := make(map[float64]uint64, len(h.Bounds))
	var n uint64
	for i, b := range h.Bounds {
		n += h.Counts[i]
		out[b] = n
	}
	return out
}

// StepBuckets are bounds, in seconds, for steps that take from a
// millisecond (a plugin run on a few changed records) to minutes (a whole
// source fetched and normalized on a slow upstream).
var StepBuckets = []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// Refusal classes say, in a word, why a candidate plugin was refused: its
// signature or the trust in its key (unverified), its manifest (manifest),
// the module itself, which does not compile or lacks the ABI (unusable),
// its trial run, which failed (run_failed), or its output, which lost or
// refused records against the active plugin's (output).
const (
	RefusedUnverified = "unverified"
	RefusedManifest   = "manifest"
	RefusedUnusable   = "unusable"
	RefusedRunFailed  = "run_failed"
	RefusedOutput     = "output"
)

// RefusalClasses are every refusal class, for series made at zero.
var RefusalClasses = []string{RefusedUnverified, RefusedManifest, RefusedUnusable, RefusedRunFailed, RefusedOutput}

// PluginStats is what one source's plugins did since the node started.
type PluginStats struct {
	Source string
	// Runs counts the runs of the source's plugins (the active one's on a
	// refresh, a candidate's on its trial), Failures those that failed;
	// RunSeconds times them all, and OutputBytes is what they wrote.
	Runs, Failures uint64
	RunSeconds     Histogram
	OutputBytes    uint64
	// Activations counts the plugins that became the source's (swaps,
	// approvals, a fleet leader's adopted, a new source added); Refusals
	// the candidates refused, by refusal class.
	Activations uint64
	Refusals    map[string]uint64
	// Held is set while a candidate waits for an operator's approval.
	Held bool
}

// StorageStats are the figures of the node's key-value store, read when
// asked (for Pebble, from its own metrics): sizes in bytes.
type StorageStats struct {
	// DiskBytes is the space the store takes on disk: its tables, WAL and
	// other files.
	DiskBytes uint64
	// Compactions counts the compactions since the store opened, and
	// CompactionDebtBytes estimates what compactions still have to rewrite
	// to bring the tree back into shape; InProgressCompactions run now.
	Compactions           uint64
	CompactionDebtBytes   uint64
	InProgressCompactions uint64
	// Flushes counts memtables written out as tables since it opened.
	Flushes uint64
	// WALBytesWritten is what the write-ahead log took in, and WALFiles
	// and WALBytes what it holds now.
	WALBytesWritten uint64
	WALFiles        uint64
	WALBytes        uint64
	// ReadAmplification is how many tables a read may have to look at:
	// the L0 sublevels and the non-empty lower levels.
	ReadAmplification uint64
	// MemtableBytes is the memory the memtables take; L0Files the tables
	// in level 0, which slow reads when they pile up.
	MemtableBytes uint64
	L0Files       uint64
}

// IndexStats are the read index's figures: its in-memory delta over the
// segments, how often the delta was merged into a segment, and how long
// opening a segment took.
type IndexStats struct {
	DeltaRecords int
	Merges       uint64
	// SegmentOpenSeconds times the openings of segment files (at start,
	// and after each merge).
	SegmentOpenSeconds Histogram
	// Checked counts the segments served at start on the word of their
	// stamp whose every byte was then checked in the background.
	// Rebuilding is true while one that failed its check has the index
	// rebuilt from the store: the node is then not ready.
	Checked    uint64
	Rebuilding bool
}

// RefreshSteps name the steps of a source's refresh, in order: fetching
// its documents, normalizing them with its plugin, assembling the records
// and writing them.
var RefreshSteps = []string{"fetch", "normalize", "assemble", "write"}

// RefreshStats is what one source's refreshes did since the node started:
// how long each step took (by RefreshSteps' names), and the records they
// changed and rejected in all.
type RefreshStats struct {
	Steps             map[string]Histogram
	Changed, Rejected uint64
	LastError         time.Time
}
