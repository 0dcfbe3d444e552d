package alerts

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

var words = []string{"listeria", "salmonella", "peanut", "cheese", "airbag", "brake", "toy", "choking", "battery", "fire",
	"crib", "helmet", "chocolate", "cookie", "undeclared", "milk", "glass", "metal", "mould", "e.coli", "lead", "magnet",
	"stroller", "seat", "belt", "engine", "fuel", "leak", "steering", "tire", "lamp", "charger", "heater", "kettle"}

// vocabulary is words plus made-up brand names: 1,000 words, so that a word
// is in about 1% of the records, as product and brand words are.
var vocabulary = func() []string {
	v := slices.Clone(words)
	for i := len(v); i < 1000; i++ {
		v = append(v, fmt.Sprintf("brand%c%c%c", 'a'+i%26, 'a'+i/26%26, 'a'+i/676))
	}
	return v
}()

// genRecords returns n valid records with titles drawn from words.
func genRecords(rng *rand.Rand, n, from int) []*rappel.Record {
	recs := make([]*rappel.Record, n)
	for i := range recs {
		title := ""
		for range 6 {
			title += vocabulary[rng.IntN(len(vocabulary))] + " "
		}
		r := &rappel.Record{
			RecordID: fmt.Sprintf("hc-%d", from+i), RecallID: fmt.Sprint(from + i),
			RecallType: rappel.RecallTypes[rng.IntN(len(rappel.RecallTypes))], Agency: rappel.Agencies[rng.IntN(3)],
			Status: rappel.StatusActive, EventDate: "2026-11-21", RecallDate: "2026-11-21", FetchedAt: "2026-11-22T00:00:00Z",
			Translations: rappel.Translations{EN: &rappel.Translation{Title: title}},
		}
		if rng.IntN(2) == 0 {
			r.HazardClass = rappel.HazardClasses[rng.IntN(3)]
		}
		if rng.IntN(3) == 0 {
			r.Allergens = []string{rappel.Allergens[rng.IntN(len(rappel.Allergens))]}
		}
		recs[i] = r
	}
	return recs
}

// genSearch returns a random saved search: often a q of one or two words
// (sometimes OR-ed or excluded), often a filter or two.
func genSearch(rng *rand.Rand) rappel.AlertSearch {
	var s rappel.AlertSearch
	switch rng.IntN(5) {
	case 0: // no q: an allergen watch, such as "any recall with peanut"
		s.Allergen = rappel.Allergens[rng.IntN(len(rappel.Allergens))]
		return s
	case 1:
		s.Q = vocabulary[rng.IntN(len(vocabulary))] + " OR " + vocabulary[rng.IntN(len(vocabulary))]
	case 2:
		s.Q = vocabulary[rng.IntN(len(vocabulary))] + " -" + vocabulary[rng.IntN(len(vocabulary))]
	default:
		s.Q = vocabulary[rng.IntN(len(vocabulary))] + " " + vocabulary[rng.IntN(len(vocabulary))]
	}
	if rng.IntN(3) == 0 {
		s.Agency = rappel.Agencies[rng.IntN(3)]
	}
	if rng.IntN(2) == 0 {
		s.RecallType = rappel.RecallTypes[rng.IntN(len(rappel.RecallTypes))]
	}
	if rng.IntN(4) == 0 {
		s.HazardClass = rappel.HazardClasses[rng.IntN(3)]
	}
	if rng.IntN(6) == 0 {
		s.Allergen = rappel.Allergens[rng.IntN(len(rappel.Allergens))]
	}
	return s
}

func genSubs(rng *rand.Rand, n int) []*rappel.Subscription {
	subs := make([]*rappel.Subscription, n)
	for i := range subs {
		subs[i] = &rappel.Subscription{ID: fmt.Sprintf("s%07d", i), Email: fmt.Sprintf("u%d@example.ca", i),
			Status: rappel.SubActive, Search: genSearch(rng)}
	}
	return subs
}

// TestSubIndex_Match checks the indexed matcher against the plain
// definition: GET /recall's search, q and filters, on a snapshot of the
// new recalls, for each subscription.
func TestSubIndex_Match(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := genRecords(rng, 300, 1)
	subs := genSubs(rng, 2000)
	rm, err := index.Engine{}.Build(recs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := newSubIndex(subs, index.CategoryKey).match(context.Background(), rm, recs)
	if err != nil {
		t.Fatal(err)
	}
	var want []pair
	for _, s := range subs {
		search, err := s.Search.Search()
		if err != nil {
			t.Fatal(err)
		}
		search.NoTypos = true
		ids, err := rm.MatchIDs(context.Background(), search)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			want = append(want, pair{s.ID, id})
		}
	}
	sort.Slice(want, func(i, j int) bool {
		return want[i].sub < want[j].sub || want[i].sub == want[j].sub && want[i].record < want[j].record
	})
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("got %d pairs, want %d", len(got), len(want))
	}
}

