package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/rappel-ca/rappel/bundle"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/judged"
)

// The scoring and ranking that rank.go replaced, kept as the reference the
// scorer and the bounded heap are checked against: every match scored
// with a dictionary look-up per term, then every match sorted.

// refScore returns the BM25 score of doc for the query's positive terms,
// as textIndex.score did.
func (ix *textIndex) refScore(qcs []rappel.Clause, doc int32, cs corpus, exp *expansion) float64 {
	var total float64
	var near [][2]string // consecutive words whose nearness adds
	last := ""
	for i, c := range qcs {
		if c.Exclude {
			continue
		}
		for _, t := range c.Terms {
			var te *termExp
			if exp != nil {
				te = exp.terms[t]
			}
			if te == nil || !te.only {
				total += ix.refText(t.Text, doc, cs, 1)
				n := 0
				tokens(t.Text, func(string) { n++ })
				if len(c.Terms) == 1 && !t.Phrase && !t.Prefix && n == 1 {
					if last != "" {
						near = append(near, [2]string{last, t.Text})
					}
					last = t.Text
				} else {
					last = ""
				}
			} else {
				last = ""
			}
			if te == nil {
				continue
			}
			for s, words := range te.words {
				for _, e := range words {
					total += ix.refBM25(s, e.term, doc, cs, 1/float64((1+e.dist)*(1+e.dist)))
				}
			}
			for _, alt := range te.alts {
				total += ix.refText(alt.Text, doc, cs, 0.5)
			}
		}
		if exp != nil {
			for _, alt := range exp.joins[i].alts {
				total += ix.refText(alt.Text, doc, cs, 0.5)
			}
		}
	}
	for _, pr := range near {
		total += ix.refNear(pr[0], pr[1], doc, cs)
	}
	return total
}

// refNear is the proximity bonus of words a then b in doc: the best of
// the streams.
func (ix *textIndex) refNear(a, b string, doc int32, cs corpus) float64 {
	var best float64
	for s := range ix.postings {
		var ws [2]string
		tokens(a, func(w string) { ws[0] = ix.an.term(s, w) })
		tokens(b, func(w string) { ws[1] = ix.an.term(s, w) })
		pa, _ := ix.post(s, ws[0])
		pb, _ := ix.post(s, ws[1])
		if pa == nil || pb == nil || pa.span(doc) == nil || pb.span(doc) == nil {
			continue
		}
		best = max(best, proximityBonus(decodePositions(nil, pa.span(doc)), decodePositions(nil, pb.span(doc)),
			idfOf(cs.docs, cs.df(s, ws[0], pa)), idfOf(cs.docs, cs.df(s, ws[1], pb))))
	}
	return best
}

func (ix *textIndex) refText(text string, doc int32, cs corpus, weight float64) float64 {
	var total float64
	tokens(text, func(w string) {
		for s := range ix.postings {
			total += ix.refBM25(s, ix.an.term(s, w), doc, cs, weight)
		}
	})
	return total
}

func (ix *textIndex) refBM25(s int, term string, doc int32, cs corpus, weight float64) float64 {
	p, _ := ix.post(s, term)
	if p == nil {
		return 0
	}
	tf := p.tf(doc)
	if tf == 0 {
		return 0
	}
	return ix.bm25Of(s, doc, weight, idfOf(cs.docs, cs.df(s, term, p)), tf, cs.avgLen[s])
}

// refRanking is every match of q in s, scored by refScore and sorted.
func refRanking(t *testing.T, s *Snapshot, q *rappel.Search) []ranked {
	t.Helper()
	exp, match := expandMatch(t, s, q)
	qcs := clauses(q)
	var out []ranked
	for _, d := range match.ToArray() {
		out = append(out, ranked{hit{s, int32(d)}, s.text.refScore(qcs, int32(d), s.text.corpus(), exp)})
	}
	slices.SortFunc(out, func(a, b ranked) int {
		if rankedBefore(&a, &b) {
			return -1
		}
		return 1
	})
	return out
}

