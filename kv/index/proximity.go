package index

import (
	"encoding/binary"

	"github.com/rappel-ca/rappel"
)

// Proximity. BM25 scores each word on its own, so "car seat" ranked a
// car's seat-belt recall (the word "car" in its title, "Seats" in its
// system) with the child car seats, and "tesla model 3" put a "BMW 3
// SERIES" among the Teslas. A document where two consecutive words of
// the search stand close together in one field adds to its score: most
// when they follow each other in the order typed, less the further apart
// they are, half as much the other way round, nothing beyond proxWindow
// positions (fields are fieldGap apart, so never across two fields). The
// bonus is the rarer-word-weighted proxWeight times that nearness times
// the tier's weight of the place (tierWeight), so that adjacency in a
// title counts and adjacency in the notice's advice barely does. Only
// words that are one token each and scored as typed take part; a
// phrase already requires its words together.
const (
	proxWindow = 3
	proxWeight = 1.0
)

// proximityWord reports whether term t of clause c takes part in
// proximity: a plain word of a clause of its own (or of the OR a
// softened search made of the words, soft), one token, whose leaves (one
// per stream) the scorer compiled.
func proximityWord(c rappel.Clause, t rappel.Term, leaves []scoreLeaf, streams int, soft bool) bool {
	return (len(c.Terms) == 1 || soft) && !t.Phrase && !t.Prefix && len(leaves) == streams
}

// decodePositions appends to dst the positions of the encoded span b.
func decodePositions(dst []uint32, b []byte) []uint32 {
	at := uint32(0)
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 {
			break // checked when the posting was read; cannot happen
		}
		at += uint32(d)
		b = b[n:]
		dst = append(dst, at)
	}
	return dst
}

// proximityBonus is what the nearness of two words adds to a document's
// score, given the ascending positions of the first (a) and the second
// (b) in one stream and their idfs.
func proximityBonus(a, b []uint32, idfA, idfB float64) float64 {
	var best float64
	for i, j := 0, 0; i < len(a) && j < len(b); {
		var near float64
		var at uint32
		switch {
		case b[j] > a[i]:
			if d := b[j] - a[i]; d <= proxWindow {
				near, at = 1/float64(d), a[i]
			}
			i++
		case b[j] < a[i]:
			if d := a[i] - b[j]; d <= proxWindow {
				near, at = 0.5/float64(d), b[j]
			}
			j++
		default: // one token found as both words: no nearness of two
			i++
			j++
		}
		best = max(best, near*tierWeight[tierOf(at)])
	}
	return proxWeight * min(idfA, idfB) * best
}
