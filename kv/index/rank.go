package index

import (
	"container/heap"
	"context"
	"math/bits"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
)

// Relevance over large match sets. Scoring each document by looking every
// term's posting up in the dictionary (as the reference scoring of the
// tests does) costs a query of 32 common words ORed 64 lookups for each
// of all 41,000 records. A scorer looks each posting up once per query
// and walks it in step with the matches, which arrive in document order,
// and adds the same terms in the same order as the reference does, so
// that every score is the same float64 to the last bit. The page is then the best offset+limit+1
// matches of a bounded heap, not a sort of every match: ties on the score
// go to the smaller record_id, as the sort did, so the order is total and
// the page identical.

// scorer is the BM25 scoring of one query compiled for one index.
type scorer struct {
	ix    *textIndex
	cs    corpus
	items []scoreItem
	// hits counts the leaves scored that the document holds: a leaf a
	// document lacks costs a look at its cursor, one it holds its
	// positions read and a BM25 computed (searchOps).
	hits int
	// coord is set for a softened search (relax.go): the score of a
	// document adds coordBonus for each word of the optional clause it
	// holds, so that the records with more of the words rank first.
	coord bool
	// pairs are the items of the query's consecutive words whose nearness
	// in a document adds to its score (proximity).
	pairs [][2]int
	// spans is scratch space for the positions nearness compares.
	spans [2][]uint32
	// strict, with coord, are the documents that match every word of the
	// search before it was softened (a word pair may have matched as the
	// word it joins into, or as a synonym of the pair): they rank before
	// any document the softening added.
	strict *roaring.Bitmap
}

// coordBonus is worth more than any BM25 sum of a query's words (each at
// most idf·(k1+1), about 25), so that a record holding more of the words
// of a softened search always ranks before one holding fewer.
const coordBonus = 1000

// scoreItem is one addition to a document's score: a leaf on its own, or
// a group of leaves summed first (the words of one text, in both
// streams).
type scoreItem struct {
	group  bool
	leaves []scoreLeaf
	// word is the index of the word of a softened search's optional
	// clause the item scores, -1 for any other.
	word int
}

// scoreLeaf is one term of one stream: its posting's cursor (nil when the
// index lacks the term), its idf and its weight.
type scoreLeaf struct {
	s      int
	c      *postCursor
	idf    float64
	weight float64
}

// postCursor walks one posting in document order, keeping the rank of the
// document under it, which indexes its positions.
type postCursor struct {
	p    *posting
	it   roaring.IntPeekable
	rank int
}

// farJump is the distance in documents past which a cursor skips rather
// than steps, and then counts the documents it skipped.
const farJump = 256

// tf returns how many times doc holds the cursor's term. Documents must
// come in ascending order.
func (c *postCursor) tf(doc uint32) float64 {
	it := c.it
	if !it.HasNext() {
		return 0
	}
	if next := it.PeekNext(); next < doc {
		if doc-next > farJump {
			it.AdvanceIfNeeded(doc)
			if !it.HasNext() {
				return 0
			}
			// The documents skipped, counted between the two: a rank from
			// the start walks every run before it (rankWalk).
			c.rank += int(c.p.docs.CardinalityInRange(uint64(next), uint64(it.PeekNext())))
		} else {
			for it.HasNext() && it.PeekNext() < doc {
				it.Next()
				c.rank++
			}
			if !it.HasNext() {
				return 0
			}
		}
	}
	if it.PeekNext() != doc {
		return 0
	}
	return c.p.tfAt(c.rank)
}

// tfAt is how many times the rank-th document of p holds the term, each
// time weighed by its field's tier.
func (p *posting) tfAt(rank int) float64 { return weightedTF(p.spanAt(rank)) }

