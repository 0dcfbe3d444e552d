package index

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/vellum"
	"github.com/blevesearch/vellum/levenshtein"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/segment"
)

// Forgiving search: what a query's words match beyond their own forms.
//
//   - A word with no exact match in either language stream (after folding
//     and stemming) matches the dictionary's terms within a
//     Damerau–Levenshtein distance of it: none for words of up to 4
//     characters, 1 for 5 to 8, 2 for 9 and more, a changed first letter
//     counting 2; never for words with digits (barcodes, recall numbers,
//     model codes), nor for a word of the synonym list. A word that
//     matches exactly is never expanded, so a correctly spelled query
//     keeps its exact count.
//   - Such a word also matches as two adjacent words when it splits into
//     two that the dictionary has ("airbag" as "air bag", "f150" as
//     "F-150", "ecoli" as "E. coli"); two adjacent words of the query also
//     match as the one word they join into ("air bag" finds "airbag").
//   - A prefix (word* or the last word with prefix=last) matches the
//     dictionary terms it begins, the most frequent first, at most
//     maxPrefixTerms of them.
//   - A word or phrase of the synonym list (synonyms.go) also matches its
//     synonyms.
//   - A word of more than maxExpandWord characters is neither corrected
//     nor split: it matches by its own forms only (docs/api.md, "Limits").
//
// The expansion is computed once per search over every part a view looks
// in, with each term's documents counted as the view sees them, so that a
// view expands as one snapshot of the same records would.

const (
	maxPrefixTerms = 64 // a prefix's expansions, the most frequent first
	maxTypoTerms   = 16 // a misspelled word's candidates, the nearest first
	// maxExpandWord is the longest word, in characters, that is corrected
	// or split. Correcting a word costs time in proportion to its length
	// (its automaton, and its single edits stemmed one by one), and no
	// word people misspell is that long: the records' longest words are
	// chemical names and URLs, typed by copying. Without a cap, one word
	// of 512 letters kept a core busy for over a minute.
	maxExpandWord = 24
)

// part is one snapshot a search looks in, with its hidden documents.
type part struct {
	s      *Snapshot
	hidden *roaring.Bitmap // nil for none
}

// expansion is what the terms of one search match besides themselves.
type expansion struct {
	terms map[rappel.Term]*termExp
	// joins[i] is what clauses i to i+n-1 also match together: the word
	// two of them join into, or a synonym of their words as a phrase.
	joins map[int]join
	corr  []rappel.Correction
	// soft is one more than the index of a softened search's optional
	// clause (relax.go), whose words relevance counts (scorer.coord); 0
	// for none. strict are then, by part, the documents the search matched
	// before it was softened.
	soft   int
	strict map[*Snapshot]*roaring.Bitmap
}

// termExp is what one query term also matches.
type termExp struct {
	// words are index terms per stream, each with its distance (0 for a
	// prefix's completions).
	words [2][]expTerm
	// alts are other terms the query term also matches: its splits, as
	// phrases, and its synonyms.
	alts []rappel.Term
	// only is set when words replace the term's own forms (a prefix: its
	// completions include the word itself when the dictionary has it).
	only bool
	// est, in an expansion SearchCost left unfinished, is what a
	// prefix's completions it did not walk hold at most, per stream.
	est [2]prefixStat
}

// join is what n adjacent clauses also match together.
type join struct {
	n    int
	alts []rappel.Term
}

type expTerm struct {
	term string
	dist int
}

// clauses returns q's clauses as a search reads them: with prefix=last,
// the last clause's last plain word is a prefix.
func clauses(q *rappel.Search) []rappel.Clause {
	if q.Query == nil {
		return nil
	}
	cs := q.Query.Clauses
	if !q.PrefixLast || len(cs) == 0 {
		return cs
	}
	last := cs[len(cs)-1]
	t := last.Terms[len(last.Terms)-1]
	if t.Phrase || t.Prefix || !isWord(t.Text) {
		return cs
	}
	cs = slices.Clone(cs)
	last.Terms = slices.Clone(last.Terms)
	last.Terms[len(last.Terms)-1].Prefix = true
	cs[len(cs)-1] = last
	return cs
}

