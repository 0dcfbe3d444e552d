package page

import (
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// column is what an affected-products table's column says about a product.
type column int

const (
	colNone         column = iota
	colBrand               // Brand: the name's first part
	colName                // Product, Product name, Affected products: the name
	colSize                // Size, Product size, Strength
	colUPC                 // UPC: the barcodes
	colCodes               // Codes, Lot number, Serial numbers: lot codes, as printed
	colModel               // Model or catalogue number, Part number: codes the product is known by, with its lot codes
	colAuthorized          // Market authorization (DIN 02433230): with its lot codes, and the record's DIN
	colDescribe            // Colour, Dosage form, Model type: the name's details, "Colour: Red"
	colManufacturer        // Manufactured By: the record's manufacturer
	colImporter            // Importer in Canada: the record's importer
)

// columns maps a table's header, folded (columnKey), to its column: the
// headers of the live pages of every page type (testdata/FORMATS.md) and
// of the legacy ones, English and French.
var columns = map[string]column{
	// food (CFIA): Brand | Product | Size | UPC | Codes (or Code(s))
	"brand": colBrand, "brandname": colBrand, "marque": colBrand, "nomdemarque": colBrand,
	"product": colName, "produit": colName, "commonname": colName, "nomcommun": colName,
	"size": colSize, "format": colSize, "taille": colSize,
	"upc": colUPC, "cup": colUPC,
	"codes": colCodes, "code": colCodes, "codesonproduct": colCodes, "codeonproduct": colCodes,
	"codessurleproduit": colCodes, "codesurleproduit": colCodes,
	// health products (drugs): Brand | Product name | Market authorization | Dosage form | Strength | Lot number
	"productname": colName, "nomduproduit": colName,
	"marketauthorization": colAuthorized, "dosageform": colDescribe, "strength": colSize,
	"lotnumber": colCodes, "numerodelot": colCodes,
	// the headers of a drug table given as its first row (NID 82226)
	"dosageformandrouteofadministration": colDescribe, "countryofauthorizationandidentifyingcode": colModel,
	"manufacturedby": colManufacturer, "importerincanada": colImporter, "lotexpiry": colCodes,
	// medical devices: Affected products | Lot or serial number | Model or catalogue number
	"affectedproducts": colName, "lotorserialnumber": colCodes,
	"modelorcataloguenumber": colModel, "modelorcatalognumber": colModel,
	// consumer products: their own columns
	"partnumber": colModel, "modelnumber": colModel, "model": colModel, "stylenumber": colModel,
	"serialnumbers": colCodes, "serialnumber": colCodes, "itemdescription": colName, "modelname": colName,
	"colour": colDescribe, "colours": colDescribe, "color": colDescribe, "modeltype": colDescribe,
	// cannabis: Product name | Lot number | Product size | Packaging date | Printed values | Actual values
	"productsize": colSize, "packagingdate": colCodes, "printedvalues": colDescribe, "actualvalues": colDescribe,
}

// columnKey folds a header: FoldKey, then letters and digits only, so that
// "Code(s)", "Lot # / Expiry" and "Model or catalog number" read as the
// same header however they are spaced or punctuated.
func columnKey(h string) string {
	return strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			return r
		}
		return -1
	}, guest.FoldKey(h))
}

// cell is one table cell: its lines (cut at <br> and blocks) and the
// header of its column.
type cell struct {
	lines  []string
	header string
}

func (c cell) text() string { return strings.Join(c.lines, " ") }

