package synth

import (
	"strconv"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/jsonstr"
)

// The detail API's shape of a document (testdata/FORMATS.md): the English
// one carries the data, the French one the French text.

// apiWords are a document's panel titles and keys in one language.
type apiWords struct {
	summary, basic, issue, what, background, idNumbers, media, public string
	category, alert, idNumber                                         string
	product, brand, common, size, codes, upc, distributor, maker      string
	startingWith                                                      string
}

var (
	apiEN = apiWords{
		summary: "Summary", basic: "Basic details", issue: "Issue", what: "What you should do",
		background: "Product details", idNumbers: "Identification numbers", media: "Media enquiries", public: "Public enquiries",
		category: "Category", alert: "Alert type", idNumber: "Identification number",
		product: "Product", brand: "Brand name", common: "Common name", size: "Size", codes: "Code(s) on product",
		upc: "UPC", distributor: "Distributor", maker: "Manufacturer", startingWith: "Starting with",
	}
	apiFR = apiWords{
		summary: "Résumé", basic: "Renseignements de base", issue: "Problème", what: "Ce que vous devriez faire",
		background: "Détails sur le produit", idNumbers: "Numéros d'identification", media: "Demandes des médias", public: "Demandes du public",
		category: "Catégorie", alert: "Type d'alerte", idNumber: "Numéro d'identification",
		product: "Produit", brand: "Nom de marque", common: "Nom commun", size: "Format", codes: "Code(s) sur le produit",
		upc: "CUP", distributor: "Distributeur", maker: "Fabricant", startingWith: "Commençant par",
	}
)

// sectors are the site sections the category codes stand for, English and
// French: a document's category names its section by code, not by a
// Category line.
var sectors = map[string][2]string{
	"1": {"Food", "Aliments"}, "3": {"Health products", "Produits de santé"}, "4": {"Consumer products", "Produits de consommation"},
}

// appendAPIJSON appends the document in the detail API's shape.
func (d *document) appendAPIJSON(b []byte, french bool) []byte {
	w, url, title, sum, what := apiEN, d.urlEN, d.titleEN, d.sumEN, d.whatEN
	if french {
		w, url, title, sum, what = apiFR, d.urlFR, d.titleFR, d.sumFR, d.whatFR
	}
	b = append(b, `{"recallId":`...)
	b = jsonstr.Append(b, d.recallID)
	b = append(b, `,"title":`...)
	b = jsonstr.Append(b, title)
	b = append(b, `,"url":`...)
	b = jsonstr.Append(b, url)
	b = d.appendDates(b)
	b = append(b, `,"category":[`...)
	b = jsonstr.Append(b, d.code)
	b = append(b, `],"panels":[`...)

	b = appendPanel(b, "summary", w.summary, "<p>"+htmlEscape(title)+"</p>")
	b = append(b, ',')
	b = appendPanel(b, "basic_details", w.basic, d.basicText(w, french))
	b = append(b, ',')
	b = appendPanel(b, "cms_issue_problem", w.issue, sum)
	b = append(b, ',')
	b = appendPanel(b, "cms_who_what_consumer", w.what, "<p>"+htmlEscape(what)+"</p>")
	if len(d.products) > 0 {
		b = append(b, ',')
		b = appendPanel(b, "cms_product_details_background", w.background, "")
		b = d.appendProducts(b, w, french)
	}
	if d.idPanel {
		b = append(b, ',')
		b = appendPanel(b, "id_numbers", w.idNumbers, d.idNumber)
	}
	if len(d.images) > 0 {
		b = append(b, ',')
		b = appendImages(b, d.images, true)
	}
	if d.contacts {
		b = append(b, ',')
		b = appendPanel(b, "media_enquiries", w.media, "<p>"+htmlEscape(d.brand)+"</p>")
		b = append(b, ',')
		b = appendPanel(b, "public_enquiries", w.public, "<p>"+htmlEscape(d.brand)+"</p>")
	}
	return append(b, "]}\n"...)
}

// firmsOnProducts reports whether the product panels name the firms
// instead of the basic details.
func (d *document) firmsOnProducts() bool { return d.firmLines && len(d.products) > 0 }

