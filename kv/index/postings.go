package index

import (
	"cmp"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/blevesearch/vellum"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
)

// fieldGap separates fields in a stream's positions, so that a phrase never
// matches across the end of one field and the start of the next.
const fieldGap = 64

// Fields weigh by what they say about a record. A record's fields are
// indexed in tiers, each starting its positions at tier<<tierShift, so
// that a position says which tier its word came from and no field list
// is kept beside the postings: a word counts in a record's term
// frequency as much as its tier's weight (BM25F's weighting of fields,
// with the saturation applied to the sum). "seat" in a child car seat's
// title then weighs more than "Seats And Restraints", the system of a
// car's seat-belt recall. A tier's words past 65,536 positions run into
// the next tier's range and count as it does, which no real record
// reaches.
const tierShift = 16

// The tiers, in the order a record's fields are indexed.
const (
	// tierMain is the title, the product's names and description, makes
	// and models, and the identifiers: what the record is about.
	tierMain = rappel.TextMain
	// tierParties is the hazard and who made, sold or recalled it.
	tierParties = rappel.TextParties
	// tierLabels is the classification: categories, systems, the alert's
	// type, places of distribution and origin.
	tierLabels = rappel.TextLabels
	// tierAdvice is what the notice tells people to do: searched, so that
	// the words only it holds ("birth control product") find the notice,
	// and weighed least, since its wording is much the same from notice
	// to notice. Its words do not count in the record's length, so that
	// a long piece of advice does not push the record's other words down.
	tierAdvice = rappel.TextAdvice
	// tiers is how many there are.
	tiers = tierAdvice + 1
)

// tierWeight is each tier's weight in a term frequency.
var tierWeight = [tiers]float64{tierMain: 1, tierParties: 0.7, tierLabels: 0.35, tierAdvice: 0.2}

// tierOf is the tier of a position.
func tierOf(at uint32) int { return min(int(at>>tierShift), tiers-1) }

// weightedTF is the term frequency of the encoded positions b: each
// occurrence weighs as its tier does.
func weightedTF(b []byte) float64 {
	var tf float64
	at := uint32(0)
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 {
			break // checked when the posting was read; cannot happen
		}
		at += uint32(d)
		b = b[n:]
		tf += tierWeight[tierOf(at)]
	}
	return tf
}

// posting is one term's occurrences: the documents holding it, and for
// each its positions, for phrases and term frequency. The positions of
// the i-th document are pos[offs[i]:offs[i+1]], as uvarint differences
// (the first from 0): most are one byte.
type posting struct {
	docs *roaring.Bitmap
	offs []uint32
	pos  []byte

	// While building: the document being added, its last position and
	// where its positions start, and the length of each document's
	// positions, a uvarint each (most take a byte where an offset takes
	// four): finish makes offs of them, or leaves them for the segment
	// writer (appendOffsets) in a build that only writes the index.
	doc   int32
	last  uint32
	start uint32
	lens  []byte
	// deltas, in a streamed build, are the documents in place of docs:
	// uvarints, the first whole and each next one the difference from
	// the one before (textBuilder.docDeltas).
	deltas []byte
}

// appendOffsets appends to dst the offsets of p's documents' positions,
// and the end, from the lengths a build kept.
func (p *posting) appendOffsets(dst []uint32) []uint32 {
	at, lens := uint32(0), p.lens
	for len(lens) > 0 {
		dst = append(dst, at)
		n, w := binary.Uvarint(lens)
		at, lens = at+uint32(n), lens[w:]
	}
	return append(dst, at)
}

// span returns doc's encoded positions, or nil when doc lacks the term.
func (p *posting) span(doc int32) []byte {
	if !p.docs.Contains(uint32(doc)) {
		return nil
	}
	return p.spanAt(int(p.docs.Rank(uint32(doc)) - 1))
}

// spanAt returns the encoded positions of the rank-th document of p.
func (p *posting) spanAt(rank int) []byte { return p.pos[p.offs[rank]:p.offs[rank+1]] }

// tf is how many times doc holds the term, each time weighed by its
// field's tier.
func (p *posting) tf(doc int32) float64 { return weightedTF(p.span(doc)) }

