package rappel

import (
	"reflect"
	"sort"
	"time"
)

// Problem is one record a source could not turn into a servable record, with
// the reason in a sentence. RecordID may be empty when the input was too
// broken to name one.
type Problem struct {
	Source   string `json:"source"`
	RecordID string `json:"record_id,omitempty"`
	Reason   string `json:"reason"`
}

// Merge fills every empty field of dst from src, translations language by
// language and field by field. dst's own values always win, so callers merge
// sources in order of precedence. Lists are taken whole, never concatenated.
func Merge(dst, src *Record) {
	fillEmpty(reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem())
}

func fillEmpty(dst, src reflect.Value) {
	for i := 0; i < dst.NumField(); i++ {
		d, s := dst.Field(i), src.Field(i)
		switch {
		case d.Type() == reflect.TypeOf(Translations{}):
			fillEmpty(d, s)
		case d.Kind() == reflect.Pointer && d.Type().Elem() == reflect.TypeOf(Translation{}):
			if s.IsNil() {
				continue
			}
			if d.IsNil() {
				c := *s.Interface().(*Translation)
				d.Set(reflect.ValueOf(&c))
				continue
			}
			fillEmpty(d.Elem(), s.Elem())
		case d.IsZero() && !s.IsZero():
			d.Set(s)
		}
	}
}

// SourcePrecedence lists the shipped sources in the order their records are
// merged: the detail documents are the most specific, the vehicle CSV the
// least (the dump's titles and URLs win over the CSV's fallbacks).
var SourcePrecedence = []string{"detail", "hcdump", "vrdb"}

// Assemble merges the records of several sources into servable records.
// parts are in order of precedence (see Merge); records with the same
// record_id become one. Each result is stamped with fetchedAt when it has no
// fetched_at of its own and validated; invalid ones are left out and reported
// as problems. Results are in record_id order.
func Assemble(fetchedAt time.Time, parts ...[]*Record) ([]*Record, []Problem) {
	byID := make(map[string]*Record)
	var order []string
	for _, part := range parts {
		for _, r := range part {
			if cur, ok := byID[r.RecordID]; ok {
				Merge(cur, r)
				continue
			}
			c := &Record{}
			Merge(c, r)
			byID[r.RecordID] = c
			order = append(order, r.RecordID)
		}
	}
	sort.Strings(order)
	stamp := fetchedAt.UTC().Format(time.RFC3339)
	out := make([]*Record, 0, len(order))
	var problems []Problem
	for _, id := range order {
		r := byID[id]
		if r.FetchedAt == "" {
			r.FetchedAt = stamp
		}
		if err := r.Validate(); err != nil {
			problems = append(problems, Problem{Source: "assemble", RecordID: id, Reason: err.Error()})
			continue
		}
		out = append(out, r)
	}
	return out, problems
}
