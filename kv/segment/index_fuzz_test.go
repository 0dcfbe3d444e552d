package segment_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/segment"
)

// FuzzOpenIndex opens mutations of a small read index's segment, their
// checksums recomputed so that the mutations reach the index's checks of
// structure: an error is a *segment.Error, and a snapshot that opens
// answers every kind of request without a panic.
func FuzzOpenIndex(f *testing.F) {
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
		f.Fatal(err)
	}
	good, err := snap.EncodeSegment()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, uint32(0), byte(0))
	f.Add(good, uint32(len(good)/2), byte(0x10))
	f.Fuzz(func(t *testing.T, b []byte, at uint32, x byte) {
		b = slices.Clone(b)
		if len(b) > 0 {
			b[int(at)%len(b)] ^= x
		}
		segment.Reseal(b)
		s, err := index.OpenSegmentBytes("fuzz.seg", b, index.Options{})
		if err != nil {
			var e *segment.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (%T), want a *segment.Error", err, err)
			}
			return
		}
		for _, q := range []string{"", "cheese", "brie OR listeria", `"brie cheese"`, "fromage -lait"} {
			sq := &rappel.Search{Limit: 5}
			if q != "" {
				sq.Query, _ = rappel.ParseQuery(q)
				sq.SortBy = rappel.SortRelevance
			}
			_, _ = s.Search(t.Context(), sq)
		}
		for _, g := range rappel.StatsGroupFields {
			_, _ = s.Stats(t.Context(), &rappel.StatsQuery{GroupBy: g, SumField: "units_affected"})
		}
		for _, r := range recs {
			_, _ = s.RecordJSON(r.RecordID, "fr")
			_ = s.Summaries([]string{r.RecordID})
			_, _ = s.NewestByRecallID(r.RecallID)
		}
	})
}
