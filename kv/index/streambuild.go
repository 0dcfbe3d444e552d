package index

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/jsonx"
	"github.com/rappel-ca/rappel/kv/segment"
)

// A base segment is built from the store without holding the records: a
// million of them decoded take several times the index they make. The
// build reads the store twice over, in effect:
//
//  1. a scan of the store, in its (record_id) order, encodes each record's
//     JSON as the segment keeps it and writes it to a temporary file,
//     keeping of the record only its event_date and record_id;
//  2. those keys, sorted, give the document order; each record's JSON is
//     read back from the file in that order, copied to a second file (the
//     segment's JSON section, in order), and decoded to be indexed; the
//     postings are written out as sorted runs as they grow (spill.go),
//     which the segment writer merges.
//
// What stays in memory is what the segment holds apart from the JSON and
// the postings: columns and bitmaps, a fraction of the records, and at
// most runBudget of postings. The segment is the one BuildOptions makes
// of the same records, byte for byte.

// spillChunk is how much JSON a build keeps before writing it out.
const spillChunk = 1 << 20

// docKey is what the first pass keeps of a record: what orders it, and
// where its JSON is among the records in the store's order.
type docKey struct {
	date, id string
	rec      int32
}

// streamBuild is a base segment's build from the store.
type streamBuild struct {
	dir string
	// limit, when not 0, is how many bytes the build's temporary files
	// may hold before a write fails as a full disk does: tests set it.
	limit   int64
	written atomic.Int64
	// budget is the bytes of postings both streams hold at most.
	budget int64

	mu    sync.Mutex // the streams' runs are created beside each other
	files []*os.File

	byStore  encoded // the records' JSON in the store's order
	storeOut *os.File
	keys     []docKey
}

// streamedJSON is the JSON section of a streamed snapshot: in a file
// rather than in memory, with the digest of its records worked out as it
// was written.
type streamedJSON struct {
	file   *os.File
	digest [32]byte
}

// buildGCPercent is the collector's target (GOGC) while a base is built.
const buildGCPercent = 50

// buildBase builds the snapshot of every record of store, streaming, and
// writes it as the segment file at path (segment.WriteFile).
func (m *Segments) buildBase(ctx context.Context, info rappel.DatasetInfo, path string) (err error) {
	// The build's heap is mostly what it keeps until it writes (the
	// postings and columns: about 1 GB at a million records), and Go
	// lets a heap grow to twice what it keeps before collecting: about
	// 2 GB at the peak. Collecting at half again instead keeps the peak
	// near 1.5 GB for more of the collector's time during a build that
	// runs once, or in the background (RATIONALE.md, the read index).
	defer debug.SetGCPercent(debug.SetGCPercent(buildGCPercent))
	b := &streamBuild{dir: m.Dir, limit: m.spillLimit, budget: cmp.Or(m.runBudget, runBudget)}
	defer b.cleanup()
	if b.storeOut, err = b.create(); err != nil {
		return err
	}
	enc := b.encodeBeside()
	err = m.Store.ForEachRecord(ctx, func(r *rappel.Record) error { return b.add(r, enc) })
	if err := enc.wait(); err != nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("reading records: %w", err)
	}
	if err := b.spill(&b.byStore, b.storeOut, 0); err != nil {
		return err
	}
	s, err := b.index(ctx, info, m.Catalog.Options)
	if err != nil {
		return err
	}
	rs := s.text.runs
	m.log().Info("read index: records indexed, merging the runs of postings", "records", s.n,
		"runs_en", len(rs.streams[streamEN]), "runs_fr", len(rs.streams[streamFR]))
	return segment.WriteFile(path, s.fill, m.onStep)
}

// add is the first pass's step for r: its key kept, its JSON encoded by
// enc.
func (b *streamBuild) add(r *rappel.Record, enc *beside) error {
	if len(b.keys) == math.MaxInt32 {
		return fmt.Errorf("more than %d records, past what a segment numbers", math.MaxInt32)
	}
	b.keys = append(b.keys, docKey{date: r.EventDate, id: r.RecordID, rec: int32(len(b.keys))})
	return enc.add(r)
}

// encodeBeside encodes the records of the first pass, in the store's
// order, and writes their JSON out, on a goroutine of its own: the scan
// decodes the store's values while it encodes the ones before, so that
// the pass uses two cores rather than one.
func (b *streamBuild) encodeBeside() *beside {
	return goBeside(1, func(int) func(*rappel.Record) error {
		return func(r *rappel.Record) error {
			if err := b.byStore.add(r); err != nil {
				return err
			}
			return b.spill(&b.byStore, b.storeOut, spillChunk)
		}
	}, nil)
}