// isWord reports whether text is one token.
func isWord(text string) bool {
	n := 0
	tokens(text, func(string) { n++ })
	return n == 1
}

// expand computes the expansion of q's terms over parts. The error
// reports a malformed term dictionary.
func expand(ctx context.Context, parts []part, q *rappel.Search) (*expansion, error) {
	return newLexicon(ctx, parts).expand(q)
}

// newLexicon returns the lexicon of parts for one search.
func newLexicon(ctx context.Context, parts []part) *lexicon {
	return &lexicon{ctx: ctx, parts: parts, df: map[dfKey]int{}}
}

// expand computes the expansion of q's terms over the lexicon's parts.
func (lx *lexicon) expand(q *rappel.Search) (*expansion, error) {
	cs := clauses(q)
	exp := &expansion{terms: map[rappel.Term]*termExp{}, joins: map[int]join{}}
	if len(cs) == 0 {
		return exp, nil
	}
	for _, c := range cs {
		for _, t := range c.Terms {
			if _, done := exp.terms[t]; done {
				continue
			}
			if te := lx.expandTerm(t, !c.Exclude && !q.NoTypos, exp); te != nil {
				exp.terms[t] = te
			}
		}
	}
	// plain reports whether clause i is one word or hyphenated word, as
	// joins and multi-word synonyms take them.
	plain := func(i int) bool {
		c := cs[i]
		return len(c.Terms) == 1 && !c.Exclude && !c.Terms[0].Phrase && !c.Terms[0].Prefix
	}
	for i := 0; i < len(cs); i++ {
		// The longest run of clauses that is a synonym list entry, then
		// two words that join into one.
		for n := min(maxSynonymWords, len(cs)-i); n >= 2; n-- {
			if !plain(i) {
				break
			}
			texts := make([]string, 0, n)
			ok := true
			for k := i; k < i+n; k++ {
				ok = ok && plain(k)
				texts = append(texts, cs[k].Terms[0].Text)
			}
			if !ok {
				continue
			}
			var alts []rappel.Term
			for _, syn := range synonymsOf(strings.Join(texts, " ")) {
				alts = append(alts, rappel.Term{Text: syn, Phrase: true})
			}
			if n == 2 && isWord(texts[0]) && isWord(texts[1]) {
				if joined := texts[0] + texts[1]; lx.exact(joined) {
					alts = append(alts, rappel.Term{Text: joined})
				}
			}
			if len(alts) > 0 {
				exp.joins[i] = join{n: n, alts: alts}
				i += n - 1
				break
			}
		}
	}
	return exp, lx.err
}

type dfKey struct {
	stream int
	term   string
}

// lexicon answers what the dictionaries of a search's parts hold, with
// document frequencies as the search sees them, memoized. It also prices
// the expansion's steps as it takes them (charge).
type lexicon struct {
	ctx   context.Context
	parts []part
	df    map[dfKey]int
	err   error // the first malformed dictionary met, or the deadline
	// work is the priced work of the steps taken, and of those priced
	// but not taken once over is set.
	work int
	// allowance, when not 0, is the work the expansion may do: a step
	// that would go past it sets over, and from then on steps are
	// priced and not taken (SearchCost).
	allowance int
	over      bool
	// automata and edits memoize what a misspelled word costs to look
	// up and does not depend on the stream: its typo automata (the
	// word folded is the same in English and French, and an automaton
	// costs more to build than the walk it guides) and its single edits.
	automata map[autKey]vellum.Automaton
	edits    map[string][]edit
}

type autKey struct {
	q      string
	budget int
}

// edit is a string one edit away from a typed word, and its distance to
// it as typoDistance counts (a transposition counts 1).
type edit struct {
	s    string
	dist int
}

// automaton returns typoAutomaton(q, budget), built once per search.
func (lx *lexicon) automaton(q string, budget int) vellum.Automaton {
	k := autKey{q, budget}
	if a, ok := lx.automata[k]; ok {
		return a
	}
	a := typoAutomaton(q, budget)
	if lx.automata == nil {
		lx.automata = map[autKey]vellum.Automaton{}
	}
	lx.automata[k] = a
	return a
}

