package index

import (
	"cmp"
	"context"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
)

// ctxCheckEvery is how many documents a loop handles between looks at the
// query's deadline: at most a few hundred microseconds of work even when
// each document is scored for 32 terms, so that a search past its budget
// stops within a small part of it (docs/api.md, "Limits").
const ctxCheckEvery = 256

func timeoutError() error { return rappel.QueryTimeout(nil) }

// Search answers a GET /recall request from the view, whether it is a
// base alone or a base with a delta over it: the search was checked where
// the request was read (rappel.CheckedSearch), and is not checked again.
func (v *View) Search(ctx context.Context, cq rappel.CheckedSearch) (*rappel.Page, error) {
	q := cq.Search()
	if q.Category != "" && !v.hasCategory(CategoryKey(q.Category)) {
		return nil, unknownCategory(q.Category, v.categories)
	}
	parts := v.parts()
	exp, err := v.base.expansion(ctx, parts, q)
	if err != nil {
		return nil, err
	}
	ms, count, err := v.lazyMatches(ctx, parts, q, exp)
	if err != nil {
		return nil, err
	}
	var leftOut, optional []string
	if count == 0 && !q.NoRelax {
		r, err := v.relax(ctx, parts, q, exp)
		if err != nil {
			return nil, err
		}
		if r != nil {
			q, exp, ms, count, leftOut = r.q, r.exp, r.ms, r.count, r.leftOut
		}
	} else if count < softBelow && !q.NoRelax && sortOf(q) == rappel.SortRelevance {
		materialize(ms)
		r, err := v.soften(ctx, parts, q, ms, count)
		if err != nil {
			return nil, err
		}
		if r != nil {
			q, exp, ms, count, optional = r.q, r.exp, r.ms, r.count, r.optional
		}
	}
	sortBy := sortOf(q)
	relevance := sortBy == rappel.SortRelevance
	var c *cursor
	if q.Cursor != "" {
		cc, err := v.base.decodeCursor(q.Cursor, q, relevance)
		if err != nil {
			return nil, err
		}
		c = &cc
	}
	limit := q.Limit
	if limit <= 0 {
		limit = rappel.DefaultLimit
	}
	if relevance || q.Facets != nil {
		materialize(ms)
	}
	var hits []hit
	var scores []float64
	if relevance {
		hits, scores, err = v.pageByRelevance(ctx, q, ms, c, q.Offset, limit, exp)
	} else {
		hits, err = pageInOrder(ctx, orderKey{sortBy, q.Ascending}, ms, c, q.Offset, limit)
	}
	if err != nil {
		return nil, err
	}
	page := &rappel.Page{Count: count, Corrections: exp.corr, LeftOut: leftOut, Optional: optional}
	if len(hits) > limit {
		hits = hits[:limit]
		if sortBy != rappel.SortValue { // a value-sorted search pages by offset
			var score float64
			if relevance {
				score = scores[limit-1]
			}
			last := hits[limit-1]
			page.NextCursor = v.base.encodeCursor(last.s.cursorAt(q, sortBy, last.doc, score), relevance)
		}
	}
	page.Results, page.N = appendHits(q.Buf, hits, q.Lang, v.highlighter(q, exp)), len(hits)
	if q.Facets != nil {
		page.Facets = v.facets(q, ms)
		if ops := opsOf(ctx); ops != nil {
			ops.faceted += len(q.Facets) * count
		}
	}
	return page, nil
}

// matches returns the documents of each part that match q, its hidden
// documents left out, and how many they are in all.
func (v *View) matches(ctx context.Context, parts []part, q *rappel.Search, exp *expansion) ([]partMatches, int, error) {
	ms := make([]partMatches, len(parts))
	count := 0
	for i, p := range parts {
		m, err := p.s.match(ctx, q, false, exp)
		if err != nil {
			return nil, 0, err
		}
		if p.hidden != nil && !p.hidden.IsEmpty() {
			m = roaring.AndNot(m, p.hidden)
		}
		ms[i] = partMatches{s: p.s, m: m}
		count += int(m.GetCardinality())
	}
	return ms, count, nil
}

