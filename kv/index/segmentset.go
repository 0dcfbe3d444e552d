package index

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/segment"
)

// ChangeLog is what Segments needs of the store: its records, the ordered
// log of the record_ids each write changed, and a place for the index's
// own state, committed durably.
type ChangeLog interface {
	rappel.RecordStore
	// ChangeSeq returns the store's generation (a whole-dataset load
	// starts a new one) and the sequence of its last change.
	ChangeSeq(ctx context.Context) (gen, seq uint64, err error)
	// Changes calls fn for each change after seq after in generation
	// gen, in order; an error when gen is no longer current.
	Changes(ctx context.Context, gen, after uint64, fn func(seq uint64, id string, deleted bool) error) error
	// TrimChanges forgets the changes up to seq upTo.
	TrimChanges(ctx context.Context, upTo uint64) error
	// IndexState and PutIndexState read and durably write the list of
	// live segments (nil when none was written).
	IndexState(ctx context.Context) ([]byte, error)
	PutIndexState(ctx context.Context, b []byte) error
}

// BundleBase names the base segment embedded in the binary in the state.
const BundleBase = "bundle"

// Steps of a commit of a new set of segments, for Segments.onStep.
const (
	StepStateWrite = "state-write" // the new segment file is in place, the state not written
	StepStateSaved = "state-saved" // the state names the new set, the old files not removed
	StepMerge      = "merge"       // a merge into a new base begins
)

// Segments keeps a catalog in step with a store through segment files: a
// base segment, and a delta segment of the records changed since, with the
// base documents they hide. At start it opens the set the store's index
// state names; after each refresh it reads the changed record_ids from the
// store's change log and writes a new delta of them (and the old delta's
// other records), which costs in proportion to the change, not the
// corpus; when the delta grows past MergeAt it folds everything into a new
// base, rebuilt from the store.
//
// Every new file is written under a temporary name, synced and renamed
// before the state naming it is committed in the store, and the files of
// the old set are removed after: a crash at any step leaves the store
// naming a complete set, and files it does not name are removed at the
// next start. A segment that cannot be opened (missing, corrupt, of
// another content version) is rebuilt from the store, never served.
type Segments struct {
	Dir     string    // where the segment files live
	Store   ChangeLog // the records and their change log
	Catalog *Catalog  // swapped after each change
	// Bundle is the bundle's base segment (bundle.IndexDir: unpacked from
	// the binary into the data dir and mapped), or nil, and
	// BundleVersion the version of the bundle whose records it indexes:
	// a store loaded from that bundle, with no segments of its own yet,
	// is served from it with the changes since the load as a delta.
	Bundle        []byte
	BundleVersion string
	// MergeAt reports whether a delta of delta records over a base of
	// base records is folded into a new base; nil is DefaultMergeAt.
	MergeAt func(base, delta int) bool
	Log     *slog.Logger

	// onStep, when not nil, is told of each step of writing a segment
	// (segment.StepWritten…) and of committing a set (StepStateWrite…):
	// crash tests stop the process there. Tests set it; it is nil in
	// production.
	onStep func(step string)
	// spillLimit, when not 0, makes a base build's temporary files fail
	// as on a full disk past that many bytes. Tests set it.
	spillLimit int64
	// runBudget, when not 0, is the bytes of postings a base build holds
	// before writing them out as runs, in place of the package's runBudget. Tests set it.
	runBudget int64

	mu      sync.Mutex
	state   segmentState
	merging sync.WaitGroup // the background merge, when one runs
	merge   bool           // a merge is running or asked for
	stop    context.CancelFunc
	ctx     context.Context
	stats   segmentStats
	// unchecked are the segments Open opened on their stamp's word, for
	// verifyLater once the view is swapped in.
	unchecked []*Snapshot
}

// segmentState is the index's record in the store: the live set of
// segments and the change it reflects.
type segmentState struct {
	Base       string `json:"base"`        // a file in Dir, or BundleBase
	BaseDigest string `json:"base_digest"` // hex SHA-256 of the base's content
	Delta      string `json:"delta,omitempty"`
	Deleted    []byte `json:"deleted,omitempty"` // hidden base documents, portable roaring
	Gen        uint64 `json:"gen"`
	Seq        uint64 `json:"seq"`
}

// DefaultMergeAt folds a delta into the base once it holds more than
// 1,000 records or 2% of the base, whichever is more: a delta costs every
// refresh its rebuild (about 0.1 ms a record) and every query a second
// lookup, a merge a rebuild of the whole base.
func DefaultMergeAt(base, delta int) bool { return delta > max(1000, base/50) }

func (m *Segments) log() *slog.Logger {
	if m.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return m.Log
}

