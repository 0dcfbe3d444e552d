// Package match screens a retailer's catalog against the recalls a node
// serves (POST /recall/match, docs/api.md): each item of a batch, any of a
// barcode, a brand, a product name, a model, a lot or date code and a
// vehicle's model year, is matched against the notices' products and
// affected vehicles, and answered with a status and the notices that made
// it:
//
//   - recalled: the item's barcode, or its brand and model (a vehicle's
//     make, model and year), are those of a product of a notice, and the
//     notice's codes cover the item's lot or date, or the notice covers
//     every code;
//   - check_lot: the product is the notice's, but the item gives no lot or
//     date, or the notice's codes cannot decide it;
//   - possible: a weaker match worth a person's look (the brand and the
//     product's words, without a barcode or model to confirm them);
//   - no_match: no notice of the dataset names the item, or those that
//     name its product do not cover its lot, date or model year.
//
// A notice of another brand is never recalled: words find candidates only
// among the notices holding the item's brand, and a barcode of the notice
// under another brand is at most check_lot. Each candidate has a
// confidence, calibrated on the judged matching set
// (testdata/judged-match, confidence.go).
//
// The package reads the records through the domain's interfaces (the
// snapshot, the store's barcode and vehicle lookups) and a word lookup of
// the read index (WordIndex); it knows no HTTP: the edge decodes the
// batch, calls Screen and encodes what it returns.
package match

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// Statuses of an item, strongest first.
const (
	StatusRecalled = "recalled"
	StatusCheckLot = "check_lot"
	StatusPossible = "possible"
	StatusNoMatch  = "no_match"
)

// Statuses lists them, strongest first.
var Statuses = []string{StatusRecalled, StatusCheckLot, StatusPossible, StatusNoMatch}

// rank is a status's place in Statuses: lower is stronger.
func rank(status string) int { return slices.Index(Statuses, status) }

// Verdicts of a candidate's applicability: how the notice's product entry
// judges the item's own lot or date.
const (
	Covered    = "covered"
	NotCovered = "not_covered"
	Undecided  = "undecided"
)

// Item is one product of a catalog, as the edge decoded and checked it
// (rappel.CatalogItem): every field is optional, but an item holds at
// least a barcode, a brand, a name or a model.
type Item = rappel.CatalogItem

// Result is the answer for one item: its status, the notices that made
// it, strongest first, and for no_match a sentence naming the dataset's
// time.
type Result struct {
	Status     string
	Message    string
	Candidates []Candidate
}

// Candidate is one notice an item matched.
type Candidate struct {
	RecordID   string `json:"record_id"`
	RecallID   string `json:"recall_id"`
	RecallType string `json:"recall_type"`
	Title      string `json:"title"`
	// Status is what this notice alone says of the item.
	Status string `json:"status"`
	// Confidence is how often a candidate made of the same evidence was
	// the item's notice in the judged matching set (confidence.go).
	Confidence float64 `json:"confidence"`
	// Matched names the item's fields that matched: gtin, gtin_prefix,
	// brand, model, name, make, year, lot.
	Matched []string `json:"matched"`
	// Product is the notice's product entry matched, as printed.
	Product string `json:"product,omitempty"`
	// Evidence names the kind of evidence the candidate is made of, what
	// its confidence is calibrated for (confidence.go).
	Evidence string `json:"evidence"`
	// Why says in a sentence what matched.
	Why string `json:"why"`
	// Applicability is the product entry's verdict on the item's lot or
	// date.
	Applicability Verdict `json:"applicability"`
	// date is the notice's event_date: among equals, the newest first.
	date string
}

// Verdict is how a notice's product entry judges an item's lot or date
// (or a vehicle's model year): Covered, NotCovered or Undecided, why in a
// sentence, and the entry's codes as printed, for a person to compare
// with the package.
type Verdict struct {
	Verdict string   `json:"verdict"`
	Why     string   `json:"why"`
	Codes   []string `json:"codes,omitempty"`
}

// MaxCandidates is the most candidates an item is answered with.
const MaxCandidates = 5

// WordIndex finds records by the words of their text: the read index
// (kv/index.View).
type WordIndex interface {
	// RecordIDsWithWords returns the records whose text holds every
	// word of required, at most limit: when more do, those holding most
	// words of optional, then the newest.
	RecordIDsWithWords(required, optional []string, limit int) ([]string, error)
	// WordPostings returns the posting entries a lookup of words reads.
	WordPostings(words []string) int
}