// table reads one affected-products table: a product per row, or per
// barcode when a row's UPC cell holds several. The header is the table's
// <thead>, else its first row when that is all <th> or its cells are all
// known headers (a table without <thead>, NID 82226).
func (p *reader) table(t *node) {
	var rows [][]*node
	for _, tr := range findAll(t, isTag("tr")) {
		var cells []*node
		for _, c := range children(tr) {
			if c.Data == "td" || c.Data == "th" {
				cells = append(cells, c)
			}
		}
		if len(cells) > 0 {
			rows = append(rows, cells)
		}
	}
	if len(rows) == 0 {
		return
	}
	var header []string
	head := find(t, isTag("thead"))
	if head != nil || isHeaderRow(rows[0]) {
		for _, c := range rows[0] {
			header = append(header, text(c))
		}
		rows = rows[1:]
	}
	cols := make([]column, len(header))
	for i, h := range header {
		cols[i] = columns[columnKey(h)]
		if cols[i] == colNone && h != "" {
			p.n.problem("The column %q of the affected-products table of %s is none this normalizer knows; its cells were left out.", truncate(h), p.file)
		}
	}
	unnamed := false
	for _, r := range rows {
		cells := make([]cell, 0, len(r))
		for _, c := range r {
			cells = append(cells, cell{lines: lines(c)})
		}
		if len(header) == 0 && !unnamed {
			unnamed = true
			p.n.problem("The affected-products table of %s has no header; its cells were left out.", p.file)
		}
		values := rowValues{}
		empty := true
		for i, c := range cells {
			if len(c.lines) == 0 {
				continue
			}
			empty = false
			if i >= len(cols) {
				if !unnamed && len(header) > 0 {
					unnamed = true
					p.n.problem("A row of the affected-products table of %s has more cells than the table has headers; the cells past them were left out.", p.file)
				}
				continue
			}
			c.header = header[i]
			values.add(cols[i], c)
		}
		if empty {
			continue
		}
		p.tableRows++
		if len(header) > 0 {
			p.products(values)
		}
	}
}

// isHeaderRow reports whether a first row names the columns: its cells
// are all <th>, or all known headers.
func isHeaderRow(cells []*node) bool {
	th, known := true, true
	for _, c := range cells {
		th = th && c.Data == "th"
		known = known && columns[columnKey(text(c))] != colNone
	}
	return th || known
}

// rowValues are one row's cells by column.
type rowValues map[column][]cell

func (v rowValues) add(c column, x cell) { v[c] = append(v[c], x) }