// index is the second pass: the records in document order, their JSON
// copied out to the segment's JSON file, the rest indexed.
func (b *streamBuild) index(ctx context.Context, info rappel.DatasetInfo, opts Options) (*Snapshot, error) {
	slices.SortFunc(b.keys, func(x, y docKey) int {
		if docBefore(x.date, x.id, y.date, y.id) {
			return -1
		}
		if x.date == y.date && x.id == y.id {
			return 0
		}
		return 1
	})
	out, err := b.create()
	if err != nil {
		return nil, err
	}
	s, tb, sb := newBuild(len(b.keys), info, opts)
	tb.lensOnly = true
	s.enc.offs = make([]uint32, 0, 5*len(b.keys)+1)
	runs := &termRuns{}
	text := b.indexTextBeside(tb, runs)
	defer func() { _ = text.wait() }() // on an early return: the error is another
	sum := sha256.New()
	var js []byte
	for doc, k := range b.keys {
		b.keys[doc] = docKey{} // the strings are garbage from here on
		if doc%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err() // a merge asked to stop: the node closes
		}
		if err := b.copyJSON(&s.enc, k.rec); err != nil {
			return nil, err
		}
		js = append(s.enc.appendLast(js[:0]), '\n')
		sum.Write(js)
		r := &rappel.Record{}
		if err := jsonx.Unmarshal(js, r); err != nil {
			return nil, fmt.Errorf("decoding record %q back from its JSON: %w", k.id, err)
		}
		s.addDoc(int32(doc), r, sb)
		if err := text.add(r); err != nil {
			return nil, err
		}
		if err := b.spill(&s.enc, out, spillChunk); err != nil {
			return nil, err
		}
	}
	if err := text.wait(); err != nil {
		return nil, err
	}
	tb.ix.runs = runs
	if err := b.spill(&s.enc, out, 0); err != nil {
		return nil, err
	}
	b.keys, b.byStore = nil, encoded{}
	st := &streamedJSON{file: out}
	sum.Sum(st.digest[:0])
	s.streamed = st
	if err := s.finishBuild(tb, sb); err != nil {
		return nil, err
	}
	return s, nil
}

// indexTextBeside indexes the text of records, given in document order,
// on goroutines of their own, one per stream: it is half a build's work,
// the streams share nothing but the analyzer, and the rest of the build
// (decoding, filters, statistics) needs none of it. Each writes its
// stream's postings out as runs (spill.go) as they reach its half of the
// budget, and the rest once the last record is in, to runs.
func (b *streamBuild) indexTextBeside(tb *textBuilder, runs *termRuns) *beside {
	ones, writers := [2]*textBuilder{}, [2]*runWriter{}
	return goBeside(2, func(stream int) func(*rappel.Record) error {
		one := &textBuilder{ix: tb.ix, docDeltas: true}
		one.skip[1-stream] = true
		w := &runWriter{b: b, stream: stream}
		ones[stream], writers[stream] = one, w
		doc := int32(0)
		return func(r *rappel.Record) error {
			indexText(one, doc, r)
			doc++
			if one.held >= b.budget/2 {
				return w.spill(one)
			}
			return nil
		}
	}, func(stream int) error {
		err := writers[stream].spill(ones[stream])
		runs.streams[stream] = writers[stream].runs
		return err
	})
}

// beside hands records over, in order and in batches, to workers on
// goroutines of their own, each of which sees every record.
type beside struct {
	batch  []*rappel.Record
	next   []chan []*rappel.Record
	done   sync.WaitGroup
	closed bool
	errs   []error // each worker's first error: it then takes no more
	failed atomic.Bool
}

// besideBatch is how many records are handed over at once.
const besideBatch = 256

// goBeside starts the workers: worker(i) returns the function that worker
// i calls with each record; finish, when not nil, is called on worker i's
// goroutine after its last record, unless it failed.
func goBeside(workers int, worker func(i int) func(*rappel.Record) error, finish func(i int) error) *beside {
	t := &beside{next: make([]chan []*rappel.Record, workers), errs: make([]error, workers)}
	for i := range workers {
		next := make(chan []*rappel.Record, 8)
		t.next[i] = next
		work := worker(i)
		t.done.Go(func() {
			for batch := range next {
				for _, r := range batch {
					if t.errs[i] != nil {
						break // drained, so that the sender never blocks
					}
					if t.errs[i] = work(r); t.errs[i] != nil {
						t.failed.Store(true)
					}
				}
			}
			if t.errs[i] == nil && finish != nil {
				t.errs[i] = finish(i)
			}
		})
	}
	return t
}

