package rappel

import (
	"slices"
	"strings"
)

// The coverage says, per year, how many of the notices that should list
// products do, and how many list a barcode: the products and barcodes of
// Health Canada's and CFIA's notices come from a per-notice document (the
// old detail API, the recall pages), and when that source stops the
// notices still come, from the dump, without their products. Nothing fails
// then; only the shares fall, the day the first such notice arrives.
//
// Transport Canada's vehicle recalls are left out: they list affected
// models, never products or barcodes, from a file of their own.

// CoverageAgencies are the agencies whose notices the coverage counts.
var CoverageAgencies = Vocabulary{AgencyCFIA, AgencyHealthCanada}

// CoverageYears is how many years /health and the metrics report: the
// newest that hold a notice. A gap opens in the newest; older years change
// little, and GET /recall/stats counts them when asked.
const CoverageYears = 10

// CoverageMark is what one record counts for in the coverage.
type CoverageMark struct {
	// Notice is set for a record the coverage counts: a notice of one of
	// CoverageAgencies that is not a vehicle recall.
	Notice bool
	// Products is set for a notice listing at least one product.
	Products bool
	// Barcode is set for a notice GET /recall/upc finds by a barcode
	// (HasBarcode).
	Barcode bool
}

// CoverageOf returns what r counts for; a record that is not a Notice
// counts for nothing.
func CoverageOf(r *Record) CoverageMark {
	if !CoverageAgencies.Has(r.Agency) || r.RecallType == TypeVehicle {
		return CoverageMark{}
	}
	return CoverageMark{Notice: true, Products: len(r.ProductList) > 0, Barcode: r.HasBarcode()}
}

// GTINs returns the GTIN-14 of every product's upc and of the record's own
// upc, which may list several codes separated by commas or semicolons:
// the codes GET /recall/upc finds the record by. Codes ParseGTIN refuses
// are skipped.
func (r *Record) GTINs() []GTIN {
	var gs []GTIN
	parse := func(s string) {
		if g, err := ParseGTIN(s); err == nil {
			gs = append(gs, g)
		}
	}
	for _, p := range r.ProductList {
		if p.UPC != "" {
			parse(p.UPC)
		}
	}
	for _, s := range strings.FieldsFunc(r.UPC, func(c rune) bool { return c == ',' || c == ';' }) {
		parse(s)
	}
	return gs
}

// HasBarcode reports whether GET /recall/upc finds r by some barcode: one
// of its GTINs, or a code starting with a product's upc_prefix
// (UPCPrefixGTINs).
func (r *Record) HasBarcode() bool {
	if len(r.GTINs()) > 0 {
		return true
	}
	return slices.ContainsFunc(r.ProductList, func(p Product) bool { return UPCPrefixGTINs(p.UPCPrefix) != nil })
}

// YearCoverage is the coverage of one year of event_date (the year GET
// /recall/stats?group_by=year counts a record in).
type YearCoverage struct {
	Year int
	// Notices counts the year's records CoverageOf marks as notices;
	// WithProducts and WithBarcode those of them with products and with
	// a barcode.
	Notices, WithProducts, WithBarcode int
}

// add adds n records marked m to c (n is -1 to take one away).
func (c *YearCoverage) add(m CoverageMark, n int) {
	if !m.Notice {
		return
	}
	c.Notices += n
	if m.Products {
		c.WithProducts += n
	}
	if m.Barcode {
		c.WithBarcode += n
	}
}

// ProductsShare is the share of the year's notices with products, from 0
// to 1; 0 for a year without notices.
func (c YearCoverage) ProductsShare() float64 { return share(c.WithProducts, c.Notices) }

// BarcodeShare is the share of the year's notices with a barcode.
func (c YearCoverage) BarcodeShare() float64 { return share(c.WithBarcode, c.Notices) }

func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// CoverageTable adds up the coverage of records year by year.
type CoverageTable map[int]*YearCoverage

// Add adds n records (-1 to take one away) marked m to the year.
func (t CoverageTable) Add(year int, m CoverageMark, n int) {
	if !m.Notice {
		return
	}
	c := t[year]
	if c == nil {
		c = &YearCoverage{Year: year}
		t[year] = c
	}
	c.add(m, n)
}

// AddYear adds the counts of c to its year.
func (t CoverageTable) AddYear(c YearCoverage) {
	y := t[c.Year]
	if y == nil {
		y = &YearCoverage{Year: c.Year}
		t[c.Year] = y
	}
	y.Notices += c.Notices
	y.WithProducts += c.WithProducts
	y.WithBarcode += c.WithBarcode
}

// Years returns the years holding a notice, newest first.
func (t CoverageTable) Years() []YearCoverage {
	out := make([]YearCoverage, 0, len(t))
	for _, c := range t {
		if c.Notices > 0 {
			out = append(out, *c)
		}
	}
	slices.SortFunc(out, func(a, b YearCoverage) int { return b.Year - a.Year })
	return out
}

// ReportedCoverage returns the years /health and the metrics report of
// years (newest first, as Years returns them): the CoverageYears newest.
func ReportedCoverage(years []YearCoverage) []YearCoverage {
	return years[:min(len(years), CoverageYears)]
}

// CoverageSource gives a dataset's coverage, worked out when the dataset
// was built: a call costs no work per record.
type CoverageSource interface {
	// Coverage returns every year of event_date holding a notice, newest
	// first. The caller must not change it.
	Coverage() []YearCoverage
}