// Matcher screens items against one snapshot's records.
type Matcher struct {
	// Records are the snapshot's records, prepared as matched. Required.
	Records *Cache
	// Lookup finds records by barcode and vehicle. Required.
	Lookup rappel.Lookup
	// Words finds records by words; nil matches barcodes and vehicles
	// only.
	Words WordIndex
}

// Screen answers items, in order. It returns an error only when a lookup
// fails or ctx ends.
func (m *Matcher) Screen(ctx context.Context, items []Item) ([]Result, error) {
	asOf := m.Records.snap.Info().UpdatedAt.UTC().Format(time.RFC3339)
	out := make([]Result, len(items))
	b := &batch{m: m, looked: map[string][]string{}}
	for i := range items {
		if i%16 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		res, err := b.screen(ctx, plan(&items[i]))
		if err != nil {
			return nil, err
		}
		if res.Status == StatusNoMatch {
			res.Message = noMatchMessage(asOf, len(res.Candidates))
		}
		out[i] = res
	}
	return out, nil
}

// noMatchMessage is the sentence of a no_match answer.
func noMatchMessage(asOf string, notCovered int) string {
	if notCovered > 0 {
		return fmt.Sprintf("No recall in the dataset as of %s covers this item: the notices listed name its product for other lots, dates or model years. "+
			"Recalls published after that time are not included; screen the catalog again after the next refresh.", asOf)
	}
	return fmt.Sprintf("No recall in the dataset as of %s matched this item. "+
		"Recalls published after that time are not included, and an item described by a few words only may be missed; screen the catalog again after the next refresh.", asOf)
}

// itemPlan is an item as matched: its words and codes.
type itemPlan struct {
	it    *Item
	brand []string // content words of the brand
	name  []string // content words of the name the brand does not hold
	model string   // the model as a code, "" when it cannot name one
	make  string   // the brand as a vehicle's make is compared
	vmod  string   // the model as a vehicle's model is compared
}

func plan(it *Item) *itemPlan {
	p := &itemPlan{it: it, brand: words(it.Brand), make: normalMake(it.Brand), vmod: code(it.Model)}
	for _, w := range words(it.Name) {
		if !contains(p.brand, w) {
			p.name = append(p.name, w)
		}
	}
	if c := code(it.Model); isModelCode(c) {
		p.model = c
	}
	return p
}

// lookups are the word lookups an item makes: with a brand, the notices
// of the brand and model, and those of the brand holding most words of
// the name; without one, those printing the model, and those holding
// every word of the name.
func (p *itemPlan) lookups() []wordLookup {
	var modelWords []string
	for _, w := range allWords(p.it.Model) {
		if len(w) >= 2 && !contains(modelWords, w) {
			modelWords = append(modelWords, w)
		}
	}
	var out []wordLookup
	if len(modelWords) > 0 && (len(p.brand) > 0 || p.model != "") {
		out = append(out, wordLookup{required: slices.Concat(p.brand, modelWords)})
	}
	switch {
	case len(p.brand) > 0:
		out = append(out, wordLookup{required: p.brand, optional: p.name})
	case len(p.name) >= 2:
		out = append(out, wordLookup{required: p.name})
	}
	return out
}

// wordLookup is one lookup of WordIndex.
type wordLookup struct{ required, optional []string }

// key names the lookup in a batch's memo.
func (l wordLookup) key() string {
	return strings.Join(l.required, " ") + "|" + strings.Join(l.optional, " ")
}

// lookupLimit is the most notices a word lookup gives.
const lookupLimit = 8

// batch is the screening of one batch: a word lookup of its items is run
// once (a catalog repeats its brands).
type batch struct {
	m      *Matcher
	looked map[string][]string
}

// lookup returns what the word lookup l finds.
func (b *batch) lookup(l wordLookup) ([]string, error) {
	key := l.key()
	if ids, ok := b.looked[key]; ok {
		return ids, nil
	}
	ids, err := b.m.Words.RecordIDsWithWords(l.required, l.optional, lookupLimit)
	if err != nil {
		return nil, fmt.Errorf("looking up words: %w", err)
	}
	b.looked[key] = ids
	return ids, nil
}

