package index

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// TestSearchCost checks on the bundle's segment that the searches of a
// word or two cost 1 or 2 however they sort (but, by relevance, a short
// prefix, which scores 128 terms, and a word most records hold, which
// scores them all; and a misspelled word, whose correction is priced at
// its worst before it runs), that the expensive ones cost
// many units, and that the expansion SearchCost computed is the one the
// search uses.
func TestSearchCost(t *testing.T) {
	seg := bundledSegment(t)
	cost := func(text, sortBy string) int {
		t.Helper()
		q := &rappel.Search{Query: mustQuery(t, text), SortBy: sortBy, Limit: 20}
		ctx, n, err := seg.View().SearchCost(context.Background(), checked(t, q))
		if err != nil {
			t.Fatal(err)
		}
		exp, err := seg.expansion(ctx, []part{{s: seg}}, q)
		if err != nil {
			t.Fatal(err)
		}
		// An expansion the estimate computed (one within its allowance)
		// is the one the search uses.
		if e, ok := ctx.Value(expansionKey{}).(*expanded); ok && e.exp != exp {
			t.Errorf("%q: the search computed its expansion again", text)
		}
		return n
	}
	for _, text := range []string{"recall", "salmonella", "cheese listeria", `"peanut butter"`, "listeria OR salmonella", "lysteria", "pe*", "f150"} {
		for _, sortBy := range []string{"", rappel.SortPublished, rappel.SortRelevance} {
			scoresAll := (text == "pe*" || text == "recall") && sortBy == rappel.SortRelevance
			if n := cost(text, sortBy); n > 2 && !scoresAll && !(text == "lysteria" && n == 3) {
				t.Errorf("q=%q sort_by=%q costs %d units, want 1 or 2 (3 for a misspelled word, whose correction is priced before it runs)", text, sortBy, n)
			}
		}
	}
	or32 := cost(expensiveOr, rappel.SortRelevance)
	phrases := cost(expensivePhrases, rappel.SortRelevance)
	or32Date := cost(expensiveOr, "")
	t.Logf("32 words ORed: %d units by relevance, %d by date; 16 phrases ORed: %d units", or32, or32Date, phrases)
	if or32 < 8 || phrases < 8 {
		t.Errorf("the expensive searches cost %d and %d units, want 8 or more", or32, phrases)
	}
	if or32Date >= or32 {
		t.Errorf("32 words ORed cost %d units by date, not less than by relevance (%d)", or32Date, or32)
	}
}

// countingCtx is a context whose deadline has passed after a number of
// looks at it, counting the looks.
type countingCtx struct {
	context.Context
	after int64
	n     atomic.Int64
}