// Open opens the live set of segments the store names, catches up with the
// changes since, and swaps the view in. Without a usable set it rebuilds
// the base from the store.
func (m *Segments) Open(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := os.MkdirAll(m.Dir, 0o755); err != nil {
		return fmt.Errorf("opening the read index: %w", err)
	}
	defer func() { m.unchecked = nil }()
	st, v, why := m.openState(ctx)
	if v == nil && m.Bundle != nil {
		st, v, why = m.fromBundle(ctx, why)
	}
	if v == nil {
		m.log().Info("rebuilding the read index from the store", "why", why)
		return m.rebuild(ctx)
	}
	m.state = st
	m.removeStray()
	m.Catalog.SwapView(v.WithChangePos(st.Gen, st.Seq))
	m.verifyLater(m.unchecked)
	return m.catchUp(ctx)
}

// openState reads the store's state and opens its segments, or says why
// it cannot.
func (m *Segments) openState(ctx context.Context) (segmentState, *View, string) {
	var st segmentState
	raw, err := m.Store.IndexState(ctx)
	switch {
	case err != nil:
		return st, nil, err.Error()
	case raw == nil:
		return st, nil, "the store names no index segments"
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, nil, "the index state is unreadable: " + err.Error()
	}
	gen, _, err := m.Store.ChangeSeq(ctx)
	if err != nil {
		return st, nil, err.Error()
	}
	if gen != st.Gen {
		return st, nil, "the store's records were replaced since the segments were written"
	}
	v, err := m.openSet(ctx, st)
	if err != nil {
		return st, nil, err.Error()
	}
	return st, v, ""
}

// fromBundle opens the embedded base segment as the index of a store
// loaded from its bundle: the store's generation began with that load, so
// every change of the generation is applied over it.
func (m *Segments) fromBundle(ctx context.Context, why string) (segmentState, *View, string) {
	info, err := m.Store.DatasetInfo(ctx)
	if err != nil {
		return segmentState{}, nil, err.Error()
	}
	if info.Bundle != m.BundleVersion {
		return segmentState{}, nil, why
	}
	gen, _, err := m.Store.ChangeSeq(ctx)
	if err != nil {
		return segmentState{}, nil, err.Error()
	}
	base, err := m.openBundle()
	if err != nil {
		return segmentState{}, nil, "the embedded index: " + err.Error()
	}
	d := base.Digest()
	st := segmentState{Base: BundleBase, BaseDigest: hex.EncodeToString(d[:]), Gen: gen}
	v := NewView(base, nil, nil, info)
	if err := m.commit(ctx, st); err != nil {
		return st, nil, err.Error()
	}
	return st, v, ""
}

// openSet opens the segments of st as a view.
func (m *Segments) openSet(ctx context.Context, st segmentState) (*View, error) {
	base, err := m.openBase(st)
	if err != nil {
		return nil, err
	}
	deleted := roaring.New()
	if len(st.Deleted) > 0 {
		if _, err := deleted.FromUnsafeBytes(slices.Clone(st.Deleted)); err != nil {
			return nil, fmt.Errorf("the index state's hidden documents: %w", err)
		}
		if !deleted.IsEmpty() && int(deleted.Maximum()) >= base.n {
			return nil, errors.New("the index state hides documents past the base's")
		}
	}
	var delta *Snapshot
	if st.Delta != "" {
		if delta, err = m.openFile(st.Delta); err != nil {
			return nil, err
		}
	}
	info, err := m.Store.DatasetInfo(ctx)
	if err != nil {
		return nil, err
	}
	return NewView(base, delta, deleted, info), nil
}

// openBase opens the base segment of st and checks it is the one st names.
func (m *Segments) openBase(st segmentState) (*Snapshot, error) {
	var s *Snapshot
	var err error
	if st.Base == BundleBase {
		if m.Bundle == nil {
			return nil, errors.New("the index state names the embedded index, and the binary has none")
		}
		s, err = m.openBundle()
	} else {
		s, err = m.openFile(st.Base)
	}
	if err != nil {
		return nil, err
	}
	if d := s.Digest(); hex.EncodeToString(d[:]) != st.BaseDigest {
		return nil, fmt.Errorf("the base segment %s is not the one the index state names", st.Base)
	}
	return s, nil
}

// openBundle opens the bundle's base segment prechecked: the bundle step
// checked it in full as it wrote it, and its bytes were hashed against the
// bundle's manifest as they were unpacked, or are the binary's own. They
// are checked again in the background once it serves (verifyLater).
func (m *Segments) openBundle() (*Snapshot, error) {
	start := time.Now()
	s, err := openSegmentBytesChecked("bundle", m.Bundle, m.Catalog.Options)
	m.stats.opened(start)
	if err == nil {
		m.unchecked = append(m.unchecked, s)
	}
	return s, err
}

