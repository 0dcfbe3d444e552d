package index

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

// statsCorpus is n records with every group_by field populated some of the
// time, list fields with several values, English categories spelled
// differently from one record to the next, French categories, and
// units_affected on vehicles, spread over 1988-2026.
func statsCorpus(n int) []*rappel.Record {
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	pick := func(vs ...string) string { return vs[rng.IntN(len(vs))] }
	var out []*rappel.Record
	for i := range n {
		r := testRecord(fmt.Sprintf("hc-%d", i))
		r.RecallID = fmt.Sprint(i % (n - n/10)) // some recall_ids shared
		r.EventDate = fmt.Sprintf("%d-%02d-%02d", 1988+rng.IntN(39), 1+rng.IntN(12), 1+rng.IntN(28))
		r.RecallType = pick(rappel.RecallTypes...)
		r.Agency = pick(rappel.Agencies...)
		r.Status = pick(rappel.Statuses...)
		if rng.IntN(2) == 0 {
			r.HazardClass = pick(rappel.HazardClasses...)
		}
		for range rng.IntN(3) {
			if a := pick(rappel.Allergens...); !slices.Contains(r.Allergens, a) {
				r.Allergens = append(r.Allergens, a)
			}
		}
		switch rng.IntN(4) {
		case 0:
			r.Category = pick("Dairy", "dairy", "Vehicles", "Toys")
			r.Translations.FR.Category = pick("Produits laitiers", "Véhicules", "Jouets")
		case 1:
			r.Categories = []string{pick("Food", "Consumer products"), pick("Dairy", "Bakery products")}
		case 2:
			r.Category = "Bakery products"
			r.Categories = []string{"Food", "Bakery products"}
		}
		r.AlertType = pick("", "Recall", "Advisory")
		if r.RecallType == rappel.TypeVehicle {
			u := rng.IntN(5000)
			r.UnitsAffected = &u
			r.VehicleMake = pick("FORD", "HONDA", "TOYOTA")
			r.VehicleModel = pick("F-150", "CIVIC", "CAMRY")
			r.System = pick("Brakes", "Air bags")
			r.NotificationType = pick("Safety Mfr", "Compliance TC")
			r.VehicleCategory = pick("Car", "Truck - Light")
		}
		r.Companies = []string{pick("Acme Inc.", "Boréal Ltée", `Quote "Co"`)}[:rng.IntN(2)]
		r.Distribution = []string{"Ontario", "Quebec", "National"}[:rng.IntN(4)]
		r.PlaceOfOrigin = pick("", "Canada", "China")
		r.Manufacturer = pick("", "Maker A")
		r.Importer = pick("", "Importer B")
		r.RecallingFirm = pick("", "Firm C")
		r.Municipality = pick("", "", "Québec")
		out = append(out, r)
	}
	return out
}

// expectStats computes GET /recall/stats from the records themselves.
func expectStats(recs []*rappel.Record, q *rappel.StatsQuery) *rappel.Stats {
	st := &rappel.Stats{TotalInDB: len(recs)}
	groups := map[string]*rappel.StatsGroup{}
	catName := map[string]string{}
	byDate := slices.Clone(recs)
	slices.SortFunc(byDate, func(a, b *rappel.Record) int {
		return cmp.Or(strings.Compare(b.EventDate, a.EventDate), strings.Compare(a.RecordID, b.RecordID))
	})
	for _, r := range byDate {
		for _, c := range append([]string{r.Category}, r.Categories...) {
			if k := CategoryKey(c); k != "" && catName[k] == "" {
				catName[k] = c
			}
		}
		st.Oldest = r.EventDate
	}
	for _, r := range recs {
		if q.Since != "" && r.EventDate < q.Since {
			continue
		}
		st.Total++
		units := 0
		if r.UnitsAffected != nil && q.SumField != "" {
			units = *r.UnitsAffected
		}
		st.TotalSum += int64(units)
		for _, v := range recordValues(r, q.GroupBy, catName) {
			g := groups[v]
			if g == nil {
				g = &rappel.StatsGroup{Value: v}
				groups[v] = g
			}
			g.Count++
			g.Sum += int64(units)
		}
	}
	for _, g := range groups {
		st.Groups = append(st.Groups, *g)
	}
	slices.SortFunc(st.Groups, func(a, b rappel.StatsGroup) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Value, b.Value))
	})
	return st
}