func (c *countingCtx) Err() error {
	if c.n.Add(1) > c.after {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *countingCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

// TestSearch_DeadlineLookedAtOften checks that an expensive search looks
// at its deadline every ctxCheckEvery documents at least, and stops with
// the timeout error as soon as it has passed, in each of its phases.
func TestSearch_DeadlineLookedAtOften(t *testing.T) {
	seg := bundledSegment(t)
	for _, tc := range []struct {
		name, text, sortBy string
	}{
		{"or32 relevance", expensiveOr, rappel.SortRelevance},
		{"phrases16 relevance", expensivePhrases, rappel.SortRelevance},
		{"phrases16 date", expensivePhrases, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := &rappel.Search{Query: mustQuery(t, tc.text), SortBy: tc.sortBy, Limit: 1}
			free := &countingCtx{Context: context.Background(), after: 1 << 62}
			if _, err := seg.View().Search(free, checked(t, q)); err != nil {
				t.Fatal(err)
			}
			looks := free.n.Load()
			if min := int64(seg.n / ctxCheckEvery); looks < min {
				t.Errorf("the search looked at its deadline %d times, want at least %d (one per %d documents)", looks, min, ctxCheckEvery)
			}
			// The deadline passes halfway, and at the very first look.
			for _, after := range []int64{looks / 2, 0} {
				ctx := &countingCtx{Context: context.Background(), after: after}
				_, err := seg.View().Search(ctx, checked(t, q))
				var e *rappel.Error
				if !errors.As(err, &e) || e.Code != rappel.ETIMEOUT {
					t.Fatalf("deadline passed after %d looks: %v, want a timeout", after, err)
				}
				if n := ctx.n.Load(); n != after+1 {
					t.Errorf("deadline passed after %d looks: looked %d times in all, want the search to stop at the first look after", after, n)
				}
			}
		})
	}
}

// misspelledWords is thirty misspelled long words: correcting them takes
// a few milliseconds each.
var misspelledWords = strings.TrimSpace(strings.Repeat("xqzlisteriaxq ", 30))

// TestSearchCost_ExpansionPricedFirst checks that an estimate prices the
// expansion step by step before taking each step: thirty misspelled
// words cost what correcting them does (they cost 1), the estimate stops
// expanding at its allowance and leaves the expansion to the search,
// and a word longer than maxExpandWord is not expanded at all.
func TestSearchCost_ExpansionPricedFirst(t *testing.T) {
	seg := bundledSegment(t)
	q := &rappel.Search{Query: mustQuery(t, misspelledWords), Limit: 20}
	ctx, n, err := seg.View().SearchCost(context.Background(), checked(t, q))
	if err != nil {
		t.Fatal(err)
	}
	if n < 30*typoWalkWork(13, 2)/costUnit {
		t.Errorf("thirty misspelled words cost %d units, want at least what their automata are priced at (%d)", n, 30*typoWalkWork(13, 2)/costUnit)
	}
	if ctx.Value(expansionKey{}) != nil {
		t.Error("the estimate expanded the thirty words instead of leaving them to the search")
	}
	lx := newLexicon(context.Background(), []part{{s: seg}})
	lx.allowance = deferExpansion
	if _, err := lx.expand(q); err != nil || !lx.over {
		t.Errorf("expanding within the allowance: %v, over %v, want over", err, lx.over)
	}
	// The search computes the expansion the estimate left.
	page, err := seg.View().Search(ctx, checked(t, q))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("thirty misspelled words: %d units, %d matches", n, page.Count)

	long := &rappel.Search{Query: mustQuery(t, strings.Repeat("x", maxExpandWord+1)), Limit: 20}
	lx = newLexicon(context.Background(), []part{{s: seg}})
	exp, err := lx.expand(long)
	if err != nil || lx.work != 0 || len(exp.terms) != 0 {
		t.Errorf("a word of %d letters: %v, work %d, %d terms expanded; want none", maxExpandWord+1, err, lx.work, len(exp.terms))
	}
}

// TestExpansion_DeadlineLookedAtOften checks that an expansion looks at
// its search's deadline as it goes, and stops at the first look after it
// has passed: correcting thirty misspelled words walks dictionaries and
// stems thousands of edits.
func TestExpansion_DeadlineLookedAtOften(t *testing.T) {
	seg := bundledSegment(t)
	q := &rappel.Search{Query: mustQuery(t, misspelledWords), Limit: 1}
	free := &countingCtx{Context: context.Background(), after: 1 << 62}
	if _, err := expand(free, []part{{s: seg}}, q); err != nil {
		t.Fatal(err)
	}
	looks := free.n.Load()
	if looks < 30 {
		t.Fatalf("expanding thirty words looked at the deadline %d times, want at least once a word", looks)
	}
	for _, after := range []int64{looks / 2, 0} {
		ctx := &countingCtx{Context: context.Background(), after: after}
		_, err := expand(ctx, []part{{s: seg}}, q)
		var e *rappel.Error
		if !errors.As(err, &e) || e.Code != rappel.ETIMEOUT {
			t.Fatalf("deadline passed after %d looks: %v, want a timeout", after, err)
		}
		if n := ctx.n.Load(); n > after+2 {
			t.Errorf("deadline passed after %d looks: looked %d times in all, want the expansion to stop at once", after, n)
		}
	}
}

// TestEachTerm_AutomatonAsksStop checks that an automaton's walk of a
// dictionary asks its stop as it goes, not only at the terms it accepts
// (a misspelled word's automaton walks much of a dictionary between two),
// and ends at the first stop that says so.
func TestEachTerm_AutomatonAsksStop(t *testing.T) {
	seg := bundledSegment(t)
	aut := typoAutomaton("xqzlisteriaxq", 2)
	asked := 0
	if err := seg.text.eachTerm(streamEN, nil, aut, func() bool { asked++; return false }, func(string, int) bool { return true }); err != nil {
		t.Fatal(err)
	}
	// The automaton accepts no term of the dictionary: every look was
	// asked between terms.
	if asked < 4 {
		t.Fatalf("a walk of the dictionary that accepts no term asked its stop %d times, want several", asked)
	}
	asked = 0
	if err := seg.text.eachTerm(streamEN, nil, aut, func() bool { asked++; return asked == 3 }, func(string, int) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if asked != 3 {
		t.Errorf("the walk asked its stop %d times, want it to end at the third", asked)
	}
}

// TestSearchCost_TracksWork checks that each class of pricingClasses is
// priced within 2× of what its search does: the operations the search
// counts (searchOps, with its context carrying them) priced as the
// estimate prices them, and its expansion as priced step by step. Time
// itself is BenchmarkSegment_Pricing's, not a test's: the count is the
// same on every machine. Eight two-letter prefixes ORed by relevance
// were priced 7 units for a search of 32 million terms scored.
func TestSearchCost_TracksWork(t *testing.T) {
	seg := bundledSegment(t)
	for _, c := range pricingClasses {
		t.Run(c.name, func(t *testing.T) {
			q := &rappel.Search{Query: mustQuery(t, c.q), SortBy: c.sort, Limit: c.limit}
			_, units, err := seg.View().SearchCost(context.Background(), checked(t, q))
			if err != nil {
				t.Fatal(err)
			}
			var got searchOps
			if _, err := seg.View().Search(withOps(context.Background(), &got), checked(t, q)); err != nil {
				t.Fatal(err)
			}
			lx := newLexicon(context.Background(), []part{{s: seg}})
			if _, err := lx.expand(q); err != nil {
				t.Fatal(err)
			}
			want := 1 + (lx.work+got.work())/costUnit
			t.Logf("%d units for a search of %d (%+v)", units, want, got)
			if units > 2*want || 2*units < want {
				t.Errorf("priced %d units, for a search whose work is %d units (%+v): want within 2×", units, want, got)
			}
		})
	}
	// The counts are the search's: a prefix's completions were priced
	// from the dictionary's figures, not walked.
	q := &rappel.Search{Query: mustQuery(t, prefixes8), SortBy: rappel.SortRelevance, Limit: 10}
	ctx, units, _ := seg.View().SearchCost(context.Background(), checked(t, q))
	if ctx.Value(expansionKey{}) != nil {
		t.Error("the estimate completed eight prefixes, past its allowance")
	}
	if units < 100 {
		t.Errorf("eight prefixes ORed by relevance cost %d units, want hundreds", units)
	}
}

// TestPrefixStat checks the dictionary's figures of a prefix against the
// completions of it: the same terms, holding the same documents.
func TestPrefixStat(t *testing.T) {
	seg := bundledSegment(t)
	for _, p := range []string{"re", "co", "con", "list", "listeri"} {
		for s := range 2 {
			lx := newLexicon(context.Background(), []part{{s: seg}})
			docs := 0
			got := lx.completions(s, p)
			for _, e := range got {
				docs += lx.visible(s, e.term)
			}
			est := lx.prefixEstimate(s, p)
			if est.terms < len(got) || est.docs < docs || (len(p) <= statPrefixLen && 2*docs < est.docs) {
				t.Errorf("%q stream %d: figures %+v, completions %d terms holding %d documents", p, s, est, len(got), docs)
			}
		}
	}
}