// screen answers one item.
func (b *batch) screen(ctx context.Context, p *itemPlan) (Result, error) {
	m := b.m
	found := map[string]*Candidate{}
	var order []string
	keep := func(c *Candidate) {
		if c == nil {
			return
		}
		cur, ok := found[c.RecordID]
		if !ok {
			order = append(order, c.RecordID)
		}
		if !ok || better(c, cur) {
			found[c.RecordID] = c
		}
	}
	if p.it.GTIN != "" {
		if err := m.byBarcode(ctx, p, keep); err != nil {
			return Result{}, err
		}
	}
	if p.make != "" && p.vmod != "" && p.it.Year > 0 {
		ids, err := m.Lookup.RecordIDsByVehicle(ctx, p.it.Brand, "", p.it.Year)
		if err != nil {
			return Result{}, fmt.Errorf("looking up vehicles: %w", err)
		}
		for _, id := range ids {
			if r := m.Records.record(id); r != nil {
				keep(vehicleCandidate(p, r))
			}
		}
	}
	// Words find the notices a barcode or a vehicle's year did not name
	// (products listed without either, lots of a model), and the weaker
	// matches; once those name the product, they would add only those.
	if m.Words != nil && !slices.ContainsFunc(order, func(id string) bool { return strong(found[id]) }) {
		seen := map[string]bool{}
		for _, l := range p.lookups() {
			ids, err := b.lookup(l)
			if err != nil {
				return Result{}, err
			}
			for _, id := range ids {
				if seen[id] {
					continue
				}
				seen[id] = true
				if r := m.Records.record(id); r != nil {
					keep(wordsCandidate(p, r))
				}
			}
		}
	}
	cands := make([]Candidate, 0, len(order))
	for _, id := range order {
		cands = append(cands, *found[id])
	}
	slices.SortStableFunc(cands, func(a, b Candidate) int {
		if ra, rb := rank(a.Status), rank(b.Status); ra != rb {
			return ra - rb
		}
		switch {
		case a.Confidence != b.Confidence:
			return cmp.Compare(b.Confidence, a.Confidence)
		case a.date != b.date:
			return strings.Compare(b.date, a.date)
		}
		return strings.Compare(a.RecordID, b.RecordID)
	})
	if len(cands) > MaxCandidates {
		cands = cands[:MaxCandidates]
	}
	res := Result{Status: StatusNoMatch, Candidates: cands}
	if len(cands) > 0 {
		res.Status = cands[0].Status
	}
	return res, nil
}

// strong reports whether c names the item's product by a barcode or a
// vehicle's make, model and year.
func strong(c *Candidate) bool {
	switch c.Evidence {
	case classGTIN, classGTINPrefix, classVehicle, classVehicleNoYear:
		return c.Status != StatusNoMatch || c.Evidence == classVehicle
	}
	return false
}

// better reports whether a says more of its record than b.
func better(a, b *Candidate) bool {
	if ra, rb := rank(a.Status), rank(b.Status); ra != rb {
		return ra < rb
	}
	return a.Confidence > b.Confidence
}