// openFile maps the segment file name in Dir. Its mapping is released
// once the snapshot is unreachable: readers of an older view keep it. A
// file is checked in full unless its stamp says it was and it is
// unchanged since (checkstamp.go); then it is checked in the background.
func (m *Segments) openFile(name string) (*Snapshot, error) {
	if name != filepath.Base(name) || !strings.HasSuffix(name, ".seg") {
		return nil, fmt.Errorf("the index state names %q, not a segment file", name)
	}
	path := filepath.Join(m.Dir, name)
	start := time.Now()
	var s *Snapshot
	var err error
	if st, ok := stamped(path); ok {
		if s, err = openSegmentChecked(path, m.Catalog.Options); err == nil {
			if d := s.Digest(); hex.EncodeToString(d[:]) != st.Digest {
				_ = s.Close()
				s = nil // another file of the same size and time: checked in full
			} else {
				m.unchecked = append(m.unchecked, s)
			}
		}
	}
	if s == nil && err == nil {
		if s, err = OpenSegment(path, m.Catalog.Options); err == nil {
			if err := writeStamp(path, s.Digest()); err != nil {
				m.log().Warn("could not stamp a checked segment: the next start checks it again", "segment", name, "err", err)
			}
		}
	}
	m.stats.opened(start)
	if err != nil {
		return nil, err
	}
	runtime.AddCleanup(s, func(f *segment.File) { _ = f.Close() }, s.file)
	return s, nil
}

// DataChanged follows a refresh: it is a rappel.ChangeListener. Its work
// runs at a lower priority than the searches (lowPriority): a refresh
// may wait for a busy core, a search should not.
func (m *Segments) DataChanged(ctx context.Context, _ bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return lowPriority(func() error { return m.catchUp(ctx) })
}

// catchUp applies the store's changes since the state's: a new delta, or a
// new base when the delta would pass MergeAt or the store's records were
// replaced. m.mu must be held.
func (m *Segments) catchUp(ctx context.Context) error { return m.catchUpAfter(ctx, false) }

// catchUpAfter is catchUp; rebuilt says a rebuild just ran, which a
// failure to read the changes then does not repeat.
func (m *Segments) catchUpAfter(ctx context.Context, rebuilt bool) error {
	gen, seq, err := m.Store.ChangeSeq(ctx)
	if err != nil {
		return fmt.Errorf("reading the store's changes: %w", err)
	}
	if gen != m.state.Gen {
		if rebuilt {
			return errors.New("the store's records were replaced twice while the read index was rebuilt")
		}
		m.log().Info("rebuilding the read index: the store's records were replaced")
		return m.rebuild(ctx)
	}
	info, err := m.Store.DatasetInfo(ctx)
	if err != nil {
		return err
	}
	cur := m.Catalog.Current()
	if seq == m.state.Seq {
		m.Catalog.SwapView(cur.WithInfo(info))
		return nil
	}
	start := time.Now()
	changed := map[string]bool{}
	last := m.state.Seq
	if err := m.Store.Changes(ctx, gen, m.state.Seq, func(s uint64, id string, _ bool) error {
		changed[id], last = true, s
		return nil
	}); err != nil {
		if ctx.Err() != nil || rebuilt {
			return fmt.Errorf("reading the store's changes: %w", err)
		}
		// The store's records were replaced, or the changes since the set
		// are no longer all kept: only a rebuild knows what changed.
		m.log().Info("rebuilding the read index", "why", err.Error())
		return m.rebuild(ctx)
	}
	base, deleted := cur.base, cur.deleted.Clone()
	var recs []*rappel.Record
	if d := cur.delta; d != nil {
		for doc := range d.n {
			if id := d.ids.view(doc); !changed[id] {
				r, ok := d.Record(id)
				if !ok {
					return fmt.Errorf("reading record %s of the delta segment", id)
				}
				recs = append(recs, r)
			}
		}
	}
	for id := range changed {
		if doc, ok := base.doc(id); ok {
			deleted.Add(uint32(doc))
		}
		r, err := m.Store.Record(ctx, id)
		if rappel.ErrorCode(err) == rappel.ENOTFOUND {
			continue // removed
		}
		if err != nil {
			return fmt.Errorf("reading changed record %s: %w", id, err)
		}
		recs = append(recs, r)
	}
	delta, err := BuildOptions(recs, info, m.Catalog.Options)
	if err != nil {
		return err
	}
	deleted.RunOptimize()
	hidden, err := deleted.ToBytes()
	if err != nil {
		return err
	}
	name := fmt.Sprintf("delta-%d-%d.seg", gen, last)
	if err := m.writeSegment(delta, name); err != nil {
		return err
	}
	mapped, err := m.openFile(name)
	if err != nil {
		return err
	}
	st := m.state
	st.Delta, st.Deleted, st.Seq = name, hidden, last
	if err := m.commit(ctx, st); err != nil {
		return err
	}
	m.Catalog.SwapView(NewView(base, mapped, deleted, info).WithChangePos(st.Gen, st.Seq))
	m.removeStray()
	m.log().Info("read index updated", "changed", len(changed), "delta_records", delta.n, "hidden", deleted.GetCardinality(),
		"took", time.Since(start).Round(time.Millisecond))
	if m.mergeAt(base.n, delta.n) && !m.merge {
		m.startMerge()
	}
	return nil
}