// basicText writes the basic_details panel: the categories the code's
// section does not say, the alert type and identification number, then in
// English the optional details.
func (d *document) basicText(w apiWords, french bool) string {
	var sb strings.Builder
	line := func(k, v string) { sb.WriteString("<b>" + k + ":</b> " + v + "<BR/>") }
	cats, sector, alert := d.catEN, sectors[d.code][0], d.alert
	if french {
		cats, sector, alert = d.catFR, sectors[d.code][1], alertTypesFR[d.alert]
	}
	for _, c := range cats {
		if c != sector {
			line(w.category, htmlEscape(c))
		}
	}
	line(w.alert, htmlEscape(alert))
	if !d.idPanel {
		line(w.idNumber, d.idNumber)
	}
	if french {
		return sb.String()
	}
	for _, l := range d.details {
		switch {
		case d.firmsOnProducts() && (l.key == "Recalling firm" || l.key == "Manufacturer"):
		case l.key == "Recall class page":
			line(l.key, `<a href="`+l.html+`">`+l.html+`</a>`)
		default:
			line(l.key, l.html)
		}
	}
	return sb.String()
}

// firm returns the html of the optional details line key, or "".
func (d *document) firm(key string) string {
	for _, l := range d.details {
		if l.key == key {
			return l.html
		}
	}
	return ""
}

// appendProducts appends the product panels: one per product, or one
// whose table lists them all.
func (d *document) appendProducts(b []byte, w apiWords, french bool) []byte {
	var firms strings.Builder
	if d.firmsOnProducts() {
		for _, f := range [][2]string{{w.distributor, d.firm("Recalling firm")}, {w.maker, d.firm("Manufacturer")}} {
			if f[1] != "" {
				firms.WriteString("<b>" + f[0] + ":</b> " + f[1] + "<BR/>")
			}
		}
	}
	brand := "<b>" + w.brand + ":</b> " + htmlEscape(d.brand) + "<BR/>"
	if d.table {
		var sb strings.Builder
		sb.WriteString(brand + firms.String() + "<table><thead><tr><th>" + w.common + "</th><th>" + w.size + "</th><th>" + w.upc + "</th><th>" + w.codes + "</th></tr></thead><tbody>")
		for _, p := range d.products {
			name, size := p.names(french)
			sb.WriteString("<tr><td>" + htmlEscape(name) + "</td><td>" + htmlEscape(size) + "</td><td>" + htmlEscape(p.apiCode(w)) + "</td><td>" + htmlEscape(strings.Join(p.lots, ", ")) + "</td></tr>")
		}
		sb.WriteString("</tbody></table>")
		b = append(b, ',')
		return appendPanel(b, "product_1", w.product+" 1", sb.String())
	}
	for i, p := range d.products {
		name, size := p.names(french)
		var sb strings.Builder
		line := func(k, v string) { sb.WriteString("<b>" + k + ":</b> " + htmlEscape(v) + "<BR/>") }
		sb.WriteString(brand)
		line(w.common, name)
		line(w.size, size)
		if len(p.lots) > 0 {
			line(w.codes, strings.Join(p.lots, ", "))
		}
		if code := p.apiCode(w); code != "" {
			line(w.upc, code)
		}
		sb.WriteString(firms.String())
		b = append(b, ',')
		b = appendPanel(b, "product_"+strconv.Itoa(i+1), w.product+" "+strconv.Itoa(i+1), sb.String())
	}
	return b
}

// names returns the product's name and size in a language.
func (p *product) names(french bool) (string, string) {
	if french {
		return p.nameFR, p.sizeFR
	}
	return p.nameEN, p.sizeEN
}

// apiCode is the product's UPC line in the API's shape: a UPC-A starting
// with 0 may lose its 0, as CFIA prints them.
func (p *product) apiCode(w apiWords) string {
	switch {
	case p.prefix != "":
		return w.startingWith + " " + p.prefix
	case p.dropZero:
		return rappel.StripBarcode(p.upc)[1:]
	case p.upc != "":
		return p.upc
	case len(p.nameEN)%2 == 0:
		return "None" // as the older shape decides it, without drawing
	}
	return ""
}