// joined is the text of the row's cells of column c, joined by sep.
func (v rowValues) joined(c column, sep string) string {
	var parts []string
	for _, x := range v[c] {
		if t := x.text(); t != "" && !isNone(t) {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, sep)
}

// products makes a row's products.
func (p *reader) products(v rowValues) {
	brand := v.joined(colBrand, " ")
	if _, ok := v[colBrand]; !ok && len(p.brands) == 1 {
		brand = p.brands[0] // a table without a Brand column: the page's one brand
	}
	name := guest.ProductName(brand, v.joined(colName, " "))
	var details []string
	for _, x := range v[colDescribe] {
		if t := x.text(); t != "" && !isNone(t) {
			details = append(details, x.header+": "+t)
		}
	}
	if len(details) > 0 {
		name = strings.TrimSpace(name + " (" + strings.Join(details, "; ") + ")")
	}
	if name == "" || strings.HasPrefix(name, "(") {
		name = strings.TrimSpace(p.summaryProduct + " " + name)
	}
	if name == "" {
		p.n.problem("A row of the affected-products table of %s names no product; it was left out.", p.file)
		return
	}
	prod := rappel.Product{Name: name, Size: v.joined(colSize, ", ")}
	var labelled []rappel.LabelledCode
	for _, c := range []column{colCodes, colModel, colAuthorized} {
		for _, x := range v[c] {
			label := codeLabel(c, x.header)
			for _, code := range codeParts(x.lines) {
				if !slices.Contains(prod.LotCodes, code) {
					prod.LotCodes = append(prod.LotCodes, code)
					labelled = append(labelled, rappel.LabelledCode{Label: label, Text: code})
				}
			}
		}
	}
	for _, x := range v[colAuthorized] {
		if din, ok := strings.CutPrefix(strings.ToUpper(x.text()), "DIN "); ok && p.rec.DIN == "" && rappel.IsDigits(strings.TrimSpace(din)) {
			p.rec.DIN = strings.TrimSpace(din)
		}
	}
	for _, x := range v[colManufacturer] {
		p.firms.add(roleManufacturer, x.text())
	}
	for _, x := range v[colImporter] {
		p.firms.add(roleImporter, x.text())
	}
	var codes []string
	for _, x := range v[colUPC] {
		codes = append(codes, codeParts(x.lines)...)
	}
	p.barcodes(prod, labelled, codes)
}

// codeLabel is the label a cell's codes are read under (rappel.LabelledCode):
// its column's header when it names a kind of code ("Lot or serial
// number", "Part number", "Packaging date"), "Model" for the other
// columns of codes a product is known by ("Country of authorization and
// identifying code"), and none for a column of codes in general ("Codes",
// "Code(s)", "Lot # / Expiry"), whose cells print their own labels. A
// column "Codes" is a lot label to the parser, but its cells are free
// text: "Best Before 04/2027 Lot 60D0924", "Packed on 2026-06-01".
func codeLabel(c column, header string) string {
	switch {
	case c == colModel && rappel.KnownCodeLabel(header):
		return header
	case c == colModel:
		return "Model"
	case c == colCodes && labelledCodes[columnKey(header)]:
		return header
	}
	return ""
}

// labelledCodes are the headers, folded (columnKey), of the columns of
// codes whose header says what every code of the column is.
var labelledCodes = map[string]bool{
	"lotnumber": true, "numerodelot": true, "lotorserialnumber": true, "serialnumbers": true, "serialnumber": true,
	"packagingdate": true,
}

// barcodes adds prod once per barcode of its UPC cell, read by the barcode
// rules (guest.ReadPrintedCode): a barcode is its upc, a prefix its
// upc_prefix, digits that are no barcode join its lot codes, and text that
// is none of them (a best-before date put in the UPC column) joins its lot
// codes too, reported. No code at all is one product without one.
// labelled are the product's codes of its other columns, with their
// labels, from which prod gets its applicability (rappel.ParseLabelledCodes);
// what the UPC column holds is read under "UPC" (a product's barcode, which
// selects no unit, never a lot), and text of it that carries a label of its
// own ("BB 2026-07-01") by that label.
func (p *reader) barcodes(prod rappel.Product, labelled []rappel.LabelledCode, codes []string) {
	var upcs []rappel.Product
	keep := func(code string) {
		if !slices.Contains(prod.LotCodes, code) {
			prod.LotCodes = append(prod.LotCodes, code)
			labelled = append(labelled, rappel.LabelledCode{Label: "UPC", Text: code})
		}
	}
	for _, code := range codes {
		c, err := guest.ReadPrintedCode(code)
		switch {
		case err != nil:
			p.n.problem("The UPC cell %q of product %q in %s is no barcode (%v); it was kept with the product's lot codes.", truncate(code), truncate(prod.Name), p.file, err)
			keep(code)
		case c.Lot != "":
			keep(c.Lot)
		case c.Prefix != "":
			q := prod
			q.UPCPrefix = c.Prefix
			upcs = append(upcs, q)
		default:
			q := prod
			q.UPC = c.UPC
			upcs = append(upcs, q)
		}
	}
	if len(prod.LotCodes) > 0 {
		a := rappel.ParseLabelledCodes(labelled)
		a.Text = "" // the lot codes joined, which Assemble gives back: the record carries them once
		prod.Applicability = &a
	}
	if len(upcs) == 0 {
		p.rec.ProductList = append(p.rec.ProductList, prod)
		return
	}
	for _, q := range upcs {
		q.LotCodes = prod.LotCodes // lot text read after the first barcode too
		q.Applicability = prod.Applicability
		p.rec.ProductList = append(p.rec.ProductList, q)
	}
}

// codeParts cuts a cell's lines into codes at "; " and keeps each as
// printed; a part saying there is none is left out.
func codeParts(lines []string) []string {
	var out []string
	for _, l := range lines {
		for _, part := range strings.Split(l, ";") {
			if part = strings.TrimSpace(part); part != "" && !isNone(part) {
				out = append(out, part)
			}
		}
	}
	return out
}

// noneWords say a cell holds nothing, folded.
var noneWords = map[string]bool{"none": true, "aucun": true, "aucune": true, "n/a": true, "s.o.": true, "-": true, "not applicable": true, "sans objet": true}

// isNone reports whether a value says there is none.
func isNone(s string) bool { return s == "" || noneWords[guest.FoldKey(strings.TrimSuffix(s, "."))] }
