package index

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/vellum"

	"github.com/rappel-ca/rappel/kv/segment"
)

// A streamed build (streambuild.go) does not hold a million records'
// postings: each stream's builder writes what it holds out as a sorted
// run once it holds runBudget/2 bytes of postings, and starts again from
// nothing at the next document. A run is a file of the build's directory
// with the postings of one stream over a range of documents, its terms in
// order. Runs cover consecutive ranges, so a term's posting over every
// document is its postings in the runs, one after the other: the segment
// writer merges the runs' terms (a k-way merge, as a sort's merge phase
// does) and concatenates each term's parts. The terms' sections are
// written one after the other (dictionary, documents, offsets, positions),
// so the merge runs once for each, reading from the runs only what its
// section needs: each run keeps its parts in regions of their own.
//
// A run's regions, in the file's order:
//
//	docs  per term: its documents, uvarints, the first whole and each
//	      next one the difference from the one before
//	lens  per term: the length of each document's positions (posting.lens)
//	pos   per term: the positions (posting.pos)
//	keys  per term, in order: uvarint length and the term, then uvarint
//	      sizes of its docs, lens and pos in their regions

// runBudget is how many bytes of postings, as textBuilder.held counts
// them, a streamed build holds at most across both streams before it
// writes runs (Segments.runBudget in tests). The heap they take is up to
// about twice that: slices grow by doubling.
const runBudget = 256 << 20

// What textBuilder.held counts: a new term's posting and map entry, and
// a document's entry in a posting's documents and lengths; positions
// count their bytes.
const (
	heldPerTerm = 192
	heldPerDoc  = 4
)

// The parts of a term in a run, and none (a merge of the terms alone).
const (
	partDocs = iota
	partLens
	partPos
	partKeys
	partNone = -1
)

// run is one run's file and where each of its regions is.
type run struct {
	f   *os.File
	off [partKeys + 2]int64 // where each part's region starts, and the end
}

// termRuns is a streamed build's postings: the runs of each stream, in
// document order.
type termRuns struct {
	streams [2][]*run
}

// runWriter writes runs for one stream of a build.
type runWriter struct {
	b      *streamBuild
	stream int
	runs   []*run
	buf    []byte
}

// spill writes the postings tb holds of w's stream as a run and empties
// them. tb must be between documents.
func (w *runWriter) spill(tb *textBuilder) error {
	m := tb.ix.postings[w.stream]
	if len(m) == 0 {
		return nil
	}
	f, err := w.b.create()
	if err != nil {
		return err
	}
	terms := slices.Sorted(maps.Keys(m))
	r := &run{f: f}
	out := bufio.NewWriterSize(&limitedWriter{b: w.b, f: f}, 1<<16)
	at := int64(0)
	put := func(p []byte) {
		_, _ = out.Write(p) // the error sticks in out: Flush returns it
		at += int64(len(p))
	}
	for _, t := range terms {
		p := m[t]
		p.endDoc()
		put(p.deltas)
	}
	r.off[partLens] = at
	for _, t := range terms {
		put(m[t].lens)
	}
	r.off[partPos] = at
	for _, t := range terms {
		put(m[t].pos)
	}
	r.off[partKeys] = at
	for _, t := range terms {
		p := m[t]
		w.buf = binary.AppendUvarint(w.buf[:0], uint64(len(t)))
		w.buf = append(w.buf, t...)
		w.buf = binary.AppendUvarint(w.buf, uint64(len(p.deltas)))
		w.buf = binary.AppendUvarint(w.buf, uint64(len(p.lens)))
		w.buf = binary.AppendUvarint(w.buf, uint64(len(p.pos)))
		put(w.buf)
	}
	r.off[partKeys+1] = at
	if err := out.Flush(); err != nil {
		return err
	}
	w.runs = append(w.runs, r)
	clear(m)
	tb.held, tb.gen = 0, tb.gen+1
	return nil
}

// limitedWriter writes to a build's temporary file, failing as a full
// disk does past the build's limit (streamBuild.limit).
type limitedWriter struct {
	b *streamBuild
	f *os.File
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if err := l.b.count(l.f, len(p)); err != nil {
		return 0, err
	}
	return l.f.Write(p)
}

// runHead reads one run's terms in order, and the part of each a merge
// asked for.
type runHead struct {
	keys, data *bufio.Reader
	term       []byte
	size       [partKeys]int
	done       bool
}

// advance reads the run's next term, or marks the run done.
func (h *runHead) advance() error {
	n, err := binary.ReadUvarint(h.keys)
	if errors.Is(err, io.EOF) {
		h.done = true
		return nil
	}
	if err != nil {
		return err
	}
	h.term = slices.Grow(h.term[:0], int(n))[:n]
	if _, err := io.ReadFull(h.keys, h.term); err != nil {
		return err
	}
	for i := range h.size {
		v, err := binary.ReadUvarint(h.keys)
		if err != nil {
			return err
		}
		h.size[i] = int(v)
	}
	return nil
}

// termMerge walks the terms of every run, stream by stream, each term
// once, in the order of the segment's dictionary, with the given part of
// each run that holds it.
type termMerge struct {
	runs   *termRuns
	part   int
	stream int
	heads  []*runHead
	// The current term, and its part from each run that holds it, one
	// after the other in data: chunk i ends at ends[i].
	term []byte
	data []byte
	ends []int
	err  error
}

// merge starts a walk of the terms with part (partNone for none).
func (rs *termRuns) merge(part int) *termMerge {
	m := &termMerge{runs: rs, part: part, stream: -1}
	m.openStream()
	return m
}

