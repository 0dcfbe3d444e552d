package index

import (
	"bufio"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// BenchmarkSnapshot_RelevanceReal times the real judged set's queries
// (testdata/judged-real), as a search box sends them (sort_by=relevance,
// a page of 10), over the bundle's 41,000 records, and reports the p50 and
// p99 of one search across the set: field tiers, proximity and the
// relaxations are all on this path.
//
//	go test -run '^$' -bench Snapshot_RelevanceReal -benchtime 20x ./kv/index/
func BenchmarkSnapshot_RelevanceReal(b *testing.B) {
	s := bundled(b)
	f, err := os.Open("../../testdata/judged-real/queries.tsv")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var qs []*rappel.Query
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 2 || cols[0] == "class" || strings.HasPrefix(cols[0], "#") {
			continue
		}
		q, err := rappel.ParseQuery(cols[1])
		if err != nil {
			continue // the set's refused queries are not searches
		}
		qs = append(qs, q)
	}
	ctx := context.Background()
	var took []time.Duration
	per := make([][]time.Duration, len(qs))
	for b.Loop() {
		for i, q := range qs {
			start := time.Now()
			if _, err := s.View().Search(ctx, checked(b, &rappel.Search{Query: q, SortBy: rappel.SortRelevance, Limit: 10})); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
			per[i] = append(per[i], time.Since(start))
		}
	}
	// The slowest queries by their median, for a profile to start from.
	type slow struct {
		q   string
		med time.Duration
	}
	var ss []slow
	for i, d := range per {
		slices.Sort(d)
		ss = append(ss, slow{qs[i].String(), d[len(d)/2]})
	}
	slices.SortFunc(ss, func(a, b slow) int { return int(b.med - a.med) })
	for _, x := range ss[:min(5, len(ss))] {
		b.Logf("slowest: %q median %v", x.q, x.med)
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(0, "ns/op")
}
