package match

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/rappel-ca/rappel"
)

// A watchlist is matched the other way round from a catalog: a refresh's
// few changed records against many stored items. The records' keys
// (RecordKeys) find the items that may match them in the store's index of
// item keys (ItemKeys), and those items are screened against the changed
// records alone (Batch), with the same rules as POST /recall/match, so
// that a hit says what the catalog's screening would say of that recall.
//
// Keys are prefixed by kind: g: a barcode (GTIN-14), b: the first content
// word of a brand (every brand match needs it, hasBrand), n: the first
// word of a name given without a brand (such a match needs every word of
// the name), m: a model given without a brand, v: a vehicle's make.
const (
	keyGTIN  = "g:"
	keyBrand = "b:"
	keyName  = "n:"
	keyModel = "m:"
	keyMake  = "v:"
)

// ItemKeys returns the keys the item it is found by, each once: its
// barcode, the first word of its brand (or of its name, without a brand),
// its model without a brand, and its make when it gives a model year.
func ItemKeys(it *Item) []string {
	p := plan(it)
	var keys []string
	add := func(k string) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	if it.GTIN != "" {
		add(keyGTIN + string(it.GTIN))
	}
	switch {
	case len(p.brand) > 0:
		add(keyBrand + p.brand[0])
	case len(p.name) >= 2:
		add(keyName + p.name[0])
	}
	if len(p.brand) == 0 {
		if p.model != "" {
			add(keyModel + p.model)
		}
		for _, w := range allWords(it.Model) {
			if len(w) >= 2 {
				add(keyName + w) // a model's words find it as a name's do
				break
			}
		}
	}
	if p.make != "" && p.vmod != "" && it.Year > 0 {
		add(keyMake + rappel.FoldKey(strings.Join(strings.Fields(it.Brand), " ")))
	}
	return keys
}

// RecordKeys returns the keys of the items r may match: exact keys (its
// barcodes, printed in its products or its text, its words as brands and
// names, its codes as models, its vehicles' makes) and prefixes (its
// in-store barcode prefixes, which an item's barcode starts with).
func RecordKeys(r *rappel.Record) (exact, prefixes []string) {
	p := prepare(r)
	seen := map[string]bool{}
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			exact = append(exact, k)
		}
	}
	for _, g := range r.GTINs() {
		add(keyGTIN + string(g))
	}
	for c := range p.codeMap() {
		add(keyModel + c)
		if len(c) >= 8 && len(c) <= 14 && strings.Trim(c, "0123456789") == "" {
			if g, err := rappel.ParseGTIN(c); err == nil {
				add(keyGTIN + string(g))
			}
		}
	}
	for w := range p.words {
		add(keyBrand + w)
		add(keyName + w)
	}
	for _, v := range r.AffectedModels {
		if mk := rappel.FoldKey(strings.Join(strings.Fields(v.Make), " ")); mk != "" {
			add(keyMake + mk)
		}
	}
	for i := range p.entries {
		for _, pre := range p.entries[i].prefixes {
			if !slices.Contains(prefixes, keyGTIN+pre) {
				prefixes = append(prefixes, keyGTIN+pre)
			}
		}
	}
	slices.Sort(exact)
	slices.Sort(prefixes)
	return exact, prefixes
}

// Batch returns a Matcher of recs alone, as of info: its lookups and word
// index read those records only, so that items are screened against one
// refresh's changes.
func Batch(recs []*rappel.Record, info rappel.DatasetInfo) *Matcher {
	b := &batchRecords{info: info, byID: make(map[string]*rappel.Record, len(recs)), byGTIN: map[rappel.GTIN][]string{}}
	for _, r := range recs {
		if _, ok := b.byID[r.RecordID]; !ok {
			b.ids = append(b.ids, r.RecordID)
		}
		b.byID[r.RecordID] = r
	}
	slices.Sort(b.ids)
	for _, id := range b.ids {
		r := b.byID[id]
		for _, g := range r.GTINs() {
			if ids := b.byGTIN[g]; len(ids) == 0 || ids[len(ids)-1] != id {
				b.byGTIN[g] = append(ids, id)
			}
		}
		for _, p := range r.ProductList {
			for _, pre := range rappel.UPCPrefixGTINs(p.UPCPrefix) {
				if len(pre) > rappel.MinUPCPrefix {
					b.prefixes = append(b.prefixes, batchPrefix{pre, id})
				}
			}
		}
	}
	b.cache = &Cache{snap: b}
	return &Matcher{Records: b.cache, Lookup: b, Words: b}
}

