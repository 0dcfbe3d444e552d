package edge

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

// statsGroup is one element of a by_<field> array.
type statsGroup struct {
	Value string `json:"value"`
	Count int    `json:"count"`
	Sum   *int64 `json:"sum"`
}

func (g statsGroup) String() string {
	if g.Sum == nil {
		return fmt.Sprintf("{%q %d}", g.Value, g.Count)
	}
	return fmt.Sprintf("{%q %d sum %d}", g.Value, g.Count, *g.Sum)
}

// statsAnswer is a GET /recall/stats body, its keys checked.
type statsAnswer struct {
	EntityType  string       `json:"entity_type"`
	PeriodDays  int          `json:"period_days"`
	IssuedAfter *string      `json:"issued_after"`
	TotalInDB   int          `json:"total_in_db"`
	Total       int          `json:"total"`
	SumField    *string      `json:"sum_field"`
	TotalSum    *int64       `json:"total_sum"`
	Groups      []statsGroup `json:"-"`
}

// stats sends GET /recall/stats?query, which must answer 200, and checks
// that the body has exactly the keys docs/api.md names, the array under
// by_<groupBy>.
func (e *lookupEnv) stats(tb testing.TB, query, groupBy string) statsAnswer {
	tb.Helper()
	var raw map[string]json.RawMessage
	e.ok(tb, "/recall/stats?"+query, &raw)
	keys := []string{"entity_type", "period_days", "issued_after", "total_in_db", "total", "by_" + groupBy}
	var a statsAnswer
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &a); err != nil {
		tb.Fatal(err)
	}
	if a.SumField != nil {
		keys = append(keys, "sum_field", "total_sum")
	}
	if got := slices.Sorted(maps.Keys(raw)); !slices.Equal(got, slices.Sorted(slices.Values(keys))) {
		tb.Fatalf("%s: keys %v, want %v", query, got, keys)
	}
	if err := json.Unmarshal(raw["by_"+groupBy], &a.Groups); err != nil || a.Groups == nil {
		tb.Fatalf("%s: by_%s is not an array: %v", query, groupBy, err)
	}
	for _, g := range a.Groups {
		if (g.Sum != nil) != (a.SumField != nil) {
			tb.Fatalf("%s: group %+v with sum_field %v", query, g, a.SumField)
		}
	}
	if a.EntityType != "recall" {
		tb.Errorf("%s: entity_type %q", query, a.EntityType)
	}
	return a
}

// searchCount is GET /recall's count for the filter param=value (none when
// param is "") and issued_after=since.
func (e *lookupEnv) searchCount(tb testing.TB, param, value, since string) int {
	tb.Helper()
	v := url.Values{"issued_after": {since}, "limit": {"1"}}
	if param != "" {
		v.Set(param, value)
	}
	var p struct{ Count int }
	e.ok(tb, "/recall?"+v.Encode(), &p)
	return p.Count
}

// groupValues returns the distinct values a record holds for a group_by
// field, read from its JSON as a client would: a string field's value, a
// list's elements, or the year or month of event_date.
func groupValues(tb testing.TB, r *rappel.Record, field string) []string {
	b, _ := json.Marshal(r)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	switch field {
	case rappel.GroupYear:
		return []string{r.EventDate[:4]}
	case rappel.GroupMonth:
		return []string{r.EventDate[:7]}
	case "allergen":
		field = "allergens"
	}
	switch v := m[field].(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s := x.(string); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	case nil:
		return nil
	}
	tb.Fatalf("field %s of %s is %T", field, r.RecordID, m[field])
	return nil
}

// expectGroups computes a by_<field> array and the total from the records
// themselves.
func expectGroups(tb testing.TB, recs []*rappel.Record, field, since string, sum bool) (total int, totalSum int64, groups []statsGroup) {
	byValue := map[string]*statsGroup{}
	for _, r := range recs {
		if r.EventDate < since {
			continue
		}
		total++
		var u int64
		if r.UnitsAffected != nil {
			u = int64(*r.UnitsAffected)
		}
		totalSum += u
		for _, v := range groupValues(tb, r, field) {
			g := byValue[v]
			if g == nil {
				g = &statsGroup{Value: v}
				if sum {
					g.Sum = new(int64)
				}
				byValue[v] = g
			}
			g.Count++
			if sum {
				*g.Sum += u
			}
		}
	}
	for _, g := range byValue {
		groups = append(groups, *g)
	}
	slices.SortFunc(groups, func(a, b statsGroup) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Value, b.Value))
	})
	return total, totalSum, groups
}

func oldestDate(recs []*rappel.Record) string {
	oldest := recs[0].EventDate
	for _, r := range recs {
		oldest = min(oldest, r.EventDate)
	}
	return oldest
}

