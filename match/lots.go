package match

import (
	"strings"

	"github.com/rappel-ca/rappel"
)

// decide is a product entry's verdict on an item's lot and date: covers's
// answer, with the entry's codes as printed.
func decide(e *entry, lot, date string) Verdict {
	covered, decided, why := covers(e.product, lot, date)
	v := Verdict{Verdict: Undecided, Why: why, Codes: e.codesPrinted()}
	switch {
	case covered:
		v.Verdict = Covered
	case decided:
		v.Verdict = NotCovered
	}
	return v
}

// covers says whether the notice's product entry p covers the lot and the
// date printed on an item, whether that could be decided, and why, in a
// sentence. Its answer is what makes a product that matched recalled
// (covered), check_lot (not decided) or no_match (decided, not covered).
//
// A notice covering every code of the product covers the item, lot or
// none, unless it puts a condition on it ("All codes where milk is not
// declared on the label"), which only the package can answer. A lot the
// entry lists exactly as printed covers the item, whatever the
// date: the item's lot is then the notice's own words ("Best Before
// 04/2027 Lot 60D0924"). Otherwise, when the entry's codes were read into
// something that selects units (rappel.Product.Applicability: lots,
// prefixes, serial numbers, best-before dates, models or DINs, or every
// code), its Covers decides, lots against lots and dates against dates.
// The sources read each code under its column's label, so a model or part
// number is a model, never a lot that would rule the item's lot out; an
// entry whose codes were read into nothing that selects (packing dates,
// harvest locations, prose) is decided by the codes as printed, and
// anything not listed there is left for a person to check (check_lot),
// never answered "not covered".
func covers(p *rappel.Product, lot, date string) (covered, decided bool, why string) {
	switch {
	case p == nil:
		return false, false, "The notice lists its product in words only, with no codes: compare the item with its description."
	case p.Applicability != nil && p.Applicability.AllCodes:
		if part := p.Applicability.AllCodesCondition(); part != "" {
			return false, false, "The notice covers every code of this product on a condition, " + rappel.Quote(part) + ": check the package for it."
		}
		return p.Applicability.Covers(lot, date)
	case lot == "" && date == "" && len(p.LotCodes) == 0:
		return false, false, "The item gives no lot or date, and the notice lists no codes for this product: read the notice to know which units it covers."
	case lot == "" && date == "":
		return false, false, "The item gives no lot or date: compare the package with the codes the notice lists."
	}
	if lot != "" {
		for _, l := range p.LotCodes {
			if strings.TrimSpace(l) == lot {
				return true, true, "The notice lists the lot " + rappel.Quote(lot) + " for this product."
			}
		}
	}
	if a := p.Applicability; a != nil && selects(a) {
		return a.Covers(lot, date)
	}
	given := "the lot " + rappel.Quote(lot)
	switch {
	case lot == "":
		given = "the date " + rappel.Quote(date)
	case date != "":
		given += " or the date " + rappel.Quote(date)
	}
	if len(p.LotCodes) == 0 {
		return false, false, "The notice lists no codes for this product: read it to know whether " + given + " is covered."
	}
	return false, false, "The notice's codes for this product, as printed, do not name " + given + " exactly: compare them with the package."
}

// selects reports whether a holds codes that tell units of the product
// apart, or says it covers every code.
func selects(a *rappel.Applicability) bool {
	return a.AllCodes || len(a.Lots)+len(a.LotPrefixes)+len(a.Serials)+len(a.BestBefore)+len(a.Models)+len(a.DINs) > 0
}

// codesPrinted returns the entry's lot and date codes as the notice prints
// them.
func (e *entry) codesPrinted() []string {
	if e.product == nil {
		return nil
	}
	return e.product.LotCodes
}