// byBarcode keeps the candidates of the item's barcode: the products
// printing it, then those whose barcodes start with a prefix it starts
// with (items sold by weight).
func (m *Matcher) byBarcode(ctx context.Context, p *itemPlan, keep func(*Candidate)) error {
	g := p.it.GTIN
	ids, err := m.Lookup.RecordIDsByGTIN(ctx, g)
	if err != nil {
		return fmt.Errorf("looking up barcode %s: %w", g, err)
	}
	for _, id := range ids {
		r := m.Records.record(id)
		if r == nil {
			continue
		}
		e := r.entryOfGTIN(g)
		brandOK := r.hasBrand(p.brand)
		class, matched := classGTIN, []string{"gtin"}
		why := fmt.Sprintf("The barcode is that of %s in this notice%s.", rappel.Quote(e.name), printed(e))
		if len(p.brand) > 0 && brandOK {
			matched = append(matched, "brand")
		} else if !brandOK {
			class = classGTINOtherBrand
			why = fmt.Sprintf("The barcode is that of %s in this notice%s, but the brand %s is not the notice's: check the package against the notice.",
				rappel.Quote(e.name), printed(e), rappel.Quote(p.it.Brand))
		}
		keep(productCandidate(p, r, e, class, matched, why))
	}
	ids, err = m.Lookup.RecordIDsByGTINPrefix(ctx, g)
	if err != nil {
		return fmt.Errorf("looking up the prefixes of barcode %s: %w", g, err)
	}
	for _, id := range ids {
		r := m.Records.record(id)
		if r == nil {
			continue
		}
		for i := range r.entries {
			e := &r.entries[i]
			if !slices.ContainsFunc(e.prefixes, func(pre string) bool { return strings.HasPrefix(string(g), pre) }) {
				continue
			}
			class, matched := classGTINPrefix, []string{"gtin_prefix"}
			why := fmt.Sprintf("The barcode starts with %s, the start of the in-store codes of %s in this notice (an item sold by weight).",
				rappel.Quote(e.product.UPCPrefix), rappel.Quote(e.name))
			if !r.hasBrand(p.brand) {
				class = classGTINPrefixOtherBrand
				why = fmt.Sprintf("The barcode starts with %s, the start of the in-store codes of %s in this notice, but the brand %s is not the notice's; in-store codes are the store's own, so check the product.",
					rappel.Quote(e.product.UPCPrefix), rappel.Quote(e.name), rappel.Quote(p.it.Brand))
			} else if len(p.brand) > 0 {
				matched = append(matched, "brand")
			}
			keep(productCandidate(p, r, e, class, matched, why))
			break
		}
	}
	return nil
}

// printed says how the notice prints an entry's barcode.
func printed(e *entry) string {
	if e.product == nil || e.product.UPC == "" {
		return ""
	}
	return " (printed " + rappel.Quote(e.product.UPC) + ")"
}

// entryOfGTIN returns the entry printing g: the first whose barcode it is,
// else (the record's own upc) the first entry.
func (r *record) entryOfGTIN(g rappel.GTIN) *entry {
	for i := range r.entries {
		if r.entries[i].gtin == g {
			return &r.entries[i]
		}
	}
	return &r.entries[0]
}

// productCandidate is the candidate of an item whose product the evidence
// names: the entry's codes decide its lot or date. A barcode under
// another brand is at most check_lot, a prefix under another brand at
// most possible.
func productCandidate(p *itemPlan, r *record, e *entry, class string, matched []string, why string) *Candidate {
	v := decide(e, p.it.Lot, p.it.Date)
	status := StatusCheckLot
	switch v.Verdict {
	case Covered:
		status = StatusRecalled
		matched = append(matched, "lot")
	case NotCovered:
		status = StatusNoMatch
	}
	switch class {
	case classGTINOtherBrand:
		if status == StatusRecalled {
			status = StatusCheckLot
		}
	case classGTINPrefixOtherBrand, classModelOnly:
		if status != StatusNoMatch {
			status = StatusPossible
		}
	}
	return newCandidate(p, r, e, class, status, matched, why, v)
}

// newCandidate assembles a candidate.
func newCandidate(p *itemPlan, r *record, e *entry, class, status string, matched []string, why string, v Verdict) *Candidate {
	c := &Candidate{RecordID: r.rec.RecordID, RecallID: r.rec.RecallID, RecallType: r.rec.RecallType, Title: r.title(p.it.Lang),
		Status: status, Confidence: confidence(class), Matched: matched, Evidence: class, Why: why, Applicability: v, date: r.rec.EventDate}
	if e != nil && e.index >= 0 {
		c.Product = e.name
	}
	if status == StatusNoMatch {
		c.Confidence = 0
	}
	return c
}

