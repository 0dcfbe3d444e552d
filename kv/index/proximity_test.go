package index

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/rappel-ca/rappel"
)

// relevanceIDs is the record IDs q finds by relevance in recs.
func relevanceIDs(t *testing.T, recs []*rappel.Record, q string) []string {
	t.Helper()
	s := mustBuild(t, recs)
	return ids(t, search(t, s, &rappel.Search{Query: mustQuery(t, q), SortBy: rappel.SortRelevance, Limit: 10}))
}

// titled is a test record with an English title and category, and what to
// do.
func titled(id, title, category, system, whatToDo string) *rappel.Record {
	r := testRecord(id)
	r.Translations.EN = &rappel.Translation{Title: title, Category: category, System: system, WhatToDo: whatToDo}
	r.Translations.FR = nil
	return r
}

// TestRank_FieldTiers: a word in the title outweighs the same word in the
// category or system labels, and words in what to do find a record but
// rank it last.
func TestRank_FieldTiers(t *testing.T) {
	recs := []*rappel.Record{
		titled("a-label", "Brakes may fail", "Seats", "Seats And Restraints", ""),
		titled("b-title", "Booster seats recalled", "Children", "", ""),
		titled("c-advice", "Strollers recalled", "Children", "", "Remove the seats before folding."),
	}
	got := relevanceIDs(t, recs, "seats")
	if !slices.Equal(got, []string{"b-title", "a-label", "c-advice"}) {
		t.Errorf("seats ranks %v; want the title first, the labels next, the advice last", got)
	}
}

// TestRank_Proximity: of records with both words, the one where they stand
// together in the order typed ranks first, then the one where they stand
// together the other way round, then the one where they are apart.
func TestRank_Proximity(t *testing.T) {
	recs := []*rappel.Record{
		titled("a-apart", "Car recalled as a seat belt may not latch", "", "", ""),
		titled("b-reversed", "Seat for a car recalled", "", "", ""),
		titled("c-together", "Car seat recalled as a belt may not latch", "", "", ""),
	}
	got := relevanceIDs(t, recs, "car seat")
	if !slices.Equal(got, []string{"c-together", "b-reversed", "a-apart"}) {
		t.Errorf("car seat ranks %v; want together, reversed, apart", got)
	}
	// One token found as both words is no nearness.
	if b := proximityBonus([]uint32{4}, []uint32{4}, 1, 1); b != 0 {
		t.Errorf("the same position gives a bonus of %v", b)
	}
	// Beyond the window, nothing; within it, less the further apart.
	if far, near := proximityBonus([]uint32{0}, []uint32{proxWindow + 1}, 1, 1), proximityBonus([]uint32{0}, []uint32{1}, 1, 1); far != 0 || near <= proximityBonus([]uint32{0}, []uint32{2}, 1, 1) {
		t.Errorf("bonus beyond the window %v, adjacent %v", far, near)
	}
}

// TestWeightedTF: positions count as their tier weighs.
func TestWeightedTF(t *testing.T) {
	var b []byte
	last := uint32(0)
	for _, at := range []uint32{0, 3, tierLabels << tierShift, tierAdvice<<tierShift + 2, 1 << 30} {
		b = binary.AppendUvarint(b, uint64(at-last))
		last = at
	}
	want := 2*tierWeight[tierMain] + tierWeight[tierLabels] + 2*tierWeight[tierAdvice]
	if got := weightedTF(b); math.Abs(got-want) > 1e-12 {
		t.Errorf("weightedTF = %v, want %v", got, want)
	}
}
