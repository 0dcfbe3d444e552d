package synth

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/jsonstr"
)

// document is a notice's detail document, both languages: the English one
// carries the data (details, products, images), the French one the French
// text. Most are written in the shape of the detail API
// (testdata/FORMATS.md), the rest in the older shape the normalizer still
// reads; both make the same record, but for product names (the API's
// brand and common name) and relative image paths (resolved).
type document struct {
	recallID         string
	start, published int64
	urlEN, urlFR     string
	titleEN, titleFR string
	catEN, catFR     []string
	sumEN, sumFR     string
	whatEN, whatFR   string
	alert            string
	idNumber         string
	details          []detailLine // the optional English details
	products         []product
	images           []image
	code             string // the API's category code
	brand            string
	shape                     // how the API shape is written
	page             pageView // what the notice's recall page shows, when its detail is one
}

// shape is how a document is written, drawn from a stream of its own so
// that the content drawn before it was added (products, details, images)
// stays what it was.
type shape struct {
	legacy    bool // in the older shape
	table     bool // several products listed in one panel's table
	firmLines bool // the recalling firm and manufacturer named on the product panels
	idPanel   bool // the identification number in its own panel, without a key
	contacts  bool // with the enquiries panels
}

// detailLine is one "<b>Key:</b> value" line; html is already escaped.
type detailLine struct{ key, html string }

// image is one element of the images panel.
type image struct{ url, title string }

// Shares of detail documents (testdata/FORMATS.md).
const (
	richShare     = 0.80 // with product panels and a category
	imageShare    = 0.31 // with an images panel
	relativeImage = 0.05 // older-shape images panels whose first URL is site-relative
	legacyShare   = 0.10 // in the older shape
	tableShare    = 0.15 // API shape, several products: one panel's table lists them
	firmShare     = 0.50 // API shape, with products: firms named on the product panels
	idPanelShare  = 0.30 // API shape: the identification number in id_numbers
	contactShare  = 0.60 // API shape: with media and public enquiries panels
	elevenShare   = 0.25 // API shape: a UPC-A starting with 0 printed as 11 digits
)

// shapeStream is added to a notice's stream key for the stream its
// document's shape is drawn from: above every entry key (typ<<40 | i) and
// the plan's own stream.
const shapeStream = 1 << 61

// drawShape draws how a document is written, and which of its UPC-A codes
// lose their leading 0.
func (d *document) drawShape(r *rand.Rand) {
	d.legacy = chance(r, legacyShare)
	d.table = len(d.products) > 1 && chance(r, tableShare)
	d.firmLines = chance(r, firmShare)
	d.idPanel = chance(r, idPanelShare)
	d.contacts = chance(r, contactShare)
	for i := range d.products {
		p := &d.products[i]
		// Only a valid UPC-A: an in-store code printed without its check
		// digit (0235278 00000) has 12 digits too.
		code := rappel.StripBarcode(p.upc)
		_, err := rappel.ParseGTIN(code)
		p.dropZero = len(code) == 12 && code[0] == '0' && err == nil && chance(r, elevenShare)
	}
}

var municipalities = []string{"Montréal", "Toronto", "Vancouver", "Calgary", "Winnipeg", "Halifax", "Québec", "Ottawa", "Edmonton", "Saskatoon", "Moncton", "Victoria"}

var foodVariants = [][2]string{
	{"Original", "Original"}, {"Garlic & Herb", "Ail et fines herbes"}, {"Light", "Léger"},
	{"Organic", "Biologique"}, {"Family Size", "Format familial"}, {"Spicy", "Épicé"},
	{"Honey & Maple", "Miel et érable"}, {"Unsalted", "Non salé"},
}

// document draws the detail document of a notice; the caller fills in the
// identifiers, dates and text it already has.
func (g *generator) document(r *rand.Rand, e *entry, p *profile, s subject, company string) *document {
	d := &document{
		sumEN:    "<p>" + htmlEscape(s.hazard.issueEN) + "</p><p>" + htmlEscape(s.hazard.sumEN) + "</p>",
		sumFR:    "<p>" + htmlEscape(s.hazard.issueFR) + "</p><p>" + htmlEscape(s.hazard.sumFR) + "</p>",
		alert:    p.alerts[pickWeighted(r, p.alertWeights)],
		idNumber: "RA-" + strconv.FormatInt(e.nid, 10),
		code:     p.code,
		brand:    s.brand,
	}
	if len(s.hazard.allergens) > 0 && chance(r, 0.7) {
		d.alert = "Allergy alert"
	}
	if chance(r, richShare) {
		d.catEN, d.catFR = []string{p.topEN, cmp.Or(s.classEN, s.catEN)}, []string{p.topFR, cmp.Or(s.classFR, s.catFR)}
		if s.alsoEN != "" {
			d.catEN, d.catFR = append(d.catEN, s.alsoEN), append(d.catFR, s.alsoFR)
		}
		d.products = g.products(r, e, p, s)
	}
	if chance(r, imageShare) {
		d.images = images(r, e, s)
	}
	if chance(r, 0.3) {
		d.details = append(d.details, detailLine{"Audience", "General public"})
	}
	for k := range numKeys {
		if !chance(r, p.keys[k]) {
			continue
		}
		d.details = append(d.details, detailLine{detailKeyNames[k], htmlEscape(detailValue(r, k, e, p, s, company))})
	}
	if len(s.hazard.allergens) > 0 {
		d.details = append(d.details, detailLine{"Allergens", strings.Join(s.hazard.allergens, ", ")})
	}
	d.drawShape(newRand(g.seed, e.key+shapeStream))
	return d
}