// rankWalk finds the rank of each of a series of ascending documents in a
// bitmap. A rank from the start (Bitmap.Rank) costs, in a run container, a
// walk of every run before it, which a phrase over a common word paid for
// each candidate, so that its cost grew with the square of the records. A
// walk over a bitmap not many times larger than the series steps through
// its documents in batches; over a larger one it counts the documents
// between one of the series and the next.
type rankWalk struct {
	docs *roaring.Bitmap
	rank int // the rank of the document after the last one ranked
	// Counting: the document after the last one ranked.
	from uint64
	// Stepping: the bitmap's documents from the next one on, in batches.
	many roaring.ManyIntIterable
	buf  []uint32
}

// stepRatio is how many times more documents than it ranks a bitmap may
// hold for a walk to step through them rather than count: stepping costs
// a nanosecond or two a document, counting a search or two in a container
// each.
const stepRatio = 16

// newRankWalk returns a walk ranking about n documents in docs, which
// holds df.
func newRankWalk(docs *roaring.Bitmap, df, n int) rankWalk {
	w := rankWalk{docs: docs}
	if df <= stepRatio*n {
		w.many = docs.ManyIterator()
	}
	return w
}

// rankOf returns doc's rank in w.docs, which must hold it, doc coming after
// the document ranked before it.
func (w *rankWalk) rankOf(doc uint32) int {
	if w.many == nil {
		w.rank += int(w.docs.CardinalityInRange(w.from, uint64(doc)+1))
		w.from = uint64(doc) + 1
		return w.rank - 1
	}
	for {
		if len(w.buf) == 0 {
			if cap(w.buf) == 0 {
				w.buf = make([]uint32, 256)
			}
			w.buf = w.buf[:w.many.NextMany(w.buf[:cap(w.buf)])]
			if len(w.buf) == 0 {
				return -1 // not held: cannot happen
			}
		}
		d := w.buf[0]
		w.buf, w.rank = w.buf[1:], w.rank+1
		if d >= doc {
			return w.rank - 1
		}
	}
}

// df is the number of documents holding the term.
func (p *posting) df() int { return len(p.offs) - 1 }

// textIndex is the inverted index of both streams: built, a map of
// postings per stream; read from a segment, a term dictionary and the
// segment's postings (snapshotfile.go).
type textIndex struct {
	an       *analyzer
	postings [2]map[string]*posting
	seg      *segmentText
	docLen   [2][]uint32
	avgLen   [2]float64
	total    [2]int64 // the sum of docLen, exactly
	docs     int
	// runs, for a streamed build, are its postings written out as sorted
	// runs (spill.go): postings is then empty, and the segment writer
	// merges the runs.
	runs *termRuns
	// The term dictionary of a built index, made on first use (expand.go).
	dictOnce sync.Once
	dictFST  *vellum.FST
	// What the terms each prefix begins hold, made on first use
	// (prefixstats.go).
	prefixes prefixStats
}

// post returns the posting of term in stream, or nil. The error reports a
// malformed segment.
func (ix *textIndex) post(stream int, term string) (*posting, error) {
	if ix.seg != nil {
		return ix.seg.posting(stream, term)
	}
	return ix.postings[stream][term], nil
}

// textBuilder fills a textIndex one document at a time, in doc order.
type textBuilder struct {
	ix  *textIndex
	doc int32
	pos [2]uint32
	// tier is the tier of the fields being added.
	tier int
	// lensOnly has finish leave the postings' offsets as lengths, for
	// the segment writer to expand one posting at a time.
	lensOnly bool
	// skip leaves out a stream: a streamed build indexes each stream
	// on a goroutine of its own, each with a builder of the same index.
	skip [2]bool
	// held is about how many bytes the postings added since the last
	// run hold (spill.go), for a streamed build to write them out.
	held int64
	// words caches, per stream, each word's forms and the postings they
	// name, so that a word met again costs one lookup rather than one for
	// its forms and one for each form's posting. A slot's postings are
	// those of generation gen only: writing a run out moves gen on.
	words [2]map[string]*wordSlot
	gen   uint32
	// docDeltas keeps each posting's documents as uvarint differences
	// (posting.deltas) rather than a bitmap: a streamed build writes
	// them out so, and a bitmap per term costs more to fill and to hold.
	docDeltas bool
}