// singleEdits returns the distinct strings one edit away from typed
// within budget, computed once per search.
func (lx *lexicon) singleEdits(typed string, budget int) []edit {
	if es, ok := lx.edits[typed]; ok {
		return es
	}
	seen := map[string]bool{}
	var es []edit
	edits(typed, func(cand string) {
		if seen[cand] {
			return
		}
		seen[cand] = true
		if d := oneEditDistance(typed, cand); d <= budget {
			es = append(es, edit{cand, d})
		}
	})
	if lx.edits == nil {
		lx.edits = map[string][]edit{}
	}
	lx.edits[typed] = es
	return es
}

// charge prices a step of the expansion at w and reports whether to take
// it: whether it fits in the allowance.
func (lx *lexicon) charge(w int) bool {
	lx.work += w
	if lx.allowance > 0 && lx.work > lx.allowance {
		lx.over = true
	}
	return !lx.over
}

// walk is eachTerm over a part, keeping the first error. It looks at the
// search's deadline every checkEvery terms, so that a walk of a large
// dictionary stops with its search.
func (lx *lexicon) walk(p part, stream int, prefix []byte, aut vellum.Automaton, fn func(term string, df int) bool) {
	if lx.expired() {
		return
	}
	n := 0
	lx.err = p.s.text.eachTerm(stream, prefix, aut, lx.expired, func(term string, df int) bool {
		if n++; n%checkEvery == 0 && lx.expired() {
			return false
		}
		return fn(term, df)
	})
	if lx.err == nil && lx.ctx.Err() != nil {
		lx.err = timeoutError()
	}
}

// checkEvery is how many terms or candidates an expansion goes through
// between two looks at the search's deadline: a fraction of a millisecond.
const checkEvery = 256

// expired reports whether the expansion must stop: its search's deadline
// passed (which it records as the expansion's error) or it failed.
func (lx *lexicon) expired() bool {
	if lx.err == nil && lx.ctx.Err() != nil {
		lx.err = timeoutError()
	}
	return lx.err != nil
}

// visible is the number of visible documents holding term in stream.
func (lx *lexicon) visible(stream int, term string) int {
	k := dfKey{stream, term}
	if n, ok := lx.df[k]; ok {
		return n
	}
	n := 0
	for _, p := range lx.parts {
		if p.hidden == nil || p.hidden.IsEmpty() {
			n += p.s.text.df(stream, term) // no bitmap to read
			continue
		}
		post, _ := p.s.text.post(stream, term)
		if post == nil {
			continue
		}
		n += post.df() - int(post.docs.AndCardinality(p.hidden))
	}
	lx.df[k] = n
	return n
}

// exact reports whether some visible document holds word, in any of its
// forms, in either stream.
func (lx *lexicon) exact(word string) bool {
	an := lx.parts[0].s.text.an
	found := false
	tokens(word, func(w string) {
		for s := range 2 {
			f := an.forms(s, w)
			if lx.visible(s, f.main) > 0 || (f.alt != "" && lx.visible(s, f.alt) > 0) {
				found = true
			}
		}
	})
	return found
}

