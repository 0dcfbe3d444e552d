package rappel

import "strings"

// The tiers of a record's searched text, in the order SearchedText gives
// them: GET /recall weighs a word by the tier it is found in, what the
// record is about first, what it advises last (docs/api.md, "Searching").
const (
	// TextMain is the title, the products' names and description, makes
	// and models, and the identifiers.
	TextMain = iota
	// TextParties is the hazard and who made, sold or recalled it.
	TextParties
	// TextLabels is the classification: categories, systems, the alert's
	// type, places of distribution and origin.
	TextLabels
	// TextAdvice is what the notice tells people to do.
	TextAdvice
)

// SearchedText calls add with each text of r that GET /recall searches
// (the one list of them: the index builds from it, and the judged search
// sets read it to decide what a search should find), tier by tier, with
// its language: LangEN or LangFR for a translation's text, "" for text
// both languages search (names, identifiers, firms). Contact text is
// left out; empty texts are skipped.
func (r *Record) SearchedText(add func(tier int, lang, text string)) {
	put := func(tier int, lang, text string) {
		if text != "" {
			add(tier, lang, text)
		}
	}
	each := func(tier int, f func(tr *Translation) []string) {
		for _, t := range []struct {
			lang string
			tr   *Translation
		}{{LangEN, r.Translations.EN}, {LangFR, r.Translations.FR}} {
			if t.tr != nil {
				for _, text := range f(t.tr) {
					put(tier, t.lang, text)
				}
			}
		}
	}
	both := func(tier int, texts ...string) {
		for _, text := range texts {
			put(tier, "", text)
		}
	}

	each(TextMain, func(tr *Translation) []string { return []string{tr.Title, tr.ProductDescription} })
	for _, p := range r.ProductList {
		both(TextMain, p.Name)
		if g, err := ParseGTIN(p.UPC); err == nil {
			// Any printed form of the code finds it through its GTIN-14.
			both(TextMain, string(g), StripBarcode(p.UPC))
		}
		both(TextMain, p.LotCodes...)
	}
	for _, m := range r.AffectedModels {
		both(TextMain, m.Make+" "+m.Model)
	}
	both(TextMain, r.VehicleMake, r.VehicleModel, r.RecallID, r.ManufacturerRecallNumber, r.IdentificationNumber, r.UPC,
		r.DIN, r.NPN, r.CFIAID)
	// A number written abbreviated in a list of the manufacturer's
	// ("CR5350/5351") is searched written out too, so that each of them
	// finds its recall.
	for _, n := range RecallNumbers(r.ManufacturerRecallNumber) {
		if !strings.Contains(r.ManufacturerRecallNumber, n) {
			both(TextMain, n)
		}
	}

	each(TextParties, func(tr *Translation) []string { return []string{tr.HazardDescription} })
	both(TextParties, r.RecallingFirm, r.Manufacturer, r.Importer)
	both(TextParties, r.Companies...)
	both(TextParties, r.Allergens...)

	each(TextLabels, func(tr *Translation) []string { return []string{tr.Category, tr.System, tr.VehicleCategory} })
	both(TextLabels, r.Category, r.AlertType, r.System, r.VehicleCategory, r.PlaceOfOrigin, r.Municipality)
	both(TextLabels, r.Categories...)
	both(TextLabels, r.Distribution...)

	each(TextAdvice, func(tr *Translation) []string { return []string{tr.WhatToDo} })
}