// vehicleCandidate is the candidate of a vehicle recall for an item with a
// make, a model and a model year, or nil when the recall lists none of
// them together.
func vehicleCandidate(p *itemPlan, r *record) *Candidate {
	years, near := r.years(p)
	if len(years) == 0 {
		if near != "" {
			return nearVehicle(p, r, near)
		}
		return nil
	}
	name := strings.TrimSpace(years[0].m.Make + " " + years[0].m.Model)
	list := yearList(years)
	if p.it.Year > 0 && !slices.ContainsFunc(years, func(v vehicle) bool { return v.year == p.it.Year }) {
		v := Verdict{Verdict: NotCovered, Why: fmt.Sprintf("The recall lists %s for model years %s, not %d.", name, list, p.it.Year)}
		return newCandidate(p, r, nil, classVehicle, StatusNoMatch, []string{"make", "model"}, v.Why, v)
	}
	if p.it.Year == 0 {
		v := Verdict{Verdict: Undecided, Why: fmt.Sprintf("The item gives no model year; the recall lists %s for model years %s.", name, list)}
		return newCandidate(p, r, nil, classVehicleNoYear, StatusCheckLot, []string{"make", "model"},
			fmt.Sprintf("The make and model are those of %s in this recall.", name), v)
	}
	v := Verdict{Verdict: Covered, Why: fmt.Sprintf("The recall lists %s for model year %d. It names models and years, not vehicles: the manufacturer's notice to owners, by VIN, says which of them are affected.", name, p.it.Year)}
	return newCandidate(p, r, nil, classVehicle, StatusRecalled, []string{"make", "model", "year"},
		fmt.Sprintf("The make, model and model year are those of %s (%d) in this recall.", name, p.it.Year), v)
}

// nearVehicle is the candidate of a recall listing a model of the item's
// make whose name starts with the item's, or that the item's starts with.
func nearVehicle(p *itemPlan, r *record, near string) *Candidate {
	v := Verdict{Verdict: Undecided, Why: "The model is not the recall's as written; compare it with the vehicle's."}
	return newCandidate(p, r, nil, classVehicleNear, StatusPossible, []string{"make"},
		fmt.Sprintf("The recall lists %s, a model near the item's %s.", rappel.Quote(near), rappel.Quote(p.it.Model)), v)
}

// years returns the record's affected models of the item's make and
// model, and when none, the name of one of the make whose model begins
// with the item's model or the other way round.
func (r *record) years(p *itemPlan) (same []vehicle, near string) {
	for _, v := range r.vehicles {
		if v.make != p.make {
			continue
		}
		switch {
		case v.model == p.vmod:
			same = append(same, v)
		case near == "" && p.vmod != "" && v.model != "" && wordPrefix(v.m.Model, p.it.Model):
			near = strings.TrimSpace(v.m.Make + " " + v.m.Model)
		}
	}
	return same, near
}

// wordPrefix reports whether one of a and b is the other's first words.
func wordPrefix(a, b string) bool {
	wa, wb := strings.Fields(strings.ToUpper(a)), strings.Fields(strings.ToUpper(b))
	if len(wa) > len(wb) {
		wa, wb = wb, wa
	}
	return len(wa) > 0 && slices.Equal(wa, wb[:len(wa)])
}

// yearList writes the model years of vs as ranges: "2016–2021",
// "2008, 2010–2011".
func yearList(vs []vehicle) string {
	var ys []int
	for _, v := range vs {
		if v.year > 0 && !slices.Contains(ys, v.year) {
			ys = append(ys, v.year)
		}
	}
	slices.Sort(ys)
	var parts []string
	for i := 0; i < len(ys); {
		j := i
		for j+1 < len(ys) && ys[j+1] == ys[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, strconv.Itoa(ys[i])+"–"+strconv.Itoa(ys[j]))
		} else {
			parts = append(parts, strconv.Itoa(ys[i]))
		}
		i = j + 1
	}
	if len(parts) == 0 {
		return "not given"
	}
	return strings.Join(parts, ", ")
}