// wordSlot is a word's entry in textBuilder.words.
type wordSlot struct {
	f         forms
	gen       uint32
	main, alt *posting
}

func newTextBuilder(an *analyzer, docs int) *textBuilder {
	ix := &textIndex{an: an, docs: docs}
	// Room for the terms of a large corpus at once, or of a few dozen per
	// document for a small one (a refresh's delta): a map presized for a
	// corpus is megabytes a delta of a hundred records does not need.
	terms := min(1<<15, 64*docs+64)
	for s := range ix.postings {
		ix.postings[s] = make(map[string]*posting, terms)
		ix.docLen[s] = make([]uint32, docs)
	}
	return &textBuilder{ix: ix}
}

// startDoc moves to the next document.
func (b *textBuilder) startDoc(doc int32) {
	b.doc = doc
	b.pos = [2]uint32{}
	b.tier = tierMain
}

// startTier moves the current document to the fields of tier t, which
// must not be before the current one.
func (b *textBuilder) startTier(t int) {
	b.tier = t
	base := uint32(t) << tierShift
	for s := range b.pos {
		b.pos[s] = max(b.pos[s], base)
	}
}

// add indexes text as one field of the current document in stream.
func (b *textBuilder) add(stream int, text string) {
	if text == "" || b.skip[stream] {
		return
	}
	ix := b.ix
	tokens(text, func(w string) {
		slot := b.slot(stream, w)
		b.addTerm(stream, slot.main)
		if slot.alt != nil {
			b.addTerm(stream, slot.alt)
		}
		b.pos[stream]++
		if b.tier != tierAdvice {
			ix.docLen[stream][b.doc]++
		}
	})
	b.pos[stream] += fieldGap
}

// slot returns the slot of word w in stream, its postings those of the
// current generation.
func (b *textBuilder) slot(stream int, w string) *wordSlot {
	m := b.words[stream]
	if m == nil {
		m = make(map[string]*wordSlot, 1<<15)
		b.words[stream] = m
	}
	slot := m[w]
	if slot == nil {
		slot = &wordSlot{f: b.ix.an.forms(stream, w)}
		m[strings.Clone(w)] = slot
	} else if slot.gen == b.gen {
		return slot
	}
	slot.gen = b.gen
	slot.main, slot.alt = b.posting(stream, slot.f.main), nil
	if slot.f.alt != "" {
		slot.alt = b.posting(stream, slot.f.alt)
	}
	return slot
}

// posting returns the posting of term t in stream, new if need be.
func (b *textBuilder) posting(stream int, t string) *posting {
	p := b.ix.postings[stream][t]
	if p == nil {
		p = &posting{doc: -1}
		if !b.docDeltas {
			p.docs = roaring.New()
		}
		b.ix.postings[stream][t] = p
		b.held += heldPerTerm + int64(len(t))
	}
	return p
}

// addTerm records p's term at the current position of the current
// document.
func (b *textBuilder) addTerm(stream int, p *posting) {
	at := b.pos[stream]
	if p.doc != b.doc {
		p.endDoc()
		if b.docDeltas {
			p.deltas = binary.AppendUvarint(p.deltas, uint64(b.doc-max(p.doc, 0)))
		} else {
			p.docs.Add(uint32(b.doc))
		}
		p.doc, p.last, p.start = b.doc, 0, uint32(len(p.pos))
		b.held += heldPerDoc
	}
	n := len(p.pos)
	p.pos = binary.AppendUvarint(p.pos, uint64(at-p.last))
	b.held += int64(len(p.pos) - n)
	p.last = at
}

// endDoc keeps the length of the current document's positions, if any.
func (p *posting) endDoc() {
	if p.doc >= 0 {
		p.lens = binary.AppendUvarint(p.lens, uint64(uint32(len(p.pos))-p.start))
	}
}

// addBoth indexes language-neutral text in both streams.
func (b *textBuilder) addBoth(text string) {
	b.add(streamEN, text)
	b.add(streamFR, text)
}