// openStream moves the walk to the next stream's runs.
func (m *termMerge) openStream() {
	m.stream++
	m.heads = m.heads[:0]
	if m.stream >= len(m.runs.streams) {
		return
	}
	for _, r := range m.runs.streams[m.stream] {
		h := &runHead{keys: bufio.NewReaderSize(io.NewSectionReader(r.f, r.off[partKeys], r.off[partKeys+1]-r.off[partKeys]), 1<<15)}
		if m.part != partNone {
			h.data = bufio.NewReaderSize(io.NewSectionReader(r.f, r.off[m.part], r.off[m.part+1]-r.off[m.part]), 1<<16)
		}
		if m.err = h.advance(); m.err != nil {
			m.err = fmt.Errorf("reading back a run of postings: %w", m.err)
			return
		}
		m.heads = append(m.heads, h)
	}
}

// next moves to the next term, reporting false after the last one or on
// an error (m.err).
func (m *termMerge) next() bool {
	for m.err == nil && m.stream < len(m.runs.streams) {
		var least *runHead
		for _, h := range m.heads {
			if !h.done && (least == nil || bytes.Compare(h.term, least.term) < 0) {
				least = h
			}
		}
		if least == nil {
			m.openStream()
			continue
		}
		m.term = append(m.term[:0], least.term...)
		m.data, m.ends = m.data[:0], m.ends[:0]
		for _, h := range m.heads { // in document order
			if h.done || !bytes.Equal(h.term, m.term) {
				continue
			}
			if m.part != partNone {
				at := len(m.data)
				m.data = slices.Grow(m.data, h.size[m.part])[:at+h.size[m.part]]
				if _, err := io.ReadFull(h.data, m.data[at:]); err != nil {
					m.err = fmt.Errorf("reading back a run of postings: %w", err)
					return false
				}
				m.ends = append(m.ends, len(m.data))
			}
			if err := h.advance(); err != nil {
				m.err = fmt.Errorf("reading back a run of postings: %w", err)
				return false
			}
		}
		return true
	}
	return false
}

// docs returns the current term's documents, walking a partDocs merge.
func (m *termMerge) docs(buf []uint32) ([]uint32, error) {
	buf = buf[:0]
	from := 0
	for _, end := range m.ends {
		prev, b := uint64(0), m.data[from:end]
		for len(b) > 0 {
			d, n := binary.Uvarint(b)
			if n <= 0 {
				return nil, fmt.Errorf("reading back a run of postings: a malformed document of %q", m.term)
			}
			prev += d
			buf = append(buf, uint32(prev))
			b = b[n:]
		}
		from = end
	}
	return buf, nil
}

// write writes the terms' sections of the segment, as Snapshot.writeTerms
// does from postings in memory, merging the runs once per section.
func (rs *termRuns) write(w *segment.Writer) error {
	// The dictionary, and how many terms there are.
	w.Begin(secTerms)
	fst, err := vellum.New(w, nil)
	if err != nil {
		return fmt.Errorf("building the term dictionary: %w", err)
	}
	m := rs.merge(partNone)
	var key []byte
	n := 0
	for m.next() {
		key = append(termKey(key[:0], m.stream, ""), m.term...)
		if err := fst.Insert(key, uint64(n)); err != nil {
			return fmt.Errorf("building the term dictionary: %w", err)
		}
		n++
	}
	if m.err != nil {
		return m.err
	}
	if err := fst.Close(); err != nil {
		return fmt.Errorf("building the term dictionary: %w", err)
	}
	w.End()

	return rs.writeParts(w, n)
}

// writeParts writes the documents, offsets and positions of the n terms
// of the dictionary, a merge for each section.
func (rs *termRuns) writeParts(w *segment.Writer, n int) error {
	// Each walk must step through the same n terms: one that ends early
	// or runs past them is an error, as a walk's own is.
	var err error
	step := func(m *termMerge) bool {
		if err == nil && !m.next() {
			err = m.err
			if err == nil {
				err = fmt.Errorf("reading back the runs of postings: fewer terms than the dictionary's %d", n)
			}
		}
		return err == nil
	}
	done := func(m *termMerge) error {
		if err == nil && m.next() {
			err = fmt.Errorf("reading back the runs of postings: more terms than the dictionary's %d", n)
		}
		if err == nil {
			err = m.err
		}
		return err
	}

	m := rs.merge(partDocs)
	var docs []uint32
	w.Bitmaps(secPostDocs, offs(secPostDocs), n, func(int) *roaring.Bitmap {
		bm := roaring.New()
		if !step(m) {
			return bm
		}
		if docs, err = m.docs(docs); err == nil {
			for _, d := range docs {
				bm.Add(d) // as the build adds them, so that the containers are the same
			}
			bm.RunOptimize()
		}
		return bm
	})
	if err := done(m); err != nil {
		return err
	}

	m = rs.merge(partLens)
	var buf []byte
	var offsBuf []uint32
	w.Strings(secPostOffs, offs(secPostOffs), n, func(int) []byte {
		buf = buf[:0]
		if !step(m) {
			return buf
		}
		offsBuf = (&posting{lens: m.data}).appendOffsets(offsBuf[:0])
		for _, o := range offsBuf {
			buf = binary.LittleEndian.AppendUint32(buf, o)
		}
		return buf
	})
	if err := done(m); err != nil {
		return err
	}

	m = rs.merge(partPos)
	w.Strings(secPostPos, offs(secPostPos), n, func(int) []byte {
		if !step(m) {
			return nil
		}
		return m.data
	})
	return done(m)
}
