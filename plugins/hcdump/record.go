package hcdump

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/hcvocab"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// kind is what a notice is: its agency and recall type.
type kind struct{ agency, recallType string }

// classify reads what a notice's row says it is (hcvocab.ClassifyDumpRow):
// its agency and recall type, the era its row is written in, and its
// category leaves. An organization the dump has never used does not cost
// the notice: the rule types it, and problem says how.
func classify(n *notice) (k kind, era hcvocab.DumpEra, leaves []string, problem string) {
	c := hcvocab.ClassifyDumpRow(n.org, n.archived, n.category)
	k = kind{c.Agency, c.RecallType}
	if c.Known {
		return k, c.Era, c.Leaves, ""
	}
	what := "no Organization"
	if n.org != "" {
		what = fmt.Sprintf("the Organization %q, which the dump has never used", truncate(n.org))
	}
	return k, c.Era, c.Leaves, fmt.Sprintf("NID %s (row %d of %s) has %s (it knows %s); the notice was kept and read as %s, %s, %s. Add the organization to the dump's vocabulary if it is real.",
		n.nid, n.row, n.lang.file, what, hcvocab.DumpOrganizationNames, k.agency, k.recallType, c.TypedBy)
}

// newRecord makes the record of one notice from its English and French rows,
// either of which may be nil; the English row decides what the French one
// would. It returns the reason when the notice cannot become a record, and
// otherwise the problems that only cost the record a field.
func newRecord(en, fr *notice) (rec *rappel.Record, problems []string, skip string) {
	primary := en
	if primary == nil {
		primary = fr
	}
	k, era, leaves, orgProblem := classify(primary)
	if orgProblem != "" {
		problems = append(problems, orgProblem)
	}
	tc := k.recallType == rappel.TypeVehicle
	rn := ""
	if tc {
		// A Transport Canada notice is the same recall as the vehicle
		// database's rows for its recall number: same record_id, so they
		// merge, and the database gives the event date.
		rn = rappel.TransportRecallNumber(texts(en, fr, func(n *notice) string { return n.url }, func(n *notice) string { return n.title })...)
		if rn == "" {
			return nil, nil, fmt.Sprintf("NID %s (row %d of %s) was skipped: it is a Transport Canada notice but neither its URL %q nor its title %q names the recall number (rn= or \"Transport Canada Recall - <number>\") to join the vehicle recall database on.",
				primary.nid, primary.row, primary.lang.file, truncate(primary.url), truncate(primary.title))
		}
	}
	for _, n := range []*notice{en, fr} {
		if n == nil || n.url == "" {
			continue
		}
		abs, ok := absoluteURL(n.url)
		if !ok {
			problems = append(problems, fmt.Sprintf("NID %s has the URL %q in %s, which is no web address; it was left out.", primary.nid, truncate(n.url), n.lang.file))
		}
		n.url = abs
	}
	rec = &rappel.Record{
		RecordID:   rappel.HealthRecordID(primary.nid),
		RecallID:   primary.nid,
		Agency:     k.agency,
		RecallType: k.recallType,
		Status:     rappel.StatusActive,
		Translations: rappel.Translations{
			EN: translation(en, tc, era),
			FR: translation(fr, tc, era),
		},
	}
	switch archived, _, ok := hcvocab.DumpArchived(primary.archived); {
	case ok && archived:
		rec.Status = rappel.StatusArchived
	case !ok && primary.archived != "":
		problems = append(problems, fmt.Sprintf("NID %s has %s %q, which is none of 0, 1, No, Yes (Non, Oui); the notice was taken for active.", primary.nid, primary.lang.archived, truncate(primary.archived)))
	}
	if en != nil {
		rec.URLEn = en.url
		rec.Category = strings.Join(leaves, " - ")
		if len(leaves) > 1 {
			// A notice filed under several categories: each one is a
			// category to filter by. A detail document's list, merged
			// first, wins when there is one.
			rec.Categories = leaves
		}
		if rec.Translations.EN != nil {
			rec.System = rec.Translations.EN.System
		}
	}
	if fr != nil {
		rec.URLFr = fr.url
	}
	updated := first(en, fr, func(n *notice) string { return n.updated })
	if tc {
		// The database gives the recall's dates; when it does not list the
		// recall, the last update stands in for them (rappel.Assemble).
		rec.RecordID, rec.RecallID = rappel.TransportRecordID(rn), rn
		rec.LastUpdated = updated
	} else {
		// The dump's Last updated is only a fallback for the dates: the
		// detail document, merged first, gives the real ones.
		rec.EventDate, rec.RecallDate, rec.DateModified = updated, updated, updated
	}
	if k.recallType == rappel.TypeFood {
		var unknown []string
		rec.Allergens, unknown = allergens(primary, en, fr)
		for _, label := range unknown {
			problems = append(problems, fmt.Sprintf("NID %s: its %s label %q is none the dump is known to use for food; it gives no allergen or hazard type.", primary.nid, primary.lang.issue, truncate(label)))
		}
	}
	if c := first(en, fr, func(n *notice) string { return n.class }); c != "" {
		hc, ok := guest.HazardClass(c)
		if ok {
			rec.HazardClass = hc
		} else {
			problems = append(problems, fmt.Sprintf("NID %s has recall class %q, which is not Class or Type I, II or III; hazard_class was left out.", primary.nid, c))
		}
	}
	return rec, problems, ""
}