// lazyMatches is matches for a page in an order: the documents an
// exclusion (or a part's hidden documents) takes out of a part's matches
// are left as its minus, and counted as |base| − |base ∩ minus| without
// making the difference, which at a million records copied nearly every
// container of a common word's posting; the page skips them as it walks
// (Snapshot.pageInOrder).
func (v *View) lazyMatches(ctx context.Context, parts []part, q *rappel.Search, exp *expansion) ([]partMatches, int, error) {
	ms := make([]partMatches, len(parts))
	count := 0
	for i, p := range parts {
		base, alt, minus, err := p.s.matchSets(ctx, q, false, exp)
		if err != nil {
			return nil, 0, err
		}
		if p.hidden != nil && !p.hidden.IsEmpty() {
			if minus == nil {
				minus = p.hidden
			} else {
				minus = roaring.Or(minus, p.hidden)
			}
		}
		ms[i] = partMatches{s: p.s, m: base, alt: alt, minus: minus}
		count += ms[i].count()
	}
	return ms, count, nil
}

// pageInOrder returns up to limit+1 of the matches ms in ok's order,
// starting after cursor c, or after skipping offset matches. A single
// part pages itself; two are merged, each giving what could be on the
// page, the first offset+limit+1 after the cursor (a cursor names a place
// in the order, not a document, so it means the same in both).
func pageInOrder(ctx context.Context, ok orderKey, ms []partMatches, c *cursor, offset, limit int) ([]hit, error) {
	if len(ms) == 1 {
		p := ms[0]
		docs, err := p.s.pageInOrder(ctx, ok, p, c, offset, limit)
		if err != nil {
			return nil, err
		}
		hits := make([]hit, len(docs))
		for i, d := range docs {
			hits[i] = hit{p.s, d}
		}
		return hits, nil
	}
	b, d := ms[0], ms[1]
	db, err := b.s.pageInOrder(ctx, ok, b, c, 0, offset+limit)
	if err != nil {
		return nil, err
	}
	dd, err := d.s.pageInOrder(ctx, ok, d, c, 0, offset+limit)
	if err != nil {
		return nil, err
	}
	out := make([]hit, 0, min(len(db)+len(dd), offset+limit+1))
	i, j := 0, 0
	for len(out) < offset+limit+1 && (i < len(db) || j < len(dd)) {
		takeBase := j == len(dd)
		if i < len(db) && j < len(dd) {
			x, y := hit{b.s, db[i]}, hit{d.s, dd[j]}
			takeBase = compare(ok, x.s.key(ok.sortBy, x.doc), x.id(), y.s.key(ok.sortBy, y.doc), y.id()) < 0
		}
		if takeBase {
			out = append(out, hit{b.s, db[i]})
			i++
		} else {
			out = append(out, hit{d.s, dd[j]})
			j++
		}
	}
	if offset >= len(out) {
		return nil, nil
	}
	return out[offset:], nil
}

// pageByRelevance scores the matches of every part with the collection's
// figures and returns up to limit+1, best first, with their scores.
func (v *View) pageByRelevance(ctx context.Context, q *rappel.Search, ms []partMatches, c *cursor, offset, limit int, exp *expansion) ([]hit, []float64, error) {
	best, err := rankPage(ctx, clauses(q), v.corpus(), exp, c, offset, limit, ms...)
	if err != nil {
		return nil, nil, err
	}
	hits := make([]hit, len(best))
	scores := make([]float64, len(best))
	for i, r := range best {
		hits[i], scores[i] = r.hit, r.score
	}
	return hits, scores, nil
}