// TestRank_SameAsFullSort checks, on the bundle's segment and for every
// query of the judged set and the expensive ones, that a page by relevance
// (the scorer and the bounded heap) is the reference's page: the same
// records with the same scores, bit for bit, at several offsets, limits
// and after a cursor.
func TestRank_SameAsFullSort(t *testing.T) {
	seg := bundledSegment(t)
	f, err := os.Open("../../testdata/judged/queries.tsv")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := judged.Read(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{expensiveOr, expensivePhrases, "recall", "peanut OR milk OR egg", "cheese listeria", `"peanut butter" OR almond*`}
	prefixLast := map[string]bool{}
	for _, q := range qs {
		texts = append(texts, q.Q)
		prefixLast[q.Q] = q.Params.Get("prefix") == "last"
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pages := 0
	for _, text := range texts {
		query, err := rappel.ParseQuery(text)
		if err != nil || query == nil {
			continue
		}
		base := rappel.Search{Query: query, SortBy: rappel.SortRelevance, PrefixLast: prefixLast[text]}
		want := refRanking(t, seg, &base)
		for _, pg := range []struct{ offset, limit int }{{0, 1}, {0, 10}, {rng.IntN(50), 1 + rng.IntN(100)}} {
			q := base
			q.Offset, q.Limit = pg.offset, pg.limit
			checkPage(t, seg, &q, want, pg.offset)
			pages++
		}
		if len(want) > 12 {
			// A cursor after the 10th record: the heap keeps only what
			// ranks after it.
			q := base
			q.Limit = 10
			page, err := seg.View().Search(context.Background(), checked(t, &q))
			if err != nil {
				t.Fatal(err)
			}
			q.Cursor = page.NextCursor
			checkPage(t, seg, &q, want, 10)
			pages++
		}
	}
	t.Logf("%d pages of %d queries compared", pages, len(texts))
}

// checkPage runs q on s through pageByRelevance and compares its page with
// want[from:], the reference's ranking.
func checkPage(t *testing.T, s *Snapshot, q *rappel.Search, want []ranked, from int) {
	t.Helper()
	exp, match := expandMatch(t, s, q)
	var c *cursor
	if q.Cursor != "" {
		cc, err := s.decodeCursor(q.Cursor, q, true)
		if err != nil {
			t.Fatal(err)
		}
		c = &cc
	}
	hits, scores, err := s.View().pageByRelevance(context.Background(), q, []partMatches{{s: s, m: match}}, c, q.Offset, q.Limit, exp)
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]int32, len(hits))
	for i, h := range hits {
		docs[i] = h.doc
	}
	want = want[min(from, len(want)):]
	want = want[:min(len(want), q.Limit+1)]
	if len(docs) != len(want) {
		t.Fatalf("q=%q offset %d limit %d cursor %v: %d results, want %d", q.Query, q.Offset, q.Limit, c != nil, len(docs), len(want))
	}
	for i := range docs {
		if docs[i] != want[i].doc || scores[i] != want[i].score {
			t.Fatalf("q=%q offset %d limit %d cursor %v: result %d is %s (%v), want %s (%v)", q.Query, q.Offset, q.Limit, c != nil, i,
				s.ids.view(int(docs[i])), scores[i], want[i].id(), want[i].score)
		}
	}
}

// bundledSegment opens the bundle's segment, as a node serves it, or
// skips.
func bundledSegment(tb testing.TB) *Snapshot {
	tb.Helper()
	bundledSegOnce.Do(func() {
		b, _, err := bundle.IndexSegment()
		if err != nil || b == nil {
			bundledSegOnce.err = fmt.Errorf("no read index embedded (%v)", err)
			return
		}
		bundledSegOnce.snap, bundledSegOnce.err = OpenSegmentBytes("bundle", b, Options{})
	})
	if err := bundledSegOnce.err; err != nil {
		if os.Getenv("RAPPEL_TEST_BUNDLE") != "" {
			tb.Fatal(err)
		}
		tb.Skip("no bundle with a read index embedded: run `make bundle`")
	}
	return bundledSegOnce.snap
}

var bundledSegOnce struct {
	sync.Once
	snap *Snapshot
	err  error
}

// expandMatch is the expansion of q on s and its matches.
func expandMatch(t *testing.T, s *Snapshot, q *rappel.Search) (*expansion, *roaring.Bitmap) {
	t.Helper()
	exp, err := expand(context.Background(), []part{{s: s}}, q)
	if err != nil {
		t.Fatal(err)
	}
	match, err := s.match(context.Background(), q, true, exp)
	if err != nil {
		t.Fatal(err)
	}
	return exp, match
}
