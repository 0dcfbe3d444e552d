package match

import "slices"

// A batch is priced as searches are (docs/api.md, "Limits"), in cost units
// of about a millisecond of one core, from what it will do before doing
// it: each item's fixed work (reading it, its barcode and vehicle lookups
// in the store, preparing and comparing the notices they find), and the
// posting entries its word lookups read, which the read index counts from
// its dictionary without reading a posting (WordIndex.WordPostings). A
// catalog repeats its brands: a lookup is priced once a batch.

// costUnit is the work of one cost unit, in nanoseconds.
const costUnit = 1_000_000

// What each part of an item's screening takes, in nanoseconds, measured on
// the bundle (BenchmarkMatch_Bundle in edge reports the work priced and
// the time taken; the price stays above the time): an item's decoding,
// planning and answer; a barcode's two lookups in the store; a vehicle's;
// a word lookup, besides the posting entries it reads.
const (
	itemWork    = 50_000
	barcodeWork = 25_000
	vehicleWork = 20_000
	lookupWork  = 20_000
	postingWork = 2
)

// Cost returns the price of screening items, in cost units: at least 1.
func (m *Matcher) Cost(items []Item) int {
	work := 0
	seen := map[string]bool{}
	for i := range items {
		p := plan(&items[i])
		work += itemWork
		if p.it.GTIN != "" {
			work += barcodeWork
		}
		if p.make != "" && p.vmod != "" && p.it.Year > 0 {
			work += vehicleWork
		}
		if m.Words == nil {
			continue
		}
		for _, l := range p.lookups() {
			work += lookupWork
			if key := l.key(); !seen[key] {
				seen[key] = true
				work += m.Words.WordPostings(slices.Concat(l.required, l.optional)) * postingWork
			}
		}
	}
	return 1 + work/costUnit
}