// detailValue draws the value of an optional details key.
func detailValue(r *rand.Rand, k detailKey, e *entry, p *profile, s subject, company string) string {
	switch k {
	case keyRecallingFirm:
		return company
	case keyManufacturer:
		if e.typ == typeConsumer && chance(r, 0.6) {
			return foreignMaker(r)
		}
		return s.brand + " " + pick(r, companySuffixes)
	case keyImporter:
		return pick(r, foodBrandHeads) + " Imports " + pick(r, companySuffixes)
	case keyDistribution:
		return distribution(r)
	case keyOrigin:
		return origin(r)
	case keyUnitsSold:
		return unitsSold(r)
	case keyTimePeriodSold:
		return timePeriodSold(r, e.day)
	case keyCompanies:
		names := []string{company}
		for range r.IntN(3) {
			if e.typ == typeConsumer && chance(r, 0.5) {
				names = append(names, foreignMaker(r))
			} else {
				names = append(names, pick(r, foodBrandHeads)+" Distribution "+pick(r, companySuffixes))
			}
		}
		return strings.Join(names, "; ")
	case keyClassPage:
		return p.classPage
	case keyCFIAID:
		return digits(r, 6)
	case keyDIN:
		return "0" + digits(r, 7)
	case keyNPN:
		return "80" + digits(r, 6)
	case keyMunicipality:
		return pick(r, municipalities)
	case keyUPC:
		return upc(r)
	}
	return ""
}

// products draws the product panels of a notice.
func (g *generator) products(r *rand.Rand, e *entry, p *profile, s subject) []product {
	n := 1 + pickWeighted(r, []int{55, 22, 13, 10})
	out := make([]product, 0, n)
	for i := range n {
		sz := pick(r, s.sizes)
		pr := product{nameEN: s.item.en, nameFR: s.item.fr, sizeEN: sz.en, sizeFR: sz.fr}
		if n > 1 {
			switch e.typ {
			case typeFood:
				v := foodVariants[(i+r.IntN(2))%len(foodVariants)]
				pr.nameEN += " – " + v[0]
				pr.nameFR += " – " + v[1]
			case typeConsumer, typeMedical:
				code := upperLetters(r, 2) + "-" + digits(r, 4)
				pr.nameEN += " – Model " + code
				pr.nameFR += " – Modèle " + code
			default:
				pr.nameEN += " " + sz.en
				pr.nameFR += " " + sz.fr
			}
		}
		switch {
		case e.typ == typeFood && byWeight[s.catEN] && chance(r, inStoreShare):
			pr.upc, pr.prefix = inStoreCode(r)
			pr.sizeEN, pr.sizeFR = "variable", "variable"
		case chance(r, p.upcRate):
			pr.upc = upc(r)
		}
		if chance(r, 0.9) {
			pr.lots = lotCodes(r, e.typ, e.day)
		}
		out = append(out, pr)
	}
	return out
}

// recallsSite is the site the notices and their images are on.
const recallsSite = "https://recalls-rappels.canada.ca"

// images draws an images panel's data.
func images(r *rand.Rand, e *entry, s subject) []image {
	n := 1 + pickWeighted(r, []int{60, 28, 12})
	views := []string{"front", "back", "label", "lot code", "packaging"}
	month := e.day.time().Format("2006-01")
	out := make([]image, n)
	for i := range out {
		path := fmt.Sprintf("/sites/default/files/%s/rs%d_%d.jpg", month, e.nid, i+1)
		if i > 0 || !chance(r, relativeImage) {
			path = recallsSite + path
		}
		out[i] = image{path, s.item.en + " – " + views[i%len(views)]}
	}
	return out
}

// appendJSON appends the document in English or French, in its shape.
func (d *document) appendJSON(b []byte, french bool) []byte {
	if d.legacy {
		return d.appendLegacyJSON(b, french)
	}
	return d.appendAPIJSON(b, french)
}

