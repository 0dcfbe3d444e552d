package rappel

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Group-by values of GET /recall/stats that are not record fields: the
// year (YYYY) and month (YYYY-MM) of event_date.
const (
	GroupYear  = "year"
	GroupMonth = "month"
)

// StatsGroupFields are the group_by values of GET /recall/stats, the default
// first: the record fields whose values name a kind of thing (strings, or
// lists of strings such as allergen, where a record counts once under each
// of its values), then the year and month of event_date. Identifiers, dates,
// free text and numbers are left out: grouping by them makes one group per
// record. allergen is the field allergens, named like GET /recall's filter;
// category groups as GET /recall's category filter matches (see
// Snapshot.Stats).
var StatsGroupFields = Vocabulary{
	"recall_type", "agency", "status", "hazard_class", "allergen", "category",
	"alert_type", "notification_type", "system", "vehicle_category", "vehicle_make", "vehicle_model",
	"place_of_origin", "manufacturer", "importer", "recalling_firm", "municipality",
	"companies", "distribution",
	GroupYear, GroupMonth,
}

// StatsSumFields are the numeric record fields sum_field may name.
var StatsSumFields = Vocabulary{"units_affected"}

// Defaults of GET /recall/stats (docs/api.md, "Statistics").
const (
	DefaultGroupBy    = "recall_type"
	DefaultPeriodDays = 30
	// MaxPeriodDays bounds a period: a century, far more than the data
	// spans; a client wanting everything asks for "all".
	MaxPeriodDays = 100 * 365
)

// StatsQuery is a validated GET /recall/stats request.
type StatsQuery struct {
	// GroupBy is one of StatsGroupFields.
	GroupBy string
	// Since keeps the records whose event_date is on or after it,
	// YYYY-MM-DD, exactly as GET /recall's issued_after does; "" keeps
	// every record.
	Since string
	// SumField is "" or one of StatsSumFields.
	SumField string
}

// StatsGroup is one value of the grouped field with the records in the
// period that hold it.
type StatsGroup struct {
	Value string
	Count int
	// Sum is the total of the query's SumField over those records;
	// records without a value add nothing.
	Sum int64
}

// Stats answers a StatsQuery.
type Stats struct {
	// TotalInDB is the number of records in the dataset.
	TotalInDB int
	// Total is the number of records in the period.
	Total int
	// TotalSum is the total of SumField over the records in the period.
	TotalSum int64
	// Oldest is the event_date of the oldest record in the dataset, ""
	// when it holds none: the start of the period "all".
	Oldest string
	// Groups lists every value held by a record of the period, by count
	// descending, then value ascending. A record without a value for the
	// field is in no group; one with several (a list field) is in several.
	Groups []StatsGroup
}

// StatsSource computes statistics. Stats returns an *Error with code
// EINVALID for a GroupBy, SumField or Since it does not know, and ETIMEOUT
// when ctx is done before it starts; the work itself is bounded by the
// number of distinct values, not of records.
type StatsSource interface {
	Stats(ctx context.Context, q *StatsQuery) (*Stats, error)
}

// PeriodError says why a period was refused, as a Reason about the
// period; its Suggestion is the nearest valid period, "" when nothing is
// near.
type PeriodError struct{ Reason }

func (e *PeriodError) Error() string { return "period " + e.Reason.String() }

// periodUnits maps every accepted unit spelling to its length in days and
// its short form, in the order suggestions prefer them.
var periodUnits = []struct {
	name, short string
	days        int
}{
	{"d", "d", 1}, {"day", "d", 1}, {"days", "d", 1},
	{"w", "w", 7}, {"week", "w", 7}, {"weeks", "w", 7},
	{"mo", "mo", 30}, {"month", "mo", 30}, {"months", "mo", 30},
	{"y", "y", 365}, {"yr", "y", 365}, {"yrs", "y", 365}, {"year", "y", 365}, {"years", "y", 365},
}

var periodUnitNames = func() []string {
	names := make([]string, len(periodUnits))
	for i, u := range periodUnits {
		names[i] = u.name
	}
	return names
}()

// periodForm is the fix of a period that is not a number and a unit.
const periodForm = "give a whole number and a unit, d, w, mo or y (or day, week, month, year spelled out), as in '30d', '2w', '6mo' or '1y', or 'all'"

// periodTooLong is the error of a period longer than MaxPeriodDays.
func periodTooLong(s string) *PeriodError {
	return &PeriodError{Reason{Problem: fmt.Sprintf("is %s, longer than %d years", Quote(s), MaxPeriodDays/365),
		Fix: "ask for 'all' to count every record", Suggestion: "all"}}
}

