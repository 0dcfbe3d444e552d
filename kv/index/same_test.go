package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

// sameAnswers sends n generated requests, made of recs' own words,
// categories, ids and dates, to want and got, and fails on the first whose
// answer differs: pages byte for byte (cursor walks included, each cursor
// sent to both), statistics, records, summaries and recall lookups.
func sameAnswers(t *testing.T, want, got rappel.Snapshot, recs []*rappel.Record, seed uint64, n int) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 7))
	pick := func(r *rappel.Record) *rappel.Record { return recs[rng.IntN(len(recs))] }
	var words []string
	for range 200 {
		r := pick(nil)
		if tr := r.Translations.EN; tr != nil {
			words = append(words, strings.Fields(tr.Title)...)
		}
		if tr := r.Translations.FR; tr != nil {
			words = append(words, strings.Fields(tr.Title)...)
		}
	}
	if len(words) == 0 {
		words = []string{"recall"}
	}
	word := func() string { return strings.Trim(words[rng.IntN(len(words))], `"(),.:;`) }
	compare := func(what string, a, b any, errA, errB error) {
		t.Helper()
		if fmt.Sprint(errA) != fmt.Sprint(errB) {
			t.Fatalf("%s: error %v, want %v", what, errB, errA)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s:\n got %.900s\nwant %.900s", what, fmt.Sprintf("%+v", b), fmt.Sprintf("%+v", a))
		}
	}
	sorts := []string{"", rappel.SortDate, rappel.SortPublished, rappel.SortValue, rappel.SortRelevance}
	for i := range n {
		q := &rappel.Search{Limit: 1 + rng.IntN(60), Lang: []string{"", rappel.LangEN, rappel.LangFR}[rng.IntN(3)]}
		if rng.IntN(4) > 0 {
			var text string
			switch rng.IntN(5) {
			case 0:
				text = word()
			case 1:
				text = word() + " " + word()
			case 2:
				text = `"` + word() + " " + word() + `"`
			case 3:
				text = word() + " OR " + word()
			default:
				text = word() + " -" + word()
			}
			pq, err := rappel.ParseQuery(text)
			if err != nil {
				continue
			}
			q.Query = pq
		}
		r := pick(nil)
		switch rng.IntN(6) {
		case 0:
			q.Category = r.Category
		case 1:
			q.RecallType = r.RecallType
		case 2:
			q.Agency = r.Agency
		case 3:
			q.HazardClass = r.HazardClass
		case 4:
			if len(r.Allergens) > 0 {
				q.Allergen = r.Allergens[0]
			}
		}
		if rng.IntN(4) == 0 {
			q.IssuedAfter = pick(nil).EventDate
		}
		if rng.IntN(6) == 0 {
			q.IssuedBefore = pick(nil).EventDate
		}
		q.SortBy = sorts[rng.IntN(len(sorts))]
		if q.SortBy == rappel.SortRelevance && q.Query == nil {
			q.SortBy = ""
		}
		q.Ascending = rng.IntN(3) == 0 && q.SortBy != rappel.SortRelevance
		if rng.IntN(5) == 0 {
			q.Offset = rng.IntN(200)
		}
		for page := 0; page < 4; page++ {
			cq := checked(t, q)
			a, errA := want.Search(ctx, cq)
			b, errB := got.Search(ctx, cq)
			compare(fmt.Sprintf("request %d page %d: %+v", i, page, q), a, b, errA, errB)
			if errA != nil || a.NextCursor == "" {
				break
			}
			q.Cursor, q.Offset = a.NextCursor, 0
		}
		if i%4 == 0 {
			sq := &rappel.StatsQuery{GroupBy: rappel.StatsGroupFields[rng.IntN(len(rappel.StatsGroupFields))]}
			if rng.IntN(2) == 0 {
				sq.SumField = "units_affected"
			}
			if rng.IntN(2) == 0 {
				sq.Since = pick(nil).EventDate
			}
			a, errA := want.Stats(ctx, sq)
			b, errB := got.Stats(ctx, sq)
			compare(fmt.Sprintf("stats %+v", sq), a, b, errA, errB)
		}
		r = pick(nil)
		lang := q.Lang
		a, okA := want.RecordJSON(r.RecordID, lang)
		b, okB := got.RecordJSON(r.RecordID, lang)
		compare("record "+r.RecordID, string(a), string(b), fmt.Errorf("%v", okA), fmt.Errorf("%v", okB))
		ids := []string{r.RecordID, pick(nil).RecordID, "no-such-record", r.RecordID}
		compare(fmt.Sprint("summaries ", ids), want.Summaries(ids), got.Summaries(ids), nil, nil)
		ra, okA := want.NewestByRecallID(r.RecallID)
		rb, okB := got.NewestByRecallID(r.RecallID)
		compare("recall "+r.RecallID, ra, rb, fmt.Errorf("%v", okA), fmt.Errorf("%v", okB))
	}
	compare("coverage", want.Coverage(), got.Coverage(), nil, nil)
	if want.Len() != got.Len() || want.Info() != got.Info() {
		t.Fatalf("Len %d, Info %+v; want %d, %+v", got.Len(), got.Info(), want.Len(), want.Info())
	}
}