func TestStats(t *testing.T) {
	recs := append(lookupRecords(), statsRecords(700, 1)...)
	e := mustLookupEnv(t, recs)
	oldest := oldestDate(recs)
	allDays := rappel.DaysSince(lookupNow, oldest)

	t.Run("Default", func(t *testing.T) {
		a := e.stats(t, "", "recall_type")
		since := "2026-10-23" // 30 days before lookupNow
		if a.PeriodDays != 30 || a.IssuedAfter == nil || *a.IssuedAfter != since || a.TotalInDB != len(recs) {
			t.Fatalf("default period: %+v", a)
		}
		if n := e.searchCount(t, "", "", since); a.Total != n {
			t.Errorf("total %d, GET /recall?issued_after=%s counts %d", a.Total, since, n)
		}
		total, _, want := expectGroups(t, recs, "recall_type", since, false)
		if a.Total != total || fmt.Sprint(a.Groups) != fmt.Sprint(want) {
			t.Errorf("got %d %v, want %d %v", a.Total, a.Groups, total, want)
		}
	})

	t.Run("Periods", func(t *testing.T) {
		for _, tc := range []struct {
			period string
			days   int
		}{
			{"30d", 30}, {"1d", 1}, {"30 d", 30}, {"30days", 30}, {"45 Days", 45}, {" 7 day ", 7},
			{"2w", 14}, {"1 week", 7}, {"3weeks", 21}, {"6mo", 180}, {"1 month", 30}, {"18 months", 540},
			{"1y", 365}, {"1yr", 365}, {"2 yrs", 730}, {"1 year", 365}, {"3years", 1095}, {"100y", 36500},
			{"all", allDays}, {"ALL", allDays},
		} {
			a := e.stats(t, url.Values{"period": {tc.period}}.Encode(), "recall_type")
			since := rappel.PeriodStart(lookupNow, tc.days)
			if tc.days == allDays {
				since = oldest
			}
			if a.PeriodDays != tc.days || a.IssuedAfter == nil || *a.IssuedAfter != since {
				t.Errorf("period %q: period_days %d, issued_after %v; want %d, %s", tc.period, a.PeriodDays, a.IssuedAfter, tc.days, since)
			}
			if n := e.searchCount(t, "", "", since); a.Total != n {
				t.Errorf("period %q: total %d, GET /recall?issued_after=%s counts %d", tc.period, a.Total, since, n)
			}
		}
	})

	t.Run("All", func(t *testing.T) {
		a := e.stats(t, "period=all&group_by=year", "year")
		if a.Total != len(recs) || a.TotalInDB != len(recs) || a.PeriodDays != allDays || *a.IssuedAfter != oldest {
			t.Fatalf("all: %+v; want %d records since %s (%d days)", a, len(recs), oldest, allDays)
		}
	})

	// Every group of every filter field counts what GET /recall counts with
	// that filter over the same period, through the same router.
	t.Run("AgreesWithSearch", func(t *testing.T) {
		filters := map[string]string{"recall_type": "recall_type", "agency": "recall_agency",
			"hazard_class": "hazard_class", "allergen": "allergen", "category": "category"}
		for field, param := range filters {
			for _, period := range []string{"7d", "30d", "6mo", "1y", "all"} {
				a := e.stats(t, "group_by="+field+"&period="+period, field)
				if period == "all" && len(a.Groups) == 0 {
					t.Errorf("group_by=%s period=%s: no groups", field, period)
				}
				for _, g := range a.Groups {
					if n := e.searchCount(t, param, g.Value, *a.IssuedAfter); g.Count != n {
						t.Errorf("group_by=%s period=%s: %q counts %d, GET /recall?%s=%s&issued_after=%s counts %d",
							field, period, g.Value, g.Count, param, g.Value, *a.IssuedAfter, n)
					}
				}
			}
		}
	})

	// Every field but category (checked above against GET /recall) agrees
	// with counting the records' own JSON.
	t.Run("Fields", func(t *testing.T) {
		for _, field := range rappel.StatsGroupFields {
			if field == "category" {
				continue
			}
			for _, period := range []string{"30d", "2y", "all"} {
				for _, sum := range []bool{false, true} {
					q := url.Values{"group_by": {field}, "period": {period}}
					if sum {
						q.Set("sum_field", "units_affected")
					}
					a := e.stats(t, q.Encode(), field)
					total, totalSum, want := expectGroups(t, recs, field, *a.IssuedAfter, sum)
					if a.Total != total || fmt.Sprint(a.Groups) != fmt.Sprint(want) {
						t.Errorf("%s: got %d %v\nwant %d %v", q.Encode(), a.Total, a.Groups, total, want)
					}
					if sum && (*a.SumField != "units_affected" || *a.TotalSum != totalSum) {
						t.Errorf("%s: sum_field %v total_sum %v, want units_affected %d", q.Encode(), *a.SumField, *a.TotalSum, totalSum)
					}
				}
			}
		}
	})

	t.Run("Order", func(t *testing.T) {
		a := e.stats(t, "group_by=month&period=all", "month")
		for i := 1; i < len(a.Groups); i++ {
			p, g := a.Groups[i-1], a.Groups[i]
			if p.Count < g.Count || p.Count == g.Count && p.Value >= g.Value {
				t.Fatalf("groups out of order at %d: %+v then %+v", i, p, g)
			}
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		for _, tc := range []struct {
			query, loc, typ string
			says            []string
		}{
			{"period=30x", "period", "value_error", []string{"'30x', whose unit 'x' is unknown", "'30d', '2w', '6mo' or '1y'"}},
			{"period=30dys", "period", "value_error", []string{"did you mean '30d'?"}},
			{"period=6m", "period", "value_error", []string{"did you mean '6mo'?"}},
			{"period=-7d", "period", "value_error", []string{"negative", "did you mean '7d'?"}},
			{"period=0d", "period", "value_error", []string{"did you mean '1d'?"}},
			{"period=alll", "period", "value_error", []string{"did you mean 'all'?"}},
			{"period=200y", "period", "value_error", []string{"100 years", "did you mean 'all'?"}},
			{"period=", "period", "value_error", []string{"empty", "did you mean '30d'?"}},
			{"group_by=recal_type", "group_by", "enum", []string{"did you mean 'recall_type'?"}},
			{"group_by=allergens", "group_by", "enum", []string{"did you mean 'allergen'?"}},
			{"group_by=Vehicle_Make", "group_by", "enum", []string{"did you mean 'vehicle_make'?"}},
			{"group_by=units_affected", "group_by", "enum", []string{"sum_field=units_affected"}},
			{"group_by=event_date", "group_by", "enum", []string{"'year' or 'month'"}},
			{"group_by=zzzzzz", "group_by", "enum", []string{"use 'recall_type', 'agency'", "'year' or 'month'."}},
			{"sum_field=units", "sum_field", "enum", []string{"did you mean 'units_affected'?"}},
			{"sum_field=units_sold", "sum_field", "enum", []string{"not 'units_sold'", "did you mean 'units_affected'?"}},
			{"sum_field=recall_type", "sum_field", "enum", []string{"did you mean 'units_affected'?"}},
			{"group_by=year&group_by=month", "group_by", "value_error", []string{"given 2 times"}},
			{"groupby=year", "groupby", "extra_forbidden", []string{"did you mean 'group_by'?"}},
			{"recall_type=food", "recall_type", "extra_forbidden", []string{"Query parameter 'recall_type' is unknown"}},
		} {
			items := e.invalid(t, "/recall/stats?"+tc.query)
			it := items[0]
			if it.Loc[1] != tc.loc || it.Type != tc.typ {
				t.Errorf("%s: item %+v, want loc %s type %s", tc.query, it, tc.loc, tc.typ)
			}
			for _, s := range tc.says {
				if !strings.Contains(it.Msg, s) {
					t.Errorf("%s: msg %q lacks %q", tc.query, it.Msg, s)
				}
			}
		}
		// Every bad parameter is reported at once.
		if items := e.invalid(t, "/recall/stats?period=x&group_by=y&sum_field=z"); len(items) != 3 {
			t.Errorf("three bad parameters, %d items: %+v", len(items), items)
		}
	})

	t.Run("EmptyCatalog", func(t *testing.T) {
		empty := mustLookupEnv(t, nil)
		a := empty.stats(t, "period=all&sum_field=units_affected", "recall_type")
		if a.Total != 0 || a.TotalInDB != 0 || a.PeriodDays != 0 || a.IssuedAfter != nil || len(a.Groups) != 0 || *a.TotalSum != 0 {
			t.Errorf("empty: %+v", a)
		}
	})
}

// TestStats_Bundle checks the statistics of the real data against GET
// /recall: every group of every filter field, over several periods.
func TestStats_Bundle(t *testing.T) {
	recs := bundleRecords(t)
	e := mustLookupEnv(t, recs)
	filters := map[string]string{"recall_type": "recall_type", "agency": "recall_agency",
		"hazard_class": "hazard_class", "allergen": "allergen", "category": "category"}
	for field, param := range filters {
		for _, period := range []string{"30d", "1y", "10y", "all"} {
			a := e.stats(t, "group_by="+field+"&period="+period, field)
			if n := e.searchCount(t, "", "", *a.IssuedAfter); a.Total != n {
				t.Errorf("period=%s: total %d, GET /recall counts %d", period, a.Total, n)
			}
			for _, g := range a.Groups {
				if n := e.searchCount(t, param, g.Value, *a.IssuedAfter); g.Count != n {
					t.Errorf("group_by=%s period=%s: %q counts %d, GET /recall counts %d", field, period, g.Value, g.Count, n)
				}
			}
		}
	}
	for _, field := range []string{"vehicle_make", "companies", "year"} {
		a := e.stats(t, "period=all&sum_field=units_affected&group_by="+field, field)
		total, totalSum, want := expectGroups(t, recs, field, *a.IssuedAfter, true)
		if a.Total != total || *a.TotalSum != totalSum || fmt.Sprint(a.Groups) != fmt.Sprint(want) {
			t.Errorf("group_by=%s: got %d %d %v\nwant %d %d %v", field, a.Total, *a.TotalSum, a.Groups, total, totalSum, want)
		}
	}
}