// recordValues are r's distinct values of a group_by field. A category
// group is an English spelling; a record is in it when its category, its
// categories or its French category fold to the same key, as the
// category filter of GET /recall matches.
func recordValues(r *rappel.Record, field string, catName map[string]string) []string {
	one := func(v string) []string {
		if v == "" {
			return nil
		}
		return []string{v}
	}
	switch field {
	case "recall_type":
		return one(r.RecallType)
	case "agency":
		return one(r.Agency)
	case "status":
		return one(r.Status)
	case "hazard_class":
		return one(r.HazardClass)
	case "allergen":
		return r.Allergens
	case "alert_type":
		return one(r.AlertType)
	case "notification_type":
		return one(r.NotificationType)
	case "system":
		return one(r.System)
	case "vehicle_category":
		return one(r.VehicleCategory)
	case "vehicle_make":
		return one(r.VehicleMake)
	case "vehicle_model":
		return one(r.VehicleModel)
	case "place_of_origin":
		return one(r.PlaceOfOrigin)
	case "manufacturer":
		return one(r.Manufacturer)
	case "importer":
		return one(r.Importer)
	case "recalling_firm":
		return one(r.RecallingFirm)
	case "municipality":
		return one(r.Municipality)
	case "companies":
		return r.Companies
	case "distribution":
		return r.Distribution
	case rappel.GroupYear:
		return one(r.EventDate[:4])
	case rappel.GroupMonth:
		return one(r.EventDate[:7])
	case "category":
		var out []string
		cats := append([]string{r.Category}, r.Categories...)
		if r.Translations.FR != nil {
			cats = append(cats, r.Translations.FR.Category)
		}
		for _, c := range cats {
			if name, ok := catName[CategoryKey(c)]; ok && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
		return out
	}
	panic("no such field " + field)
}

func TestSnapshot_Stats(t *testing.T) {
	recs := statsCorpus(600)
	s := mustBuild(t, slices.Clone(recs))
	ctx := context.Background()

	t.Run("OK", func(t *testing.T) {
		for _, field := range rappel.StatsGroupFields {
			for _, since := range []string{"", "2026-06-01", "2020-02-29", "1988-01-01", "2030-01-01"} {
				for _, sum := range []string{"", "units_affected"} {
					q := &rappel.StatsQuery{GroupBy: field, Since: since, SumField: sum}
					got, err := s.Stats(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					want := expectStats(recs, q)
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("%+v:\n got %+v\nwant %+v", q, got, want)
					}
				}
			}
		}
	})

	t.Run("AgreesWithSearch", func(t *testing.T) {
		filters := map[string]func(q *rappel.Search, v string){
			"recall_type":  func(q *rappel.Search, v string) { q.RecallType = v },
			"agency":       func(q *rappel.Search, v string) { q.Agency = v },
			"hazard_class": func(q *rappel.Search, v string) { q.HazardClass = v },
			"allergen":     func(q *rappel.Search, v string) { q.Allergen = v },
			"category":     func(q *rappel.Search, v string) { q.Category = v },
		}
		for field, set := range filters {
			for _, since := range []string{"", "2015-07-14"} {
				st, err := s.Stats(ctx, &rappel.StatsQuery{GroupBy: field, Since: since})
				if err != nil {
					t.Fatal(err)
				}
				if p := search(t, s, &rappel.Search{IssuedAfter: since, Limit: 1}); p.Count != st.Total {
					t.Errorf("since %q: total %d, GET /recall counts %d", since, st.Total, p.Count)
				}
				for _, g := range st.Groups {
					q := &rappel.Search{IssuedAfter: since, Limit: 1}
					set(q, g.Value)
					if p := search(t, s, q); p.Count != g.Count {
						t.Errorf("%s=%q since %q: stats count %d, search count %d", field, g.Value, since, g.Count, p.Count)
					}
				}
			}
		}
	})

	t.Run("Empty", func(t *testing.T) {
		st, err := mustBuild(t, nil).Stats(ctx, &rappel.StatsQuery{GroupBy: "year", SumField: "units_affected"})
		if err != nil || st.Total != 0 || st.TotalInDB != 0 || st.Oldest != "" || len(st.Groups) != 0 || st.Groups == nil {
			t.Fatalf("empty snapshot: %+v, %v", st, err)
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		for _, q := range []rappel.StatsQuery{
			{GroupBy: "record_id"}, {GroupBy: ""}, {GroupBy: "recall_type", SumField: "units_sold"},
			{GroupBy: "recall_type", Since: "2024-02-30"},
		} {
			if _, err := s.Stats(ctx, &q); rappel.ErrorCode(err) != rappel.EINVALID {
				t.Errorf("%+v: %v, want EINVALID", q, err)
			}
		}
	})

	t.Run("ErrTimeout", func(t *testing.T) {
		done, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Stats(done, &rappel.StatsQuery{GroupBy: "recall_type"}); rappel.ErrorCode(err) != rappel.ETIMEOUT {
			t.Errorf("done context: %v, want ETIMEOUT", err)
		}
	})
}

func TestSnapshot_Lookups(t *testing.T) {
	a, b, c := testRecord("hc-1"), testRecord("hc-2"), testRecord("tc-3")
	a.RecallID, b.RecallID, c.RecallID = "R-1", "R-1", "R-3"
	a.EventDate, b.EventDate, c.EventDate = "2024-01-01", "2024-06-01", "2023-01-01"
	c.RecallType = rappel.TypeVehicle
	c.Translations.EN = nil
	s := mustBuild(t, []*rappel.Record{a, b, c})

	t.Run("Summaries", func(t *testing.T) {
		got := s.Summaries([]string{"tc-3", "hc-1", "nope", "hc-2", "hc-1"})
		want := []rappel.RecordSummary{
			{RecordID: "hc-2", RecallID: "R-1", RecallType: "food", TitleEN: "Cheese recalled", TitleFR: "Fromage rappelé"},
			{RecordID: "hc-1", RecallID: "R-1", RecallType: "food", TitleEN: "Cheese recalled", TitleFR: "Fromage rappelé"},
			{RecordID: "tc-3", RecallID: "R-3", RecallType: "vehicle", TitleFR: "Fromage rappelé"},
		}
		if !slices.Equal(got, want) {
			t.Errorf("Summaries:\n got %+v\nwant %+v", got, want)
		}
		if got := s.Summaries(nil); len(got) != 0 {
			t.Errorf("Summaries(nil) = %+v", got)
		}
	})
	t.Run("NewestByRecallID", func(t *testing.T) {
		if r, ok := s.NewestByRecallID("R-1"); !ok || r.RecordID != "hc-2" {
			t.Errorf("R-1: %v %v, want hc-2, the newer", r, ok)
		}
		if r, ok := s.NewestByRecallID("R-3"); !ok || r.RecordID != "tc-3" || r.Translations.EN != nil {
			t.Errorf("R-3: %+v %v", r, ok)
		}
		if _, ok := s.NewestByRecallID("r-1"); ok {
			t.Error("recall ids are case-sensitive")
		}
	})
}

func BenchmarkSnapshot_Stats(b *testing.B) {
	s := bundled(b)
	for _, q := range []rappel.StatsQuery{
		{GroupBy: "recall_type"},
		{GroupBy: "category"},
		{GroupBy: "companies"},
		{GroupBy: "month"},
		{GroupBy: "vehicle_make", SumField: "units_affected"},
		{GroupBy: "category", SumField: "units_affected"},
		{GroupBy: "recall_type", Since: "2025-11-22"},
	} {
		b.Run(fmt.Sprintf("%s_%s_%s", q.GroupBy, cmp.Or(q.Since, "all"), cmp.Or(q.SumField, "count")), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Stats(context.Background(), &q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
