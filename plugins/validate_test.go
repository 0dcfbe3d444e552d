package plugins_test

import (
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins"
)

func complete(id string) *rappel.Record {
	return &rappel.Record{RecordID: id, RecallID: "1", RecallType: "food", Agency: "CFIA", Status: "active",
		EventDate: "2024-05-01", RecallDate: "2024-05-01", Translations: rappel.Translations{EN: &rappel.Translation{Title: "T"}}}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name    string
		partial bool
		edit    func(*rappel.Record)
		refused string // "" when the record is accepted
	}{
		{"Complete", false, func(*rappel.Record) {}, ""},
		{"CompleteMissingDate", false, func(r *rappel.Record) { r.EventDate = "" }, "event_date"},
		{"PartialMissingDate", true, func(r *rappel.Record) { r.EventDate = "" }, ""},
		{"PartialOnlyTheID", true, func(r *rappel.Record) { *r = rappel.Record{RecordID: r.RecordID, UPC: "0 41798 00145 9"} }, ""},
		{"PartialBadDate", true, func(r *rappel.Record) { r.EventDate = "2024-02-30" }, `event_date "2024-02-30"`},
		{"PartialBadAgency", true, func(r *rappel.Record) { r.Agency = "Nobody" }, `agency "Nobody"`},
		{"BadHazardClass", false, func(r *rappel.Record) { r.HazardClass = "class_9" }, "hazard_class"},
		{"BadAllergen", true, func(r *rappel.Record) { r.Allergens = []string{"kryptonite"} }, "allergen"},
		{"BadDateModified", true, func(r *rappel.Record) { r.DateModified = "01/02/2024" }, "date_modified"},
		{"FetchedAtIgnored", false, func(r *rappel.Record) { r.FetchedAt = "whenever" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := complete("hc-1")
			tt.edit(r)
			v := plugins.Judge("hcdump", &plugins.Result{Records: []*rappel.Record{r}, Lines: 1}, tt.partial)
			if tt.refused == "" {
				if len(v.Records) != 1 || v.Refused != 0 {
					t.Fatalf("refused: %+v", v.Problems)
				}
				if v.Records[0].FetchedAt != "" {
					t.Errorf("fetched_at = %q, want it left to the host", v.Records[0].FetchedAt)
				}
				return
			}
			if len(v.Records) != 0 || v.Refused != 1 || len(v.Refusals) != 1 {
				t.Fatalf("accepted a record that should be refused for %s", tt.refused)
			}
			p := v.Refusals[0]
			if p.RecordID != "hc-1" || p.Source != "hcdump" || !strings.Contains(p.Reason, tt.refused) || !strings.HasPrefix(p.Reason, "The host refused the record: ") {
				t.Fatalf("refusal = %+v, want one naming %s", p, tt.refused)
			}
		})
	}
}

func TestBaseline_Accept(t *testing.T) {
	ten := &plugins.Verdict{}
	for i := range 10 {
		ten.Records = append(ten.Records, complete("hc-"+string(rune('a'+i))))
	}
	base := plugins.NewBaseline("sha", ten)
	t.Run("Same", func(t *testing.T) {
		if err := base.Accept(ten, 0.10); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("LosesOneOfTen", func(t *testing.T) {
		if err := base.Accept(&plugins.Verdict{Records: ten.Records[1:]}, 0.10); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("LosesTwoOfTen", func(t *testing.T) {
		err := base.Accept(&plugins.Verdict{Records: ten.Records[2:]}, 0.10)
		if err == nil || !strings.Contains(err.Error(), "lost 2 of the 10 records") || !strings.Contains(err.Error(), "hc-a among them") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("RefusesMore", func(t *testing.T) {
		v := &plugins.Verdict{Records: ten.Records, Refused: 1, Refusals: []rappel.Problem{{RecordID: "hc-z", Reason: "The host refused the record: bad."}}}
		err := base.Accept(v, 0.10)
		if err == nil || !strings.Contains(err.Error(), "refused 1 of its records") || !strings.Contains(err.Error(), "hc-z") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("NoBaseline", func(t *testing.T) {
		var none *plugins.Baseline
		if err := none.Accept(&plugins.Verdict{Records: ten.Records[:1]}, 0.10); err != nil {
			t.Fatal(err)
		}
	})
	// A plugin that keeps nothing of its input is refused, with or without
	// a baseline: the server would refuse to empty the source with it.
	t.Run("KeepsNothing", func(t *testing.T) {
		var none *plugins.Baseline
		for _, b := range []*plugins.Baseline{none, base} {
			err := b.Accept(&plugins.Verdict{}, 0.10)
			if err == nil || !strings.Contains(err.Error(), "kept nothing of its input") {
				t.Errorf("no record: err = %v", err)
			}
			v := &plugins.Verdict{Refused: 2, Refusals: []rappel.Problem{{RecordID: "hc-z", Reason: "The host refused the record: bad."}}}
			if err := b.Accept(v, 0.10); err == nil || !strings.Contains(err.Error(), "refused all 2") {
				t.Errorf("every record refused: err = %v", err)
			}
		}
	})
}
