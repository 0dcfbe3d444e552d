package page

import (
	"cmp"
	"html"
	"net/url"
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/hcvocab"
	"github.com/rappel-ca/rappel/plugins/guest"
	xhtml "golang.org/x/net/html"
)

// reader reads one page into a record.
type reader struct {
	n    *notice
	file string
	lang string
	rec  *rappel.Record
	tr   rappel.Translation
	base *url.URL // what the page's paths resolve against

	summaryProduct string   // the summary's Product, a row's name when its own cells give none
	brands         []string // Brand(s)
	tableRows      int      // rows of data in the affected-products tables
	firms          firms
}

// checkLabels reports whether the page's labels are checked against the
// known ones: the English ones are known from the live pages; the French
// ones of the current layout are not (testdata/FORMATS.md), and French
// pages are read by their fields' classes, which the site shares between
// the languages, without checking their labels.
func (p *reader) checkLabels() bool { return p.lang == rappel.LangEN }

// The fields of the current layout, by the name in their class
// field--name-field-<name>: those read, and those known to hold nothing a
// record keeps. Any other is a problem.
var knownFields = map[string]bool{
	"brand-ref": true, "last-updated": true, "product": true, "issue-type": true, "action": true,
	"distribution-region": true, "affected-products-txt": true, "affected-products-header": true,
	"issue-long": true, "action-long": true, "background": true, "recall-type": true, "category": true,
	"companies": true, "organization": true, "who-this-is-for": true, "hazard-type": true,
	"recall-date": true, "cfia-id": true,
}

// knownSections are the current layout's sections, by their class ar-<name>
// beside ar-section.
var knownSections = map[string]bool{
	"ar-summary": true, "ar-affected-products": true, "ar-issue-long": true, "ar-action-long": true,
	"ar-additional-info": true, "ar-last-modified": true, "ar-product-images": true,
}

// knownLabels are the English labels (field--label) of the current layout,
// folded (guest.FoldKey). The CFIA reference's label is the agency's name
// and "ID", checked apart.
var knownLabels = map[string]bool{
	"product": true, "issue": true, "what to do": true, "last updated": true,
	"alert / recall type": true, "category": true, "companies": true, "published by": true,
	"audience": true, "recall class": true, "recall date": true, "identification number": true,
	"distribution": true,
}

// knownBlocks are the <summary> texts of the Additional information
// blocks, folded.
var knownBlocks = map[string]bool{"background": true, "details": true}

// current reads a page in the current layout.
func (p *reader) current(root, main *node) {
	p.head(root)
	p.check(main)
	p.archived(main)
	if h := find(main, both(isTag("h1"), func(n *node) bool { return attr(n, "id") == "wb-cont" })); h != nil {
		p.tr.Title = text(h)
	} else if h := find(main, isTag("h1")); h != nil {
		p.tr.Title = text(h)
	}
	if nav := find(main, func(n *node) bool { return attr(n, "id") == "wb-cont-nav" }); nav != nil {
		p.rec.AlertType = text(nav)
	}
	if b := find(main, hasClass("ar-brand-details")); b != nil {
		p.brands = items(p.field(b, "brand-ref"))
	}
	p.rec.LastUpdated = p.date(p.field(main, "last-updated"), "Last updated")
	p.summaryProduct = text(p.field(main, "product"))
	for _, issue := range items(p.field(main, "issue-type")) {
		p.issue(issue)
	}
	short := text(p.field(main, "action"))
	p.rec.Distribution = items(p.field(main, "distribution-region"))
	p.tr.ProductDescription = cmp.Or(text(p.field(main, "affected-products-txt")), text(p.field(main, "affected-products-header")))
	if sec := find(main, hasClass("ar-affected-products")); sec != nil {
		for _, t := range findAll(sec, isTag("table")) {
			p.table(t)
		}
	}
	p.tr.HazardDescription = text(p.field(main, "issue-long"))
	p.tr.WhatToDo = text(p.field(main, "action-long"))
	if p.tr.WhatToDo == "" && !seeBelow(short) {
		p.tr.WhatToDo = short
	}
	p.images(find(main, hasClass("ar-product-images")))
	p.background(p.field(main, "background"))
	p.details(main)
	if t := find(root, both(isTag("time"), func(n *node) bool { return attr(n, "property") == "dateModified" })); t != nil {
		p.rec.DateModified = p.dateOf(t, "Date modified")
	}
}

// seeBelow reports whether a summary's action only points to the page's
// own section ("Please see corrective actions section below", "Voir …
// ci-dessous").
func seeBelow(s string) bool {
	f := guest.FoldKey(s)
	return strings.Contains(f, "section below") || strings.Contains(f, "ci-dessous") || strings.HasPrefix(f, "see key messages")
}

// head reads the page's addresses: its canonical link and its alternates
// in each language.
func (p *reader) head(root *node) {
	p.base, _ = url.Parse(Site)
	for _, l := range findAll(root, isTag("link")) {
		href := strings.TrimSpace(attr(l, "href"))
		u, err := url.Parse(href)
		if err != nil || href == "" {
			continue
		}
		u = p.base.ResolveReference(u)
		switch rel := strings.ToLower(attr(l, "rel")); {
		case rel == "canonical":
			p.base = u
			p.setURL(p.lang, u.String())
		case rel == "alternate" && rappel.Langs.Has(attr(l, "hreflang")):
			p.setURL(attr(l, "hreflang"), u.String())
		}
	}
}