// finish closes every posting list and computes average lengths.
func (b *textBuilder) finish() *textIndex {
	ix := b.ix
	ix.an.frozen.Store(true)
	for s := range ix.postings {
		ix.total[s] = sumLen(ix.docLen[s])
		ix.avgLen[s] = avgLen(ix.docLen[s], ix.docs)
		for _, p := range ix.postings[s] {
			p.endDoc()
			p.doc = -1
			if !b.lensOnly {
				p.offs = p.appendOffsets(make([]uint32, 0, p.docs.GetCardinality()+1))
				p.lens = nil
			}
			p.docs.RunOptimize()
		}
	}
	return ix
}

// sumLen is the sum of lens.
func sumLen(lens []uint32) int64 {
	var total int64
	for _, l := range lens {
		total += int64(l)
	}
	return total
}

// avgLen is the average of lens over docs documents.
func avgLen(lens []uint32, docs int) float64 {
	var total float64
	for _, l := range lens {
		total += float64(l)
	}
	if docs == 0 {
		return 0
	}
	return total / float64(docs)
}

// indexRecord adds the searchable text of r (rappel.Record.SearchedText),
// tier by tier, a translation's text in its language's stream and the
// rest in both.
func indexRecord(b *textBuilder, r *rappel.Record) {
	r.SearchedText(func(tier int, lang, text string) {
		if tier != b.tier {
			b.startTier(tier)
		}
		switch lang {
		case rappel.LangEN:
			b.add(streamEN, text)
		case rappel.LangFR:
			b.add(streamFR, text)
		default:
			b.addBoth(text)
		}
	})
}

// termDocs returns the documents matching one query term (a word, or a
// phrase of several tokens), across both streams, with what exp says it
// also matches, or nil when the term has nothing searchable in it (it then
// does not constrain). The bitmap is the caller's to change.
func (ix *textIndex) termDocs(ctx context.Context, t rappel.Term, exp *expansion) (*roaring.Bitmap, error) {
	parts, searchable, err := ix.termParts(ctx, nil, t, exp)
	if err != nil || !searchable {
		return nil, err
	}
	return unionOf(parts), nil
}

// termParts appends to dst the bitmaps whose union is termDocs(t), and
// reports whether t has anything searchable in it. They are postings
// and phrase matches as the index holds them, not to be changed: a
// clause of several terms makes one union of all their parts rather
// than one per term, and a word of one posting needs no union at all.
func (ix *textIndex) termParts(ctx context.Context, dst []*roaring.Bitmap, t rappel.Term, exp *expansion) ([]*roaring.Bitmap, bool, error) {
	var te *termExp
	if exp != nil {
		te = exp.terms[t]
	}
	searchable := te != nil
	ops := opsOf(ctx)
	var err error
	if te == nil || !te.only {
		var own bool
		if dst, own, err = ix.ownParts(ctx, dst, t); err != nil {
			return nil, false, err
		}
		searchable = searchable || own
	}
	if te == nil {
		return dst, searchable, nil
	}
	for s, words := range te.words {
		for _, e := range words {
			p, err := ix.post(s, e.term)
			if err != nil {
				return nil, false, err
			}
			if p != nil {
				dst = append(dst, p.docs)
				ops.read(p.df())
			}
		}
	}
	for _, alt := range te.alts {
		if dst, _, err = ix.termParts(ctx, dst, alt, nil); err != nil {
			return nil, false, err
		}
	}
	return dst, searchable, nil
}

// ownParts appends to dst the bitmaps whose union is the documents
// matching t by its own forms, and reports whether t has a token.
func (ix *textIndex) ownParts(ctx context.Context, dst []*roaring.Bitmap, t rappel.Term) ([]*roaring.Bitmap, bool, error) {
	var words []string
	tokens(t.Text, func(w string) { words = append(words, w) })
	var err error
	switch len(words) {
	case 0:
		return dst, false, nil
	case 1:
		dst, err = ix.wordParts(opsOf(ctx), dst, words[0])
	default:
		var bm *roaring.Bitmap
		if bm, err = ix.phraseUnion(ctx, words); err == nil {
			dst = append(dst, bm)
		}
	}
	if err == nil && isGTINLike(t.Text) {
		// A printed barcode also finds its product through the GTIN-14
		// form every printing is indexed under.
		if g, perr := rappel.ParseGTIN(t.Text); perr == nil {
			dst, err = ix.wordParts(opsOf(ctx), dst, string(g))
		}
	}
	return dst, true, err
}

