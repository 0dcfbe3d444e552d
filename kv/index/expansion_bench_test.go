package index

import (
	"context"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

// Queries whose words the index expands (typos, splits, prefixes): what
// the estimate prices before a search runs (docs/api.md, "Limits").
var expansionQueries = []struct{ name, q string }{
	{"typo_lysteria", "lysteria"},
	{"typo_salmonelaa", "salmonelaa"},
	{"typo_contaminaton", "contaminaton"},
	{"typo_x12", strings.Repeat("x", 12)},
	{"typo_x24", strings.Repeat("x", 24)},
	{"typo_x32", strings.Repeat("x", 32)},
	{"typo_x64", strings.Repeat("x", 64)},
	{"typo_x128", strings.Repeat("x", 128)},
	{"typos30_12", strings.TrimSpace(strings.Repeat("contaminatoin ", 1) + strings.Repeat("xqzlisteriaxq ", 29))},
	{"prefix_con", "con*"},
	{"split_airbag", "airbag"},
}

// BenchmarkSegment_Expansion measures the expansion of words the index
// does not hold, on the bundle's segment, against what it is priced at:
// time/price is the time it took over the time its price stands for (a
// cost unit, a millisecond of a core), 1 when the price is exact.
func BenchmarkSegment_Expansion(b *testing.B) {
	seg, err := OpenSegmentBytes("bundle", embeddedSegment(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range expansionQueries {
		b.Run(c.name, func(b *testing.B) {
			q := rappel.Search{Limit: 1, Query: mustQuery(b, c.q)}
			work := 0
			for b.Loop() {
				lx := newLexicon(context.Background(), []part{{s: seg}})
				if _, err := lx.expand(&q); err != nil {
					b.Fatal(err)
				}
				work = lx.work
			}
			if work > 0 {
				perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(perOp/(float64(work)/costUnit*1e6), "time/price")
			}
		})
	}
}