// appendHits splices the hits' JSON into one array, in buf when it is
// large enough, each with its highlights when hl is not nil.
func appendHits(buf []byte, hits []hit, lang string, hl *highlighter) []byte {
	n := 2
	for _, h := range hits {
		n += h.s.enc.size(h.doc) + 1
	}
	b := buf[:0]
	if cap(b) < n {
		b = make([]byte, 0, n)
	}
	b = append(b, '[')
	for i, h := range hits {
		if i > 0 {
			b = append(b, ',')
		}
		b = h.s.enc.appendDoc(b, h.doc, lang)
		if hl != nil {
			b = hl.append(b, h.s, h.doc)
		}
	}
	return append(b, ']')
}

// match returns the documents matching q's text, filters and dates. The
// result must not be changed (it may be a shared bitmap). A category no
// document has is an error when strict, and matches nothing otherwise.
func (s *Snapshot) match(ctx context.Context, q *rappel.Search, strict bool, exp *expansion) (*roaring.Bitmap, error) {
	base, alt, minus, err := s.matchSets(ctx, q, strict, exp)
	if err != nil {
		return nil, err
	}
	if alt != nil {
		base = roaring.Or(base, alt)
	}
	if minus != nil {
		base = roaring.AndNot(base, minus)
	}
	return base, nil
}