// expandTerm returns what t also matches, or nil. typos allows typo
// corrections (not for excluded terms, nor with typos=off).
func (lx *lexicon) expandTerm(t rappel.Term, typos bool, exp *expansion) *termExp {
	te := &termExp{}
	if !t.Prefix {
		for _, syn := range synonymsOf(t.Text) {
			te.alts = append(te.alts, rappel.Term{Text: syn, Phrase: true})
		}
	}
	if t.Phrase || !isWord(t.Text) {
		return te.orNil()
	}
	word := strings.ToLower(t.Text)
	n := utf8.RuneCountInString(word)
	long := n > maxExpandWord
	if t.Prefix {
		te.only = true
		found := false
		for s := range 2 {
			if lx.charge(prefixWork) {
				te.words[s] = lx.completions(s, word)
			} else {
				te.est[s] = lx.prefixEstimate(s, word)
			}
			found = found || len(te.words[s]) > 0 || te.est[s].terms > 0
		}
		if !found && typos && !long && typoBudget(word) > 0 {
			// Nothing begins with it: what was typed so far has a typo
			// ("lysteri"), which the nearest words correct.
			var matched []string
			for s := range 2 {
				te.words[s] = lx.nearest(s, word)
				for _, e := range te.words[s] {
					matched = append(matched, e.term)
				}
			}
			if len(matched) > 0 {
				slices.Sort(matched)
				exp.corr = append(exp.corr, rappel.Correction{Word: t.Text + "*", Matched: slices.Compact(matched)})
			}
		}
		return te
	}
	// A word the vocabulary knows is matched by its group (synonyms.tsv),
	// never corrected into another: "arachides" finds peanuts, not
	// "archiv".
	if long || lx.exact(word) || len(te.alts) > 0 {
		return te.orNil()
	}
	var matched []string
	var splits []string
	if lx.charge(splitWork(n)) {
		splits = lx.splits(word)
	}
	// A word that two adjacent words of the records make is what was
	// meant ("airbag", "f150"); its near misses would only add noise.
	if typos && typoBudget(word) > 0 && len(splits) == 0 {
		for s := range 2 {
			te.words[s] = lx.nearest(s, word)
			for _, e := range te.words[s] {
				matched = append(matched, e.term)
			}
		}
	}
	for _, split := range splits {
		te.alts = append(te.alts, rappel.Term{Text: split, Phrase: true})
		matched = append(matched, split)
	}
	if len(matched) > 0 {
		slices.Sort(matched)
		exp.corr = append(exp.corr, rappel.Correction{Word: t.Text, Matched: slices.Compact(matched)})
	}
	return te.orNil()
}

func (te *termExp) orNil() *termExp {
	if len(te.alts) == 0 && len(te.words[0]) == 0 && len(te.words[1]) == 0 && !te.only {
		return nil
	}
	return te
}

// typoBudget is how many typos a word may have: 0 up to 4 characters, 1
// up to 8, 2 beyond; 0 for a word with a digit.
func typoBudget(word string) int {
	for _, r := range word {
		if unicode.IsDigit(r) {
			return 0
		}
	}
	switch n := utf8.RuneCountInString(word); {
	case n <= 4:
		return 0
	case n <= 8:
		return 1
	}
	return 2
}

// splits returns the ways word splits into two words that some visible
// document holds side by side, as "left right", or when none does, into
// three ("saftliner" as "Saf-T-Liner").
func (lx *lexicon) splits(word string) []string {
	var out []string
	for i := range word {
		if i == 0 || lx.expired() {
			continue
		}
		left, right := word[:i], word[i:]
		if lx.exact(left) && lx.exact(right) && lx.adjacent(left, right) {
			out = append(out, left+" "+right)
		}
	}
	if len(out) > 0 || len(word) > maxSplit3 {
		return out
	}
	for i := range word {
		if i == 0 || lx.expired() || !lx.exact(word[:i]) {
			continue
		}
		for j := i + 1; j < len(word); j++ {
			a, b, c := word[:i], word[i:j], word[j:]
			if lx.exact(b) && lx.exact(c) && lx.adjacent(a, b, c) {
				out = append(out, a+" "+b+" "+c)
			}
		}
	}
	return out
}

// maxSplit3 is the longest word tried split in three.
const maxSplit3 = 16

// adjacent reports whether a visible document holds the words side by
// side.
func (lx *lexicon) adjacent(words ...string) bool {
	if lx.expired() {
		return false
	}
	for _, p := range lx.parts {
		bm, err := p.s.text.phraseUnion(lx.ctx, words)
		if err != nil || bm == nil {
			continue
		}
		if p.hidden != nil {
			bm.AndNot(p.hidden)
		}
		if !bm.IsEmpty() {
			return true
		}
	}
	return false
}

