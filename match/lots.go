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
// It does not yet decide with the entry's parsed codes
// (rappel.Product.Applicability): the page and detail plugins put lot,
// model, part, DIN and date cells alike into lot_codes, without their
// column labels, so a model number reads as a lot and a part number rules
// other lots out; on the judged matching set, deciding with
// Applicability.Covers made 10 of 40 recalled answers wrong (precision
// 0.750). Until the plugins keep each code's label, a lot is covered only
// when the entry lists it exactly as printed, and anything else is left
// for a person to check (check_lot), never answered "not covered".
func covers(p *rappel.Product, lot, date string) (covered, decided bool, why string) {
	switch {
	case p == nil:
		return false, false, "The notice lists its product in words only, with no codes: compare the item with its description."
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

// codesPrinted returns the entry's lot and date codes as the notice prints
// them.
func (e *entry) codesPrinted() []string {
	if e.product == nil {
		return nil
	}
	return e.product.LotCodes
}
