package segment_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/segment"
)

// FuzzOpenIndex opens mutations of a small read index's segment, their
// checksums recomputed so that the mutations reach the index's checks of
// structure: an error is a *segment.Error, and a snapshot that opens
// answers every kind of request without a panic.
func FuzzOpenIndex(f *testing.F) {
	good := smallIndex(f)
	f.Add(good, uint32(0), byte(0))
	f.Add(good, uint32(len(good)/2), byte(0x10))
	f.Fuzz(func(t *testing.T, b []byte, at uint32, x byte) {
		b = slices.Clone(b)
		if len(b) > 0 {
			b[int(at)%len(b)] ^= x
		}
		segment.Reseal(b)
		openIndexAndUse(t, b)
	})
}

// TestOpenIndex_Mutations is FuzzOpenIndex's property over thousands of
// seeded mutations, one to four bytes each, run as an ordinary test: every
// one is refused with a *segment.Error or answers, within seconds, without
// a panic.
func TestOpenIndex_Mutations(t *testing.T) {
	good := smallIndex(t)
	rng := rand.New(rand.NewPCG(7, 8))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := range n {
		b := slices.Clone(good)
		for range 1 + rng.IntN(4) {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		segment.Reseal(b)
		done := make(chan struct{})
		go func() {
			defer close(done)
			openIndexAndUse(t, b)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("mutation %d: no answer in 10 s", i)
		}
	}
}

// smallIndex returns the segment of a small read index.
func smallIndex(tb testing.TB) []byte {
	var recs []*rappel.Record
	for i := range 12 {
		u := i * 3
		recs = append(recs, &rappel.Record{RecordID: fmt.Sprint("r", i), RecallID: fmt.Sprint(i / 2),
			RecallType: rappel.RecallTypes[i%len(rappel.RecallTypes)], Agency: rappel.Agencies[i%len(rappel.Agencies)],
			EventDate: fmt.Sprintf("2020-0%d-1%d", 1+i%9, i%10), RecallDate: "2021-01-01", UnitsAffected: &u,
			Category: "Dairy", Allergens: []string{"milk"}, Companies: []string{"Acme"},
			Translations: rappel.Translations{EN: &rappel.Translation{Title: "Brie cheese recalled for listeria"},
				FR: &rappel.Translation{Title: "Rappel de fromage brie"}}})
	}
	snap, err := index.Build(recs, rappel.DatasetInfo{})
	if err != nil {
		tb.Fatal(err)
	}
	good, err := snap.EncodeSegment()
	if err != nil {
		tb.Fatal(err)
	}
	return good
}

// openIndexAndUse opens the segment b and, when it opens, asks it every
// kind of request.
func openIndexAndUse(t *testing.T, b []byte) {
	{
		s, err := index.OpenSegmentBytes("fuzz.seg", b, index.Options{})
		if err != nil {
			var e *segment.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (%T), want a *segment.Error", err, err)
			}
			return
		}
		for _, q := range []string{"", "cheese", "brie OR listeria", `"brie cheese"`, "fromage -lait", "chese", "bri*", "briecheese"} {
			sq := &rappel.Search{Limit: 5}
			if q != "" {
				sq.Query, _ = rappel.ParseQuery(q)
				sq.SortBy = rappel.SortRelevance
			}
			if cq, err := sq.Checked(); err == nil {
				_, _ = s.View().Search(t.Context(), cq)
			}
		}
		for _, g := range rappel.StatsGroupFields {
			_, _ = s.Stats(t.Context(), &rappel.StatsQuery{GroupBy: g, SumField: "units_affected"})
		}
		for i := range 12 {
			id := fmt.Sprint("r", i)
			_, _ = s.RecordJSON(id, "fr")
			_ = s.Summaries([]string{id})
			_, _ = s.NewestByRecallID(fmt.Sprint(i / 2))
		}
		_, _ = s.Suggest(t.Context(), "lister", "", 5)
	}
}
