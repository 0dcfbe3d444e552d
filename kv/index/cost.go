package index

import (
	"context"
	"slices"

	"github.com/rappel-ca/rappel"
)

// The cost of a search, estimated before it runs from what the index
// already knows without reading a posting: the number of documents each
// term's posting holds (its dictionary value), for every term the query's
// words expand to (typos, prefixes, splits, synonyms). From those it
// bounds the operations the search will do (searchOps): the posting
// entries matching reads, the positions a phrase compares, and for
// relevance the terms scored for every candidate, and it prices each
// operation at what it takes (opWork). A search of a word or two, sorted
// any way, is 1.

// costUnit is the work of one cost unit: a millisecond of one core. Work
// is counted in nanoseconds of a core of the machines measured.
const costUnit = 1_000_000

// searchOps counts the operations of one search whose number decides its
// time. SearchCost estimates them (an upper bound of each); a search
// whose context carries a searchOps (withOps) counts the ones it does,
// which is how the estimate is checked (TestSearchCost_TracksWork).
type searchOps struct {
	postings int // posting entries read to match: each posting's documents
	phrase   int // phrase candidates times the phrase's words
	ranked   int // candidates scored by relevance
	scored   int // candidates times the terms scored
	hits     int // of those, the terms a candidate holds
	walked   int // places of a sort order's permutation walked
	faceted  int // matches counted into facets, times the facets
}

// What each operation takes, in nanoseconds, measured on the bundle's
// index (BenchmarkSegment_Pricing reports the milliseconds each cost unit
// took, class by class): matching unions or intersects whole postings, a
// nanosecond an entry; a phrase reads each candidate's positions of each
// word; relevance looks at the cursor of each term for each candidate,
// and for a term the candidate holds also reads its positions and
// computes its score. A look costs more as the terms grow (their cursors
// leave the cache: 18 ns a look at 800 terms, 30 at 1,250): scoreWork is
// between.
const (
	postingWork = 1
	phraseWork  = 45
	rankWork    = 20
	scoreWork   = 22
	hitWork     = 30
	walkWork    = 5
	facetWork   = 5
)

// work is what the operations take, in nanoseconds.
func (o searchOps) work() int {
	return o.postings*postingWork + o.phrase*phraseWork + o.ranked*rankWork +
		o.scored*scoreWork + o.hits*hitWork + o.walked*walkWork + o.faceted*facetWork
}

// read counts n posting entries read; o may be nil.
func (o *searchOps) read(n int) {
	if o != nil {
		o.postings += n
	}
}

// rank counts docs candidates scored by sc; o may be nil.
func (o *searchOps) rank(docs int, sc *scorer) {
	if o != nil {
		o.ranked += docs
		o.scored += docs * sc.leaves()
		o.hits += sc.hits
	}
}

type opsKey struct{}

// withOps returns ctx with o, which the searches run with it count their
// operations in. A search runs on one goroutine: o is not locked.
func withOps(ctx context.Context, o *searchOps) context.Context {
	return context.WithValue(ctx, opsKey{}, o)
}

// opsOf is the searchOps ctx carries, or nil.
func opsOf(ctx context.Context) *searchOps {
	o, _ := ctx.Value(opsKey{}).(*searchOps)
	return o
}

var _ rappel.CostEstimator = (*View)(nil)

