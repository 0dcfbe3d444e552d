package main

import (
	"context"
	"net/url"
	"slices"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/judged"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
)

// judgedRecords are three records whose titles the judged queries below
// misspell, cut short or write in French.
func judgedRecords() []*rappel.Record {
	rec := func(id, en, fr string) *rappel.Record {
		r := &rappel.Record{RecordID: id, RecallID: id, RecallType: rappel.TypeFood, Agency: "CFIA", EventDate: "2024-01-0" + id[len(id)-1:]}
		r.Translations.EN = &rappel.Translation{Title: en}
		if fr != "" {
			r.Translations.FR = &rappel.Translation{Title: fr}
		}
		return r
	}
	return []*rappel.Record{
		rec("hc-1", "Saigon Star brand Coconut Water recalled due to pieces of metal", "Eau de coco de marque Saigon Star rappelée en raison de morceaux de métal"),
		rec("hc-2", "Bluenose Naturals brand Beef Jerky recalled due to undeclared mustard", "Bœuf séché de marque Bluenose Naturals rappelé en raison de moutarde non déclarée"),
		rec("hc-3", "Kidmax Plush Toys recalled due to choking hazard", ""),
	}
}

// judgedCases are queries each peer must answer with their one target.
var judgedCases = []judged.Query{
	{Kind: judged.KindExact, Q: "saigon star coconut", Targets: []string{"hc-1"}},
	{Kind: judged.KindTypo, Q: "saigon star cocnut", Targets: []string{"hc-1"}},
	{Kind: judged.KindTypo, Q: "bluenose natrals jerky", Targets: []string{"hc-2"}},
	{Kind: judged.KindFrench, Q: "boeuf seche bluenose", Targets: []string{"hc-2"}},
	{Kind: judged.KindPrefix, Q: "kidmax plu", Params: url.Values{"prefix": {"last"}}, Targets: []string{"hc-3"}},
	{Kind: judged.KindPrefix, Q: "kidm* toys", Targets: []string{"hc-3"}},
}

func checkJudged(t *testing.T, outs []judged.Outcome) {
	t.Helper()
	for i, q := range judgedCases {
		if outs[i].Rejected || !slices.Equal(outs[i].IDs, q.Targets) {
			t.Errorf("%q (%s): got %v (refused %v), want %v", q.Q, q.Params.Encode(), outs[i].IDs, outs[i].Rejected, q.Targets)
		}
	}
	if s := judged.Scores(judgedCases, outs)["all"]; s.Recall != 1 || s.MRR != 1 {
		t.Errorf("scores %+v, want recall and MRR 1", s)
	}
}

func TestJudged_Bleve(t *testing.T) {
	outs, err := judgeBleve(context.Background(), judgedRecords(), judgedCases)
	if err != nil {
		t.Fatal(err)
	}
	checkJudged(t, outs)
}

// TestJudged_Postgres runs the queries at the threshold tuned for typos:
// at pg_trgm's default, "cocnut" misses "coconut".
func TestJudged_Postgres(t *testing.T) {
	if _, err := pgtest.BinDir(); err != nil {
		t.Skip(err)
	}
	outs, err := judgePG(context.Background(), judgedRecords(), judgedCases, "0.4")
	if err != nil {
		t.Fatal(err)
	}
	checkJudged(t, outs)
}

func TestJudged_Fuzziness(t *testing.T) {
	for w, want := range map[string]int{"soy": 0, "milk": 0, "water": 1, "coconuts": 1, "chevrolet": 2, "acétaminophène": 2} {
		if got := fuzziness(w); got != want {
			t.Errorf("fuzziness(%q) = %d, want %d", w, got, want)
		}
	}
	if _, _, err := trigramQuery(judged.Query{Q: `"unclosed`}); err == nil {
		t.Error("an unclosed quote translated without error")
	}
}