func TestSubIndex_OnePerAddress(t *testing.T) {
	recs := genRecords(rand.New(rand.NewPCG(3, 4)), 10, 1)
	subs := []*rappel.Subscription{
		{ID: "a", Email: "x@example.ca", Status: rappel.SubActive},
		{ID: "b", Email: "X@example.ca", Status: rappel.SubActive},
	}
	rm, _ := index.Engine{}.Build(recs)
	got, _ := newSubIndex(subs, index.CategoryKey).match(context.Background(), rm, recs)
	if len(got) != 10 {
		t.Fatalf("got %d pairs, want 10", len(got))
	}
}

func TestMatcher_Match(t *testing.T) {
	ctx := context.Background()
	st := kvtest.OpenMem(t)
	recs := []*rappel.Record{
		{RecordID: "hc-1", RecallID: "1", RecallType: rappel.TypeFood, Agency: rappel.AgencyCFIA, Status: rappel.StatusActive,
			EventDate: "2026-11-21", RecallDate: "2026-11-21", FetchedAt: "2026-11-22T00:00:00Z", Allergens: []string{"peanut"},
			Translations: rappel.Translations{EN: &rappel.Translation{Title: "Cookies recalled due to undeclared peanut"}}},
		{RecordID: "tc-2", RecallID: "2", RecallType: rappel.TypeVehicle, Agency: rappel.AgencyTransportCanada, Status: rappel.StatusActive,
			EventDate: "2026-11-21", RecallDate: "2026-11-21", FetchedAt: "2026-11-22T00:00:00Z",
			Translations: rappel.Translations{EN: &rappel.Translation{Title: "Brake hose may leak"}}},
	}
	if err := st.PutRecords(ctx, recs); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*rappel.Subscription{
		{ID: "s1", Email: "a@example.ca", Status: rappel.SubActive, Search: rappel.AlertSearch{FilterValues: rappel.FilterValues{Allergen: "peanut"}}},
		{ID: "s2", Email: "b@example.ca", Status: rappel.SubActive, Search: rappel.AlertSearch{Q: "brake", FilterValues: rappel.FilterValues{RecallType: "vehicle"}}},
		{ID: "s3", Email: "c@example.ca", Status: rappel.SubPending, Search: rappel.AlertSearch{}},
		{ID: "s4", Email: "d@example.ca", Status: rappel.SubUnsubscribed, Search: rappel.AlertSearch{}},
		{ID: "s5", Email: "e@example.ca", Status: rappel.SubActive, Search: rappel.AlertSearch{Q: "airbag"}},
	} {
		if err := st.CreateSubscription(ctx, s, nil); err != nil {
			t.Fatal(err)
		}
	}
	m := NewMatcher(index.Engine{})
	m.Subscriptions, m.Outbox, m.Records = st, st, st
	m.Logger = slog.New(slog.DiscardHandler)
	n, err := m.Match(ctx, 7, []string{"hc-1", "tc-2", "hc-gone"})
	if err != nil || n != 2 {
		t.Fatalf("Match = %d, %v; want 2 rows", n, err)
	}
	now := time.Now()
	due, err := st.ClaimAlerts(ctx, "n1", now, time.Minute, 100)
	if err != nil || len(due) != 2 || due[0].Sub != "s1" || due[0].Record != "hc-1" || due[1].Sub != "s2" || due[1].Record != "tc-2" {
		t.Fatalf("due %+v, %v", due, err)
	}
	// Matching the same batch again writes nothing.
	due[0].Status = rappel.AlertSent
	if n, err := st.UpdateAlerts(ctx, "n1", due); err != nil || n != 2 {
		t.Fatalf("UpdateAlerts = %d, %v", n, err)
	}
	if n, err := m.Match(ctx, 7, []string{"hc-1", "tc-2"}); err != nil || n != 0 {
		t.Fatalf("rematch = %d, %v", n, err)
	}
	if due, _ := st.ClaimAlerts(ctx, "n1", now, time.Minute, 100); len(due) != 1 || due[0].Record != "tc-2" {
		t.Fatalf("due after rematch: %+v", due)
	}
}

// BenchmarkSubIndex_Match matches 1,000 new recalls against 100,000
// subscriptions (80% with a q), building the new recalls' index included.
func BenchmarkSubIndex_Match(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	recs := genRecords(rng, 1000, 1)
	ix := newSubIndex(genSubs(rng, 100_000), index.CategoryKey)
	b.ReportAllocs()
	b.ResetTimer()
	var n int
	for b.Loop() {
		rm, err := index.Engine{}.Build(recs)
		if err != nil {
			b.Fatal(err)
		}
		pairs, err := ix.match(context.Background(), rm, recs)
		if err != nil {
			b.Fatal(err)
		}
		n = len(pairs)
	}
	b.ReportMetric(float64(n), "alerts")
	b.ReportMetric(float64(len(ix.groups)), "distinct_q")
}

// BenchmarkSubIndex_Load is building the subscription index from 100,000
// subscriptions, done once per batch.
func BenchmarkSubIndex_Load(b *testing.B) {
	subs := genSubs(rand.New(rand.NewPCG(5, 6)), 100_000)
	b.ReportAllocs()
	for b.Loop() {
		newSubIndex(subs, index.CategoryKey)
	}
}
