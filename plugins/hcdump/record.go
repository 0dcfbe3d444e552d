package hcdump

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// kind is what an Organization says about a notice.
type kind struct{ agency, recallType string }

// organizations maps the dump's Organization values, lower case, to agency
// and recall type.
var organizations = map[string]kind{
	"cfia":                               {rappel.AgencyCFIA, rappel.TypeFood},
	"tc":                                 {rappel.AgencyTransportCanada, rappel.TypeVehicle},
	"medical devices":                    {rappel.AgencyHealthCanada, rappel.TypeMedicalDevice},
	"consumer product safety":            {rappel.AgencyHealthCanada, rappel.TypeConsumerProduct},
	"drugs and health products":          {rappel.AgencyHealthCanada, rappel.TypeHealthProduct},
	"controlled substances and cannabis": {rappel.AgencyHealthCanada, rappel.TypeCannabis},
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
	k, ok := organizations[strings.ToLower(primary.org)]
	if !ok {
		if !strings.EqualFold(primary.category, "cannabis") {
			return nil, nil, fmt.Sprintf("NID %s (row %d of %s) was skipped: its Organization %q is none of CFIA, TC, Medical devices, Consumer product safety, Drugs and health products, Controlled substances and cannabis.",
				primary.nid, primary.row, primary.lang.file, primary.org)
		}
		k = kind{rappel.AgencyHealthCanada, rappel.TypeCannabis}
	}
	rec = &rappel.Record{
		RecordID:   "hc-" + primary.nid,
		RecallID:   primary.nid,
		Agency:     k.agency,
		RecallType: k.recallType,
		Status:     rappel.StatusActive,
		Translations: rappel.Translations{
			EN: translation(en),
			FR: translation(fr),
		},
	}
	if primary.archived == "1" {
		rec.Status = rappel.StatusArchived
	}
	if en != nil {
		rec.URLEn, rec.Category = en.url, en.category
	}
	if fr != nil {
		rec.URLFr = fr.url
	}
	updated := first(en, fr, func(n *notice) string { return n.updated })
	if k.recallType == rappel.TypeVehicle {
		// A Transport Canada notice is the same recall as the vehicle
		// database's rows for its recall number: same record_id, so they
		// merge, and the database gives the event date.
		rn := recallNumber(rec.URLEn)
		if rn == "" {
			rn = recallNumber(rec.URLFr)
		}
		if rn == "" {
			return nil, nil, fmt.Sprintf("NID %s (row %d of %s) was skipped: it is a Transport Canada notice but its URL %q carries no rn= recall number to join the vehicle recall database on.",
				primary.nid, primary.row, primary.lang.file, rec.URLEn+rec.URLFr)
		}
		rec.RecordID, rec.RecallID = "tc-"+rn, rn
		rec.LastUpdated = updated
	} else {
		// The dump's Last updated is only a fallback for the dates: the
		// detail document, merged first, gives the real ones.
		rec.EventDate, rec.RecallDate, rec.DateModified = updated, updated, updated
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

// translation is one row's text, or nil when the row has none.
func translation(n *notice) *rappel.Translation {
	if n == nil {
		return nil
	}
	t := rappel.Translation{
		Title:              n.title,
		ProductDescription: n.product,
		HazardDescription:  n.issue,
		WhatToDo:           n.whatToDo,
		URL:                n.url,
		Category:           n.category,
	}
	if t == (rappel.Translation{}) {
		return nil
	}
	return &t
}

// recallNumber returns the rn= query value of a Transport Canada URL when it
// is a recall number, or "".
func recallNumber(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	rn := guest.CleanText(u.Query().Get("rn"))
	if !guest.IsNumber(rn) {
		return ""
	}
	return rn
}

// hazardClass reads a recall class, "Class 2", "Type II", "Classe 1", or a
// range such as "Type I - Type II", which takes the more severe (lower)
// class. A value of only dashes is absent. ok is false for anything else.
func hazardClass(s string) (class string, ok bool) {
	if strings.Trim(s, "-–— ") == "" {
		return "", true
	}
	best := 0
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return r == ' ' || r == '-' || r == '–' || r == '—' || r == '/' || r == ','
	})
	for _, w := range words {
		c := 0
		switch w {
		case "class", "classe", "type", "to", "à", "and", "et", "or", "ou":
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