// allergens returns the allergens a food notice names, English and French
// rows together (a row in one language may name one the other lacks): those
// of its Issue labels, or, when they name none, those its titles call
// undeclared. unknown are the labels of the primary row's Issue outside the
// vocabulary.
func allergens(primary, en, fr *notice) (list, unknown []string) {
	add := func(names []string) {
		for _, a := range names {
			if !slices.Contains(list, a) {
				list = append(list, a)
			}
		}
	}
	for _, n := range []*notice{en, fr} {
		if n == nil {
			continue
		}
		is := parseIssue(n.issue)
		add(is.allergens)
		if n == primary {
			unknown = is.unknown
		}
	}
	if len(list) == 0 {
		for _, n := range []*notice{en, fr} {
			if n != nil {
				add(undeclared(n.title))
			}
		}
	}
	return list, unknown
}

// texts returns, for the rows that exist, English first, every value of
// each field in turn.
func texts(en, fr *notice, fields ...func(*notice) string) []string {
	var out []string
	for _, f := range fields {
		for _, n := range []*notice{en, fr} {
			if n != nil {
				out = append(out, f(n))
			}
		}
	}
	return out
}

// truncate shortens a value quoted in a problem (guest.Quoted).
func truncate(s string) string { return guest.Quoted(s, 160) }

// first returns the first non-empty value of field over the rows.
func first(en, fr *notice, field func(*notice) string) string {
	for _, n := range []*notice{en, fr} {
		if n != nil {
			if v := field(n); v != "" {
				return v
			}
		}
	}
	return ""
}

// translation is one row's text, or nil when the row has none. An Issue
// of known labels is described with its hazard types ("Allergen: Egg,
// Milk"); paragraphs the dump glued are restored in the advice. On a
// Transport Canada row (tc) the Issue, which there names the system the
// defect is in ("Brakes"), is the system, not the hazard; its title, which
// says only what the record's recall_id and vehicle_make say, is kept for
// a recall the vehicle database does not list, and gives way to the
// database's descriptive title when it does (rappel.Merge).
func translation(n *notice, tc bool, era hcvocab.DumpEra) *rappel.Translation {
	if n == nil {
		return nil
	}
	leaves, _ := hcvocab.DumpCategories(n.category, era)
	lang := rappel.LangEN
	if n.lang == langFR {
		lang = rappel.LangFR
	}
	whatToDo, _ := restoreParagraphs(n.whatToDo)
	t := rappel.Translation{
		Title:              n.title,
		ProductDescription: n.product,
		HazardDescription:  cmp.Or(parseIssue(n.issue).describe(lang), n.issue),
		WhatToDo:           whatToDo,
		URL:                n.url,
		Category:           strings.Join(leaves, " - "),
	}
	if tc && isSystem(n.issue) {
		t.System, t.HazardDescription = n.issue, ""
	}
	if t == (rappel.Translation{}) {
		return nil
	}
	return &t
}

// isSystem reports whether a Transport Canada row's Issue is a system type
// ("Brakes", "Latches/Locks/Linkages") rather than a description of the
// defect, which older rows hold: a short phrase, not a sentence.
func isSystem(s string) bool {
	return s != "" && len(s) <= 60 && !strings.ContainsAny(s, ".!?;")
}
