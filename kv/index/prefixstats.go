package index

import (
	"slices"
	"sync"
)

// Prefix figures, for pricing a prefix without walking the terms it
// begins: completing one prefix walks its range of the dictionary and
// looks its terms up, about 0.2 ms a stream, so that a search of eight
// prefixes ORed could not be priced within the estimate's allowance
// (deferExpansion), and was priced as its words' own forms, a few units
// for a search of most of a second.

// statPrefixLen is the longest prefix, in bytes, the figures are kept
// for; a longer prefix is priced by its first statPrefixLen bytes, which
// begin every term it begins.
const statPrefixLen = 4

// prefixStat is what the terms of a stream beginning with a prefix hold:
// how many of them a prefix completes to (at most maxPrefixTerms), and
// the documents the most frequent maxPrefixTerms of them hold together,
// counted once per term.
type prefixStat struct {
	terms int
	docs  int
}

// prefixStats is the figures of one index's dictionary, made on first
// use: one walk of every term (about 0.1 s a stream at the bundle's
// 125,000 terms a stream), kept as a few megabytes.
type prefixStats struct {
	once  sync.Once
	stats [2]map[string]prefixStat
}

// prefixStat returns the figures of the terms of stream that p begins
// (its first statPrefixLen bytes when longer), hidden documents included.
func (ix *textIndex) prefixStat(stream int, p string) prefixStat {
	ix.prefixes.once.Do(ix.buildPrefixStats)
	if len(p) > statPrefixLen {
		p = p[:statPrefixLen]
	}
	return ix.prefixes.stats[stream][p]
}

// buildPrefixStats walks each stream's terms in order: the terms a prefix
// begins are a run of them, whose figures are kept as the run ends. A
// malformed dictionary leaves the figures it reached; the search reports
// it.
func (ix *textIndex) buildPrefixStats() {
	for s := range ix.prefixes.stats {
		stats := map[string]prefixStat{}
		var runs [statPrefixLen + 1]struct {
			prefix string
			dfs    []int
		}
		end := func(r *struct {
			prefix string
			dfs    []int
		}) {
			if len(r.dfs) == 0 {
				return
			}
			slices.SortFunc(r.dfs, func(a, b int) int { return b - a })
			top := r.dfs[:min(len(r.dfs), maxPrefixTerms)]
			sum := 0
			for _, d := range top {
				sum += d
			}
			stats[r.prefix] = prefixStat{terms: len(top), docs: sum}
			r.dfs = r.dfs[:0]
		}
		_ = ix.eachTerm(s, nil, nil, nil, func(term string, df int) bool {
			for l := 2; l <= min(statPrefixLen, len(term)); l++ {
				r := &runs[l]
				if term[:l] != r.prefix {
					end(r)
					r.prefix = term[:l]
				}
				r.dfs = append(r.dfs, df)
			}
			return true
		})
		for l := range runs {
			end(&runs[l])
		}
		ix.prefixes.stats[s] = stats
	}
}