// completions returns the terms of stream that word (folded, or one of
// its forms) begins, the most frequent first.
func (lx *lexicon) completions(stream int, word string) []expTerm {
	an := lx.parts[0].s.text.an
	f := an.forms(stream, word)
	raw := map[string]int{}
	for _, p := range []string{fold(word), f.main, f.alt} {
		if utf8.RuneCountInString(p) < rappel.MinPrefix {
			continue
		}
		for _, part := range lx.parts {
			lx.walk(part, stream, []byte(p), nil, func(term string, df int) bool { raw[term] += df; return true })
		}
	}
	// The most frequent first, by the dictionaries' own counts; only the
	// terms taken are counted as the search sees them (hidden documents
	// left out), so that a short prefix costs no more than a long one.
	terms := slices.Collect(maps.Keys(raw))
	slices.SortFunc(terms, func(a, b string) int { return cmp.Or(cmp.Compare(raw[b], raw[a]), strings.Compare(a, b)) })
	seen := map[string]int{}
	for _, t := range terms {
		if len(seen) == maxPrefixTerms {
			break
		}
		if n := lx.visible(stream, t); n > 0 {
			seen[t] = n
		}
	}
	return top(seen, maxPrefixTerms, func(string) int { return 0 })
}

// prefixEstimate bounds what completions(stream, word) returns, from
// the dictionaries' figures of the terms its forms begin, without walking
// them: at most maxPrefixTerms terms, holding at most the documents the
// most frequent of each form's hold (hidden documents included).
func (lx *lexicon) prefixEstimate(stream int, word string) prefixStat {
	f := lx.parts[0].s.text.an.forms(stream, word)
	var forms []string
	for _, p := range []string{fold(word), f.main, f.alt} {
		if utf8.RuneCountInString(p) >= rappel.MinPrefix && !slices.Contains(forms, p) {
			forms = append(forms, p)
		}
	}
	var est prefixStat
	for _, p := range forms {
		for _, part := range lx.parts {
			st := part.s.text.prefixStat(stream, p)
			est.terms += st.terms
			est.docs += st.docs
		}
	}
	est.terms = min(est.terms, maxPrefixTerms)
	return est
}

// nearest returns the terms of stream within word's typo budget, the
// nearest first, then the most frequent.
func (lx *lexicon) nearest(stream int, word string) []expTerm {
	budget := typoBudget(word)
	an := lx.parts[0].s.text.an
	f := an.forms(stream, word)
	dist := map[string]int{}
	seen := map[string]int{}
	forms := []string{fold(word)}
	if f.main != forms[0] {
		forms = append(forms, f.main)
	}
	for i, q := range forms {
		if !lx.charge(typoWalkWork(utf8.RuneCountInString(q), budget)) {
			continue
		}
		aut := lx.automaton(q, budget)
		if aut == nil {
			continue
		}
		// The stem is shorter than the word, and the word's budget of
		// typos makes a short stem near many unrelated words ("hepatitis",
		// stemmed "hepat", is one edit from "heat"): a term reached from
		// the stem must begin as the stem does.
		head := ""
		if i > 0 {
			head = firstRunes(q, stemHead)
		}
		for _, part := range lx.parts {
			lx.walk(part, stream, nil, aut, func(term string, _ int) bool {
				d := typoDistance(q, term)
				if d > budget || !strings.HasPrefix(term, head) {
					return true
				}
				if old, ok := dist[term]; !ok || d < old {
					dist[term] = d
				}
				if _, ok := seen[term]; !ok {
					seen[term] = lx.visible(stream, term)
				}
				return true
			})
		}
	}
	if n := utf8.RuneCountInString(word); len(seen) == 0 && n >= minEditWord && lx.charge(editsWork(n)) {
		// A long word's stem can be much shorter than the word
		// ("contamination" is indexed as "contamin"), too far for the
		// automaton from the misspelled word it was typed as: the words
		// one edit away are stemmed and looked up instead.
		for i, e := range lx.singleEdits(fold(word), budget) {
			if i%checkEvery == 0 && lx.expired() {
				break
			}
			term := stem(stream, e.s)
			n := lx.visible(stream, term)
			if n == 0 {
				continue
			}
			if old, ok := dist[term]; !ok || e.dist < old {
				dist[term] = e.dist
			}
			seen[term] = n
		}
	}
	return top(seen, maxTypoTerms, func(t string) int { return dist[t] })
}

// stemHead is how many first characters a correction reached from a
// misspelled word's stem shares with it (nearest).
const stemHead = 3

// firstRunes returns the first n characters of s, or s.
func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// minEditWord is the length from which a misspelled word's single edits
// are stemmed and looked up (nearest).
const minEditWord = 7