// newScorer compiles the scored terms of qcs and exp over ix, with the
// collection figures cs. The error reports a malformed posting.
func (ix *textIndex) newScorer(qcs []rappel.Clause, cs corpus, exp *expansion) (*scorer, error) {
	sc := &scorer{ix: ix, cs: cs}
	cursors := map[dfKey]*postCursor{}
	leaf := func(s int, term string, weight float64) (scoreLeaf, error) {
		p, err := ix.post(s, term)
		if err != nil || p == nil {
			return scoreLeaf{s: s}, err
		}
		k := dfKey{s, term}
		c := cursors[k]
		if c == nil {
			c = &postCursor{p: p, it: p.docs.Iterator()}
			cursors[k] = c
		}
		return scoreLeaf{s: s, c: c, idf: idfOf(cs.docs, cs.df(s, term, p)), weight: weight}, nil
	}
	word := -1 // the optional clause's word being compiled
	text := func(text string, weight float64) error {
		item := scoreItem{group: true, word: word}
		var err error
		tokens(text, func(w string) {
			for s := range ix.postings {
				if err != nil {
					return
				}
				var l scoreLeaf
				l, err = leaf(s, ix.an.term(s, w), weight)
				item.leaves = append(item.leaves, l)
			}
		})
		sc.items = append(sc.items, item)
		return err
	}
	sc.coord = exp != nil && exp.soft > 0
	last := -1 // the item of the last word, for proximity
	for i, c := range qcs {
		if c.Exclude {
			continue
		}
		for k, t := range c.Terms {
			word = -1
			if sc.coord && i == exp.soft-1 {
				word = k
			}
			var te *termExp
			if exp != nil {
				te = exp.terms[t]
			}
			if te == nil || !te.only {
				at := len(sc.items)
				if err := text(t.Text, 1); err != nil {
					return nil, err
				}
				// The words a softened search made one OR are still the
				// words typed one after the other.
				if proximityWord(c, t, sc.items[at].leaves, len(ix.postings), word >= 0) {
					if last >= 0 {
						sc.pairs = append(sc.pairs, [2]int{last, at})
					}
					last = at
				} else {
					last = -1
				}
			} else {
				last = -1
			}
			if te == nil {
				continue
			}
			for s, words := range te.words {
				for _, e := range words {
					l, err := leaf(s, e.term, 1/float64((1+e.dist)*(1+e.dist)))
					if err != nil {
						return nil, err
					}
					sc.items = append(sc.items, scoreItem{leaves: []scoreLeaf{l}, word: word})
				}
			}
			for _, alt := range te.alts {
				if err := text(alt.Text, 0.5); err != nil {
					return nil, err
				}
			}
		}
		word = -1
		if exp != nil {
			for _, alt := range exp.joins[i].alts {
				if err := text(alt.Text, 0.5); err != nil {
					return nil, err
				}
			}
		}
	}
	return sc, nil
}

// score is the score of doc; documents must come in ascending order.
func (sc *scorer) score(doc int32) float64 {
	var total float64
	var held uint64 // with coord: the optional clause's words doc holds
	for i := range sc.items {
		it := &sc.items[i]
		if !it.group {
			v := sc.leafScore(&it.leaves[0], doc)
			if v > 0 && it.word >= 0 {
				held |= 1 << uint(it.word)
			}
			total += v
			continue
		}
		var sum float64
		for j := range it.leaves {
			sum += sc.leafScore(&it.leaves[j], doc)
		}
		if sum > 0 && it.word >= 0 {
			held |= 1 << uint(it.word)
		}
		total += sum
	}
	for _, pr := range sc.pairs {
		total += sc.nearBonus(pr, uint32(doc))
	}
	if sc.coord {
		total += coordBonus * float64(bits.OnesCount64(held))
		if sc.strict != nil && sc.strict.Contains(uint32(doc)) {
			total += coordBonus * (rappel.MaxQueryTerms + 1)
		}
	}
	return total
}

