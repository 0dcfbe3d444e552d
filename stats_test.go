package rappel

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParsePeriod(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for _, tc := range []struct {
			in   string
			days int
			all  bool
		}{
			{"30d", 30, false}, {"1d", 1, false}, {"30 d", 30, false}, {"30day", 30, false},
			{"30 days", 30, false}, {" 30 Days ", 30, false}, {"030D", 30, false},
			{"2w", 14, false}, {"2 weeks", 14, false}, {"1 week", 7, false}, {"3W", 21, false},
			{"6mo", 180, false}, {"6 months", 180, false}, {"1 month", 30, false}, {"6MO", 180, false},
			{"1y", 365, false}, {"1yr", 365, false}, {"2 yrs", 730, false}, {"1 year", 365, false}, {"2years", 730, false},
			{"100y", 36500, false}, {"36500d", 36500, false},
			{"all", 0, true}, {"ALL", 0, true}, {" all ", 0, true},
		} {
			days, all, err := ParsePeriod(tc.in)
			if err != nil || days != tc.days || all != tc.all {
				t.Errorf("ParsePeriod(%q) = %d, %v, %v; want %d, %v", tc.in, days, all, err, tc.days, tc.all)
			}
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		for _, tc := range []struct {
			in, suggestion string
			says           string // a part of the reason
		}{
			{"", "30d", "empty"},
			{"   ", "30d", "empty"},
			{"30", "30d", "no unit"},
			{"30x", "", "unit 'x'"},
			{"30dys", "30d", "unit 'dys'"},
			{"6 mnths", "6mo", "unit 'mnths'"},
			{"6m", "6mo", "unit 'm'"},
			{"2wk", "2w", "unit 'wk'"},
			{"1.5y", "", "whole number"},
			{"0d", "1d", "no day"},
			{"0 months", "1mo", "no day"},
			{"-30d", "30d", "negative"},
			{"+2w", "2w", "number"},
			{"al", "all", "number"},
			{"alll", "all", "number"},
			{"month", "1mo", "number"},
			{"forever", "", "number"},
			{"101y", "all", "100 years"},
			{"36501d", "all", "100 years"},
			{"99999999999999999999999d", "all", "100 years"},
			{"30d30d", "30d", "unit 'd30d'"},
			{"d30", "1d", "number"},
		} {
			_, _, err := ParsePeriod(tc.in)
			var pe *PeriodError
			if !errors.As(err, &pe) {
				t.Errorf("ParsePeriod(%q) = %v, want a *PeriodError", tc.in, err)
				continue
			}
			if pe.Suggestion != tc.suggestion || !strings.Contains(pe.Problem, tc.says) {
				t.Errorf("ParsePeriod(%q): problem %q, suggestion %q; want a problem saying %q, suggestion %q", tc.in, pe.Problem, pe.Suggestion, tc.says, tc.suggestion)
			}
			if pe.Suggestion != "" {
				if _, _, err := ParsePeriod(pe.Suggestion); err != nil {
					t.Errorf("ParsePeriod(%q) suggests %q, which is refused: %v", tc.in, pe.Suggestion, err)
				}
			}
		}
	})
}

// FuzzParsePeriod checks that any input either parses to a period within
// bounds or is refused with a reason whose suggestion is itself valid.
func FuzzParsePeriod(f *testing.F) {
	for _, s := range []string{"30d", "2 weeks", "6mo", "1y", "all", "", "-1d", "1.5y", "99999999999999999999d", "30 dys", "\xff7d", "7\u00a0d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		days, all, err := ParsePeriod(s)
		if err != nil {
			var pe *PeriodError
			if !errors.As(err, &pe) || pe.Problem == "" || pe.Fix == "" {
				t.Fatalf("ParsePeriod(%q) = %v: not a *PeriodError with a reason", s, err)
			}
			if !utf8.ValidString(pe.Problem) && utf8.ValidString(s) {
				t.Fatalf("ParsePeriod(%q): problem %q is not UTF-8", s, pe.Problem)
			}
			if pe.Suggestion != "" {
				if _, _, err := ParsePeriod(pe.Suggestion); err != nil {
					t.Fatalf("ParsePeriod(%q) suggests %q, which is refused: %v", s, pe.Suggestion, err)
				}
			}
			return
		}
		switch {
		case all && days != 0:
			t.Fatalf("ParsePeriod(%q) = %d days and all", s, days)
		case !all && (days < 1 || days > MaxPeriodDays):
			t.Fatalf("ParsePeriod(%q) = %d days, outside 1..%d", s, days, MaxPeriodDays)
		}
	})
}

func TestPeriodStart(t *testing.T) {
	late := time.Date(2026, 3, 1, 23, 30, 0, 0, time.FixedZone("EST", -5*3600)) // 2026-03-02 04:30 UTC
	for _, tc := range []struct {
		now  time.Time
		days int
		want string
	}{
		{time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), 30, "2026-10-23"},
		{time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), 0, "2026-11-22"},
		{time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 1, "2024-02-29"},
		{time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), 365, "2025-11-22"},
		{late, 1, "2026-03-01"}, // today is the UTC date, not the local one
	} {
		if got := PeriodStart(tc.now, tc.days); got != tc.want {
			t.Errorf("PeriodStart(%v, %d) = %s, want %s", tc.now, tc.days, got, tc.want)
		}
	}
}

func TestDaysSince(t *testing.T) {
	now := time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		date string
		want int
	}{
		{"2026-11-22", 0}, {"2026-10-23", 30}, {"1991-01-01", 13109}, {"2027-01-01", 0}, {"", 0}, {"nope", 0},
	} {
		if got := DaysSince(now, tc.date); got != tc.want {
			t.Errorf("DaysSince(%s) = %d, want %d", tc.date, got, tc.want)
		}
		if tc.want > 0 && PeriodStart(now, tc.want) != tc.date {
			t.Errorf("PeriodStart(DaysSince(%s)) = %s", tc.date, PeriodStart(now, tc.want))
		}
	}
}

func TestRecordSummary_Title(t *testing.T) {
	both := RecordSummary{TitleEN: "Cheese", TitleFR: "Fromage"}
	enOnly := RecordSummary{TitleEN: "Cheese"}
	frOnly := RecordSummary{TitleFR: "Fromage"}
	for _, tc := range []struct {
		s          RecordSummary
		lang, want string
	}{
		{both, LangEN, "Cheese"}, {both, LangFR, "Fromage"}, {both, "", "Cheese"},
		{enOnly, LangFR, "Cheese"}, {frOnly, LangEN, "Fromage"}, {RecordSummary{}, LangEN, ""},
	} {
		if got := tc.s.Title(tc.lang); got != tc.want {
			t.Errorf("%+v.Title(%q) = %q, want %q", tc.s, tc.lang, got, tc.want)
		}
	}
}
