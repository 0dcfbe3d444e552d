package edge

import (
	"errors"
	"net/http"
	"slices"
	"strconv"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/jsonstr"
)

// statsParams are the query parameters GET /recall/stats accepts.
var statsParams = []string{"group_by", "period", "sum_field"}

// dateFields are record dates a client may try to group by; the message
// points them to year and month.
var dateFields = []string{"event_date", "recall_date", "date_modified", "last_updated", "fetched_at", "date"}

// getStats answers GET /recall/stats (docs/api.md, "Statistics"):
//
//	{"entity_type":"recall","period_days":30,"issued_after":"2026-10-23",
//	 "total_in_db":41000,"total":312,"sum_field":"units_affected","total_sum":9120,
//	 "by_recall_type":[{"value":"food","count":120,"sum":0},…]}
//
// issued_after is the period's first day: GET /recall?issued_after=<it>
// counts the same records, and with a filter the same as its group.
func (s *Server) getStats(w http.ResponseWriter, r *http.Request) error {
	p := paramsOf(w)
	q := &rappel.StatsQuery{GroupBy: readGroupBy(p), SumField: readSumField(p)}
	days, all := readPeriod(p)
	if err := p.err(); err != nil {
		return err
	}
	now := s.Now()
	if !all {
		q.Since = rappel.PeriodStart(now, days)
	}
	st, err := s.Catalog.Snapshot().Stats(r.Context(), q)
	if err != nil {
		return err
	}
	since := q.Since
	if all {
		since, days = st.Oldest, rappel.DaysSince(now, st.Oldest)
	}
	buf := make([]byte, 0, 192+64*len(st.Groups)) // most groups fit in 64 bytes
	writeJSON(w, r, http.StatusOK, appendStats(buf, q, days, since, st))
	return nil
}

// readGroupBy returns group_by, rappel.DefaultGroupBy when absent,
// recording an item naming the nearest field when it is not one, or what
// to do instead for a number or a date.
func readGroupBy(p *params) string {
	v, ok := p.str("group_by")
	if !ok {
		return rappel.DefaultGroupBy
	}
	if rappel.StatsGroupFields.Has(v) {
		return v
	}
	fix := ""
	switch {
	case rappel.StatsSumFields.Has(v):
		fix = "send sum_field=" + v + " to add it up, and group by a field such as 'recall_type'"
	case slices.Contains(dateFields, v):
		fix = "group by 'year' or 'month' of event_date instead"
	}
	p.invalid(rappel.InvalidEnumOf(rappel.QueryLoc("group_by"), v, rappel.StatsGroupFields, "a field to group by", fix))
	return ""
}

// readPeriod returns the period in days, or all, 30 days when absent,
// recording an item with the nearest valid period when it is not one.
func readPeriod(p *params) (days int, all bool) {
	v, ok := p.str("period")
	if !ok {
		return rappel.DefaultPeriodDays, false
	}
	days, all, err := rappel.ParsePeriod(v)
	if pe := (*rappel.PeriodError)(nil); errors.As(err, &pe) {
		p.invalid(rappel.InvalidValue(rappel.QueryLoc("period"), v, pe.Reason))
	}
	return days, all
}

// readSumField returns sum_field, "" when absent, recording an item naming
// the numeric field when it is not one.
func readSumField(p *params) string {
	v, ok := p.str("sum_field")
	if !ok || rappel.StatsSumFields.Has(v) {
		return v
	}
	p.invalid(rappel.InvalidEnumOf(rappel.QueryLoc("sum_field"), v, rappel.StatsSumFields, "a numeric field", ""))
	return ""
}

// appendStats appends the body of GET /recall/stats to dst. It is written
// by hand because its array's key depends on group_by.
func appendStats(dst []byte, q *rappel.StatsQuery, days int, since string, st *rappel.Stats) []byte {
	sum := q.SumField != ""
	dst = append(dst, `{"entity_type":"recall","period_days":`...)
	dst = strconv.AppendInt(dst, int64(days), 10)
	dst = append(dst, `,"issued_after":`...)
	if since == "" {
		dst = append(dst, "null"...)
	} else {
		dst = jsonstr.Append(dst, since)
	}
	dst = append(dst, `,"total_in_db":`...)
	dst = strconv.AppendInt(dst, int64(st.TotalInDB), 10)
	dst = append(dst, `,"total":`...)
	dst = strconv.AppendInt(dst, int64(st.Total), 10)
	if sum {
		dst = append(dst, `,"sum_field":`...)
		dst = jsonstr.Append(dst, q.SumField)
		dst = append(dst, `,"total_sum":`...)
		dst = strconv.AppendInt(dst, st.TotalSum, 10)
	}
	dst = append(dst, `,"by_`...)
	dst = append(dst, q.GroupBy...) // a field name: no escaping needed
	dst = append(dst, `":`...)
	dst = appendGroups(dst, st.Groups, sum)
	return append(dst, '}')
}

// appendGroups appends groups as a JSON array of {"value","count"}
// objects, with "sum" when sum is set: the groups of GET /recall/stats and
// the facets of GET /recall.
func appendGroups(dst []byte, groups []rappel.StatsGroup, sum bool) []byte {
	dst = append(dst, '[')
	for i, g := range groups {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"value":`...)
		dst = jsonstr.Append(dst, g.Value)
		dst = append(dst, `,"count":`...)
		dst = strconv.AppendInt(dst, int64(g.Count), 10)
		if sum {
			dst = append(dst, `,"sum":`...)
			dst = strconv.AppendInt(dst, g.Sum, 10)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}