// appendLegacyJSON appends the document in the older shape.
func (d *document) appendLegacyJSON(b []byte, french bool) []byte {
	url, title, cats, sum, what := d.urlEN, d.titleEN, d.catEN, d.sumEN, d.whatEN
	if french {
		url, title, cats, sum, what = d.urlFR, d.titleFR, d.catFR, d.sumFR, d.whatFR
	}
	b = append(b, `{"url":`...)
	b = jsonstr.Append(b, url)
	b = append(b, `,"recallId":`...)
	b = jsonstr.Append(b, d.recallID)
	b = append(b, `,"title":`...)
	b = jsonstr.Append(b, title)
	b = d.appendDates(b)
	b = append(b, `,"category":[`...)
	for i, c := range cats {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, c)
	}
	b = append(b, `],"panels":[`...)

	names := [3]string{"Summary", "Details", "What you should do"}
	if french {
		names = [3]string{"Résumé", "Détails", "Ce que vous devriez faire"}
	}
	b = appendPanel(b, "summary", names[0], sum)
	b = append(b, ',')
	b = appendPanel(b, "details", names[1], d.detailsText(french))
	b = append(b, ',')
	b = appendPanel(b, "what_to_do", names[2], "<p>"+htmlEscape(what)+"</p>")
	for i, p := range d.products {
		b = append(b, ',')
		name := p.nameEN
		if french {
			name = p.nameFR
		}
		b = appendPanel(b, "product_"+strconv.Itoa(i+1), name, p.text(french))
	}
	if len(d.images) > 0 {
		b = append(b, ',')
		b = appendImages(b, d.images, false)
	}
	return append(b, "]}\n"...)
}

// detailsText writes the details panel: the alert type and identification
// number, then in English the optional details.
func (d *document) detailsText(french bool) string {
	var sb strings.Builder
	line := func(k, v string) { sb.WriteString("<b>" + k + ":</b> " + v + "<BR/>") }
	if french {
		line("Type d'alerte", htmlEscape(alertTypesFR[d.alert]))
		line("Numéro d'identification", d.idNumber)
		return sb.String()
	}
	line("Alert type", htmlEscape(d.alert))
	line("Identification number", d.idNumber)
	for _, l := range d.details {
		if l.key == "Recall class page" {
			// The page is a link, as on the site; its text is its address.
			line(l.key, `<a href="`+l.html+`">`+l.html+`</a>`)
			continue
		}
		line(l.key, l.html)
	}
	return sb.String()
}

// text writes a product panel.
func (p *product) text(french bool) string {
	keys := [4]string{"Product", "UPC", "Lot or code", "Size"}
	name, size := p.nameEN, p.sizeEN
	if french {
		keys = [4]string{"Produit", "CUP", "Lot ou code", "Format"}
		name, size = p.nameFR, p.sizeFR
	}
	var sb strings.Builder
	line := func(k, v string) { sb.WriteString("<b>" + k + ":</b> " + htmlEscape(v) + "<BR/>") }
	line(keys[0], name)
	switch {
	case p.prefix != "" && french:
		line(keys[1], "Commençant par "+p.prefix)
	case p.prefix != "":
		line(keys[1], "Starting with "+p.prefix)
	case p.upc != "":
		line(keys[1], p.upc)
	case len(p.nameEN)%2 == 0:
		// A product without a code either says so or leaves the line out;
		// the name's length picks which, without drawing from the stream.
		line(keys[1], "None")
	}
	if len(p.lots) > 0 {
		line(keys[2], strings.Join(p.lots, ", "))
	}
	line(keys[3], size)
	return sb.String()
}

// appendDates appends the document's dates, Unix seconds, after a field.
func (d *document) appendDates(b []byte) []byte {
	b = append(b, `,"start_date":`...)
	b = strconv.AppendInt(b, d.start, 10)
	b = append(b, `,"date_published":`...)
	return strconv.AppendInt(b, d.published, 10)
}

// appendPanel appends one panel object with text and no data.
func appendPanel(b []byte, name, title, text string) []byte {
	b = append(b, `{"panelName":`...)
	b = jsonstr.Append(b, name)
	b = append(b, `,"title":`...)
	b = jsonstr.Append(b, title)
	b = append(b, `,"text":`...)
	b = jsonstr.Append(b, text)
	return append(b, `,"data":null}`...)
}

// appendImages appends the images panel: in the API's shape, text null and
// each image a site-relative picture and thumbnail; in the older shape, an
// empty text and each image one url.
func appendImages(b []byte, images []image, api bool) []byte {
	b = append(b, `{"panelName":"images","title":"Images","text":`...)
	if api {
		b = append(b, `null,"data":[`...)
	} else {
		b = append(b, `"","data":[`...)
	}
	for i, im := range images {
		if i > 0 {
			b = append(b, ',')
		}
		if api {
			path := strings.TrimPrefix(im.url, recallsSite)
			b = append(b, `{"fullUrl":`...)
			b = jsonstr.Append(b, path)
			b = append(b, `,"thumbUrl":`...)
			b = jsonstr.Append(b, strings.TrimSuffix(path, ".jpg")+"_thumb.jpg")
		} else {
			b = append(b, `{"url":`...)
			b = jsonstr.Append(b, im.url)
		}
		b = append(b, `,"title":`...)
		b = jsonstr.Append(b, im.title)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}