// ParsePeriod reads a period of GET /recall/stats: a positive whole number
// and a unit, d/day(s), w/week(s), mo/month(s) or y/yr(s)/year(s), with
// spaces allowed around and between them and case ignored ("30d", "2 weeks",
// "6 Mo"); or "all", which sets all. A month is 30 days and a year 365, so
// that a period is always a whole number of days. Errors are *PeriodError.
func ParsePeriod(s string) (days int, all bool, err error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "all" {
		return 0, true, nil
	}
	if t == "" {
		return 0, false, &PeriodError{Reason{Problem: "is empty", Fix: periodForm, Suggestion: "30d"}}
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	num, unit := t[:i], strings.TrimLeft(t[i:], " ")
	if num == "" {
		return 0, false, noNumber(t)
	}
	n, convErr := strconv.Atoi(num)
	if convErr != nil || n > MaxPeriodDays {
		return 0, false, periodTooLong(s)
	}
	if unit == "" {
		return 0, false, &PeriodError{Reason{Problem: fmt.Sprintf("is %s, which has no unit", Quote(s)), Fix: periodForm,
			Suggestion: validPeriod(strconv.Itoa(max(n, 1)) + "d")}}
	}
	u := -1
	for j, pu := range periodUnits {
		if pu.name == unit {
			u = j
			break
		}
	}
	if u < 0 {
		e := &PeriodError{Reason{Problem: fmt.Sprintf("is %s, whose unit %s is unknown", Quote(s), Quote(unit)),
			Fix: "use d, w, mo or y (or day, week, month, year spelled out), as in '30d', '2w', '6mo' or '1y'"}}
		if strings.HasPrefix(unit, ".") || strings.HasPrefix(unit, ",") {
			e.Problem, e.Fix = fmt.Sprintf("is %s, not a whole number", Quote(s)), periodForm
		} else if near, ok := Nearest(unit, periodUnitNames); ok {
			e.Suggestion = validPeriod(strconv.Itoa(max(n, 1)) + unitShort(near))
		}
		return 0, false, e
	}
	pu := periodUnits[u]
	switch {
	case n == 0:
		return 0, false, &PeriodError{Reason{Problem: fmt.Sprintf("is %s, which holds no day", Quote(s)),
			Fix: "give at least " + Quote("1"+pu.short), Suggestion: "1" + pu.short}}
	case n > MaxPeriodDays/pu.days:
		return 0, false, periodTooLong(s)
	}
	return n * pu.days, false, nil
}

// noNumber is the error of a period that does not start with a digit: a
// unit alone, a negative number, or a word.
func noNumber(t string) *PeriodError {
	e := &PeriodError{Reason{Problem: fmt.Sprintf("is %s, which does not start with a number", Quote(t)), Fix: periodForm}}
	rest := strings.TrimLeft(t, "+- ")
	switch {
	case t[0] == '-' || t[0] == '+':
		if t[0] == '-' {
			e.Problem = fmt.Sprintf("is %s, which is negative", Quote(t))
			e.Fix = "give a positive number, as periods count back from today"
		}
		if _, _, err := ParsePeriod(rest); err == nil {
			e.Suggestion = strings.ReplaceAll(rest, " ", "")
		}
	case t[0] >= 'a' && t[0] <= 'z':
		if near, ok := Nearest(t, []string{"all"}); ok {
			e.Suggestion = near
		} else if near, ok := Nearest(t, periodUnitNames); ok {
			e.Suggestion = "1" + unitShort(near)
		}
	}
	return e
}

// validPeriod returns the well-formed period p when it is valid, or what
// its error suggests instead (too long a period: all).
func validPeriod(p string) string {
	var pe *PeriodError
	if _, _, err := ParsePeriod(p); errors.As(err, &pe) {
		return pe.Suggestion
	}
	return p
}

func unitShort(name string) string {
	for _, u := range periodUnits {
		if u.name == name {
			return u.short
		}
	}
	return "d"
}

// PeriodStart is the first day of a period of days ending today: the
// date, YYYY-MM-DD, that is days before today's date in UTC. Records whose
// event_date is on or after it are in the period (docs/api.md, "Statistics").
func PeriodStart(now time.Time, days int) string {
	y, m, d := now.UTC().Date()
	return time.Date(y, m, d-days, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
}

// DaysSince returns the whole days from date (YYYY-MM-DD) to today's date
// in UTC, 0 when date is later or not a date: the period_days of "all",
// for which date is the oldest record's event_date.
func DaysSince(now time.Time, date string) int {
	t, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return 0
	}
	y, m, d := now.UTC().Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return max(0, int(today.Sub(t).Hours()/24))
}