// edits calls fn with every string one deletion, transposition,
// substitution or insertion (of a letter a to z) away from w, which is
// folded ASCII in practice; a string may come more than once.
func edits(w string, fn func(string)) {
	b := []byte(w)
	for i := range b {
		fn(string(b[:i]) + string(b[i+1:]))
		if i+1 < len(b) {
			t := slices.Clone(b)
			t[i], t[i+1] = t[i+1], t[i]
			fn(string(t))
		}
	}
	for i := 0; i <= len(b); i++ {
		for c := byte('a'); c <= 'z'; c++ {
			fn(string(b[:i]) + string(c) + string(b[i:]))
			if i < len(b) && b[i] != c {
				fn(string(b[:i]) + string(c) + string(b[i+1:]))
			}
		}
	}
}

// top returns up to n terms of seen (term → visible documents) that some
// visible document holds, by distance, then frequency, then term.
func top(seen map[string]int, n int, dist func(string) int) []expTerm {
	terms := slices.Collect(maps.Keys(seen))
	terms = slices.DeleteFunc(terms, func(t string) bool { return seen[t] == 0 })
	slices.SortFunc(terms, func(a, b string) int {
		return cmp.Or(cmp.Compare(dist(a), dist(b)), cmp.Compare(seen[b], seen[a]), strings.Compare(a, b))
	})
	out := make([]expTerm, 0, min(n, len(terms)))
	for _, t := range terms[:min(n, len(terms))] {
		out = append(out, expTerm{t, dist(t)})
	}
	return out
}

// typoDistance is the Damerau–Levenshtein distance (adjacent
// transpositions counting one) between a and b, with a changed first
// letter counting two.
func typoDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := rappel.OSADistance(ra, rb)
	if len(ra) > 0 && len(rb) > 0 && ra[0] != rb[0] {
		d++
	}
	return d
}

// oneEditDistance is typoDistance(typed, cand) for a cand that edits
// made one edit away from typed, computed without aligning the strings
// (which, for every candidate of a long word, is what an estimate would
// otherwise have to price): 0 when the edit changed nothing, else 1, or 2
// when it changed the first letter.
func oneEditDistance(typed, cand string) int {
	switch {
	case cand == typed:
		return 0
	case typed == "" || cand == "" || typed[0] != cand[0]:
		return 2
	}
	return 1
}

// Levenshtein automaton builders, one per distance, built once: building
// one's parametric tables takes milliseconds.
var typoBuilders = sync.OnceValue(func() [3]*levenshtein.LevenshteinAutomatonBuilder {
	var out [3]*levenshtein.LevenshteinAutomatonBuilder
	for d := 1; d <= 2; d++ {
		b, err := levenshtein.NewLevenshteinAutomatonBuilder(uint8(d), true)
		if err != nil {
			panic(err) // fixed parameters: cannot fail
		}
		out[d] = b
	}
	return out
})

// typoAutomaton returns the automaton of the words within budget of q, or
// nil when it cannot be built.
func typoAutomaton(q string, budget int) vellum.Automaton {
	if budget < 1 || budget > 2 {
		return nil
	}
	dfa, err := typoBuilders()[budget].BuildDfa(q, uint8(budget))
	if err != nil {
		return nil
	}
	return dfa
}

// eachTerm calls fn for each term of stream that begins with prefix and,
// when aut is set, that aut accepts, with the number of documents of this
// index holding it (hidden ones included), until fn returns false. With
// aut, stop (when not nil) is asked every acceptCheckEvery steps of the
// walk whether to end it: an automaton can walk much of a dictionary
// between two terms it accepts. vellum walks a dictionary as its bytes
// say: a malformed one (a segment whose checksums hold but whose writer
// was faulty) is an error, not a panic.
func (ix *textIndex) eachTerm(stream int, prefix []byte, aut vellum.Automaton, stop func() bool, fn func(term string, df int) bool) (err error) {
	fst := ix.dict()
	if fst == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = ix.seg.fail(secTerms, "malformed term dictionary: %v", r)
		}
	}()
	head := termKey(nil, stream, "")
	start := append(slices.Clone(head), prefix...)
	end := successor(start)
	var it *vellum.FSTIterator
	if aut != nil {
		it, err = fst.Search(&streamAutomaton{prefix: head, inner: aut, stop: stop}, start, end)
	} else {
		it, err = fst.Iterator(start, end)
	}
	for err == nil {
		key, val := it.Current()
		if !fn(string(bytes.TrimPrefix(key, head)), ix.rawDF(val)) {
			return nil
		}
		err = it.Next()
	}
	if errors.Is(err, vellum.ErrIteratorDone) {
		return nil
	}
	return err
}