// batchRecords are the records of a Batch, with the lookups of
// rappel.Lookup and WordIndex over them.
type batchRecords struct {
	info  rappel.DatasetInfo
	byID  map[string]*rappel.Record
	ids   []string // record_id order
	cache *Cache
	// byGTIN and prefixes are the records' barcodes and in-store
	// prefixes, worked out once: every item with a barcode looks them up.
	byGTIN   map[rappel.GTIN][]string
	prefixes []batchPrefix
}

// batchPrefix is an in-store barcode prefix of a record of the batch.
type batchPrefix struct{ prefix, id string }

func (b *batchRecords) Record(id string) (*rappel.Record, bool) {
	r, ok := b.byID[id]
	return r, ok
}

func (b *batchRecords) Info() rappel.DatasetInfo { return b.info }

// where returns the ids, in record_id order, of the records keep holds.
func (b *batchRecords) where(keep func(*rappel.Record) bool) []string {
	var out []string
	for _, id := range b.ids {
		if keep(b.byID[id]) {
			out = append(out, id)
		}
	}
	return out
}

// RecordIDsByGTIN is rappel.Lookup's, over the batch.
func (b *batchRecords) RecordIDsByGTIN(_ context.Context, g rappel.GTIN) ([]string, error) {
	return b.byGTIN[g], nil
}

// RecordIDsByGTINPrefix is rappel.Lookup's, over the batch.
func (b *batchRecords) RecordIDsByGTINPrefix(_ context.Context, g rappel.GTIN) ([]string, error) {
	var ids []string
	for _, p := range b.prefixes {
		if strings.HasPrefix(string(g), p.prefix) && !slices.Contains(ids, p.id) {
			ids = append(ids, p.id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// RecordIDsByVehicle is rappel.Lookup's, over the batch: make and model
// compared upper-cased with spaces collapsed.
func (b *batchRecords) RecordIDsByVehicle(_ context.Context, make, model string, year int) ([]string, error) {
	norm := func(s string) string { return strings.ToUpper(strings.Join(strings.Fields(s), " ")) }
	make, model = norm(make), norm(model)
	return b.where(func(r *rappel.Record) bool {
		return slices.ContainsFunc(r.AffectedModels, func(m rappel.VehicleModel) bool {
			return norm(m.Make) == make && m.Year == year && (model == "" || norm(m.Model) == model)
		})
	}), nil
}

// RecordIDsWithWords is WordIndex's, over the batch: the records holding
// every word of required, as matching compares words, those holding most
// of optional first, then the newest.
func (b *batchRecords) RecordIDsWithWords(required, optional []string, limit int) ([]string, error) {
	type found struct {
		id   string
		n    int
		date string
	}
	var fs []found
	for _, id := range b.ids {
		p := b.cache.record(id)
		if p == nil || !p.words.hasAll(required) {
			continue
		}
		n, _ := p.words.count(optional)
		fs = append(fs, found{id: id, n: n, date: p.rec.EventDate})
	}
	slices.SortStableFunc(fs, func(a, b found) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(b.date, a.date)
	})
	out := make([]string, 0, min(len(fs), limit))
	for i := 0; i < len(fs) && i < limit; i++ {
		out = append(out, fs[i].id)
	}
	return out, nil
}

// WordPostings is WordIndex's: a batch reads no postings.
func (b *batchRecords) WordPostings([]string) int { return 0 }

// HitCodes is what a hit's identity takes of a candidate: its status and
// the codes its verdict read, so that a recall matched again unchanged is
// the same hit and one whose codes widen is a new one.
func HitCodes(c *Candidate) string {
	return c.Status + "\x00" + strings.Join(c.Applicability.Codes, "\x00") + "\x00" + strconv.Itoa(len(c.Applicability.Codes))
}
