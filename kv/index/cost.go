package index

import (
	"context"
	"slices"

	"github.com/rappel-ca/rappel"
)

// The cost of a search, estimated before it runs from what the index
// already knows without reading a posting: the number of documents each
// term's posting holds (its dictionary value), for every term the query's
// words expand to (typos, prefixes, splits, synonyms). Matching reads the
// postings of every term, a phrase reads the positions of each document
// holding all its words, and relevance scores every match once for each
// term and stream. The estimate is an upper bound of that work in
// postings and documents read, in units of costUnit; a search of a word
// or two, sorted any way, is 1.

// costUnit is the work of one cost unit: about a millisecond of one core.
const costUnit = 200_000

// phraseWork is what checking one candidate of a phrase costs per word,
// against reading one posting entry: its positions decoded and searched.
const phraseWork = 4

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
// much); the estimate then counts the expansion's priced work and the
// query's words by their own forms. So an estimate itself never does
// more than half a millisecond of expansion, whatever q holds.
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
	if lx.over {
		return ctx, 1 + (lx.work+cm.searchWork(q, noExpansion))/costUnit, nil
	}
	work := lx.work + cm.searchWork(q, exp)
	ctx = context.WithValue(ctx, expansionKey{}, &expanded{q: q, first: parts[0].s, n: len(parts), exp: exp})
	return ctx, 1 + work/costUnit, nil
}

// noExpansion is the expansion of a search whose words match by their
// own forms only.
var noExpansion = &expansion{}

// deferExpansion is the expansion work SearchCost does before admission
// at most: half a millisecond of a core. Every search pays it before it is
// refused or queued, so it stays small; a prefix's completions fit in it,
// so that their postings are priced, and a correction mostly does not.
const deferExpansion = costUnit / 2

// What each step of an expansion costs, in the units of searchWork (a
// posting entry read, about 5 ns), measured on the bundle's index
// (BenchmarkSegment_Expansion reports the time each priced millisecond
// took):
//   - a prefix walks the dictionary's terms that begin with it;
//   - a word no record holds is tried split in two at each character
//     (and in three, up to maxSplit3 characters): a few lookups each;
//   - and, with typos on, is corrected: an automaton of each of its
//     forms runs over each stream's dictionary, then, when they find
//     nothing, each of its single edits (54 a character) is stemmed and
//     looked up, in each stream.
const (
	prefixWork     = 40_000
	lookupWork     = 400
	automatonWork  = 50_000
	automatonChar  = 3_000
	editWork       = 700
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

// searchWork estimates the postings and documents that q reads.
func (cm costModel) searchWork(q *rappel.Search, exp *expansion) int {
	cs := clauses(q)
	work := 0
	leaves := 0     // terms relevance scores each match for
	matched := cm.n // an upper bound of the matches
	for i, c := range cs {
		clause := 0 // the documents the clause's terms hold, together
		for _, t := range c.Terms {
			w, docs, l := cm.termWork(t, exp)
			work += w
			clause += docs
			if !c.Exclude {
				leaves += l
			}
		}
		if j, ok := exp.joins[i]; ok {
			for _, alt := range j.alts {
				w, docs, l := cm.termWork(alt, nil)
				work += w
				clause += docs
				leaves += l
			}
		}
		if !c.Exclude {
			matched = min(matched, clause)
		}
	}
	if sortOf(q) == rappel.SortRelevance {
		work += leaves * matched
	} else if sortOf(q) != rappel.SortDate || q.Ascending {
		work += cm.n / 8 // a walk of the sort order's permutation
	}
	work += len(q.Facets) * matched
	return work
}

// termWork estimates what matching t reads, with what exp says it also
// matches: the work, the documents it matches at most, and the terms
// relevance scores it by.
func (cm costModel) termWork(t rappel.Term, exp *expansion) (work, docs, leaves int) {
	var te *termExp
	if exp != nil {
		te = exp.terms[t]
	}
	if te == nil || !te.only {
		var words []string
		tokens(t.Text, func(w string) { words = append(words, w) })
		w, d := cm.ownWork(words)
		work, docs, leaves = work+w, docs+d, leaves+2*len(words)
	}
	if te == nil {
		return work, docs, leaves
	}
	for s, words := range te.words {
		for _, e := range words {
			d := cm.df(s, e.term)
			work, docs, leaves = work+d, docs+d, leaves+1
		}
	}
	for _, alt := range te.alts {
		w, d, l := cm.termWork(alt, nil)
		work, docs, leaves = work+w, docs+d, leaves+l
	}
	return work, docs, leaves
}

// ownWork estimates what matching words by their own forms reads, as a
// word or as a phrase, in both streams, and the documents they match at
// most.
func (cm costModel) ownWork(words []string) (work, docs int) {
	for s := range 2 {
		if len(words) == 1 {
			f := cm.an.forms(s, words[0])
			for _, t := range []string{f.main, f.alt} {
				if t != "" {
					d := cm.df(s, t)
					work, docs = work+d, docs+d
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
			work += sum + least*len(words)*phraseWork
			docs += least
		}
	}
	return work, min(docs, cm.n)
}