// SearchCost estimates the cost of q in cost units (docs/api.md, "Limits"),
// computing its expansion once: the context returned carries it to the
// Search of q on v that follows, which does not compute it again.
//
// Every step of the expansion is priced before it runs (lexicon.charge),
// against an allowance of deferExpansion: a step that would go past it is
// not run, and the steps after it are only priced, as if each ran. Such
// an expansion is left to the search, which computes it within its
// budget (in the pool of expensive searches when the whole costs that
// much); the estimate then counts the expansion's priced work, the
// prefixes it did not complete by the dictionary's figures of the terms
// they begin (prefixStats, looked up, not walked), and the words it did
// not correct by their own forms. So an estimate itself never does more
// than half a millisecond of expansion, whatever q holds.
func (v *View) SearchCost(ctx context.Context, cq rappel.CheckedSearch) (context.Context, int, error) {
	q := cq.Search()
	parts := v.parts()
	lx := newLexicon(ctx, parts)
	lx.allowance = deferExpansion
	exp, err := lx.expand(q)
	if err != nil {
		return ctx, 0, err
	}
	// The figures of the visible records, whatever parts hold them, so
	// that a view costs what one snapshot of the same records would.
	cm := costModel{an: v.base.text.an, df: lx.visible, n: v.n}
	cost := 1 + (lx.work+cm.searchOps(q, exp).work())/costUnit
	if lx.over {
		// The expansion is unfinished: its prefixes left are priced
		// from the dictionary's figures, its corrections left as the
		// words' own forms; the search computes it whole.
		return ctx, cost, nil
	}
	ctx = context.WithValue(ctx, expansionKey{}, &expanded{q: q, first: parts[0].s, n: len(parts), exp: exp})
	return ctx, cost, nil
}

// deferExpansion is the expansion work SearchCost does before admission
// at most: half a millisecond of a core. Every search pays it before it is
// refused or queued, so it stays small; a prefix's completions fit in it,
// so that their postings are priced, and a correction mostly does not.
const deferExpansion = costUnit / 2

// What each step of an expansion costs, in nanoseconds, measured on the
// bundle's index (BenchmarkSegment_Expansion reports the time each priced
// millisecond took):
//   - a prefix walks the dictionary's terms that begin with it;
//   - a word no record holds is tried split in two at each character
//     (and in three, up to maxSplit3 characters): a few lookups each;
//   - and, with typos on, is corrected: an automaton of each of its
//     forms runs over each stream's dictionary, then, when they find
//     nothing, each of its single edits (54 a character) is stemmed and
//     looked up, in each stream.
const (
	prefixWork     = 200_000
	lookupWork     = 2_000
	automatonWork  = 250_000
	automatonChar  = 15_000
	editWork       = 3_500
	editsPerLetter = 54
)

// splitWork is the price of trying a word of n characters split.
func splitWork(n int) int {
	w := n * lookupWork
	if n <= maxSplit3 {
		w += n * n / 2 * lookupWork
	}
	return w
}

// typoWalkWork is the price of running the automaton of a word of n
// characters, within budget typos, over one stream's dictionary.
func typoWalkWork(n, budget int) int {
	return budget * (automatonWork + n*automatonChar)
}

// editsWork is the price of stemming and looking up the single edits of
// a word of n characters in one stream.
func editsWork(n int) int {
	return editsPerLetter * n * editWork
}

// expansionKey is the context key of an expansion SearchCost computed.
type expansionKey struct{}

// expanded is the expansion of one search over the parts of one view.
type expanded struct {
	q     *rappel.Search
	first *Snapshot
	n     int
	exp   *expansion
}

// expansion returns the expansion of q over parts: the one SearchCost put
// in ctx for the same search and parts, or a new one.
func (s *Snapshot) expansion(ctx context.Context, parts []part, q *rappel.Search) (*expansion, error) {
	if e, ok := ctx.Value(expansionKey{}).(*expanded); ok && sameWords(e.q, q) && e.first == parts[0].s && e.n == len(parts) {
		return e.exp, nil
	}
	return expand(ctx, parts, q)
}

// sameWords reports whether a and b expand alike: the same clauses, read
// the same way. GET /recall/suggest estimates the search it runs from a
// Search of its own.
func sameWords(a, b *rappel.Search) bool {
	if a == b {
		return true
	}
	if a.NoTypos != b.NoTypos || a.PrefixLast != b.PrefixLast || (a.Query == nil) != (b.Query == nil) {
		return false
	}
	return a.Query == nil || slices.EqualFunc(a.Query.Clauses, b.Query.Clauses, func(x, y rappel.Clause) bool {
		return x.Exclude == y.Exclude && slices.Equal(x.Terms, y.Terms)
	})
}