// wordDocs returns the documents holding one token, in any of its forms,
// in either stream, counting the postings read in ops (nil for none). The
// bitmap is the caller's to change.
func (ix *textIndex) wordDocs(ops *searchOps, w string) (*roaring.Bitmap, error) {
	parts, err := ix.wordParts(ops, nil, w)
	if err != nil {
		return nil, err
	}
	return unionOf(parts), nil
}

// wordParts appends to dst the postings of one token's forms in either
// stream, counting them in ops (nil for none).
func (ix *textIndex) wordParts(ops *searchOps, dst []*roaring.Bitmap, w string) ([]*roaring.Bitmap, error) {
	for s := range ix.postings {
		f := ix.an.forms(s, w)
		for _, t := range []string{f.main, f.alt} {
			if t == "" {
				continue
			}
			p, err := ix.post(s, t)
			if err != nil {
				return nil, err
			}
			if p != nil {
				dst = append(dst, p.docs)
				ops.read(p.df())
			}
		}
	}
	return dst, nil
}

// phraseUnion returns the documents holding words as a phrase in either
// stream.
func (ix *textIndex) phraseUnion(ctx context.Context, words []string) (*roaring.Bitmap, error) {
	out := roaring.New()
	for s := range ix.postings {
		for _, alt := range []bool{false, true} {
			if alt && (s != streamFR || !ix.hasAlt(s, words)) {
				continue // the same postings as the main forms'
			}
			bm, err := ix.phraseDocs(ctx, s, words, alt)
			if err != nil {
				return nil, err
			}
			out.Or(bm)
		}
	}
	return out, nil
}

// hasAlt reports whether a word of words has an alternative form in
// stream s: without one, the phrase of the alternative forms is the
// phrase of the main ones, and its positions need no second walk.
func (ix *textIndex) hasAlt(s int, words []string) bool {
	for _, w := range words {
		if ix.an.forms(s, w).alt != "" {
			return true
		}
	}
	return false
}

// isGTINLike reports whether a term looks like a printed barcode (digits,
// spaces and dashes only, with enough digits), which is matched by its
// GTIN-14 form.
func isGTINLike(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			n++
		case c == ' ' || c == '-':
		default:
			return false
		}
	}
	return n >= 8
}

// phraseDocs returns the documents of stream holding words consecutively,
// matching each word by its main form, or by its alternative form (where it
// has one) when alt is set. The candidates are the documents holding every
// word, intersected rarest first; positions are read for them alone, each
// posting walked once in document order.
func (ix *textIndex) phraseDocs(ctx context.Context, s int, words []string, alt bool) (*roaring.Bitmap, error) {
	ps, err := ix.phrasePostings(s, words, alt)
	if err != nil || ps == nil {
		return roaring.New(), err
	}
	cand := phraseCandidates(ps)
	n := int(cand.GetCardinality())
	if ops := opsOf(ctx); ops != nil {
		for _, p := range ps {
			ops.read(p.df())
		}
		ops.phrase += n * len(ps)
	}
	walks := make([]rankWalk, len(ps))
	for i, p := range ps {
		walks[i] = newRankWalk(p.docs, p.df(), n)
	}
	spans := make([]posReader, len(ps))
	out := roaring.New()
	found := make([]uint32, 0, min(n, 1024)) // added in ascending batches
	it := cand.Iterator()
	for i := 0; it.HasNext(); i++ {
		if i%ctxCheckEvery == 0 && ctx.Err() != nil {
			return nil, timeoutError()
		}
		doc := it.Next()
		if !phraseAt(ps, walks, spans, doc) {
			continue
		}
		if found = append(found, doc); len(found) == cap(found) {
			out.AddMany(found)
			found = found[:0]
		}
	}
	out.AddMany(found)
	return out, nil
}

// phrasePostings returns the postings of words in stream s, by their main
// forms or, when alt is set, their alternative forms where they have one;
// nil when the index lacks one of them.
func (ix *textIndex) phrasePostings(s int, words []string, alt bool) ([]*posting, error) {
	ps := make([]*posting, len(words))
	for i, w := range words {
		f := ix.an.forms(s, w)
		t := f.main
		if alt && f.alt != "" {
			t = f.alt
		}
		p, err := ix.post(s, t)
		if err != nil || p == nil {
			return nil, err
		}
		ps[i] = p
	}
	return ps, nil
}

