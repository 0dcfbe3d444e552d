package hcdump

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// kind is what an Organization says about a notice.
type kind struct{ agency, recallType string }

// organizations maps the dump's Organization values, folded (guest.FoldKey),
// to agency and recall type. The values are not translated in the French
// file, except CFIA's, which it writes ACIA.
var organizations = map[string]kind{
	"cfia":                               {rappel.AgencyCFIA, rappel.TypeFood},
	"acia":                               {rappel.AgencyCFIA, rappel.TypeFood},
	"tc":                                 {rappel.AgencyTransportCanada, rappel.TypeVehicle},
	"medical devices":                    {rappel.AgencyHealthCanada, rappel.TypeMedicalDevice},
	"consumer product safety":            {rappel.AgencyHealthCanada, rappel.TypeConsumerProduct},
	"drugs and health products":          {rappel.AgencyHealthCanada, rappel.TypeHealthProduct},
	"marketed health products":           {rappel.AgencyHealthCanada, rappel.TypeHealthProduct},
	"controlled substances and cannabis": {rappel.AgencyHealthCanada, rappel.TypeCannabis},
}

// orgList is what a problem offers for an unknown Organization.
const orgList = "CFIA (ACIA), TC, Medical devices, Consumer product safety, Drugs and health products, " +
	"Marketed health products, Controlled substances and cannabis, Communications and Public Affairs Branch"

// cpab is Health Canada's communications branch, which issues advisories
// of every kind of health product: its notices' Category says which.
const cpab = "communications and public affairs branch"

