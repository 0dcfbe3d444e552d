package page

import (
	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// finish completes the page's record once its parts are read: its firms,
// its translation, and a product for a page whose affected products are
// text, not a table (the summary's Product, under each brand).
func (p *reader) finish() {
	p.firms.fill(p.rec)
	if p.tableRows == 0 && len(p.rec.ProductList) == 0 && p.summaryProduct != "" {
		brands := p.brands
		if len(brands) == 0 {
			brands = []string{""}
		}
		for _, b := range brands {
			p.rec.ProductList = append(p.rec.ProductList, rappel.Product{Name: guest.ProductName(b, p.summaryProduct)})
		}
	}
	if p.tableRows > 0 && len(p.rec.ProductList) == 0 {
		p.n.problem("%s shows an affected-products table of %d rows, but no product could be read from it.", p.file, p.tableRows)
	}
	if p.tr != (rappel.Translation{}) {
		tr := p.tr
		switch p.lang {
		case rappel.LangEN:
			p.rec.Translations.EN = &tr
		case rappel.LangFR:
			p.rec.Translations.FR = &tr
		}
	}
}
