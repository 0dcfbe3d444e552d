package page

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// raNumber is the identification number the site gives every notice.
var raNumber = regexp.MustCompile(`^RA-\d+$`)

// details reads the Details block of the current layout.
func (p *reader) details(main *node) {
	if l := find(main, hasClass("views-label-changed")); l != nil && l.Parent != nil {
		if t := find(l.Parent, isTag("time")); t != nil {
			p.rec.RecallDate = p.dateOf(t, "Original published date")
		}
	}
	if p.rec.AlertType == "" {
		p.rec.AlertType = text(p.field(main, "recall-type"))
	}
	for _, c := range items(p.field(main, "category")) {
		p.category(c)
	}
	p.companies(p.field(main, "companies"))
	if org := text(p.field(main, "organization")); org != "" {
		if a := agencyName(org); a != "" {
			p.rec.Agency = a
		} else if p.checkLabels() {
			p.n.problem("%s is published by %q, which is none of the agencies %s; agency was left out.", p.file, truncate(org), rappel.KnownAgencies())
		}
	}
	if classes := items(p.field(main, "hazard-type")); len(classes) > 0 {
		c := strings.Join(classes, " - ")
		if hc, ok := guest.HazardClass(c); ok {
			p.rec.HazardClass = hc
		} else {
			p.n.problem("The recall class %q of %s is not Class or Type I, II or III; hazard_class was left out.", truncate(c), p.file)
		}
	}
	p.rec.EventDate = p.date(p.field(main, "recall-date"), "Recall date")
	p.rec.IdentificationNumber = p.identification(main)
	p.rec.CFIAID = strings.Join(items(p.field(main, "cfia-id")), ", ")
}

// identification returns the notice's identification number: the value
// labelled "Identification number" (a field--name-node-id block), else the
// first item that is an RA number, which is the value whatever the
// page's language.
func (p *reader) identification(main *node) string {
	for _, f := range findAll(main, hasClass("field--name-node-id")) {
		l := find(f, hasClass("field--label"))
		it := find(f, hasClass("field--item"))
		if l != nil && it != nil && guest.FoldKey(text(l)) == "identification number" {
			return text(it)
		}
	}
	for _, it := range findAll(main, hasClass("field--item")) {
		if t := text(it); raNumber.MatchString(t) {
			return t
		}
	}
	return ""
}

// category files one category path ("Consumer products - Household items
// - Furniture and furnishings"): each part a category, the section first;
// the section's recall type when it has only one (Food, Vehicles), as the
// detail API's category codes give it.
func (p *reader) category(path string) {
	for i, part := range strings.Split(path, " - ") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		if !slices.ContainsFunc(p.rec.Categories, func(c string) bool { return strings.EqualFold(c, part) }) {
			p.rec.Categories = append(p.rec.Categories, part)
		}
		if i == 0 && p.rec.RecallType == "" {
			p.rec.RecallType = sectionTypes[guest.FoldKey(part)]
		}
	}
}

// sectionTypes are the site's sections of one recall type, folded.
var sectionTypes = map[string]string{
	"food": rappel.TypeFood, "aliments": rappel.TypeFood,
	"vehicles": rappel.TypeVehicle, "vehicules": rappel.TypeVehicle,
}

// firmRole is what a Companies heading says a firm is.
type firmRole int

const (
	roleOther firmRole = iota
	roleRecalling
	roleManufacturer
	roleImporter
)

// companyHeadings are the Companies block's headings, folded, without a
// colon.
var companyHeadings = map[string]firmRole{
	"distributor": roleRecalling, "distributeur": roleRecalling,
	"recalling firm": roleRecalling, "entreprise qui effectue le rappel": roleRecalling,
	"manufacturer": roleManufacturer, "fabricant": roleManufacturer,
	"importer": roleImporter, "importateur": roleImporter,
	"retailer": roleOther, "detaillant": roleOther,
}

// firms are the firms a page names, by role, each once.
type firms struct {
	recalling, manufacturers, importers, other []string
}

// add notes a firm under role.
func (f *firms) add(role firmRole, name string) {
	name = strings.TrimSpace(name)
	if name == "" || strings.EqualFold(name, "none") {
		return
	}
	list := map[firmRole]*[]string{roleRecalling: &f.recalling, roleManufacturer: &f.manufacturers, roleImporter: &f.importers, roleOther: &f.other}[role]
	if !slices.ContainsFunc(*list, func(x string) bool { return strings.EqualFold(x, name) }) {
		*list = append(*list, name)
	}
}

// fill gives rec the firms: the first recalling firm (or distributor),
// manufacturer and importer are its fields, unless they are set; every
// other firm joins companies, so that search finds each.
func (f firms) fill(rec *rappel.Record) {
	first := func(dst *string, list []string) {
		if len(list) > 0 {
			*dst = cmp.Or(*dst, list[0])
		}
	}
	first(&rec.RecallingFirm, f.recalling)
	first(&rec.Manufacturer, f.manufacturers)
	first(&rec.Importer, f.importers)
	for _, name := range slices.Concat(f.recalling, f.manufacturers, f.importers, f.other) {
		if strings.EqualFold(name, rec.RecallingFirm) || strings.EqualFold(name, rec.Manufacturer) || strings.EqualFold(name, rec.Importer) {
			continue
		}
		if !slices.ContainsFunc(rec.Companies, func(x string) bool { return strings.EqualFold(x, name) }) {
			rec.Companies = append(rec.Companies, name)
		}
	}
}

// companies reads the Companies block: free text where a bold heading
// ("Distributor", "Manufacturer") names the role of the firm whose name is
// the next paragraph (the ones after are its address), or one paragraph
// "Recalling firm: <name>". A paragraph under no heading is a firm of no
// known role.
func (p *reader) companies(field *node) {
	if field == nil {
		return
	}
	// Before any heading every paragraph is a firm; after one, the first
	// is the firm's name and the others its address.
	role, expect, headed := roleOther, true, false
	for _, para := range paragraphs(field) {
		if para.bold {
			h := strings.TrimSuffix(strings.TrimSpace(para.text), ":")
			r, ok := companyHeadings[guest.FoldKey(h)]
			if !ok && p.checkLabels() {
				p.n.problem("The Companies of %s have a heading %q this normalizer does not know; the firm under it joins companies.", p.file, truncate(h))
			}
			role, expect, headed = r, true, true
			continue
		}
		if k, v, ok := strings.Cut(para.text, ":"); ok {
			if r, known := companyHeadings[guest.FoldKey(strings.TrimSpace(k))]; known {
				p.firms.add(r, v)
				expect = false
				continue
			}
		}
		if expect || !headed {
			p.firms.add(role, para.text)
			expect = false
		}
	}
}