// phraseCandidates returns the documents holding every posting of ps,
// starting from the rarest, so that each intersection is no larger than
// the smallest posting.
func phraseCandidates(ps []*posting) *roaring.Bitmap {
	rarest := slices.MinFunc(ps, func(a, b *posting) int { return cmp.Compare(a.df(), b.df()) })
	cand := rarest.docs.Clone()
	for _, p := range ps {
		if p != rarest {
			cand.And(p.docs)
		}
	}
	return cand
}

// phraseAt reports whether the postings occur at consecutive positions in
// doc, which each of them holds; documents come in ascending order, walks
// ranking doc in each posting. The word with the fewest bytes of
// positions anchors the phrase: its positions are read whole, the others'
// only as far as the first place the phrase is found, so that a common
// word's many positions in a long document are mostly left unread.
// spans is scratch space, one slot per posting.
func phraseAt(ps []*posting, walks []rankWalk, spans []posReader, doc uint32) bool {
	anchor := 0
	for i, p := range ps {
		spans[i] = posReader{b: p.spanAt(walks[i].rankOf(doc))}
		if len(spans[i].b) < len(spans[anchor].b) {
			anchor = i
		}
	}
	a := &spans[anchor]
	for a.next() {
		if a.at < uint32(anchor) {
			continue // the phrase would start before the document
		}
		start := a.at - uint32(anchor)
		ok := true
		for i := range spans {
			if i != anchor && ok {
				ok = spans[i].seek(start + uint32(i))
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// posReader reads one document's encoded positions of a term in order.
type posReader struct {
	b  []byte
	at uint32 // the position last read
	// started is set once a position was read: until then at is none.
	started bool
}

// next reads the next position into r.at, reporting false at the end.
func (r *posReader) next() bool {
	if len(r.b) == 0 {
		return false
	}
	d, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.b = nil // checked when the posting was read; cannot happen
		return false
	}
	r.at += uint32(d)
	r.b, r.started = r.b[n:], true
	return true
}

// seek reads on to the first position at or after want and reports
// whether it is want. Positions sought must not decrease.
func (r *posReader) seek(want uint32) bool {
	for !r.started || r.at < want {
		if !r.next() {
			return false
		}
	}
	return r.at == want
}

// BM25 parameters, the usual ones.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// corpus is what BM25 needs of the whole collection: its number of
// documents, the average length of a document in each stream, and how
// many documents hold a term (given the term's posting in this index). A
// view of several segments scores with the collection's figures, so that
// a record scores as it would in one index of the same records.
type corpus struct {
	docs   int
	avgLen [2]float64
	// dfTerm, when set, is the document frequency of a term; otherwise
	// it is that of the term's posting in the index scored.
	dfTerm func(stream int, term string) int
}

// corpus returns the index's own collection figures.
func (ix *textIndex) corpus() corpus { return corpus{docs: ix.docs, avgLen: ix.avgLen} }

// df is the document frequency of term, whose posting is p.
func (cs *corpus) df(stream int, term string, p *posting) int {
	if cs.dfTerm != nil {
		return cs.dfTerm(stream, term)
	}
	return p.df()
}

// idfOf is BM25's idf of a term n of docs documents hold.
func idfOf(docs, n int) float64 {
	nf := float64(n)
	return math.Log(1 + (float64(docs)-nf+0.5)/(nf+0.5))
}

// bm25Of is the BM25 score of doc in stream s for a term of idf it holds
// tf times, with avgLen the stream's average length, times weight: the
// scorer and the reference scoring of the tests both compute it here, so
// that their scores are the same to the last bit.
func (ix *textIndex) bm25Of(s int, doc int32, weight, idf, tf, avgLen float64) float64 {
	norm := 1 - bm25B + bm25B*float64(ix.docLen[s][doc])/math.Max(avgLen, 1)
	return weight * idf * tf * (bm25K1 + 1) / (tf + bm25K1*norm)
}
