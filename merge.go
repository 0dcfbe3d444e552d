package rappel

import (
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Merge fills every empty field of dst from src, translations language by
// language and field by field. dst's own values always win, so callers merge
// sources in order of precedence, with one exception: a placeholder title
// (IsPlaceholderTitle) counts as empty, so that a title that says more
// replaces it. Lists are taken whole, never concatenated.
func Merge(dst, src *Record) {
	fillEmpty(reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem())
	for _, t := range [][2]*Translation{{dst.Translations.EN, src.Translations.EN}, {dst.Translations.FR, src.Translations.FR}} {
		if d, s := t[0], t[1]; d != nil && s != nil && IsPlaceholderTitle(d.Title) && s.Title != "" && !IsPlaceholderTitle(s.Title) {
			d.Title = s.Title
		}
	}
}

// placeholderTitle matches the titles Health Canada's dump gives Transport
// Canada notices, which say only "Transport Canada Recall - <number> -
// <MAKE>" (the make may be missing), in English or French.
var placeholderTitle = regexp.MustCompile(`(?i)^(?:transport canada recall|rappel de transports canada)\s*[-–—:#]?\s*(?:no\.?\s*)?\d+\s*(?:[-–—:]\s*[^:.;]{0,60})?$`)

// IsPlaceholderTitle reports whether a title says no more than a Transport
// Canada recall number and make. Such a title is all a recall has when only
// the dump lists it, and gives way to the vehicle database's descriptive
// title when both do, whichever source is merged first.
func IsPlaceholderTitle(title string) bool {
	return placeholderTitle.MatchString(title)
}

// standInDates dates a record that no source dated: a recall the dump lists
// and the vehicle database (or the detail document) does not, whose only
// date is the dump's Last updated. That date stands in for event_date and
// recall_date, so the recall is served; once a source with the real dates
// is merged, they win.
func standInDates(r *Record) {
	if r.EventDate != "" || r.RecallDate != "" {
		return
	}
	d := r.LastUpdated
	if d == "" {
		d = r.DateModified
	}
	r.EventDate, r.RecallDate = d, d
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
// record_id become one; a record no source dated takes its last update as
// its dates (standInDates); every product gets what its printed codes say
// it covers (fillApplicability). Each result is stamped with fetchedAt when it has no
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
		standInDates(r)
		fillApplicability(r)
		if err := r.Validate(); err != nil {
			problems = append(problems, Problem{Source: "assemble", RecordID: id, Reason: err.Error()})
			continue
		}
		out = append(out, r)
	}
	return out, problems
}

// fillApplicability reads, for each product of r that prints codes and
// has no applicability yet, what those codes cover (ParseApplicability),
// from its lot codes joined by "; ", the separator the normalizers cut
// them at. It is done here, once the sources are merged, so that every
// source's products get it by the same rules; a source that reads its
// codes under their columns' labels (ParseLabelledCodes) gives its own,
// which is kept, with the text it was read from, its lot codes so
// joined, when it gives none. The product list is copied first: merging
// shares it with the source's own record.
func fillApplicability(r *Record) {
	if !slices.ContainsFunc(r.ProductList, needsApplicability) {
		return
	}
	r.ProductList = slices.Clone(r.ProductList)
	for i := range r.ProductList {
		p := &r.ProductList[i]
		switch {
		case !needsApplicability(*p):
		case p.Applicability == nil:
			a := ParseApplicability(strings.Join(p.LotCodes, "; "))
			p.Applicability = &a
		default:
			a := *p.Applicability
			a.Text = strings.Join(p.LotCodes, "; ")
			p.Applicability = &a
		}
	}
}

func needsApplicability(p Product) bool {
	return len(p.LotCodes) > 0 && (p.Applicability == nil || p.Applicability.Text == "")
}