// setURL files the page's address in lang.
func (p *reader) setURL(lang, u string) {
	switch lang {
	case rappel.LangEN:
		p.rec.URLEn = cmp.Or(p.rec.URLEn, u)
	case rappel.LangFR:
		p.rec.URLFr = cmp.Or(p.rec.URLFr, u)
	}
}

// field returns the element below n holding field name's values: the one
// of class field--name-field-<name> that is an item or a list of items
// (field--item, field--items), else the first of that class.
func (p *reader) field(n *node, name string) *node {
	c := "field--name-field-" + name
	if f := find(n, both(hasClass(c), func(n *node) bool { return classOf(n, "field--item") || classOf(n, "field--items") })); f != nil {
		return f
	}
	return find(n, hasClass(c))
}

// check reports, once each, the fields, sections, labels and blocks of the
// page the reader does not know: what they hold reaches no record, and an
// upstream change must not pass as pages without data.
func (p *reader) check(main *node) {
	var seen []string
	once := func(key string) bool {
		if slices.Contains(seen, key) {
			return false
		}
		seen = append(seen, key)
		return true
	}
	walkElements(main, func(el *node) {
		for _, c := range classes(el) {
			if name, ok := strings.CutPrefix(c, "field--name-field-"); ok && !knownFields[name] && once("field "+name) {
				p.n.problem("%s has a field %q (class %s) this normalizer does not know; it was left out: %q.", p.file, name, c, truncate(text(el)))
			}
			if strings.HasPrefix(c, "ar-") && c != "ar-section" && classOf(el, "ar-section") && !knownSections[c] && once("section "+c) {
				heading := ""
				if h := find(el, isTag("h2")); h != nil {
					heading = text(h)
				}
				p.n.problem("%s has a section %q (class %s) this normalizer does not know; it was left out.", p.file, truncate(heading), c)
			}
			if knownSections[c] && classOf(el, "ar-section") {
				if t := stray(el); t != "" && once("stray "+c) {
					p.n.problem("The section %s of %s holds text outside the parts this normalizer reads; it was left out: %q.", c, p.file, truncate(t))
				}
			}
		}
		if !p.checkLabels() {
			return
		}
		switch {
		case classOf(el, "field--label"):
			label := strings.TrimSuffix(text(el), ":")
			if !knownLabels[guest.FoldKey(label)] && !agencyID(label) && once("label "+label) {
				p.n.problem("%s has a label %q this normalizer does not know; what it labels was left out.", p.file, truncate(label))
			}
		case el.Data == "summary" && el.Parent != nil && el.Parent.Data == "details" && !classOf(el.Parent, "ar-brand-details"):
			if b := text(el); !knownBlocks[guest.FoldKey(b)] && once("block "+b) {
				p.n.problem("%s has an Additional information block %q this normalizer does not know; it was left out.", p.file, truncate(b))
			}
		}
	})
}

// agencyID reports whether a label is an agency's reference label
// ("Canadian Food Inspection Agency ID").
func agencyID(label string) bool {
	name, ok := strings.CutSuffix(label, " ID")
	return ok && agencyName(name) != ""
}

// agencyName returns the agency whose English or French full name, or
// name, is s, or "".
func agencyName(s string) string {
	f := guest.FoldKey(s)
	for _, a := range rappel.AllAgencies() {
		if f == guest.FoldKey(a.EN) || f == guest.FoldKey(a.FR) || f == guest.FoldKey(a.Name) {
			return a.Name
		}
	}
	return ""
}

// date reads the date of a field holding a <time datetime>, or reports it.
func (p *reader) date(field *node, label string) string {
	if field == nil {
		return ""
	}
	t := field
	if field.Data != "time" {
		t = find(field, isTag("time"))
	}
	if t == nil {
		p.n.problem("The %s of %s holds no <time>; it was left out: %q.", label, p.file, truncate(text(field)))
		return ""
	}
	return p.dateOf(t, label)
}

// dateOf reads a <time>'s date: its datetime, else its text, as
// YYYY-MM-DD.
func (p *reader) dateOf(t *node, label string) string {
	for _, s := range []string{attr(t, "datetime"), text(t)} {
		s = strings.TrimSpace(s)
		if len(s) >= 10 && rappel.ValidDate(s[:10]) {
			return s[:10]
		}
	}
	p.n.problem("The %s of %s, %q, is no YYYY-MM-DD date; it was left out.", label, p.file, truncate(cmp.Or(attr(t, "datetime"), text(t))))
	return ""
}

