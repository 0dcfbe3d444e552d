package detail

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// productField is what a product panel's key, or its table's column, says
// about a product.
type productField int

const (
	fieldName         productField = iota // the older shape's whole name
	fieldBrand                            // Brand name
	fieldCommon                           // Common name
	fieldSize                             // Size
	fieldCodes                            // Code(s) on product: lot codes
	fieldUPC                              // UPC
	fieldDistributor                      // Distributor
	fieldManufacturer                     // Manufacturer
	numProductFields
)

// productKeys maps a product key, or a table's column header, folded
// (guest.FoldKey) and without its colon, to its field: the detail API's
// keys and the older shape's, in English and French.
var productKeys = map[string]productField{
	"product": fieldName, "produit": fieldName, "product name": fieldName, "nom du produit": fieldName,
	"brand name": fieldBrand, "brand": fieldBrand, "nom de marque": fieldBrand, "marque": fieldBrand,
	"common name": fieldCommon, "nom commun": fieldCommon,
	"size": fieldSize, "format": fieldSize, "taille": fieldSize,
	"code(s) on product": fieldCodes, "codes on product": fieldCodes, "code on product": fieldCodes,
	"code(s) sur le produit": fieldCodes, "codes sur le produit": fieldCodes, "code sur le produit": fieldCodes,
	"lot or code": fieldCodes, "lot ou code": fieldCodes, "code(s)": fieldCodes, "codes": fieldCodes,
	"upc": fieldUPC, "cup": fieldUPC,
	"distributor": fieldDistributor, "distributeur": fieldDistributor,
	"manufacturer": fieldManufacturer, "fabricant": fieldManufacturer,
}

// productValues is what a product panel, or one row of its table, says,
// by field.
type productValues [numProductFields]string

// name is the product's name: the older shape's Product line, else its
// brand and common name ("Maple Grove" "Organic mango purée"), the common
// name alone when it starts with the brand or the brand is "None".
func (v *productValues) name() string {
	if v[fieldName] != "" {
		return v[fieldName]
	}
	return guest.ProductName(v[fieldBrand], v[fieldCommon])
}

// productPanel is a product panel and its number, product_<n>.
type productPanel struct {
	n    int
	p    *panel
	file string
}

// products reads the document's product panels, in their numbers' order,
// and the firms they name. A panel holding a table is one product per row.
func (n *notice) products(d *document, file string) ([]rappel.Product, firms) {
	var panels []productPanel
	for i := range d.Panels {
		if k, ok := productNumber(d.Panels[i].Name); ok {
			panels = append(panels, productPanel{k, &d.Panels[i], file})
		}
	}
	slices.SortStableFunc(panels, func(a, b productPanel) int { return cmp.Compare(a.n, b.n) })
	var out []rappel.Product
	var f firms
	var unknown unknownKeys
	for _, pp := range panels {
		for _, v := range n.productRows(pp, &unknown) {
			f.add(v)
			if prod, ok := n.product(pp, v); ok {
				out = append(out, prod)
			}
		}
	}
	unknown.report(n, file)
	return out, f
}

// productRows reads a product panel: its key/value lines, and the rows of
// its tables, each row holding the lines' values where its cells are empty.
// Keys it does not know go to unknown.
func (n *notice) productRows(pp productPanel, unknown *unknownKeys) []productValues {
	text, tables := cutTables(pp.p.Text)
	var base productValues
	for _, kv := range pairs(text) {
		f, ok := productKeys[kv.key]
		if !ok {
			unknown.add(kv, pp.name())
			continue
		}
		base[f] = cmp.Or(base[f], kv.value)
	}
	var rows []productValues
	for _, t := range tables {
		rows = append(rows, n.tableRows(t, base, pp, unknown)...)
	}
	if len(rows) == 0 {
		rows = append(rows, base)
	}
	return rows
}

// name is the panel's name, product_<n>, for problems.
func (pp productPanel) name() string { return productPrefix + strconv.Itoa(pp.n) }