// matchSets returns what match returns as sets not made one: the
// documents of base or of alt (nil but for a search whose text is one OR
// of two terms, alt the second term's), less those of minus (nil when q
// excludes nothing), so that a search can count them from cardinalities
// and fill a page in document order without making the union or the
// difference (View.lazyMatches). None may be changed.
func (s *Snapshot) matchSets(ctx context.Context, q *rappel.Search, strict bool, exp *expansion) (base, alt, minus *roaring.Bitmap, err error) {
	if exp == nil {
		exp = &expansion{} // the terms alone
	}
	var ands []*roaring.Bitmap
	for i := range rappel.Filters {
		f := &rappel.Filters[i]
		v := *f.Of(&q.FilterValues)
		if v == "" {
			continue
		}
		if f.Free() {
			v = CategoryKey(v)
		}
		bm := s.filters[f.Field][v]
		switch {
		case bm == nil && f.Free() && strict:
			return nil, nil, nil, unknownCategory(*f.Of(&q.FilterValues), s.categories)
		case bm == nil:
			return roaring.New(), nil, nil, nil
		}
		ands = append(ands, bm)
	}
	if q.IssuedAfter != "" || q.IssuedBefore != "" {
		ands = append(ands, s.dateRange(q.IssuedAfter, q.IssuedBefore))
	}
	var excl []*roaring.Bitmap
	if q.Query != nil {
		cs := clauses(q)
		pair := -1 // the OR of two terms that is all the search asks for
		if len(ands) == 0 {
			pair = orOfTwo(cs, exp)
		}
		for i := 0; i < len(cs); i++ {
			cl := cs[i]
			if i == pair {
				a, b, err := s.termSets(ctx, cl, exp)
				if err != nil {
					return nil, nil, nil, err
				}
				if a != nil && b != nil {
					alt = b
				}
				if a = cmp.Or(a, b); a != nil {
					ands = append(ands, a)
				}
				continue
			}
			bm, err := s.clauseDocs(ctx, cl, exp)
			if err != nil {
				return nil, nil, nil, err
			}
			if j, ok := exp.joins[i]; ok && bm != nil {
				// Adjacent words that also match together: as the one word
				// two of them join into, or as a synonym of them all.
				for k := i + 1; k < i+j.n; k++ {
					next, err := s.clauseDocs(ctx, cs[k], exp)
					if err != nil {
						return nil, nil, nil, err
					}
					if next != nil {
						bm = roaring.And(bm, next)
					}
				}
				for _, alt := range j.alts {
					more, err := s.text.termDocs(ctx, alt, nil)
					if err != nil {
						return nil, nil, nil, err
					}
					if more != nil {
						bm = roaring.Or(bm, more)
					}
				}
				i += j.n - 1
			}
			if bm == nil {
				continue
			}
			if cl.Exclude {
				excl = append(excl, bm)
			} else {
				ands = append(ands, bm)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, timeoutError()
	}
	var out *roaring.Bitmap
	switch len(ands) {
	case 0:
		out = s.all
	case 1:
		out = ands[0]
	default:
		out = roaring.FastAnd(ands...)
	}
	switch len(excl) {
	case 0:
		return out, alt, nil, nil
	case 1:
		return out, alt, excl[0], nil
	}
	return out, alt, roaring.FastOr(excl...), nil
}

// orOfTwo returns the index of the clause of cs that is an OR of two
// terms when it is the only clause that is not an exclusion and no words
// join across it, or -1.
func orOfTwo(cs []rappel.Clause, exp *expansion) int {
	at := -1
	for i, c := range cs {
		if _, ok := exp.joins[i]; ok {
			return -1
		}
		if c.Exclude {
			continue
		}
		if at >= 0 || len(c.Terms) != 2 {
			return -1
		}
		at = i
	}
	return at
}

// termSets returns the documents of each of cl's two terms, nil for a term
// with nothing searchable, each the term's posting itself when it is one.
func (s *Snapshot) termSets(ctx context.Context, cl rappel.Clause, exp *expansion) (a, b *roaring.Bitmap, err error) {
	var sets [2]*roaring.Bitmap
	for i, t := range cl.Terms[:2] {
		if ctx.Err() != nil {
			return nil, nil, timeoutError()
		}
		parts, searchable, err := s.text.termParts(ctx, nil, t, exp)
		switch {
		case err != nil:
			return nil, nil, err
		case !searchable:
		case len(parts) == 1:
			sets[i] = parts[0]
		default:
			sets[i] = unionOf(parts)
		}
	}
	return sets[0], sets[1], nil
}

// clauseDocs returns the documents matching any term of cl, or nil when no
// term has anything searchable (the clause then does not constrain). The
// result must not be changed: a clause of one posting is that posting.
func (s *Snapshot) clauseDocs(ctx context.Context, cl rappel.Clause, exp *expansion) (*roaring.Bitmap, error) {
	var parts []*roaring.Bitmap
	searchable := false
	for _, t := range cl.Terms {
		if ctx.Err() != nil {
			// Each term of an OR is a union of postings, a phrase a
			// walk of positions: the deadline is looked at between them.
			return nil, timeoutError()
		}
		var ok bool
		var err error
		if parts, ok, err = s.text.termParts(ctx, parts, t, exp); err != nil {
			return nil, err
		}
		searchable = searchable || ok
	}
	switch {
	case !searchable:
		return nil, nil
	case len(parts) == 0:
		return roaring.New(), nil
	case len(parts) == 1:
		return parts[0], nil
	}
	return unionOf(parts), nil
}

// unionOf returns the union of parts, made anew: one union
// of every posting of a clause's terms rather than one per word (its
// forms in both streams) and another of those. Two (a word's forms) are
// merged container by container; more are united lazily, cardinalities
// counted once. At a million records (BENCHMARKS.md, "OR at a million
// records") the lazy union made `listeria OR salmonella`'s four postings
// 14% more requests a second, and two postings slower: a lazy union
// makes bitmap containers that a posting's few thousand documents then
// turn back into arrays.
func unionOf(parts []*roaring.Bitmap) *roaring.Bitmap {
	switch len(parts) {
	case 0:
		return roaring.New()
	case 1:
		return parts[0].Clone()
	case 2:
		return roaring.Or(parts[0], parts[1])
	}
	return roaring.FastOr(parts...)
}

// dateRange returns the documents with event_date in [after, before]; the
// documents are in event_date order, so it is one range.
func (s *Snapshot) dateRange(after, before string) *roaring.Bitmap {
	lo, hi := 0, len(s.eventDay)
	if before != "" {
		d := dayOf(before)
		lo = sort.Search(len(s.eventDay), func(i int) bool { return s.eventDay[i] <= d })
	}
	if after != "" {
		d := dayOf(after)
		hi = sort.Search(len(s.eventDay), func(i int) bool { return s.eventDay[i] < d })
	}
	bm := roaring.New()
	if lo < hi {
		bm.AddRange(uint64(lo), uint64(hi))
	}
	return bm
}

// unknownCategory is the error of a category no record has, naming the
// nearest of categories, the folded categories some record has.
func unknownCategory(c string, categories []string) error {
	return rappel.Unknown("category", c, rappel.Suggest(CategoryKey(c), categories), "list the categories with GET /recall/stats?group_by=category")
}

// pageInOrder returns up to limit+1 of the matches pm, documents of s, in
// ok's order, starting after cursor c, or after skipping offset matches.
func (s *Snapshot) pageInOrder(ctx context.Context, ok orderKey, pm partMatches, c *cursor, offset, limit int) ([]int32, error) {
	perm := s.orders[ok]
	want := limit + 1
	if ok == (orderKey{rappel.SortDate, false}) {
		// Document order: iterate the bitmaps themselves, merging the two
		// of an OR and skipping what minus takes out, a page's worth of
		// work rather than the whole union's or difference's.
		docs := make([]int32, 0, min(want, int(pm.m.GetCardinality())))
		it := newUnionIterator(pm.m, pm.alt)
		skip := 0
		switch {
		case c != nil:
			it.advance(uint32(s.after(ok, perm, c.key, c.id)))
		case offset > 0 && pm.alt == nil && pm.minus == nil:
			v, err := pm.m.Select(uint32(offset))
			if err != nil {
				return docs, nil
			}
			it.advance(v)
		case offset > 0:
			skip = offset
		}
		for i := 0; len(docs) < want; i++ {
			if i%ctxCheckEvery == ctxCheckEvery-1 && ctx.Err() != nil {
				return nil, timeoutError()
			}
			d, more := it.next()
			switch {
			case !more:
				return docs, nil
			case pm.minus != nil && pm.minus.Contains(d):
			case skip > 0:
				skip--
			default:
				docs = append(docs, int32(d))
			}
		}
		return docs, nil
	}
	pm.materialize()
	match := pm.m
	count := int(match.GetCardinality())
	docs := make([]int32, 0, min(want, count))
	if offset >= count && c == nil && offset > 0 {
		return docs, nil
	}
	if count*8 < s.n {
		// Few matches: sort them rather than walk every document.
		all := match.ToArray()
		sort.Slice(all, func(i, j int) bool {
			a, b := int32(all[i]), int32(all[j])
			return compare(ok, s.key(ok.sortBy, a), s.ids.view(int(a)), s.key(ok.sortBy, b), s.ids.view(int(b))) < 0
		})
		start := offset
		if c != nil {
			start = sort.Search(len(all), func(i int) bool {
				d := int32(all[i])
				return compare(ok, s.key(ok.sortBy, d), s.ids.view(int(d)), c.key, c.id) > 0
			})
		}
		for i := start; i < len(all) && len(docs) < want; i++ {
			docs = append(docs, int32(all[i]))
		}
		return docs, nil
	}
	i, skipped := 0, 0
	if c != nil {
		i = s.after(ok, perm, c.key, c.id)
	}
	if ops := opsOf(ctx); ops != nil {
		defer func(start int) { ops.walked += i - start }(i)
	}
	for ; i < s.n && len(docs) < want; i++ {
		if i%ctxCheckEvery == 0 && ctx.Err() != nil {
			return nil, timeoutError()
		}
		d := perm[i]
		if !match.Contains(uint32(d)) {
			continue
		}
		if skipped < offset {
			skipped++
			continue
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// cursorAt is the cursor of a page ending at doc, a document of s, with
// its relevance score when q sorts by relevance.
func (s *Snapshot) cursorAt(q *rappel.Search, sortBy string, doc int32, score float64) cursor {
	nc := cursor{hash: queryHash(q), key: s.key(sortBy, doc), id: s.ids.str(int(doc))}
	if sortBy == rappel.SortRelevance {
		nc.score = score
	}
	return nc
}