// issue reads one issue label ("Food - Allergen - Milk"): the allergens
// it names, by the dump's vocabulary. The hazard it names is the dump's
// Issue too, which the dump's normalizer reads.
func (p *reader) issue(s string) {
	for _, l := range hcvocab.SplitIssue(s) {
		if known, ok := hcvocab.LookupIssueLabel(l); ok {
			for _, a := range known.Allergens {
				if !slices.Contains(p.rec.Allergens, a) {
					p.rec.Allergens = append(p.rec.Allergens, a)
				}
			}
		}
	}
}

// images reads the product images: each slide's real image, data-src (src
// is a lazy-load placeholder), else its link, captioned by its alt text.
func (p *reader) images(sec *node) {
	for _, img := range findAll(sec, isTag("img")) {
		u := strings.TrimSpace(attr(img, "data-src"))
		if u == "" && !strings.HasPrefix(attr(img, "src"), "data:") {
			u = strings.TrimSpace(attr(img, "src"))
		}
		if u == "" {
			p.n.problem("An image of %s has neither data-src nor a real src; it was left out.", p.file)
			continue
		}
		ref, err := url.Parse(u)
		if err != nil {
			p.n.problem("The image address %q of %s is no address; it was left out.", truncate(u), p.file)
			continue
		}
		abs := p.base.ResolveReference(ref).String()
		p.rec.Images = append(p.rec.Images, rappel.Image{URL: abs, Title: guest.CleanText(attr(img, "alt"))})
	}
	if len(p.rec.Images) > 0 && strings.HasPrefix(p.rec.Images[0].URL, "https://") {
		p.rec.ImageURL = p.rec.Images[0].URL
	}
}

// backgroundLabels are the Background block's bold labels, folded, and
// the field each fills.
var backgroundLabels = map[string]func(*rappel.Record) *string{
	"number sold":      func(r *rappel.Record) *string { return &r.UnitsSold },
	"time period sold": func(r *rappel.Record) *string { return &r.TimePeriodSold },
	"place of origin":  func(r *rappel.Record) *string { return &r.PlaceOfOrigin },
}

// background reads the Background block: a bold paragraph is a label, the
// paragraphs after it its value.
func (p *reader) background(field *node) {
	if field == nil {
		return
	}
	var label string
	var value []string
	flush := func() {
		if label == "" && len(value) == 0 {
			return
		}
		v := strings.Join(value, " ")
		switch f, ok := backgroundLabels[guest.FoldKey(label)]; {
		case ok && *f(p.rec) == "":
			*f(p.rec) = v
		case ok:
		case !p.checkLabels():
		case label == "":
			p.n.problem("The Background of %s begins with text under no label; it was left out: %q.", p.file, truncate(v))
		default:
			p.n.problem("The Background of %s has a label %q this normalizer does not know; its value %q was left out.", p.file, truncate(label), truncate(v))
		}
		label, value = "", nil
	}
	for _, para := range paragraphs(field) {
		if para.bold {
			flush()
			label = strings.TrimSuffix(para.text, ":")
			continue
		}
		value = append(value, para.text)
	}
	flush()
}

// paragraph is one paragraph of a free-text field, and whether all its
// text is bold (a heading or label).
type paragraph struct {
	text string
	bold bool
}

// paragraphs returns a free-text field's paragraphs (its <p>s, else its
// lines), empty ones left out.
func paragraphs(field *node) []paragraph {
	var out []paragraph
	ps := findAll(field, isTag("p"))
	if len(ps) == 0 {
		for _, l := range lines(field) {
			out = append(out, paragraph{text: l})
		}
		return out
	}
	for _, el := range ps {
		t := text(el)
		if t == "" {
			continue
		}
		var bold strings.Builder
		for _, b := range findAll(el, func(n *node) bool { return isTag("strong")(n) || isTag("b")(n) }) {
			bold.WriteString(text(b))
		}
		out = append(out, paragraph{text: t, bold: strings.ReplaceAll(guest.CleanText(bold.String()), " ", "") == strings.ReplaceAll(t, " ", "")})
	}
	return out
}

// stray returns the text of a section that no part the reader reads
// holds: outside its fields (field--name-field-*, and the Details' own
// blocks), labels, headings, tables and images. A page whose section holds
// such text is read only in part, which must not pass in silence.
func stray(sec *node) string {
	var parts []string
	var walk func(*node)
	walk = func(n *node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == xhtml.TextNode:
				if t := strings.TrimSpace(c.Data); t != "" {
					parts = append(parts, t)
				}
			case c.Type != xhtml.ElementNode, readPart(c):
			default:
				walk(c)
			}
		}
	}
	walk(sec)
	return guest.CleanText(html.EscapeString(strings.Join(parts, " ")))
}

// readPart reports whether an element is one the reader reads, or one
// known to hold nothing a record keeps.
func readPart(n *node) bool {
	switch n.Data {
	case "h2", "table", "summary", "nav", "button", "script", "style", "img":
		return true
	}
	for _, c := range children(n) {
		if classOf(c, "views-label-changed") {
			return true // the Original published date, read by details
		}
	}
	for _, c := range classes(n) {
		switch {
		case strings.HasPrefix(c, "field--name-field-"), c == "field--label", c == "views-element-container",
			c == "ar-brand", c == "product-images", c == "field--name-node-id":
			return true
		}
	}
	return false
}
