package index

import (
	"context"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
)

// Relaxing a search that finds nothing (docs/api.md, "When words find
// nothing together"). A q of several words is an AND; when the records
// hold no record with all of them, the search leaves out the words that
// say least, as a person would retype it, rather than answer nothing:
// first the words that find nothing at all ("allergy" in "milk
// allergy"), then the words found only as a misspelling of another word,
// then the most common of the rest ("hand" before "sanitizer"), one at a
// time, until something matches. At least half of the words are kept,
// so a query that mostly names nothing still answers nothing, and what is
// kept must still say something (informative). Only plain
// words are left out: a "phrase", an -exclusion and the words of an OR
// mean what they say, and stay. The page says which words were left out
// (Page.LeftOut), and its count is the relaxed search's, exact for what
// it returns. relax=off (Search.NoRelax) keeps the AND strict.

// maxRelaxWords bounds the words a relaxation considers: each costs a
// count of its own, and a q of more plain words than this that finds
// nothing is not one a person typed into a search box.
const maxRelaxWords = 8

// relaxed is a relaxed search: the search it ran instead, what its terms
// matched, and the words left out as typed.
type relaxed struct {
	q       *rappel.Search
	exp     *expansion
	ms      []partMatches
	count   int
	leftOut []string
	// optional are the words a softened search made optional.
	optional []string
}

// relax returns the relaxation of q, which found nothing, or nil when q
// has nothing to leave out or leaving out all it may still finds nothing.
func (v *View) relax(ctx context.Context, parts []part, q *rappel.Search, exp *expansion) (*relaxed, error) {
	cs := clauses(q)
	var plain []int // the clauses that may be left out
	positive := 0
	for i, c := range cs {
		if c.Exclude {
			continue
		}
		positive++
		if len(c.Terms) == 1 && !c.Terms[0].Phrase {
			plain = append(plain, i)
		}
	}
	if positive < 2 || len(plain) == 0 || len(plain) > maxRelaxWords {
		return nil, nil
	}
	corrected := map[string]bool{}
	for _, c := range exp.corr {
		corrected[c.Word] = true
	}
	lx := newLexicon(ctx, parts)
	// Each word's own count, with the search's filters.
	cands := make([]candidate, 0, len(plain))
	for _, i := range plain {
		one := withClauses(q, cs[i:i+1])
		e, err := lx.expand(one)
		if err != nil {
			return nil, err
		}
		_, n, err := v.matches(ctx, parts, one, e)
		if err != nil {
			return nil, err
		}
		t := cs[i].Terms[0]
		word := t.Text
		if t.Prefix {
			word += "*"
		}
		cands = append(cands, candidate{clause: i, count: n, typo: corrected[word]})
	}
	// What says least goes first: nothing found, found as a misspelling
	// only, then the most common; the later word first among equals.
	sort.SliceStable(cands, func(a, b int) bool {
		x, y := cands[a], cands[b]
		if (x.count == 0) != (y.count == 0) {
			return x.count == 0
		}
		if x.typo != y.typo {
			return x.typo
		}
		if x.count != y.count {
			return x.count > y.count
		}
		return x.clause > y.clause
	})
	maxOut := positive / 2
	// try runs the search without the clauses in out, and returns it when
	// it finds something and what it keeps still says something.
	try := func(out map[int]bool) (*relaxed, error) {
		var kept []rappel.Clause
		var left []string
		for i, c := range cs {
			if out[i] {
				left = append(left, c.Terms[0].Text)
				continue
			}
			kept = append(kept, c)
		}
		rq := withClauses(q, kept)
		e, err := lx.expand(rq)
		if err != nil {
			return nil, err
		}
		ms, n, err := v.matches(ctx, parts, rq, e)
		if err != nil || n == 0 || !informative(cs, out, cands, v.Len()) {
			return nil, err
		}
		return &relaxed{q: rq, exp: e, ms: ms, count: n, leftOut: left}, nil
	}
	out := map[int]bool{}
	for k, cand := range cands {
		if k >= maxOut {
			break
		}
		out[cand.clause] = true
		// Words that find nothing on their own go together: the search
		// cannot find anything while one of them stays.
		if cand.count == 0 && k+1 < len(cands) && cands[k+1].count == 0 && k+1 < maxOut {
			continue
		}
		if r, err := try(out); r != nil || err != nil {
			return r, err
		}
	}
	// Leaving out the words in that order found nothing: the word that
	// keeps the others apart may be another ("medication" in "blood
	// pressure medication", where "pressure" is the most common). Each
	// other word is then left out alone, in the same order, so that the
	// answer keeps as many of the words as any could.
	if cands[0].count > 0 {
		for _, cand := range cands[1:] {
			if cand.count == 0 {
				break
			}
			if r, err := try(map[int]bool{cand.clause: true}); r != nil || err != nil {
				return r, err
			}
		}
	}
	return nil, nil
}

