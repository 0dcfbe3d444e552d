package match

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rappel-ca/rappel"
)

// record is what matching reads of one recall, worked out once per
// snapshot (Cache): its product entries with their barcodes, codes and
// words, its vehicles, and the words of what names it (titles, the
// product description, the firms).
type record struct {
	rec     *rappel.Record
	entries []entry
	// words are the words of the whole notice that can name a brand or a
	// product: titles, product description, every entry's name, firms.
	words wordSet
	// codes are the model-like codes the whole notice prints (codes),
	// in entries, titles and product description: code → the entry it
	// is printed in, or -1. hasModels says an entry prints one of its
	// own: a notice listing models names the ones it covers. Both are
	// worked out on first use (codeMap): only items with a model or a
	// barcode read them.
	codesOnce sync.Once
	codes     map[string]int
	hasModels bool
	// barcodes says every entry prints a barcode or an in-store prefix:
	// an item with another barcode is none of them.
	barcodes bool
	vehicles []vehicle
}

// entry is one product of a notice: an element of its product_list, or,
// for a notice that lists none, the notice's product description.
type entry struct {
	index   int // in product_list; -1 for the description
	product *rappel.Product
	name    string
	gtin    rappel.GTIN
	// prefixes are the GTIN-14 prefixes of its upc_prefix
	// (rappel.UPCPrefixGTINs).
	prefixes []string
	words    wordSet
}

// vehicle is one element of affected_models, its make and model as
// compared (code).
type vehicle struct {
	make, model string
	year        int
	m           rappel.VehicleModel
}

// prepare works out what matching reads of r.
func prepare(r *rappel.Record) *record {
	p := &record{rec: r, words: wordSet{}}
	var titles []string
	for _, tr := range []*rappel.Translation{r.Translations.EN, r.Translations.FR} {
		if tr != nil {
			titles = append(titles, tr.Title, tr.ProductDescription)
		}
	}
	p.words.add(titles...)
	p.words.add(r.RecallingFirm, r.Manufacturer, r.Importer, r.VehicleMake)
	p.words.add(r.Companies...)
	for i := range r.ProductList {
		pr := &r.ProductList[i]
		e := entry{index: i, product: pr, name: pr.Name, words: wordSet{}}
		e.words.add(pr.Name)
		if g, err := rappel.ParseGTIN(pr.UPC); err == nil {
			e.gtin = g
		}
		e.prefixes = rappel.UPCPrefixGTINs(pr.UPCPrefix)
		p.words.add(pr.Name)
		p.entries = append(p.entries, e)
	}
	p.barcodes = len(p.entries) > 0
	for _, e := range p.entries {
		p.barcodes = p.barcodes && (e.gtin != "" || len(e.prefixes) > 0)
	}
	if len(p.entries) == 0 {
		// A notice without a product list: its description (or title)
		// names the product.
		name := ""
		for _, tr := range []*rappel.Translation{r.Translations.EN, r.Translations.FR} {
			if tr != nil && name == "" {
				name = tr.ProductDescription
			}
		}
		if name == "" {
			name = r.Title(rappel.LangEN)
		}
		e := entry{index: -1, name: name, words: wordSet{}}
		e.words.add(name)
		p.entries = append(p.entries, e)
	}
	for _, m := range r.AffectedModels {
		p.vehicles = append(p.vehicles, vehicle{make: code(m.Make), model: code(m.Model), year: m.Year, m: m})
	}
	return p
}

// codeMap returns the record's codes, working them out on first use.
func (p *record) codeMap() map[string]int {
	p.codesOnce.Do(func() {
		p.codes = map[string]int{}
		for i, e := range p.entries {
			if e.product == nil {
				continue
			}
			cs := codes(e.product.Name)
			for _, l := range e.product.LotCodes {
				cs = append(cs, codes(l)...)
			}
			p.hasModels = p.hasModels || len(cs) > 0
			for _, c := range cs {
				if _, ok := p.codes[c]; !ok {
					p.codes[c] = i
				}
			}
		}
		for _, tr := range []*rappel.Translation{p.rec.Translations.EN, p.rec.Translations.FR} {
			if tr == nil {
				continue
			}
			for _, t := range []string{tr.Title, tr.ProductDescription} {
				for _, c := range codes(t) {
					if _, ok := p.codes[c]; !ok {
						p.codes[c] = -1
					}
				}
			}
		}
	})
	return p.codes
}

// printsModels reports whether an entry of the record prints a code of its
// own.
func (p *record) printsModels() bool {
	p.codeMap()
	return p.hasModels
}

// title returns the record's title in lang, else in the other language.
func (p *record) title(lang string) string { return p.rec.Title(lang) }

// Cache holds the prepared records of one snapshot, so that a record
// matched by many items, or by many batches, is decoded and prepared once.
// It keeps at most maxCached records; past that, records are prepared per
// batch. Safe for concurrent use.
type Cache struct {
	snap records
	m    sync.Map // record_id → *record
	n    atomic.Int64
}

// records are what a Cache prepares records from: a snapshot, or the
// records of one refresh (Batch).
type records interface {
	Record(id string) (*rappel.Record, bool)
	Info() rappel.DatasetInfo
}

// maxCached bounds a Cache: about a kilobyte or two a record.
const maxCached = 50_000

// NewCache returns an empty cache of snap's records.
func NewCache(snap rappel.Snapshot) *Cache { return &Cache{snap: snap} }

// For reports whether the cache holds snap's records: a new snapshot
// needs a new cache.
func (c *Cache) For(snap rappel.Snapshot) bool { return c != nil && c.snap == records(snap) }

// record returns the prepared record id, or nil when the snapshot lacks
// it (a lookup of the store may name a record a refresh has just
// replaced).
func (c *Cache) record(id string) *record {
	if v, ok := c.m.Load(id); ok {
		return v.(*record)
	}
	r, ok := c.snap.Record(id)
	if !ok {
		return nil
	}
	p := prepare(r)
	if c.n.Load() < maxCached {
		if v, loaded := c.m.LoadOrStore(id, p); loaded {
			return v.(*record)
		}
		c.n.Add(1)
	}
	return p
}

// normalMake is a make or brand as affected_models are compared.
func normalMake(s string) string { return code(strings.TrimSpace(s)) }
