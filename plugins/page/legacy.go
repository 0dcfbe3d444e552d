package page

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// legacyLabel is what a legacy page's <dt> label fills.
type legacyLabel int

const (
	legacyKnown        legacyLabel = iota // known, nothing a record keeps
	legacyStart                           // Starting date: event_date
	legacyPosting                         // Posting date: recall_date
	legacyAlertType                       // Type of communication: alert_type
	legacyCategory                        // Subcategory: categories
	legacyClass                           // Hazard classification: hazard_class
	legacySource                          // Source of recall: agency
	legacyFirm                            // Recalling firm: recalling_firm
	legacyDistribution                    // Distribution: distribution
	legacyCFIA                            // CFIA reference number: cfia_id
	legacyIssue                           // Issue: allergens
	legacyID                              // Identification number: identification_number
)

// legacyLabels are the <dt> labels of the legacy layout, folded and
// without their colon: the English ones of the 2012–2021 food and consumer
// pages, and the French ones of the one French page found.
var legacyLabels = map[string]legacyLabel{
	"starting date": legacyStart, "date de debut": legacyStart,
	"posting date":          legacyPosting,
	"type of communication": legacyAlertType,
	"alert sub-type":        legacyKnown,
	"subcategory":           legacyCategory,
	"hazard classification": legacyClass, "classification du risque": legacyClass,
	"source of recall": legacySource, "source": legacySource,
	"recalling firm":                     legacyFirm,
	"distribution":                       legacyDistribution,
	"extent of the product distribution": legacyKnown,
	"cfia reference number":              legacyCFIA,
	"issue":                              legacyIssue,
	"audience":                           legacyKnown,
	"identification number":              legacyID,
}

// legacy reads a page in the legacy layout: a <dl> of labels and values,
// then free text, headings and tables.
func (p *reader) legacy(root, main *node) {
	p.head(root)
	if h := find(main, isTag("h1")); h != nil {
		p.tr.Title = text(h)
	}
	if nav := find(main, func(n *node) bool { return attr(n, "id") == "wb-cont-nav" }); nav != nil {
		p.rec.AlertType = text(nav)
	}
	p.archived(main)
	body := find(main, hasClass("recall-alert-body"))
	for _, dl := range findAll(body, isTag("dl")) {
		var label string
		for _, el := range children(dl) {
			switch el.Data {
			case "dt":
				label = strings.TrimSpace(strings.TrimSuffix(text(el), ":"))
			case "dd":
				p.legacyValue(label, text(el))
				label = ""
			}
		}
	}
	var hazard []string
	for _, el := range findAll(body, func(n *node) bool { return isTag("p")(n) || isTag("h2")(n) }) {
		if el.Data == "h2" {
			break
		}
		if t := text(el); t != "" {
			hazard = append(hazard, t)
		}
	}
	p.tr.HazardDescription = strings.Join(hazard, " ")
	for _, t := range findAll(body, isTag("table")) {
		p.table(t)
	}
	p.images(body)
}

// legacyValue files one label's value.
func (p *reader) legacyValue(label, v string) {
	kind, ok := legacyLabels[guest.FoldKey(label)]
	switch {
	case !ok:
		if p.checkLabels() || label == "" {
			p.n.problem("%s has a label %q this normalizer does not know; its value %q was left out.", p.file, truncate(label), truncate(v))
		}
		return
	case v == "":
		return
	}
	switch kind {
	case legacyStart, legacyPosting:
		d, err := longDate(v)
		if err != nil {
			p.n.problem("The %s of %s, %q, is no date; it was left out.", label, p.file, truncate(v))
			return
		}
		if kind == legacyStart {
			p.rec.EventDate = d
		} else {
			p.rec.RecallDate = d
		}
	case legacyAlertType:
		if p.rec.AlertType == "" {
			p.rec.AlertType = v
		}
	case legacyCategory:
		p.category(v)
	case legacyClass:
		if hc, ok := guest.HazardClass(v); ok {
			p.rec.HazardClass = hc
		} else {
			p.n.problem("The %s %q of %s is not Class or Type I, II or III; hazard_class was left out.", label, truncate(v), p.file)
		}
	case legacySource:
		p.rec.Agency = agencyName(v)
	case legacyFirm:
		p.firms.add(roleRecalling, v)
	case legacyDistribution:
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				p.rec.Distribution = append(p.rec.Distribution, d)
			}
		}
	case legacyCFIA:
		p.rec.CFIAID = v
	case legacyIssue:
		p.issue(v)
	case legacyID:
		p.rec.IdentificationNumber = v
	}
}

// months are the month names of long dates, English and French, folded.
var months = map[string]time.Month{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
	"janvier": 1, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7,
	"aout": 8, "septembre": 9, "octobre": 10, "novembre": 11, "decembre": 12,
}

// longDate reads a date as legacy pages print it, "October 15, 2021" or
// "30 décembre 2011" (or YYYY-MM-DD), as YYYY-MM-DD.
func longDate(s string) (string, error) {
	if d, err := guest.ParseDate(s); err == nil {
		return d, nil
	}
	f := strings.Fields(strings.ReplaceAll(guest.FoldKey(s), ",", " "))
	if len(f) != 3 {
		return "", fmt.Errorf("%q is no date", s)
	}
	day, month, year := f[0], f[1], f[2]
	if _, ok := months[f[0]]; ok {
		day, month = f[1], f[0]
	}
	day = strings.TrimSuffix(day, "er") // "1er janvier"
	m, ok := months[month]
	d, derr := strconv.Atoi(day)
	y, yerr := strconv.Atoi(year)
	if !ok || derr != nil || yerr != nil {
		return "", fmt.Errorf("%q is no date", s)
	}
	out := fmt.Sprintf("%04d-%02d-%02d", y, m, d)
	if !rappel.ValidDate(out) {
		return "", fmt.Errorf("%q is no date", s)
	}
	return out, nil
}

// archived marks the record archived when the page carries the archived
// banner (#block-archived, section#archived), in either layout.
func (p *reader) archived(main *node) {
	if find(main, func(n *node) bool { return attr(n, "id") == "block-archived" || attr(n, "id") == "archived" }) != nil {
		p.rec.Status = rappel.StatusArchived
	}
}
