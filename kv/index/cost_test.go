package index

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// TestSearchCost checks on the bundle's segment that the searches of a
// word or two cost 1 or 2 however they sort (but a short prefix by
// relevance: it scores 128 terms), that the expensive ones cost
// many units, and that the expansion SearchCost computed is the one the
// search uses.
func TestSearchCost(t *testing.T) {
	seg := bundledSegment(t)
	cost := func(text, sortBy string) int {
		t.Helper()
		q := &rappel.Search{Query: mustQuery(t, text), SortBy: sortBy, Limit: 20}
		ctx, n, err := seg.SearchCost(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		exp, err := seg.expansion(ctx, []part{{s: seg}}, q)
		if err != nil {
			t.Fatal(err)
		}
		if e := ctx.Value(expansionKey{}).(*expanded); e.exp != exp {
			t.Errorf("%q: the search computed its expansion again", text)
		}
		return n
	}
	for _, text := range []string{"recall", "salmonella", "cheese listeria", `"peanut butter"`, "listeria OR salmonella", "lysteria", "pe*", "f150"} {
		for _, sortBy := range []string{"", rappel.SortPublished, rappel.SortRelevance} {
			if n := cost(text, sortBy); n > 2 && !(text == "pe*" && sortBy == rappel.SortRelevance) {
				t.Errorf("q=%q sort_by=%q costs %d units, want 1 or 2", text, sortBy, n)
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
			if _, err := seg.Search(free, q); err != nil {
				t.Fatal(err)
			}
			looks := free.n.Load()
			if min := int64(seg.n / ctxCheckEvery); looks < min {
				t.Errorf("the search looked at its deadline %d times, want at least %d (one per %d documents)", looks, min, ctxCheckEvery)
			}
			// The deadline passes halfway, and at the very first look.
			for _, after := range []int64{looks / 2, 0} {
				ctx := &countingCtx{Context: context.Background(), after: after}
				_, err := seg.Search(ctx, q)
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
