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

// prefixes8 is eight two-letter prefixes ORed: each completes to up to
// 64 terms a stream, and by relevance every record is scored for some
// 800 of them. prefixes16 is sixteen.
var (
	prefixes8  = "re* OR co* OR pr* OR in* OR de* OR ca* OR pa* OR ma*"
	prefixes16 = prefixes8 + " OR st* OR sa* OR be* OR fo* OR mi* OR al* OR ch* OR tr*"
)

// pricingClasses are the searches whose price is checked against what
// they do: the ordinary ones, and each kind of expensive one the
// benchmarks and `rappel-bench abuse` send.
var pricingClasses = []struct {
	name  string
	q     string
	sort  string
	limit int
}{
	{"word_relevance", "peanut", rappel.SortRelevance, 20},
	{"and_relevance", "cheese listeria", rappel.SortRelevance, 20},
	{"common_relevance", "recall", rappel.SortRelevance, 100},
	{"common_published", "recall", rappel.SortPublished, 100},
	{"or32_relevance", expensiveOr, rappel.SortRelevance, 1},
	{"or32_date", expensiveOr, "", 1},
	{"phrases16_relevance", expensivePhrases, rappel.SortRelevance, 1},
	{"phrases16_date", expensivePhrases, "", 1},
	{"prefix_relevance", "pe*", rappel.SortRelevance, 20},
	{"prefixes8_relevance", prefixes8, rappel.SortRelevance, 10},
	{"prefixes8_date", prefixes8, "", 10},
	{"prefixes16_relevance", prefixes16, rappel.SortRelevance, 10},
	{"misspelled30", misspelledWords, "", 20},
}

// BenchmarkSegment_Pricing measures each of pricingClasses against its
// price: units is its Search-Cost, ms/unit the time it took over the
// time its price stands for (1 when exact; a search costs 1 unit at
// least, so a search far shorter than a millisecond is below 1).
func BenchmarkSegment_Pricing(b *testing.B) {
	seg, err := OpenSegmentBytes("bundle", embeddedSegment(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range pricingClasses {
		b.Run(c.name, func(b *testing.B) {
			q := rappel.Search{Limit: c.limit, Query: mustQuery(b, c.q), SortBy: c.sort}
			_, units, err := seg.View().SearchCost(context.Background(), checked(b, &q))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				// The estimate and the search, as a node runs them.
				q := q
				ctx, _, err := seg.View().SearchCost(context.Background(), checked(b, &q))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := seg.View().Search(ctx, checked(b, &q)); err != nil {
					b.Fatal(err)
				}
			}
			ms := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / 1e6
			b.ReportMetric(float64(units), "units")
			b.ReportMetric(ms/float64(units), "ms/unit")
		})
	}
}
