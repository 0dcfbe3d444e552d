package index

import (
	"context"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

// Queries a client can send to make a search expensive: the most common
// words of the records ORed, as many as q allows, and common two-word
// phrases ORed.
var (
	commonWords = strings.Fields("the and of to in for is on with by from at as be this that may not are product products recall recalled food contain contains due risk health canada distributed sold")
	// expensiveOr is commonWords ORed: every record matches.
	expensiveOr = strings.Join(commonWords, " OR ")
	// expensivePhrases is 16 common phrases ORed.
	expensivePhrases = `"of the" OR "in the" OR "to the" OR "may contain" OR "for the" OR "on the" OR "due to" OR "has been" OR "with the" OR "from the" OR "at the" OR "by the" OR "is being" OR "may be" OR "of a" OR "in a"`
)

// BenchmarkSegment_Expensive measures, on the bundle's segment as a node
// serves it, the searches the admission control is about, with the
// ordinary relevance searches beside them.
func BenchmarkSegment_Expensive(b *testing.B) {
	seg, err := OpenSegmentBytes("bundle", embeddedSegment(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		q    rappel.Search
	}{
		{"relevance_peanut", rappel.Search{Limit: 20, Query: mustQuery(b, "peanut"), SortBy: rappel.SortRelevance}},
		{"relevance_and", rappel.Search{Limit: 20, Query: mustQuery(b, "cheese listeria"), SortBy: rappel.SortRelevance}},
		{"relevance_common", rappel.Search{Limit: 100, Query: mustQuery(b, "recall"), SortBy: rappel.SortRelevance}},
		{"or32_relevance", rappel.Search{Limit: 1, Query: mustQuery(b, expensiveOr), SortBy: rappel.SortRelevance}},
		{"or32_date", rappel.Search{Limit: 1, Query: mustQuery(b, expensiveOr)}},
		{"phrases16_relevance", rappel.Search{Limit: 1, Query: mustQuery(b, expensivePhrases), SortBy: rappel.SortRelevance}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q := c.q
				if _, err := seg.View().Search(ctx, checked(b, &q)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSegment_SearchCost measures the estimate a node makes before
// every search, the expansion included.
func BenchmarkSegment_SearchCost(b *testing.B) {
	seg, err := OpenSegmentBytes("bundle", embeddedSegment(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, q string }{{"word", "peanut"}, {"or32", expensiveOr}, {"phrases16", expensivePhrases}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			q := rappel.Search{Limit: 1, Query: mustQuery(b, c.q), SortBy: rappel.SortRelevance}
			for b.Loop() {
				if _, _, err := seg.View().SearchCost(context.Background(), checked(b, &q)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
