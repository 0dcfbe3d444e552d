package synth

import (
	"fmt"
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// A notice from rappel.FirstPageNID on has no detail document of the old
// API, frozen since: its detail is its recall pages on the recalls site
// (testdata/FORMATS.md, "Recall pages"), which the generator writes in the
// site's current layout, English and French. A share of the older notices
// has its pages in the legacy layout of the notices migrated from before
// November 2021 instead of the API's document: those the API does not
// answer for, whose page the refresher falls back on. Both say what the
// notice's document would have said, in the page's parts.

// legacyPageShare is the share of the older notices with detail whose
// detail is a migrated legacy page rather than the API's document.
const legacyPageShare = 0.05

// pageStream is added to a notice's stream key for the stream its page's
// own draws come from (layout, second barcodes, dosage forms): apart from
// the document's, so that the document stays what it was.
const pageStream = 1 << 60

// pageLayout is how a notice's detail is written.
type pageLayout int

const (
	layoutAPI     pageLayout = iota // the old API's JSON document
	layoutCurrent                   // a recall page in the current layout
	layoutLegacy                    // a recall page in the migrated legacy layout
)

// pageView is what a recall page shows beside its document: the dump row's
// values the page prints too.
type pageView struct {
	layout             pageLayout
	nid                string
	typ                int
	issueEN, issueFR   string // the summary's Issue
	itemEN, itemFR     string // the summary's Product, when the page has no table
	class              string // the recall class, "" when the row has none the reader takes
	lastUpdated        string // YYYY-MM-DD, "" when the row has none
	archived           bool
	agencyEN, agencyFR string
	// rows are the table's rows, one per product of the document, in its
	// order.
	rows []pageRow
}

// pageRow is one row of a page's affected-products table: what it prints
// beyond its product.
type pageRow struct {
	also      string // a second barcode in the UPC cell, as printed, or ""
	dosage    string // drugs: the dosage form
	model     string // devices: the model number its name gives
	packaging string // cannabis: the packaging date
}

// drawPage decides how the notice's detail is written, and draws what its
// page shows beyond its document.
func (g *generator) drawPage(e *entry, d *document) {
	r := newRand(g.seed, e.key+pageStream)
	switch {
	case e.nid >= rappel.FirstPageNID:
		d.page.layout = layoutCurrent
	case chance(r, legacyPageShare):
		d.page.layout = layoutLegacy
	default:
		return
	}
	d.page.nid, d.page.typ = strconv.FormatInt(e.nid, 10), e.typ
	d.page.rows = make([]pageRow, len(d.products))
	for i, p := range d.products {
		row := &d.page.rows[i]
		switch e.typ {
		case typeFood:
			if p.upc != "" && chance(r, 0.1) {
				row.also = upc(r)
			}
		case typeHealth:
			row.dosage = dosageForm(p.nameEN)
		case typeMedical:
			if _, code, ok := strings.Cut(p.nameEN, " – Model "); ok {
				row.model = code
			}
		case typeCannabis:
			row.packaging = (e.day - day(between(r, 20, 120))).String()
		}
	}
}

// dosageForm is the dosage form a drug's name gives.
func dosageForm(name string) string {
	for _, f := range [][2]string{{"Tablet", "Tablet"}, {"Capsule", "Capsule"}, {"Syrup", "Syrup"}, {"Suspension", "Suspension"},
		{"Injection", "Solution"}, {"Pen", "Solution"}, {"Drops", "Solution"}, {"Spray", "Spray"}, {"Cream", "Cream"},
		{"Lotion", "Lotion"}, {"Lozenge", "Lozenge"}, {"Gumm", "Gummy"}, {"Wipe", "Wipe"}, {"Toothpaste", "Paste"}} {
		if strings.Contains(name, f[0]) {
			return f[1]
		}
	}
	return "Liquid"
}

// pageWords are a current-layout page's labels in one language. The French
// ones are not in the evidence (testdata/FORMATS.md): the reader does not
// check them.
type pageWords struct {
	summary, product, issue, action, updated, affected, issueLong, actionLong   string
	additional, background, details, published, alertType, category, companies  string
	publishedBy, audience, class, recallDate, id, caption, sold, period, origin string
	distributor, maker, importer, recallingFirm, agencyID, archived, brands     string
	section                                                                     string // the alert-recall path
}

var (
	pageEN = pageWords{
		summary: "Summary", product: "Product", issue: "Issue", action: "What to do", updated: "Last updated",
		affected: "Affected products", issueLong: "Issue", actionLong: "What you should do",
		additional: "Additional information", background: "Background", details: "Details",
		published: "Original published date: ", alertType: "Alert / recall type", category: "Category",
		companies: "Companies", publishedBy: "Published by", audience: "Audience", class: "Recall class",
		recallDate: "Recall date", id: "Identification number", caption: "The following products are affected:",
		sold: "Number Sold", period: "Time Period Sold", origin: "Place of Origin",
		distributor: "Distributor", maker: "Manufacturer", importer: "Importer", recallingFirm: "Recalling firm",
		agencyID: "ID", archived: "This web page has been archived on the web", brands: "Brand(s)",
	}
	pageFR = pageWords{
		summary: "Résumé", product: "Produit", issue: "Problème", action: "Que faire", updated: "Dernière mise à jour",
		affected: "Produits touchés", issueLong: "Problème", actionLong: "Ce que vous devriez faire",
		additional: "Renseignements supplémentaires", background: "Contexte", details: "Détails",
		published: "Date de publication originale : ", alertType: "Type d'avis ou de rappel", category: "Catégorie",
		companies: "Entreprises", publishedBy: "Publié par", audience: "Public cible", class: "Classe de rappel",
		recallDate: "Date du rappel", id: "Numéro d'identification", caption: "Les produits suivants sont touchés :",
		sold: "Nombre vendu", period: "Période de vente", origin: "Lieu d'origine",
		distributor: "Distributeur", maker: "Fabricant", importer: "Importateur", recallingFirm: "Entreprise qui effectue le rappel",
		agencyID: "ID", archived: "Cette page Web a été archivée dans le Web", brands: "Marque(s)",
	}
)

// isPage reports whether the notice's detail is written as recall pages.
func (d *document) isPage() bool { return d.page.layout != layoutAPI }

// appendPage appends the notice's page in English or French, in its
// layout.
func (d *document) appendPage(b []byte, french bool) []byte {
	var sb strings.Builder
	if d.page.layout == layoutLegacy {
		d.writeLegacy(&sb, french)
	} else {
		d.writeCurrent(&sb, french)
	}
	return append(b, sb.String()...)
}

// dateOf is the date of a Unix time, as pages print it.
func dateOf(unix int64) string { return time.Unix(unix, 0).UTC().Format("2006-01-02") }

// writeCurrent writes the page in the current layout.
func (d *document) writeCurrent(sb *strings.Builder, french bool) {
	w, lang, other, url, otherURL, title, what, alert := pageEN, "en", "fr", d.urlEN, d.urlFR, d.titleEN, d.whatEN, d.alert
	issue, cats, agency := d.page.issueEN, d.catEN, d.page.agencyEN
	if french {
		w, lang, other, url, otherURL, title, what, alert = pageFR, "fr", "en", d.urlFR, d.urlEN, d.titleFR, d.whatFR, alertTypesFR[d.alert]
		issue, cats, agency = d.page.issueFR, d.catFR, d.page.agencyFR
	}
	esc := htmlEscape
	fmt.Fprintf(sb, "<!DOCTYPE html>\n<html lang=\"%s\" dir=\"ltr\">\n<head>\n<meta charset=\"utf-8\" />\n", lang)
	fmt.Fprintf(sb, "<title>%s - Recalls, advisories and safety alerts – Canada.ca</title>\n", esc(title))
	fmt.Fprintf(sb, "<link rel=\"canonical\" href=\"%s\" />\n", html.EscapeString(url))
	if otherURL != "" {
		fmt.Fprintf(sb, "<link rel=\"alternate\" hreflang=\"%s\" href=\"%s\" />\n", other, html.EscapeString(otherURL))
	}
	fmt.Fprintf(sb, "<meta name=\"dcterms.title\" content=\"%s\" />\n<meta name=\"dcterms.issued\" content=\"%s\" />\n</head>\n<body>\n", html.EscapeString(title), dateOf(d.published))
	fmt.Fprintf(sb, "<nav><a class=\"language-link\" hreflang=\"%s\" data-drupal-link-system-path=\"node/%s\" href=\"%s\">%s</a></nav>\n", other, d.page.nid, html.EscapeString(otherURL), map[string]string{"en": "English", "fr": "Français"}[other])
	sb.WriteString("<main property=\"mainContentOfPage\" class=\"col-md-12 main-container container\">\n")
	if d.page.archived {
		fmt.Fprintf(sb, "<div id=\"block-archived\"><section class=\"alert alert-warning\" id=\"archived\"><h2>%s</h2></section></div>\n", w.archived)
	}
	fmt.Fprintf(sb, "<div class=\"region region-header\">\n<div class=\"h3\" id=\"wb-cont-nav\">%s</div>\n<h1 class=\"gc-thickline\" id=\"wb-cont\">\n<span>%s</span>\n</h1>\n</div>\n<section>\n<div class=\"region region-content\">\n", esc(alert), esc(title))
	fmt.Fprintf(sb, "<details class=\"ar-brand-details\">\n<summary>%s</summary>\n<div class=\"ar-brand\">\n<div class=\"field field--name-field-brand-ref field--type-entity-reference field--label-hidden field--items\">\n<div class=\"field--item\"><a href=\"/%s/search/site?f%%5B1%%5D=brand%%3A%d\">%s</a></div>\n</div>\n</div>\n</details>\n",
		w.brands, lang, 1000+len(d.brand)*37, esc(d.brand))
	if d.page.lastUpdated != "" && d.page.lastUpdated != dateOf(d.published) {
		// Only an update's date: the dump's Last updated is no record
		// field of a Health Canada notice, and the records keep the spec's
		// share of last_updated.
		fmt.Fprintf(sb, "<div class=\"ar-last-modified ar-section\">\n<div class=\"field field--name-field-last-updated field--type-datetime field--label-inline\">\n<div class=\"field--label\">%s</div>\n<div class=\"field field--name-field-last-updated field--type-datetime field--label-hidden field--item\"><time datetime=\"%sT12:00:00Z\">%s</time></div>\n</div>\n</div>\n",
			w.updated, d.page.lastUpdated, d.page.lastUpdated)
	}

	// Summary: the product, the issue, what to do, and for food the
	// distribution.
	name := d.page.itemEN
	if french {
		name = d.page.itemFR
	}
	if len(d.products) > 0 {
		name, _ = d.products[0].names(french)
	}
	fmt.Fprintf(sb, "<section class=\"ar-summary ar-section overflow-auto\">\n<h2 class=\"h2\" id=\"section_1\">%s</h2>\n<div class=\"alert alert-info\">\n", w.summary)
	fmt.Fprintf(sb, "<div class=\"field field--name-field-product field--label-inline\">\n<div id=\"product\" class=\"field--label\">%s</div>\n<div class=\"field field--name-field-product field--type-string field--label-hidden field--item\">%s</div>\n</div>\n", w.product, esc(name))
	if issue != "" {
		fmt.Fprintf(sb, "<div class=\"issue-type clearfix\">\n<div class=\"field field--name-field-issue-type field--label-inline\">\n<div id=\"issue\" class=\"field--label\">%s</div>\n<div class=\"field field--name-field-issue-type field--type-entity-reference field--label-hidden field--items\">\n<div class=\"field--item\">%s</div>\n</div>\n</div>\n</div>\n", w.issue, esc(issue))
	}
	fmt.Fprintf(sb, "<div class=\"field field--name-field-action field--label-inline\">\n<div id=\"action\" class=\"field--label\">%s</div>\n<div class=\"field field--name-field-action field--type-text-long field--label-hidden field--item\"><p>%s</p></div>\n</div>\n", w.action, esc(what))
	if dist := d.firm("Distribution"); dist != "" && !french {
		sb.WriteString("<div class=\"field field--name-field-distribution-region field--type-entity-reference field--label-hidden field--items\">\n")
		for _, region := range strings.Split(dist, ", ") {
			fmt.Fprintf(sb, "<div class=\"field--item\">%s</div>", region)
		}
		sb.WriteString("\n</div>\n")
	}
	sb.WriteString("</div>\n</section>\n")

	if len(d.images) > 0 {
		sb.WriteString("<div class=\"ar-product-images ar-section\">\n<div class=\"product-images\"><div class=\"slick blazy\"><div class=\"slick__slider\">\n")
		for i, im := range d.images {
			fmt.Fprintf(sb, "<div class=\"slick__slide slide slide--%d\"><div class=\"slide__content\"><a href=\"%s\" data-box-url=\"%s\"><div data-b-thumb=\"%s\" class=\"media media--blazy\"><img decoding=\"async\" class=\"media__element b-lazy img-responsive\" loading=\"lazy\" data-src=\"%s\" src=\"data:image/svg+xml;charset=utf-8,%%3Csvg%%20xmlns%%3D&#039;http%%3A%%2F%%2Fwww.w3.org%%2F2000%%2Fsvg&#039;%%2F%%3E\" alt=\"%s\"/></div></a></div></div>\n",
				i, html.EscapeString(im.url), html.EscapeString(im.url), html.EscapeString(strings.TrimSuffix(im.url, ".jpg")+"_medium.jpg"), html.EscapeString(im.url), html.EscapeString(im.title))
		}
		sb.WriteString("</div></div></div>\n</div>\n")
	}

	fmt.Fprintf(sb, "<section class=\"ar-affected-products ar-section\">\n<h2 class=\"h2\" id=\"section_2\">%s</h2>\n", w.affected)
	if len(d.products) > 0 {
		d.writeTable(sb, w, french)
	} else {
		fmt.Fprintf(sb, "<div class=\"field field--name-field-affected-products-txt field--type-text-long field--label-hidden field--item\"><p>%s</p></div>\n", esc(title))
	}
	sb.WriteString("</section>\n")

	sum := d.sumEN
	if french {
		sum = d.sumFR
	}
	fmt.Fprintf(sb, "<section class=\"ar-issue-long ar-section\">\n<h2 class=\"h2\" id=\"section_3\">%s</h2>\n<div class=\"field field--name-field-issue-long field--type-text-long field--label-hidden field--item\">%s</div>\n</section>\n", w.issueLong, sum)
	fmt.Fprintf(sb, "<section class=\"ar-action-long ar-section\">\n<h2 class=\"h2\" id=\"section_4\">%s</h2>\n<div class=\"field field--name-field-action-long field--type-text-long field--label-hidden field--item\"><p>%s</p></div>\n</section>\n", w.actionLong, esc(what))

	fmt.Fprintf(sb, "<section class=\"ar-additional-info ar-section\">\n<h2 class=\"h2\" id=\"section_6\">%s</h2>\n<div>\n", w.additional)
	if !french {
		var bg strings.Builder
		for _, l := range [][2]string{{w.sold, "Units sold"}, {w.period, "Time period sold"}, {w.origin, "Place of origin"}} {
			if v := d.firm(l[1]); v != "" {
				fmt.Fprintf(&bg, "<p><strong>%s</strong></p>\n<p>%s</p>\n", l[0], v)
			}
		}
		if bg.Len() > 0 {
			fmt.Fprintf(sb, "<details>\n<summary>%s</summary>\n<div class=\"field field--name-field-background field--type-text-long field--label-hidden field--item\">%s</div>\n</details>\n", w.background, bg.String())
		}
	}
	fmt.Fprintf(sb, "<details>\n<summary>%s</summary>\n", w.details)
	fmt.Fprintf(sb, "<div class=\"views-element-container form-group\"><div class=\"view-content\"><div><strong class=\"views-label views-label-changed\">%s</strong><time datetime=\"%sT12:00:00Z\">%s</time></div></div></div>\n", w.published, dateOf(d.published), dateOf(d.published))
	fmt.Fprintf(sb, "<div class=\"field field--name-recall-type field--label-inline\">\n<div class=\"field--label\">%s</div>\n<div class=\"field field--name-field-recall-type field--type-entity-reference field--label-hidden field--item\">%s</div>\n</div>\n", w.alertType, esc(alert))
	if len(cats) > 0 {
		fmt.Fprintf(sb, "<div class=\"field field--name-category field--label-inline\">\n<div class=\"field--label\">%s</div>\n<div class=\"field field--name-field-category field--type-entity-reference field--label-hidden field--items\">\n<div class=\"field--item\">%s</div>\n</div>\n</div>\n", w.category, esc(strings.Join(cats, " - ")))
	}
	if c := d.companiesHTML(w, french); c != "" {
		fmt.Fprintf(sb, "<div class=\"field field--name-companies\">\n<div class=\"field--label\">%s</div>\n<div class=\"field field--name-field-companies field--type-text-long field--label-hidden field--item\">%s</div>\n</div>\n", w.companies, c)
	}
	fmt.Fprintf(sb, "<div class=\"field field--name-node-id field--label-inline\">\n<div class=\"field--label\">%s</div>\n<div class=\"field--item\"><span class=\"field field--name-field-organization field--type-entity-reference field--label-hidden field--item\">%s</span></div>\n</div>\n", w.publishedBy, esc(agency))
	if d.firm("Audience") != "" {
		audience := "General public"
		if french {
			audience = "Grand public"
		}
		fmt.Fprintf(sb, "<div class=\"field field--name-node-id field--label-inline\">\n<div class=\"field--label\">%s</div>\n<div class=\"field--item\"><div class=\"field field--name-field-who-this-is-for field--type-entity-reference field--label-hidden field--items\"><div class=\"field--item\">%s</div></div></div>\n</div>\n", w.audience, audience)
	}
	if d.page.class != "" {
		class := d.page.class
		if french {
			class = strings.ReplaceAll(class, "Class", "Classe")
		}
		fmt.Fprintf(sb, "<div class=\"field field--label-inline\">\n<div class=\"field--label\">%s</div>\n<div class=\"field--item\"><div class=\"field field--name-field-hazard-type field--items\"><div class=\"field--item\">%s</div></div></div>\n</div>\n", w.class, class)
	}
	fmt.Fprintf(sb, "<div class=\"field field--label-inline\">\n<div class=\"field--label\">%s</div>\n<div class=\"field--item\"><div class=\"field field--name-field-recall-date field--type-datetime field--label-hidden field--item\"><time datetime=\"%sT12:00:00Z\">%s</time></div></div>\n</div>\n", w.recallDate, dateOf(d.start), dateOf(d.start))
	fmt.Fprintf(sb, "<div class=\"field field--name-node-id field--label-inline\">\n<div class=\"field--label\">%s</div>\n<div class=\"field--item\">%s</div>\n</div>\n", w.id, d.idNumber)
	if id := d.firm("CFIA ID"); id != "" {
		fmt.Fprintf(sb, "<div class=\"field field--label-inline\">\n<div class=\"field--label\"><span class=\"field field--name-field-organization field--item\">%s</span> %s</div>\n<div class=\"field--item\"><div class=\"field field--name-field-cfia-id field--items\"><div class=\"field--item\">%s</div></div></div>\n</div>\n", esc(agency), w.agencyID, id)
	}
	sb.WriteString("</details>\n</div>\n</section>\n</div>\n</section>\n</main>\n")
	sb.WriteString("<footer>")
	if d.page.lastUpdated != "" {
		fmt.Fprintf(sb, "<dl id=\"wb-dtmd\"><dt>Date modified:</dt><dd><time property=\"dateModified\">%s</time></dd></dl>", d.page.lastUpdated)
	}
	sb.WriteString("</footer>\n</body>\n</html>\n")
}

// companiesHTML writes the Companies block: the firms of no role first,
// then each role's heading and firm, as the site's editors do; CFIA pages
// name the recalling firm in one line.
func (d *document) companiesHTML(w pageWords, french bool) string {
	if french {
		return "" // the firms are data, read from the English page
	}
	var sb strings.Builder
	if c := d.firm("Companies"); c != "" {
		for _, name := range strings.Split(c, "; ") {
			fmt.Fprintf(&sb, "<p>%s</p>\n", name)
		}
	}
	if f := d.firm("Recalling firm"); f != "" {
		if d.page.typ == typeFood {
			fmt.Fprintf(&sb, "<p>%s: %s</p>\n", w.recallingFirm, f)
		} else {
			fmt.Fprintf(&sb, "<p><strong>%s</strong></p>\n<p>%s</p>\n<p>Canada</p>\n", w.distributor, f)
		}
	}
	if f := d.firm("Manufacturer"); f != "" {
		fmt.Fprintf(&sb, "<p><strong>%s</strong></p>\n<p>%s</p>\n", w.maker, f)
	}
	if f := d.firm("Importer"); f != "" {
		fmt.Fprintf(&sb, "<p><strong>%s</strong></p>\n<p>%s</p>\n", w.importer, f)
	}
	return sb.String()
}

// tableColumns are a page type's affected-products columns, English and
// French. A French page's headers are the ones the French legacy pages
// show where a column has them; the current layout's are unconfirmed.
var tableColumns = map[int][][2]string{
	typeFood:     {{"Brand", "Marque"}, {"Product", "Produit"}, {"Size", "Format"}, {"UPC", "CUP"}, {"Codes", "Codes"}},
	typeHealth:   {{"Brand", "Marque"}, {"Product name", "Nom du produit"}, {"Market authorization", ""}, {"Dosage form", ""}, {"Strength", "Format"}, {"Lot number", "Numéro de lot"}},
	typeMedical:  {{"Affected products", "Nom du produit"}, {"Lot or serial number", "Numéro de lot"}, {"Model or catalogue number", ""}},
	typeConsumer: {{"Product", "Produit"}, {"Part number", ""}, {"UPC", "CUP"}},
	typeCannabis: {{"Product name", "Nom du produit"}, {"Lot number", "Numéro de lot"}, {"Product size", "Format"}, {"Packaging date", ""}, {"Printed values", ""}, {"Actual values", ""}},
}

// writeTable writes the affected-products table, one row per product.
func (d *document) writeTable(sb *strings.Builder, w pageWords, french bool) {
	cols := tableColumns[d.page.typ]
	fmt.Fprintf(sb, "<div class=\"field field--name-field-affected-products-header field--type-text-long field--label-hidden field--item\"><p>%s</p></div>\n<table class=\"table table-bordered\">\n<caption>%s</caption>\n<thead><tr>", w.caption, w.caption)
	for _, c := range cols {
		if h := c[0]; !french || c[1] != "" {
			if french {
				h = c[1]
			}
			fmt.Fprintf(sb, "<th><p>%s</p></th>", h)
		}
	}
	sb.WriteString("</tr></thead>\n<tbody>\n")
	for i, p := range d.products {
		cells := d.rowCells(i, &p, french)
		sb.WriteString("<tr>")
		for j, c := range cols {
			if !french || c[1] != "" {
				fmt.Fprintf(sb, "<td><p>%s</p></td>", cells[j])
			}
		}
		sb.WriteString("</tr>\n")
	}
	sb.WriteString("</tbody>\n</table>\n")
}

// rowCells are the cells of product i's row, escaped, in the order of its
// type's columns.
func (d *document) rowCells(i int, p *product, french bool) []string {
	esc := htmlEscape
	name, size := p.names(french)
	row := d.page.rows[i]
	lots := esc(strings.Join(p.lots, "<br>"))
	lots = strings.ReplaceAll(lots, "&lt;br&gt;", "<br>")
	if lots == "" {
		lots = "None"
	}
	switch d.page.typ {
	case typeFood:
		code := p.pageCode(french)
		if row.also != "" {
			code += "; " + spaced(row.also)
		}
		return []string{esc(d.brand), esc(name), esc(size), esc(code), lots}
	case typeHealth:
		din := "Not applicable"
		if v := d.firm("DIN"); v != "" {
			din = "DIN " + v
		}
		return []string{esc(d.brand), esc(name), din, row.dosage, esc(size), lots}
	case typeMedical:
		model := "Not applicable"
		if row.model != "" {
			model = row.model
		}
		return []string{esc(name), lots, model}
	case typeConsumer:
		code := "None"
		if p.upc != "" {
			code = rappel.StripBarcode(p.upc)
		}
		return []string{esc(name), lots, code}
	}
	return []string{esc(name), lots, esc(size), row.packaging, "Not applicable", "Not applicable"}
}

// pageCode is a food product's UPC cell as pages print it: spaced (UPC-A
// 1-5-5-1, EAN-13 1-6-6), 11 digits where the document drops the leading
// 0, the start of an item's in-store codes, or None.
func (p *product) pageCode(french bool) string {
	switch {
	case p.prefix != "" && french:
		return "Commençant par " + p.prefix
	case p.prefix != "":
		return "Starting with " + p.prefix
	case p.upc == "":
		return "None"
	case p.dropZero:
		return rappel.StripBarcode(p.upc)[1:]
	}
	if _, err := rappel.ParseGTIN(p.upc); err != nil {
		return p.upc // an in-store code without its check digit, as printed
	}
	return spaced(p.upc)
}

// spaced prints a valid barcode as the pages do: a UPC-A as 1-5-5-1
// digits, an EAN-13 as 1-6-6.
func spaced(code string) string {
	c := rappel.StripBarcode(code)
	switch len(c) {
	case 12:
		return c[:1] + " " + c[1:6] + " " + c[6:11] + " " + c[11:]
	case 13:
		return c[:1] + " " + c[1:7] + " " + c[7:]
	}
	return code
}

// legacyMonthsFR are the French month names of legacy pages' dates.
var legacyMonthsFR = []string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"}

// longDate prints a Unix time's date as legacy pages do: "October 15,
// 2021", "30 décembre 2011".
func longDate(unix int64, french bool) string {
	t := time.Unix(unix, 0).UTC()
	if french {
		return fmt.Sprintf("%d %s %d", t.Day(), legacyMonthsFR[t.Month()-1], t.Year())
	}
	return t.Format("January 2, 2006")
}

// writeLegacy writes the page in the legacy layout of the migrated notices:
// a <dl> of labels, the hazard, headings and a table without <thead>.
func (d *document) writeLegacy(sb *strings.Builder, french bool) {
	esc := htmlEscape
	title, what, alert, sum := d.titleEN, d.whatEN, d.alert, d.sumEN
	if french {
		title, what, alert, sum = d.titleFR, d.whatFR, alertTypesFR[d.alert], d.sumFR
	}
	sb.WriteString("<!DOCTYPE html>\n<html>\n<body>\n<main property=\"mainContentOfPage\">\n")
	if d.page.archived {
		w := pageEN
		if french {
			w = pageFR
		}
		fmt.Fprintf(sb, "<div id=\"block-archived\"><section class=\"alert alert-warning\" id=\"archived\">\n<h2>%s</h2></section></div>\n", w.archived)
	}
	fmt.Fprintf(sb, "<div class=\"h3\" id=\"wb-cont-nav\">%s</div>\n<h1 class=\"gc-thickline\" id=\"wb-cont\"><span>%s</span></h1>\n", esc(alert), esc(title))
	sb.WriteString("<div class=\"recall-alert-body\"><div class=\"field field--name-body field--item\">\n<dl id=\"awr_details_header_container\">\n")
	dt := func(label, value string) { fmt.Fprintf(sb, "<dt>%s</dt><dd>%s</dd>\n", label, value) }
	if french {
		dt("Date de début :", longDate(d.start, true))
		if d.page.class != "" {
			dt("Classification du risque :", strings.ReplaceAll(d.page.class, "Class", "Classe"))
		}
		dt("Source :", esc(d.page.agencyFR))
	} else {
		dt("Starting date:", longDate(d.start, false))
		dt("Posting date:", longDate(d.published, false))
		dt("Type of communication:", esc(alert))
		if len(d.catEN) > 0 {
			dt("Subcategory:", esc(strings.Join(d.catEN, " - ")))
		}
		if d.page.class != "" {
			dt("Hazard classification:", d.page.class)
		}
		dt("Source of recall:", esc(d.page.agencyEN))
		if f := d.firm("Recalling firm"); f != "" {
			dt("Recalling firm:", f)
		}
		if f := d.firm("Distribution"); f != "" {
			dt("Distribution:", f)
		}
		if f := d.firm("CFIA ID"); f != "" {
			dt("CFIA reference number:", f)
		}
		dt("Identification number:", d.idNumber)
	}
	sb.WriteString("</dl>\n")
	sb.WriteString(sum)
	sb.WriteString("\n")
	if len(d.products) > 0 {
		headers := [5]string{"Brand name", "Common name", "Size", "Code(s) on product", "UPC"}
		if french {
			headers = [5]string{"Nom de marque", "Nom commun", "Format", "Codes sur le produit", "CUP"}
		}
		h2, id := "Affected products", "affected-products"
		if french {
			h2, id = "Produits touchés", "affected-touches"
		}
		fmt.Fprintf(sb, "<h2 id=\"%s\">%s</h2>\n<table class=\"table table-bordered\">\n<tr>", id, h2)
		for _, h := range headers {
			fmt.Fprintf(sb, "<th>%s</th>", h)
		}
		sb.WriteString("</tr>\n")
		for _, p := range d.products {
			name, size := p.names(french)
			lots := esc(strings.Join(p.lots, "; "))
			if lots == "" {
				lots = "None"
			}
			fmt.Fprintf(sb, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", esc(d.brand), esc(name), esc(size), lots, esc(p.pageCode(french)))
		}
		sb.WriteString("</table>\n")
	}
	h2 := "What you should do"
	if french {
		h2 = "Ce que vous devriez faire"
	}
	fmt.Fprintf(sb, "<h2>%s</h2>\n<p>%s</p>\n", h2, esc(what))
	for _, im := range d.images {
		fmt.Fprintf(sb, "<p><img src=\"%s\" alt=\"%s\"></p>\n", html.EscapeString(im.url), html.EscapeString(im.title))
	}
	sb.WriteString("<!-- Date Modified ends / Fin de la date de modification -->\n</div></div>\n</main>\n</body>\n</html>\n")
}

// pageClass is the recall class a page prints of the dump row's value:
// none for a row without one ("", "--"; recallClass), the class as the row
// writes it otherwise. TestGenerate_Pages reads every page back and checks
// the reader takes it.
func pageClass(v string) string {
	if strings.Trim(v, "-–— ") == "" {
		return ""
	}
	return v
}