// organization returns the agency and recall type of a notice from its
// Organization and Category parts. An organization the table does not know
// is still a cannabis notice when its Category says so: the branch that
// issues those has changed names.
func organization(org string, category []string) (kind, bool) {
	key := guest.FoldKey(org)
	if k, ok := organizations[key]; ok {
		return k, true
	}
	typ := ""
	for _, c := range category {
		switch c = guest.FoldKey(c); {
		case c == "cannabis":
			typ = rappel.TypeCannabis
		case strings.Contains(c, "medical device") || strings.Contains(c, "instruments medicaux"):
			typ = cmp.Or(typ, rappel.TypeMedicalDevice)
		case strings.Contains(c, "consumer product") || strings.Contains(c, "produits de consommation"):
			typ = cmp.Or(typ, rappel.TypeConsumerProduct)
		}
	}
	switch {
	case key == cpab:
		return kind{rappel.AgencyHealthCanada, cmp.Or(typ, rappel.TypeHealthProduct)}, true
	case typ == rappel.TypeCannabis:
		return kind{rappel.AgencyHealthCanada, rappel.TypeCannabis}, true
	}
	return kind{}, false
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
	cats := splitDash(primary.category)
	k, ok := organization(primary.org, cats)
	if !ok {
		return nil, nil, fmt.Sprintf("NID %s (row %d of %s) was skipped: its Organization %q is none of %s.",
			primary.nid, primary.row, primary.lang.file, primary.org, orgList)
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
		RecordID:   "hc-" + primary.nid,
		RecallID:   primary.nid,
		Agency:     k.agency,
		RecallType: k.recallType,
		Status:     rappel.StatusActive,
		Translations: rappel.Translations{
			EN: translation(en, tc),
			FR: translation(fr, tc),
		},
	}
	if primary.archived == "1" {
		rec.Status = rappel.StatusArchived
	}
	if en != nil {
		rec.URLEn = en.url
		parts := splitDash(en.category)
		rec.Category = strings.Join(parts, " - ")
		if len(parts) > 1 {
			// A notice filed under several categories: each one is a
			// category to filter by. A detail document's list, merged
			// first, wins when there is one.
			rec.Categories = parts
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
		rec.RecordID, rec.RecallID = "tc-"+rn, rn
		rec.LastUpdated = updated
	} else {
		// The dump's Last updated is only a fallback for the dates: the
		// detail document, merged first, gives the real ones.
		rec.EventDate, rec.RecallDate, rec.DateModified = updated, updated, updated
		var unknown []string
		rec.Allergens, unknown = allergens(primary, en, fr)
		for _, name := range unknown {
			problems = append(problems, fmt.Sprintf("NID %s: the allergen %q of its %s %s; it was left out.", primary.nid, truncate(name), primary.lang.issue, guest.NotAllergen(name)))
		}
	}
	if c := first(en, fr, func(n *notice) string { return n.class }); c != "" {
		hc, ok := hazardClass(c)
		if ok {
			rec.HazardClass = hc
		} else {
			problems = append(problems, fmt.Sprintf("NID %s has recall class %q, which is not Class or Type I, II or III; hazard_class was left out.", primary.nid, c))
		}
	}
	return rec, problems, ""
}

// allergens returns the allergens the rows' Issue names, English and
// French together (a row in one language may name one the other lacks),
// and the names in the primary row's Issue that are no allergen of the
// vocabulary.
func allergens(primary, en, fr *notice) (list, unknown []string) {
	for _, n := range []*notice{en, fr} {
		if n == nil {
			continue
		}
		is := parseIssue(n.issue)
		for _, a := range is.allergens {
			if !slices.Contains(list, a) {
				list = append(list, a)
			}
		}
		if n == primary {
			unknown = is.unknown
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

// truncate shortens a value quoted in a problem, which is read by people.
func truncate(s string) string {
	const limit = 160
	if len(s) <= limit {
		return s
	}
	return strings.ToValidUTF8(s[:limit], "") + "…"
}

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

// genericTitle matches the titles the dump gives Transport Canada notices,
// which say only "Transport Canada Recall - <number> - <MAKE>" (the make
// may be missing).
var genericTitle = regexp.MustCompile(`(?i)^(?:transport canada recall|rappel de transports canada)\s*[-–—:#]?\s*(?:no\.?\s*)?\d+\s*(?:[-–—:]\s*[^:.;]{0,60})?$`)

// translation is one row's text, or nil when the row has none. On a
// Transport Canada row (tc), a title that says only what the record's
// recall_id and vehicle_make say is left out, so that the vehicle
// database's descriptive title serves; and the Issue, which there names
// the system the defect is in ("Brakes"), is the system, not the hazard.
func translation(n *notice, tc bool) *rappel.Translation {
	if n == nil {
		return nil
	}
	t := rappel.Translation{
		Title:              n.title,
		ProductDescription: n.product,
		HazardDescription:  n.issue,
		WhatToDo:           n.whatToDo,
		URL:                n.url,
		Category:           strings.Join(splitDash(n.category), " - "),
	}
	if tc {
		if genericTitle.MatchString(t.Title) {
			t.Title = ""
		}
		if isSystem(n.issue) {
			t.System, t.HazardDescription = n.issue, ""
		}
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

// notApplicable are the recall classes that say there is none.
var notApplicable = map[string]bool{
	"n/a": true, "na": true, "none": true, "not applicable": true, "unclassified": true,
	"s/o": true, "so": true, "sans objet": true, "aucune": true, "aucun": true, "non applicable": true,
	"non classe": true, "non classee": true,
}

// hazardClass reads a recall class: "Class 2", "Type II", "Classe 1",
// "Recall class 3", "Type 1 (high risk)", or a range such as "Type I - Type
// II" or "Class 1/2", which takes the more severe (lower) class. A value of
// only dashes, or one saying there is none ("N/A", "Sans objet"), is
// absent. ok is false for anything else.
func hazardClass(s string) (class string, ok bool) {
	s = dropParentheses(s)
	if strings.Trim(s, "-–— ") == "" || notApplicable[guest.FoldKey(strings.Trim(s, ". "))] {
		return "", true
	}
	best := 0
	words := strings.FieldsFunc(guest.FoldKey(s), func(r rune) bool {
		return r == ' ' || r == '-' || r == '–' || r == '—' || r == '/' || r == ',' || r == ':' || r == '.'
	})
	for _, w := range words {
		c := 0
		switch w {
		case "class", "classe", "type", "recall", "rappel", "de", "to", "a", "and", "et", "or", "ou":
			continue
		case "i", "1":
			c = 1
		case "ii", "2":
			c = 2
		case "iii", "3":
			c = 3
		default:
			return "", false
		}
		if best == 0 || c < best {
			best = c
		}
	}
	if best == 0 {
		return "", false
	}
	return fmt.Sprintf("class_%d", best), true
}

// dropParentheses removes the parenthesized notes of s: "Type 1 (high
// risk)" is "Type 1 ".
func dropParentheses(s string) string {
	for {
		open := strings.IndexByte(s, '(')
		if open < 0 {
			return s
		}
		end := strings.IndexByte(s[open:], ')')
		if end < 0 {
			return s[:open]
		}
		s = s[:open] + " " + s[open+end+1:]
	}
}