// startMerge folds the delta into a new base in the background: readers
// keep the current view, and the next refresh waits for the merge. m.mu
// must be held.
func (m *Segments) startMerge() {
	if m.ctx == nil {
		m.ctx, m.stop = context.WithCancel(context.Background())
	}
	m.merge = true
	m.merging.Add(1)
	go func() {
		defer m.merging.Done()
		m.mu.Lock()
		defer m.mu.Unlock()
		m.merge = false
		if m.ctx.Err() != nil {
			return
		}
		m.step(StepMerge)
		m.log().Info("merging the read index's delta into a new base", "delta_records", m.Catalog.Current().delta.Len())
		if err := lowPriority(func() error { return m.rebuild(m.ctx) }); err != nil {
			m.log().Error("merging the read index failed; serving the base and its delta", "err", err)
			return
		}
		m.stats.merges.Add(1)
	}()
}

// Close waits for a background merge to finish, asking it to stop first.
func (m *Segments) Close() error {
	m.mu.Lock()
	if m.stop != nil {
		m.stop()
	}
	m.mu.Unlock()
	m.merging.Wait()
	return nil
}

// Wait waits for a background merge, if one runs, to finish.
func (m *Segments) Wait() { m.merging.Wait() }

func (m *Segments) mergeAt(base, delta int) bool {
	if m.MergeAt != nil {
		return m.MergeAt(base, delta)
	}
	return DefaultMergeAt(base, delta)
}

// rebuild builds a new base from every record of the store, writes and
// maps it, commits it with no delta, and forgets the changes it holds.
// m.mu must be held.
func (m *Segments) rebuild(ctx context.Context) error {
	start := time.Now()
	gen, seq, err := m.Store.ChangeSeq(ctx)
	if err != nil {
		return err
	}
	info, err := m.Store.DatasetInfo(ctx)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("base-%d-%d.seg", gen, seq)
	if err := m.buildBase(ctx, info, filepath.Join(m.Dir, name)); err != nil {
		return fmt.Errorf("rebuilding the read index: %w", err)
	}
	// What the build allocated is garbage now: hand it back at once rather
	// than keep the node's resident size at its peak.
	debug.FreeOSMemory()
	base, err := m.openFile(name)
	if err != nil {
		return fmt.Errorf("rebuilding the read index: %w", err)
	}
	d := base.Digest()
	st := segmentState{Base: name, BaseDigest: hex.EncodeToString(d[:]), Gen: gen, Seq: seq}
	if err := m.commit(ctx, st); err != nil {
		return err
	}
	m.Catalog.SwapView(NewView(base, nil, nil, info).WithChangePos(gen, seq))
	m.removeStray()
	if err := m.Store.TrimChanges(ctx, seq); err != nil {
		m.log().Warn("could not forget the changes the new base holds", "err", err)
	}
	m.log().Info("read index rebuilt", "records", base.n, "took", time.Since(start).Round(time.Millisecond))
	// Changes made while the base was built come after seq.
	return m.catchUpAfter(ctx, true)
}

// writeSegment writes snap as the segment file name in Dir.
func (m *Segments) writeSegment(snap *Snapshot, name string) error {
	return segment.WriteFile(filepath.Join(m.Dir, name), snap.fill, m.onStep)
}

// step tells onStep of a step, when set.
func (m *Segments) step(name string) {
	if m.onStep != nil {
		m.onStep(name)
	}
}

// commit makes st the store's index state, durably, and m's.
func (m *Segments) commit(ctx context.Context, st segmentState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	m.step(StepStateWrite)
	if err := m.Store.PutIndexState(ctx, b); err != nil {
		return fmt.Errorf("committing the read index's segments: %w", err)
	}
	m.step(StepStateSaved)
	m.state = st
	return nil
}

// removeStray removes the files of Dir the state does not name: the
// segments of older sets, and what a crash left half written.
func (m *Segments) removeStray() {
	entries, err := os.ReadDir(m.Dir)
	if err != nil {
		return
	}
	removed := false
	for _, e := range entries {
		if n := strings.TrimSuffix(e.Name(), checkedSuffix); n != m.state.Base && n != m.state.Delta {
			if err := os.Remove(filepath.Join(m.Dir, e.Name())); err == nil {
				removed = true
			}
		}
	}
	if removed {
		_ = segment.SyncDir(m.Dir)
	}
}