// nearBonus is what the nearness of a pair of words in doc adds to its
// score, in the stream where they are nearest: the words' items were
// scored for doc first, so that the cursors of the words doc holds are on
// it.
func (sc *scorer) nearBonus(pr [2]int, doc uint32) float64 {
	var best float64
	a, b := sc.items[pr[0]].leaves, sc.items[pr[1]].leaves
	for s := range a {
		la, lb := &a[s], &b[s]
		if la.c == nil || lb.c == nil || !la.c.on(doc) || !lb.c.on(doc) {
			continue
		}
		sc.spans[0] = decodePositions(sc.spans[0][:0], la.c.p.spanAt(la.c.rank))
		sc.spans[1] = decodePositions(sc.spans[1][:0], lb.c.p.spanAt(lb.c.rank))
		best = max(best, proximityBonus(sc.spans[0], sc.spans[1], la.idf, lb.idf))
	}
	return best
}

// on reports whether the cursor stands on doc, which its last tf asked
// about.
func (c *postCursor) on(doc uint32) bool { return c.it.HasNext() && c.it.PeekNext() == doc }

func (sc *scorer) leafScore(l *scoreLeaf, doc int32) float64 {
	if l.c == nil {
		return 0
	}
	tf := l.c.tf(uint32(doc))
	if tf == 0 {
		return 0
	}
	sc.hits++
	return sc.ix.bm25Of(l.s, doc, l.weight, l.idf, tf, sc.cs.avgLen[l.s])
}

// ranked is a scored document of one part of a search.
type ranked struct {
	hit
	score float64
}

// rankedBefore reports whether a ranks before b: higher score first, then
// smaller record_id.
func rankedBefore(a, b *ranked) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return strings.Compare(a.id(), b.id()) < 0
}

// topK keeps the best k of what it is offered, worst on top of its heap.
type topK struct {
	k  int
	rs []ranked
	// after, when set, is the cursor: only what ranks after it is kept.
	after *cursor
}

func (t *topK) Len() int           { return len(t.rs) }
func (t *topK) Less(i, j int) bool { return rankedBefore(&t.rs[j], &t.rs[i]) }
func (t *topK) Swap(i, j int)      { t.rs[i], t.rs[j] = t.rs[j], t.rs[i] }
func (t *topK) Push(x any)         { t.rs = append(t.rs, x.(ranked)) }
func (t *topK) Pop() any {
	r := t.rs[len(t.rs)-1]
	t.rs = t.rs[:len(t.rs)-1]
	return r
}

// offer considers r for the page.
func (t *topK) offer(r ranked) {
	if t.k <= 0 {
		return
	}
	if c := t.after; c != nil && !(r.score < c.score || (r.score == c.score && r.id() > c.id)) {
		return // on an earlier page
	}
	if len(t.rs) < t.k {
		heap.Push(t, r)
		return
	}
	if rankedBefore(&r, &t.rs[0]) {
		t.rs[0] = r
		heap.Fix(t, 0)
	}
}

// newTopK returns the heap of a page of limit after cursor c, or after
// skipping offset matches: one more than the page, to tell whether
// another follows.
func newTopK(c *cursor, offset, limit int) *topK {
	if c != nil {
		return &topK{k: limit + 1, after: c}
	}
	return &topK{k: offset + limit + 1}
}

// page returns what was kept, best first, less the offset skipped.
func (t *topK) page(c *cursor, offset int) []ranked {
	out := make([]ranked, len(t.rs))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(t).(ranked)
	}
	if c == nil {
		out = out[min(offset, len(out)):]
	}
	return out
}

// partMatches is the matches of one part of a search: the documents of m
// or of alt (when set), less those of minus (when set): View.lazyMatches
// leaves them so, materialize makes them m alone.
type partMatches struct {
	s     *Snapshot
	m     *roaring.Bitmap
	alt   *roaring.Bitmap
	minus *roaring.Bitmap
}

