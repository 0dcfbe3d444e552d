package index

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel/kv/segment"
)

// mixedBitmap returns documents spread over four containers of each kind
// roaring has: sparse (array), dense and scattered (bitmap), and long runs
// with gaps (run), read back from roaring's portable format as a segment
// holds them.
func mixedBitmap(t *testing.T, rng *rand.Rand) (*roaring.Bitmap, int) {
	const n = 4 << 16
	bm := roaring.New()
	for d := uint32(0); d < n; d++ {
		switch c := d >> 16; {
		case c == 0 && rng.IntN(100) == 0: // array
			bm.Add(d)
		case c == 1 && rng.IntN(2) == 0: // bitmap
			bm.Add(d)
		case c >= 2 && (d/7)%3 != 0: // runs of 14 with gaps of 7
			bm.Add(d)
		}
	}
	bm.RunOptimize()
	b, err := bm.ToBytes()
	if err != nil {
		t.Fatal(err)
	}
	read, err := segment.Bitmap(b, n)
	if err != nil {
		t.Fatal(err)
	}
	return read, n
}

// TestRankWalk_SameAsRank checks the ranks a walk counts between
// documents against ranks counted from the start, over every kind of
// container, stepping within one and jumping across several.
func TestRankWalk_SameAsRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	bm, _ := mixedBitmap(t, rng)
	all := bm.ToArray()
	for _, every := range []int{1, 3, 1000, 40000} {
		for _, ranked := range []int{len(all), 1} { // stepping, counting
			w := newRankWalk(bm, len(all), ranked)
			for i := rng.IntN(every); i < len(all); i += 1 + rng.IntN(every) {
				if got, want := w.rankOf(all[i]), int(bm.Rank(all[i]))-1; got != want {
					t.Fatalf("every %d, stepping %v: rank of %d is %d, want %d", every, w.many != nil, all[i], got, want)
				}
			}
		}
	}
}

// TestPostCursor_SameAsLookup checks the term frequencies a scorer's
// cursor reads, stepping and jumping, against those of a look-up of each
// document.
func TestPostCursor_SameAsLookup(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	docs, n := mixedBitmap(t, rng)
	p := &posting{docs: docs, offs: []uint32{0}}
	it := docs.Iterator()
	for it.HasNext() {
		d := it.Next()
		for k := range d%3 + 1 { // tf 1 to 3
			p.pos = binary.AppendUvarint(p.pos, uint64(k+1))
		}
		p.offs = append(p.offs, uint32(len(p.pos)))
	}
	for _, every := range []int{1, 100, 5000} {
		c := &postCursor{p: p, it: docs.Iterator()}
		for d := rng.IntN(every); d < n; d += 1 + rng.IntN(every) {
			if got, want := c.tf(uint32(d)), p.tf(int32(d)); got != want {
				t.Fatalf("every %v: tf of document %v is %v, want %v", every, d, got, want)
			}
		}
	}
}

// refPhraseDocs returns the documents of stream holding words as a
// phrase, by looking every document holding them all up in each posting,
// as phraseDocs did before it walked the postings.
func (ix *textIndex) refPhraseDocs(t *testing.T, s int, words []string, alt bool) *roaring.Bitmap {
	ps, err := ix.phrasePostings(s, words, alt)
	if err != nil {
		t.Fatal(err)
	}
	if ps == nil {
		return roaring.New()
	}
	cand := ps[0].docs.Clone()
	for _, p := range ps[1:] {
		cand.And(p.docs)
	}
	out := roaring.New()
	cand.Iterate(func(doc uint32) bool {
		lists := make([][]uint32, len(ps))
		for i, p := range ps {
			for r := (posReader{b: p.span(int32(doc))}); r.next(); {
				lists[i] = append(lists[i], r.at)
			}
		}
		for _, start := range lists[0] {
			ok := true
			for i := 1; i < len(lists) && ok; i++ {
				ok = slices.Contains(lists[i], start+uint32(i))
			}
			if ok {
				out.Add(doc)
				break
			}
		}
		return true
	})
	return out
}

// TestPhraseDocs_SameAsLookup checks phrases on the bundle's segment, as
// a node serves it, against the look-up of every candidate's positions.
func TestPhraseDocs_SameAsLookup(t *testing.T) {
	s := bundledSegment(t)
	ctx := context.Background()
	for _, phrase := range [][]string{
		{"pieces", "of", "metal"}, {"may", "contain"}, {"peanut", "butter"}, {"of", "the"},
		{"air", "bag"}, {"de", "la"}, {"the", "the"}, {"listeria", "monocytogenes", "of"},
	} {
		for stream := range s.text.postings {
			for _, alt := range []bool{false, true} {
				got, err := s.text.phraseDocs(ctx, stream, phrase, alt)
				if err != nil {
					t.Fatal(err)
				}
				want := s.text.refPhraseDocs(t, stream, phrase, alt)
				if !got.Equals(want) {
					t.Errorf("%q in stream %d (alt %v): %d documents, want %d", phrase, stream, alt, got.GetCardinality(), want.GetCardinality())
				}
			}
		}
	}
}