// wordsCandidate is the candidate of a record a word lookup found, or nil:
// a notice of another brand, one that names its models and not the
// item's, or one that prints its barcodes and not the item's, is none.
func wordsCandidate(p *itemPlan, r *record) *Candidate {
	if len(r.vehicles) > 0 && p.make != "" && p.vmod != "" {
		if c := vehicleCandidate(p, r); c != nil {
			return c
		}
	}
	if !r.hasBrand(p.brand) {
		return nil // another brand's notice
	}
	brand := rappel.Quote(p.it.Brand)
	if p.it.GTIN != "" {
		if ei, ok := r.barcodeInText(p.it.GTIN); ok {
			matched := []string{"gtin"}
			if len(p.brand) > 0 {
				matched = append(matched, "brand")
			}
			return productCandidate(p, r, &r.entries[max(ei, 0)], classGTIN, matched,
				"The barcode is printed in this notice's text, which the store's barcode index does not read.")
		}
		if r.barcodes {
			return nil // every product of the notice prints its barcode, none the item's
		}
	}
	if p.model != "" {
		if ei, ok := r.codeMap()[p.model]; ok {
			e := &r.entries[max(ei, 0)]
			if len(p.brand) == 0 {
				return productCandidate(p, r, e, classModelOnly, []string{"model"},
					fmt.Sprintf("The model %s is printed in this notice (%s); the item names no brand to confirm it.", rappel.Quote(p.it.Model), rappel.Quote(e.name)))
			}
			return productCandidate(p, r, e, classBrandModel, []string{"brand", "model"},
				fmt.Sprintf("The brand %s and the model %s are those of %s in this notice.", brand, rappel.Quote(p.it.Model), rappel.Quote(e.name)))
		}
		if r.printsModels() {
			return nil // the notice names its models, and not this one
		}
	}
	switch {
	case len(p.name) > 0:
		e, found := r.bestEntry(p.name)
		share := float64(len(found)) / float64(len(p.name))
		if len(p.brand) > 0 && share >= 0.5 {
			return wordsOnly(p, r, e, classBrandName, []string{"brand", "name"},
				fmt.Sprintf("The brand %s and the words %s are in this notice; no barcode or model confirms it is the same product.", brand, rappel.QuoteList(found, "and")))
		}
		if len(p.brand) == 0 && share == 1 && len(p.name) >= 2 {
			return wordsOnly(p, r, e, classNameOnly, []string{"name"},
				fmt.Sprintf("The words %s are in this notice; the item names no brand or barcode to confirm it is the same product.", rappel.QuoteList(found, "and")))
		}
	case len(p.brand) > 0 && p.it.Model == "":
		return wordsOnly(p, r, &r.entries[0], classBrandOnly, []string{"brand"},
			fmt.Sprintf("The brand %s is in this notice; the item gives nothing else to compare.", brand))
	}
	return nil
}

// wordsOnly is a possible candidate: words matched, nothing confirms the
// product, so its codes are shown without a verdict.
func wordsOnly(p *itemPlan, r *record, e *entry, class string, matched []string, why string) *Candidate {
	v := decide(e, p.it.Lot, p.it.Date)
	if v.Verdict == Covered {
		matched = append(matched, "lot")
	}
	v.Verdict = Undecided
	v.Why = "Words alone do not say the product is the notice's: compare the package with the notice before reading its codes."
	if len(e.codesPrinted()) > 0 {
		v.Why = "Words alone do not say the product is the notice's: compare the package with the notice, then its codes with those listed."
	}
	return newCandidate(p, r, e, class, StatusPossible, matched, why, v)
}

// hasBrand reports whether the notice names the brand of words: it holds
// them all, or, for a brand of three words or more, all but one and the
// first ("Amy's Kitchen" for a notice of "Amy's" does not: a brand of two
// words is held whole). No brand is held by every notice.
func (r *record) hasBrand(brand []string) bool {
	if r.words.hasAll(brand) {
		return true
	}
	if len(brand) < 3 {
		return false
	}
	n, _ := r.words.count(brand)
	_, first := r.words[brand[0]]
	return first && n >= len(brand)-1
}

// barcodeInText returns the entry (-1: the titles or the product
// description) whose text prints the barcode g in one of its forms: its
// GTIN-14, and without the leading zeros its EAN-13, UPC-A and 11-digit
// printings drop.
func (r *record) barcodeInText(g rappel.GTIN) (int, bool) {
	s := string(g)
	for i := 0; i <= 3 && i < len(s); i++ {
		if i > 0 && s[i-1] != '0' {
			break
		}
		if ei, ok := r.codeMap()[s[i:]]; ok {
			return ei, true
		}
	}
	return 0, false
}

// bestEntry returns the entry whose own words hold most of ws (the
// first of those that hold as many), and the words of ws the entry or the
// notice's titles and names hold.
func (r *record) bestEntry(ws []string) (*entry, []string) {
	best, bestOwn := &r.entries[0], 0
	for i := range r.entries {
		if n, _ := r.entries[i].words.count(ws); n > bestOwn {
			best, bestOwn = &r.entries[i], n
		}
	}
	var found []string
	for _, w := range ws {
		if _, ok := best.words[w]; ok {
			found = append(found, w)
		} else if _, ok := r.words[w]; ok {
			found = append(found, w)
		}
	}
	return best, found
}
