package index

import (
	"cmp"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// Lookups by words, for screening a catalog (POST /recall/match): the
// records whose searchable text holds every word of a brand (or a model,
// or a name), ranked by how many words of a product's name they hold. A word matches as GET /recall matches a word typed with
// typos=off: in any of its forms, in either stream, without corrections,
// prefixes, splits or synonyms, and without positions (a lookup reads
// bitmaps only).

// RecordIDsWithWords returns the ids of the records whose searchable text
// holds every token of required, at most limit: when more hold them,
// those holding most of the rarest tokens of optional (maxRanked of
// them), then the newest (GET /recall's default order); when no more do,
// all of them, newest first.
// Words without a letter or digit constrain nothing; a required list
// without a token finds nothing. The error reports a malformed segment.
func (v *View) RecordIDsWithWords(required, optional []string, limit int) ([]string, error) {
	req, opt := wordTokens(required), wordTokens(optional)
	if len(req) == 0 || limit <= 0 {
		return nil, nil
	}
	var all []scored
	for _, p := range v.parts() {
		bm, err := p.s.text.allWords(req)
		if err != nil {
			return nil, err
		}
		if p.hidden != nil {
			bm.AndNot(p.hidden)
		}
		top, err := p.s.text.ranked(bm, opt, limit)
		if err != nil {
			return nil, err
		}
		for _, d := range top {
			all = append(all, scored{hit{p.s, d.doc}, d.n})
		}
	}
	if v.delta != nil {
		slices.SortFunc(all, func(a, b scored) int {
			switch {
			case a.n != b.n:
				return b.n - a.n
			case a.h == b.h:
				return 0
			case a.h.before(b.h):
				return -1
			}
			return 1
		})
	}
	if len(all) > limit {
		all = all[:limit]
	}
	ids := make([]string, len(all))
	for i, sc := range all {
		ids[i] = sc.h.s.ids.str(int(sc.h.doc))
	}
	return ids, nil
}

// scored is a document and how many optional tokens it holds.
type scored struct {
	h hit
	n int
}

// rankedDoc is a document of one index and how many optional tokens it
// holds.
type rankedDoc struct {
	doc int32
	n   int
}

// ranked returns the documents of bm holding most of the tokens of opt
// first, then in document order, at most limit.
func (ix *textIndex) ranked(bm *roaring.Bitmap, opt []string, limit int) ([]rankedDoc, error) {
	if n := bm.GetCardinality(); n == 0 || n <= uint64(limit) {
		// All are taken: no need to rank them.
		out := make([]rankedDoc, 0, n)
		for it := bm.Iterator(); it.HasNext(); {
			out = append(out, rankedDoc{int32(it.Next()), 0})
		}
		return out, nil
	}
	var per [][]*roaring.Bitmap // each token's postings, its forms in both streams
	for _, t := range opt {
		var ps []*roaring.Bitmap
		for s := range ix.postings {
			f := ix.an.forms(s, t)
			for _, term := range []string{f.main, f.alt} {
				if term == "" {
					continue
				}
				p, err := ix.post(s, term)
				if err != nil {
					return nil, err
				}
				if p != nil {
					ps = append(ps, p.docs)
				}
			}
		}
		if len(ps) > 0 {
			per = append(per, ps)
		}
	}
	// Each token's postings are looked up document by document when
	// that reads less than intersecting them with the documents (a
	// brand's few notices and a common word), and intersected otherwise.
	// The rarest tokens say most of which notices are the product's:
	// ranking reads those only.
	sizes := make([]uint64, len(per))
	for i, ps := range per {
		for _, p := range ps {
			sizes[i] += p.GetCardinality()
		}
	}
	order := make([]int, len(per))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sizes[a], sizes[b]) })
	order = order[:min(len(order), maxRanked)]
	docs := bm.ToArray()
	counts := make([]int, len(docs))
	mark := make([]int, len(docs)) // the last token counted, plus one
	for ti, pi := range order {
		ps, size := per[pi], sizes[pi]
		if uint64(len(docs))*lookupPerEntry < size {
			for i, d := range docs {
				if slices.ContainsFunc(ps, func(p *roaring.Bitmap) bool { return p.Contains(d) }) {
					counts[i]++
				}
			}
			continue
		}
		for _, p := range ps {
			for it := roaring.And(p, bm).Iterator(); it.HasNext(); {
				if i, ok := slices.BinarySearch(docs, it.Next()); ok && mark[i] != ti+1 {
					mark[i] = ti + 1
					counts[i]++
				}
			}
		}
	}
	// The most holding first, in document order within a count.
	out := make([]rankedDoc, 0, min(limit, len(docs)))
	for c := len(order); c >= 0 && len(out) < limit; c-- {
		for i, d := range docs {
			if counts[i] == c {
				out = append(out, rankedDoc{int32(d), c})
				if len(out) == limit {
					break
				}
			}
		}
	}
	return out, nil
}

// maxRanked is the most optional tokens ranking reads, the rarest.
const maxRanked = 3

// lookupPerEntry is how many posting entries an intersection reads in the
// time a document is looked up in a posting: below, documents are looked
// up one by one.
const lookupPerEntry = 16

// wordTokens returns the tokens of words, each once.
func wordTokens(words []string) []string {
	var toks []string
	for _, w := range words {
		tokens(w, func(t string) {
			if !slices.Contains(toks, t) {
				toks = append(toks, t)
			}
		})
	}
	return toks
}

// WordPostings returns how many posting entries RecordIDsWithWords reads
// for words, required and optional, from the dictionary's figures,
// reading no posting: what pricing a lookup needs.
func (v *View) WordPostings(words []string) int {
	n := 0
	for _, t := range wordTokens(words) {
		for _, p := range v.parts() {
			ix := p.s.text
			for s := range ix.postings {
				f := ix.an.forms(s, t)
				n += ix.df(s, f.main)
				if f.alt != "" {
					n += ix.df(s, f.alt)
				}
			}
		}
	}
	return n
}

// allWords returns the documents holding every one of toks, in any of its
// forms and either stream; it stops at the first token that leaves none.
func (ix *textIndex) allWords(toks []string) (*roaring.Bitmap, error) {
	var out *roaring.Bitmap
	for _, t := range toks {
		bm, err := ix.wordDocs(nil, t)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = bm
		} else {
			out.And(bm)
		}
		if out.IsEmpty() {
			break
		}
	}
	return out, nil
}