// df is the number of documents of this index holding term in stream
// (hidden ones included), read without decoding its bitmap.
func (ix *textIndex) df(stream int, term string) int {
	if ix.seg == nil {
		if p := ix.postings[stream][term]; p != nil {
			return p.df()
		}
		return 0
	}
	var buf [64]byte
	ord, found, err := segment.FSTGet(ix.seg.terms, termKey(buf[:0], stream, term))
	if err != nil || !found {
		return 0
	}
	return ix.rawDF(ord)
}

// rawDF is the document frequency of the term whose dictionary value is
// val: a built dictionary holds it; a segment's holds the term's ordinal,
// and its positions' offsets (one per document, and one more) count the
// documents without reading the bitmap.
func (ix *textIndex) rawDF(val uint64) int {
	if ix.seg == nil {
		return int(val)
	}
	if val >= uint64(ix.seg.offs.Len()) {
		return 0
	}
	return max(len(ix.seg.offs.At(int(val)))/4-1, 0)
}

// successor returns the first key after every key that begins with p.
func successor(p []byte) []byte {
	s := slices.Clone(p)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] < 0xff {
			s[i]++
			return s[:i+1]
		}
	}
	return nil
}

// dict returns the index's term dictionary: the segment's, or, for a
// snapshot built in memory, one built on first use.
func (ix *textIndex) dict() *vellum.FST {
	if ix.seg != nil {
		return ix.seg.terms
	}
	ix.dictOnce.Do(func() {
		var buf bytes.Buffer
		b, err := vellum.New(&buf, nil)
		if err != nil {
			return
		}
		var key []byte
		for s := range ix.postings {
			for _, t := range slices.Sorted(maps.Keys(ix.postings[s])) {
				key = termKey(key[:0], s, t)
				if b.Insert(key, uint64(ix.postings[s][t].df())) != nil {
					return
				}
			}
		}
		if b.Close() != nil {
			return
		}
		ix.dictFST, _ = vellum.Load(buf.Bytes())
	})
	return ix.dictFST
}

// streamAutomaton runs inner on what follows prefix in a key. Every
// acceptCheckEvery steps it asks stop whether to end the walk, which it
// then does by accepting no byte more; stop also lets a search in the pool
// of expensive searches yield its core (a yielding context's Err).
type streamAutomaton struct {
	prefix []byte
	inner  vellum.Automaton
	stop   func() bool
	steps  int
	ended  bool
}

// acceptCheckEvery is how many steps of an automaton's walk go between two
// looks at its stop: a few tens of microseconds.
const acceptCheckEvery = 1024

// States: -1 is dead; 0 to len(prefix)-1 wait for that byte of the
// prefix; len(prefix)+s is the inner automaton's state s.
func (a *streamAutomaton) Start() int { return 0 }

func (a *streamAutomaton) IsMatch(s int) bool {
	p := len(a.prefix)
	return s >= p && a.inner.IsMatch(s-p)
}

func (a *streamAutomaton) CanMatch(s int) bool {
	p := len(a.prefix)
	return s >= 0 && (s < p || a.inner.CanMatch(s-p))
}

func (a *streamAutomaton) WillAlwaysMatch(s int) bool {
	p := len(a.prefix)
	return s >= p && a.inner.WillAlwaysMatch(s-p)
}

func (a *streamAutomaton) Accept(s int, b byte) int {
	p := len(a.prefix)
	if a.stop != nil {
		if a.steps++; a.steps%acceptCheckEvery == 0 && !a.ended {
			a.ended = a.stop()
		}
	}
	switch {
	case s < 0 || a.ended:
		return -1
	case s < p:
		if b != a.prefix[s] {
			return -1
		}
		if s+1 == p {
			return p + a.inner.Start()
		}
		return s + 1
	}
	return p + a.inner.Accept(s-p, b)
}