// costModel is what an estimate needs of the records searched: their
// analyzer, the number of documents holding a term, and their number.
type costModel struct {
	an *analyzer
	df func(stream int, term string) int
	n  int
}

// searchOps estimates the operations q does (an upper bound of each),
// from the documents holding each term it reads.
func (cm costModel) searchOps(q *rappel.Search, exp *expansion) searchOps {
	var o searchOps
	var scored []int // the documents holding each term relevance scores
	matched := cm.n  // an upper bound of the matches
	for i, c := range clauses(q) {
		clause := 0 // the documents the clause's terms hold, together
		var leaves []int
		for _, t := range c.Terms {
			clause += cm.termOps(&o, &leaves, t, exp)
		}
		if j, ok := exp.joins[i]; ok {
			for _, alt := range j.alts {
				clause += cm.termOps(&o, &leaves, alt, nil)
			}
		}
		if !c.Exclude {
			matched = min(matched, clause)
			scored = append(scored, leaves...)
		}
	}
	switch {
	case sortOf(q) == rappel.SortRelevance:
		o.ranked = matched
		o.scored = len(scored) * matched
		for _, d := range scored {
			o.hits += min(d, matched)
		}
	case sortOf(q) != rappel.SortDate || q.Ascending:
		o.walked = cm.n / 8 // a walk of the sort order's permutation
	}
	o.faceted = len(q.Facets) * matched
	return o
}

// termOps adds to o what matching t reads, with what exp says it also
// matches, and to leaves the documents holding each term relevance
// scores it by; it returns the documents t matches at most.
func (cm costModel) termOps(o *searchOps, leaves *[]int, t rappel.Term, exp *expansion) (docs int) {
	var te *termExp
	if exp != nil {
		te = exp.terms[t]
	}
	if te == nil || !te.only {
		var words []string
		tokens(t.Text, func(w string) { words = append(words, w) })
		docs += cm.ownOps(o, words)
		// Relevance scores each word by its main form in each stream.
		for s := range 2 {
			for _, w := range words {
				*leaves = append(*leaves, cm.df(s, cm.an.forms(s, w).main))
			}
		}
	}
	if te == nil {
		return docs
	}
	for s, words := range te.words {
		for _, e := range words {
			d := cm.df(s, e.term)
			o.postings += d
			docs += d
			*leaves = append(*leaves, d)
		}
		// A prefix whose completions the estimate left to the search:
		// the most frequent terms it begins, from the dictionary's
		// figures (prefixStats).
		if est := te.est[s]; est.terms > 0 {
			o.postings += est.docs
			docs += est.docs
			for range est.terms {
				*leaves = append(*leaves, est.docs/est.terms)
			}
		}
	}
	for _, alt := range te.alts {
		docs += cm.termOps(o, leaves, alt, nil)
	}
	return docs
}

// ownOps adds to o what matching words by their own forms reads, as a
// word or as a phrase, in both streams, and returns the documents they
// match at most.
func (cm costModel) ownOps(o *searchOps, words []string) (docs int) {
	for s := range 2 {
		if len(words) == 1 {
			f := cm.an.forms(s, words[0])
			for _, t := range []string{f.main, f.alt} {
				if t != "" {
					d := cm.df(s, t)
					o.postings += d
					docs += d
				}
			}
			continue
		}
		for _, alt := range []bool{false, true} {
			if alt && s != streamFR {
				continue
			}
			sum, least := 0, cm.n
			for _, w := range words {
				f := cm.an.forms(s, w)
				t := f.main
				if alt && f.alt != "" {
					t = f.alt
				}
				d := cm.df(s, t)
				sum, least = sum+d, min(least, d)
			}
			// Every posting is read; each document holding all the
			// words has their positions compared.
			o.postings += sum
			o.phrase += least * len(words)
			docs += least
		}
	}
	return min(docs, cm.n)
}