// candidate is a word relax may leave out, with what it finds alone and
// whether it is found only as a misspelling of another word.
type candidate struct {
	clause, count int
	typo          bool
}

// informative reports whether the clauses kept (those of cs not out)
// still say what was searched for: one of them is a phrase or an OR, or
// a word of three characters or more, not a number, that at most a tenth
// of the records hold. "hepatitis a" left with "a", "iphone 15" with
// "15", would answer with records that have nothing to do with either.
func informative(cs []rappel.Clause, out map[int]bool, cands []candidate, records int) bool {
	counts := map[int]int{}
	for _, c := range cands {
		counts[c.clause] = c.count
	}
	for i, c := range cs {
		if out[i] || c.Exclude {
			continue
		}
		n, isPlain := counts[i]
		if !isPlain {
			return true
		}
		w := c.Terms[0].Text
		if utf8.RuneCountInString(w) >= 3 && !rappel.IsDigits(w) && n <= max(records/10, 1) {
			return true
		}
	}
	return false
}

// withClauses is q with cs as its clauses, read as given: a prefix=last
// is already in cs (clauses), and must not move to another last word.
func withClauses(q *rappel.Search, cs []rappel.Clause) *rappel.Search {
	rq := *q
	rq.Query = &rappel.Query{Clauses: slices.Clone(cs)}
	rq.PrefixLast = false
	return &rq
}

// Softening a search that finds too little. When a search sorted by
// relevance finds fewer than softBelow records with all its words, its
// plain words become one OR: a record needs one of them, and ranks by how
// many it holds (coordBonus a word), then by BM25, so the records with
// every word still come first and those missing one follow ("bread
// metal" finds the notice with both, then the buns and bagels with
// "pieces of metal"); what matched the search before it was softened
// ranks before all else. Phrases, exclusions and ORs stay required. The page
// lists the words made optional (Page.Optional) and counts every record
// it ranks. A search sorted otherwise is not softened: by date, a record
// with one word would come before one with all.
const softBelow = 3

// soften returns the softened q, or nil when q has fewer than two plain
// words to make optional or softening finds no more.
func (v *View) soften(ctx context.Context, parts []part, q *rappel.Search, strictMs []partMatches, strict int) (*relaxed, error) {
	cs := clauses(q)
	var kept []rappel.Clause
	var or rappel.Clause
	at := -1
	for _, c := range cs {
		if c.Exclude || len(c.Terms) != 1 || c.Terms[0].Phrase {
			kept = append(kept, c)
			continue
		}
		if at < 0 {
			at = len(kept)
			kept = append(kept, rappel.Clause{})
		}
		or.Terms = append(or.Terms, c.Terms[0])
	}
	if len(or.Terms) < 2 || len(or.Terms) > maxRelaxWords {
		return nil, nil
	}
	kept[at] = or
	rq := withClauses(q, kept)
	e, err := newLexicon(ctx, parts).expand(rq)
	if err != nil {
		return nil, err
	}
	e.soft = at + 1
	e.strict = map[*Snapshot]*roaring.Bitmap{}
	for _, m := range strictMs {
		e.strict[m.s] = m.m
	}
	ms, n, err := v.matches(ctx, parts, rq, e)
	if err != nil || n <= strict {
		return nil, err
	}
	words := make([]string, len(or.Terms))
	for i, t := range or.Terms {
		words[i] = t.Text
		if t.Prefix {
			words[i] += "*"
		}
	}
	return &relaxed{q: rq, exp: e, ms: ms, count: n, optional: words}, nil
}