// add hands r, the next record, over, or returns the error that stopped
// a worker.
func (t *beside) add(r *rappel.Record) error {
	if t.failed.Load() {
		return t.wait()
	}
	t.batch = append(t.batch, r)
	if len(t.batch) == besideBatch {
		t.send()
	}
	return nil
}

// send hands the batch over to every worker.
func (t *beside) send() {
	for _, next := range t.next {
		next <- t.batch
	}
	t.batch = make([]*rappel.Record, 0, besideBatch)
}

// wait hands the last records over, waits for every worker to be done
// with them, and returns their errors. Once is enough; more calls only
// wait.
func (t *beside) wait() error {
	if !t.closed {
		if len(t.batch) > 0 {
			t.send()
		}
		t.closed = true
		for _, next := range t.next {
			close(next)
		}
	}
	t.done.Wait()
	return errors.Join(t.errs...)
}

// copyJSON appends the JSON of the rec-th record of the store to e, read
// back from the first pass's file.
func (b *streamBuild) copyJSON(e *encoded, rec int32) error {
	o := b.byStore.offs[5*rec : 5*rec+5]
	base := e.end()
	for _, x := range o[:4] {
		e.offs = append(e.offs, base+x-o[0])
	}
	at := len(e.arena)
	e.arena = slices.Grow(e.arena, int(o[4]-o[0]))[:at+int(o[4]-o[0])]
	if _, err := b.storeOut.ReadAt(e.arena[at:], int64(o[0])); err != nil {
		return fmt.Errorf("reading back the JSON of record %d: %w", rec, err)
	}
	e.offs = append(e.offs, e.end())
	return nil
}

// spill writes e's arena to f once it holds keep bytes or more (all of it
// when keep is 0), so that e keeps at most about keep bytes.
func (b *streamBuild) spill(e *encoded, f *os.File, keep int) error {
	if len(e.arena) < keep || len(e.arena) == 0 {
		return nil
	}
	if e.spilled+int64(len(e.arena)) > math.MaxUint32 {
		return fmt.Errorf("the records' JSON is over 4 GiB, past what a segment's 32-bit offsets address")
	}
	if err := b.count(f, len(e.arena)); err != nil {
		return err
	}
	if _, err := f.Write(e.arena); err != nil {
		return err
	}
	e.spilled += int64(len(e.arena))
	e.arena = e.arena[:0]
	return nil
}

// count counts n bytes about to be written to f, one of the build's
// files, failing as a full disk does past the build's limit.
func (b *streamBuild) count(f *os.File, n int) error {
	if b.limit > 0 && b.written.Add(int64(n)) > b.limit {
		return fmt.Errorf("writing %s: %w", f.Name(), syscall.ENOSPC)
	}
	return nil
}

// create creates a temporary file of the build in its directory: a crash
// leaves it among the files the next start removes (removeStray).
func (b *streamBuild) create() (*os.File, error) {
	f, err := os.CreateTemp(b.dir, ".build-*")
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.files = append(b.files, f)
	b.mu.Unlock()
	return f, nil
}

// cleanup removes the build's temporary files.
func (b *streamBuild) cleanup() {
	for _, f := range b.files {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}
}

// appendLast appends the JSON of e's last record, both languages, to dst.
// The arena holds it whole: spill runs between records.
func (e *encoded) appendLast(dst []byte) []byte {
	var rel [5]uint32
	for i, o := range e.offs[len(e.offs)-5:] {
		rel[i] = o - uint32(e.spilled)
	}
	return (&encoded{arena: e.arena, offs: rel[:]}).appendDoc(dst, 0, "")
}

// writeJSON writes the snapshot's JSON section, from memory or, for a
// streamed snapshot, from its file.
func (s *Snapshot) writeJSON(w *segment.Writer) error {
	if s.streamed == nil {
		w.Section(secJSON, s.enc.arena)
		return nil
	}
	w.Begin(secJSON)
	f := s.streamed.file
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	// Writer has no ReadFrom: hide the file's WriteTo too, so that the
	// copy goes through a buffer rather than a sendfile attempt; one of
	// the writer's size, so that gigabytes take thousands of reads, not
	// a hundred thousand.
	if _, err := io.CopyBuffer(w, struct{ io.Reader }{f}, make([]byte, 1<<20)); err != nil {
		return fmt.Errorf("copying the records' JSON: %w", err)
	}
	w.End()
	return nil
}