// count returns how many the matches are, from cardinalities:
// |m ∪ alt| = |m| + |alt| − |m ∩ alt|, and what minus takes out of it,
// |(m ∪ alt) ∩ minus|, likewise, making no more than m ∩ alt.
func (p *partMatches) count() int {
	n := int(p.m.GetCardinality())
	var both *roaring.Bitmap // m ∩ alt, when minus needs it
	if p.alt != nil {
		n += int(p.alt.GetCardinality())
		if p.minus == nil {
			n -= int(p.m.AndCardinality(p.alt))
		} else {
			both = roaring.And(p.m, p.alt)
			n -= int(both.GetCardinality())
		}
	}
	if p.minus != nil {
		n -= int(p.m.AndCardinality(p.minus))
		if p.alt != nil {
			n -= int(p.alt.AndCardinality(p.minus)) - int(both.AndCardinality(p.minus))
		}
	}
	return n
}

// materialize makes the matches one bitmap, m.
func (p *partMatches) materialize() {
	if p.alt != nil {
		p.m, p.alt = roaring.Or(p.m, p.alt), nil
	}
	if p.minus != nil {
		p.m, p.minus = roaring.AndNot(p.m, p.minus), nil
	}
}

// materialize makes the matches of each of ms one bitmap, for what reads
// them as a set (ranking, facets, softening).
func materialize(ms []partMatches) {
	for i := range ms {
		ms[i].materialize()
	}
}

// unionIterator walks the union of one or two bitmaps in ascending order.
type unionIterator struct {
	a, b roaring.IntPeekable // b nil for one
}

func newUnionIterator(a, b *roaring.Bitmap) *unionIterator {
	it := &unionIterator{a: a.Iterator()}
	if b != nil {
		it.b = b.Iterator()
	}
	return it
}

// advance moves on to the first document at or after d.
func (it *unionIterator) advance(d uint32) {
	it.a.AdvanceIfNeeded(d)
	if it.b != nil {
		it.b.AdvanceIfNeeded(d)
	}
}

// next returns the next document, or false after the last.
func (it *unionIterator) next() (uint32, bool) {
	ha := it.a.HasNext()
	if it.b == nil || !it.b.HasNext() {
		if !ha {
			return 0, false
		}
		return it.a.Next(), true
	}
	if !ha {
		return it.b.Next(), true
	}
	x, y := it.a.PeekNext(), it.b.PeekNext()
	switch {
	case x < y:
		return it.a.Next(), true
	case y < x:
		return it.b.Next(), true
	}
	it.b.Next()
	return it.a.Next(), true
}

// rankPage scores the matches of every part for qcs and exp, with the
// collection figures cs, and returns the page of limit after cursor c, or
// after skipping offset matches, best first: one more than the page, to
// tell whether another follows.
func rankPage(ctx context.Context, qcs []rappel.Clause, cs corpus, exp *expansion, c *cursor, offset, limit int, parts ...partMatches) ([]ranked, error) {
	top := newTopK(c, offset, limit)
	for _, p := range parts {
		sc, err := p.s.text.newScorer(qcs, cs, exp)
		if err != nil {
			return nil, err
		}
		if sc.coord {
			sc.strict = exp.strict[p.s]
		}
		if err := rankInto(ctx, p.s, p.m, sc, top); err != nil {
			return nil, err
		}
	}
	return top.page(c, offset), nil
}

// rankInto scores the matches of s with sc and offers each to top,
// looking at ctx's deadline every ctxCheckEvery documents.
func rankInto(ctx context.Context, s *Snapshot, match *roaring.Bitmap, sc *scorer, top *topK) error {
	it := match.Iterator()
	i := 0
	defer func() { opsOf(ctx).rank(i, sc) }()
	for ; it.HasNext(); i++ {
		if i%ctxCheckEvery == 0 && ctx.Err() != nil {
			return timeoutError()
		}
		d := int32(it.Next())
		top.offer(ranked{hit{s, d}, sc.score(d)})
	}
	return nil
}

// leaves is the number of terms sc scores each document for.
func (sc *scorer) leaves() int {
	n := 0
	for _, it := range sc.items {
		n += len(it.leaves)
	}
	return n
}