// product makes one product of a panel's values. A product needs a name:
// its own, else the panel's title.
func (n *notice) product(pp productPanel, v productValues) (rappel.Product, bool) {
	prod := rappel.Product{Name: cmp.Or(v.name(), guest.CleanText(pp.p.Title)), Size: v[fieldSize]}
	if prod.Name == "" {
		n.problem("Product panel product_%d of %s was skipped: it names no product.", pp.n, pp.file)
		return prod, false
	}
	if !isNone(v[fieldCodes]) {
		prod.LotCodes = lotCodes(v[fieldCodes])
	}
	var upcLot string
	if !isNone(v[fieldUPC]) {
		upcLot = n.productCode(&prod, v[fieldUPC], pp.n, pp.file)
	}
	if len(prod.LotCodes) > 0 {
		// The codes' field says nothing of what they are ("Code(s) on
		// product": "Best Before 04/2027 Lot 60D0924"); digits of the UPC
		// field are a barcode misprinted, never a lot.
		labelled := make([]rappel.LabelledCode, 0, len(prod.LotCodes))
		for _, c := range prod.LotCodes {
			l := rappel.LabelledCode{Text: c}
			if c == upcLot {
				l.Label = "UPC"
			}
			labelled = append(labelled, l)
		}
		a := rappel.ParseLabelledCodes(labelled)
		a.Text = "" // the lot codes joined, which Assemble gives back: the record carries them once
		prod.Applicability = &a
	}
	return prod, true
}

// firms are the distributors and manufacturers product panels name, each
// once, in order.
type firms struct{ distributors, manufacturers []string }

// add notes the firms of one product.
func (f *firms) add(v productValues) {
	f.distributors = appendNew(f.distributors, v[fieldDistributor])
	f.manufacturers = appendNew(f.manufacturers, v[fieldManufacturer])
}

// fill gives rec the firms: the first distributor is the recalling firm
// and the first manufacturer the manufacturer, unless the details name
// them; every other firm joins companies, so that search finds each.
func (f firms) fill(rec *rappel.Record) {
	if len(f.distributors) > 0 {
		rec.RecallingFirm = cmp.Or(rec.RecallingFirm, f.distributors[0])
	}
	if len(f.manufacturers) > 0 {
		rec.Manufacturer = cmp.Or(rec.Manufacturer, f.manufacturers[0])
	}
	for _, name := range slices.Concat(f.distributors, f.manufacturers) {
		if !strings.EqualFold(name, rec.RecallingFirm) && !strings.EqualFold(name, rec.Manufacturer) {
			rec.Companies = appendNew(rec.Companies, name)
		}
	}
}

// appendNew appends s to list unless it is empty, "None" or in list
// already, in any case.
func appendNew(list []string, s string) []string {
	if isNone(s) || slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) }) {
		return list
	}
	return append(list, s)
}

// productCode files a product's UPC value by the barcode rules
// (guest.ReadPrintedCode): a valid barcode is its upc, a prefix its
// upc_prefix, digits that are no valid barcode join its lot codes, the
// panel's "Lot or code", and are returned, for the product's
// applicability to read them as the barcode they are. Anything else is
// reported and dropped.
func (n *notice) productCode(prod *rappel.Product, upc string, panel int, file string) (lot string) {
	c, err := guest.ReadPrintedCode(upc)
	switch {
	case err != nil && c.IsPrefix:
		n.problem("The UPC prefix %q of product %q (product_%d) in %s was dropped: %v.", truncate(upc), truncate(prod.Name), panel, file, err)
	case err != nil:
		n.problem("The UPC %q of product %q (product_%d) in %s was dropped: %v.", truncate(upc), truncate(prod.Name), panel, file, err)
	case c.Lot != "":
		if !slices.Contains(prod.LotCodes, c.Lot) {
			prod.LotCodes = append(prod.LotCodes, c.Lot)
			return c.Lot
		}
	default:
		prod.UPC, prod.UPCPrefix = c.UPC, c.Prefix
	}
	return ""
}

// isNone reports whether a value says there is none.
func isNone(s string) bool { return s == "" || strings.EqualFold(s, "none") }

// lotCodes splits a "Lot or code" value into codes. The contract names no
// separator; lists are written with ", " or "; " elsewhere, and a code
// itself holds neither.
func lotCodes(s string) []string {
	var out []string
	for _, part := range split(s, ";") {
		out = append(out, split(part, ",")...)
	}
	return out
}
