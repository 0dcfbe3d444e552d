package synth

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/detail"
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/page"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// pageNotice is a notice of the scale-1 corpus whose detail is recall
// pages, its document and the pages written from it.
type pageNotice struct {
	nid    string
	d      *document
	en, fr []byte
}

// pageNotices builds the notices of the scale-1 corpus of the shared
// tests' seed and date whose detail is recall pages, without writing the
// corpus.
func pageNotices(t *testing.T) []pageNotice {
	t.Helper()
	g, err := newGenerator(Config{Seed: 1, ReferenceDate: time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var out []pageNotice
	for _, e := range g.plan() {
		if e.typ == typeVehicle || !e.hasDetail {
			continue
		}
		o, d := g.noticeDoc(&e)
		if current := e.nid >= rappel.FirstPageNID; current != (d.page.layout == layoutCurrent) {
			t.Fatalf("notice %d (%s) has its detail in layout %d", e.nid, e.day, d.page.layout)
		}
		if !d.isPage() {
			continue
		}
		if o.ext != ".html" {
			t.Fatalf("notice %d's pages are written as %s", e.nid, o.ext)
		}
		out = append(out, pageNotice{nid: o.nid, d: d, en: o.docEN, fr: o.docFR})
	}
	return out
}

// TestGenerate_Pages writes the recall pages of every notice that has
// them, runs the shipped detail plugin over them (natively over all,
// through the real host in wazero over a sample of each layout and type),
// and checks the plugin reports no problem and reads the products, with
// their barcodes and lot codes, the generator put in each page's table,
// and the notice's identification number and dates.
func TestGenerate_Pages(t *testing.T) {
	notices := pageNotices(t)
	fsys := fstest.MapFS{}
	sample := fstest.MapFS{}
	var legacy, current, french int
	seen := map[[2]int]int{}
	for _, n := range notices {
		key := [2]int{int(n.d.page.layout), n.d.page.typ}
		pick := seen[key] < 15
		seen[key]++
		for lang, b := range map[string][]byte{"en": n.en, "fr": n.fr} {
			if b == nil {
				continue
			}
			name := lang + "/" + n.nid + ".html"
			fsys[name] = &fstest.MapFile{Data: b}
			if pick {
				sample[name] = &fstest.MapFile{Data: b}
			}
		}
		if n.fr != nil {
			french++
		}
		if n.d.page.layout == layoutLegacy {
			legacy++
		} else {
			current++
		}
	}
	t.Logf("%d notices with pages: %d current, %d legacy, %d with a French page", len(notices), current, legacy, french)
	if current < 3000 || legacy < 500 || french < current*8/10 {
		t.Fatalf("too few pages: %d current, %d legacy, %d French", current, legacy, french)
	}
	for typ := range numTypes {
		if typ != typeVehicle && (seen[[2]int{int(layoutCurrent), typ}] == 0 || seen[[2]int{int(layoutLegacy), typ}] == 0) {
			t.Errorf("no page of type %s in one of the layouts", recallTypeName(typ))
		}
	}

	out := guesttest.MustRun(t, fsys, detail.Normalize)
	for i, p := range out.Problems {
		if i < 10 {
			t.Errorf("problem: %+v", p)
		}
	}
	if len(out.Problems) > 0 {
		t.Fatalf("%d problems in all", len(out.Problems))
	}
	byID := out.ByID()
	var products, barcodes int
	for _, n := range notices {
		rec := byID["hc-"+n.nid]
		if rec == nil {
			t.Fatalf("notice %s: no record", n.nid)
		}
		checkPageRecord(t, n, rec)
		products += len(rec.ProductList)
		for _, p := range rec.ProductList {
			if p.UPC != "" {
				barcodes++
			}
		}
	}
	t.Logf("%d products read, %d with a barcode", products, barcodes)

	// The same pages through the shipped plugin in the real host.
	h := plugins.NewHost()
	h.Timeout = 2 * time.Minute
	h.Logger = slog.New(slog.DiscardHandler)
	ctx := context.Background()
	if err := h.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	p, err := h.Load(ctx, detail.Source, plugintest.Build(t, "./plugins/detail/wasm"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(ctx, sample)
	if err != nil {
		t.Fatal(err)
	}
	v := plugins.Judge(detail.Source, res, true)
	if v.Refused != 0 || len(v.Problems) != 0 {
		t.Fatalf("the shipped plugin: %d refused, problems %+v", v.Refused, v.Problems)
	}
	if len(v.Records) != len(sample)-countPrefix(sample, "fr/") && len(v.Records) == 0 {
		t.Fatalf("the shipped plugin read %d records", len(v.Records))
	}
	for _, rec := range v.Records {
		if native := byID[rec.RecordID]; !slices.EqualFunc(rec.ProductList, native.ProductList, func(a, b rappel.Product) bool {
			return a.Name == b.Name && a.UPC == b.UPC && a.UPCPrefix == b.UPCPrefix && slices.Equal(a.LotCodes, b.LotCodes) && a.Size == b.Size
		}) {
			t.Errorf("%s: the shipped plugin reads products %+v, natively %+v", rec.RecordID, rec.ProductList, native.ProductList)
		}
	}
	t.Logf("the shipped plugin read %d records of %d sample pages with no problem", len(v.Records), len(sample))
}

// countPrefix counts the files of fsys whose name starts with prefix.
func countPrefix(fsys fstest.MapFS, prefix string) int {
	n := 0
	for name := range fsys {
		if len(name) >= len(prefix) && name[:len(prefix)] == prefix {
			n++
		}
	}
	return n
}

// wantProduct is a product as the generator put it in a page's table.
type wantProduct struct {
	name, size, barcode string // barcode: a GTIN-14, or "prefix:<digits>"
	lots                []string
}

// wantProducts are the products a page's table lists, one per barcode.
func wantProducts(t *testing.T, n pageNotice) []wantProduct {
	d := n.d
	var out []wantProduct
	for i, p := range d.products {
		row := d.page.rows[i]
		w := wantProduct{name: guest.ProductName(d.brand, p.nameEN), lots: slices.Clone(p.lots)}
		var codes []string
		switch typ := d.page.typ; {
		case d.page.layout == layoutLegacy || typ == typeFood:
			w.size = p.sizeEN
			if p.prefix == "" && p.upc != "" {
				codes = append(codes, p.upc)
			}
			if row.also != "" && d.page.layout == layoutCurrent {
				codes = append(codes, row.also)
			}
		case typ == typeHealth:
			w.size = p.sizeEN
			w.name += " (Dosage form: " + row.dosage + ")"
			if din := d.firm("DIN"); din != "" {
				w.lots = append(w.lots, "DIN "+din)
			}
		case typ == typeMedical:
			if row.model != "" {
				w.lots = append(w.lots, row.model)
			}
		case typ == typeConsumer:
			if p.upc != "" {
				codes = append(codes, p.upc)
			}
		case typ == typeCannabis:
			w.size = p.sizeEN
			w.lots = append(w.lots, row.packaging)
		}
		var prods []wantProduct
		for _, c := range codes {
			g, err := rappel.ParseGTIN(c)
			if err != nil {
				w.lots = append(w.lots, c) // an in-store code without its check digit, kept as printed
				continue
			}
			q := w
			q.barcode = string(g)
			prods = append(prods, q)
		}
		if p.prefix != "" && (d.page.layout == layoutLegacy || d.page.typ == typeFood) {
			w.barcode = "prefix:" + p.prefix
		}
		if len(prods) == 0 {
			prods = []wantProduct{w}
		}
		var lots []string // each once, as the reader keeps them
		for _, l := range w.lots {
			if !slices.Contains(lots, l) {
				lots = append(lots, l)
			}
		}
		for i := range prods {
			prods[i].lots = lots
		}
		out = append(out, prods...)
	}
	return out
}

// checkPageRecord checks the record the plugin read from a notice's pages
// against what the generator wrote into them.
func checkPageRecord(t *testing.T, n pageNotice, rec *rappel.Record) {
	t.Helper()
	want := wantProducts(t, n)
	var got []wantProduct
	for _, p := range rec.ProductList {
		w := wantProduct{name: p.Name, size: p.Size, lots: p.LotCodes}
		switch {
		case p.UPCPrefix != "":
			w.barcode = "prefix:" + p.UPCPrefix
		case p.UPC != "":
			g, err := rappel.ParseGTIN(p.UPC)
			if err != nil {
				t.Errorf("%s: product %q has UPC %q, no barcode: %v", rec.RecordID, p.Name, p.UPC, err)
			}
			w.barcode = string(g)
		}
		got = append(got, w)
	}
	if len(n.d.products) == 0 && n.d.page.layout == layoutCurrent {
		// A page without a table: the summary's product, under the brand.
		want = []wantProduct{{name: guest.ProductName(n.d.brand, n.d.page.itemEN)}}
	}
	if !slices.EqualFunc(got, want, func(a, b wantProduct) bool {
		return a.name == b.name && a.size == b.size && a.barcode == b.barcode && slices.Equal(a.lots, b.lots)
	}) {
		t.Errorf("%s (layout %d, %s): products\n%+v\nwant\n%+v", rec.RecordID, n.d.page.layout, recallTypeName(n.d.page.typ), got, want)
	}
	if rec.IdentificationNumber != "RA-"+n.nid {
		t.Errorf("%s: identification number %q", rec.RecordID, rec.IdentificationNumber)
	}
	if rec.EventDate != dateOf(n.d.start) || rec.RecallDate != dateOf(n.d.published) {
		t.Errorf("%s: event_date %s, recall_date %s; want %s, %s", rec.RecordID, rec.EventDate, rec.RecallDate, dateOf(n.d.start), dateOf(n.d.published))
	}
	if n.d.page.class != "" && rec.HazardClass == "" {
		t.Errorf("%s: recall class %q read as no hazard_class", rec.RecordID, n.d.page.class)
	}
	if len(rec.Images) != len(n.d.images) {
		t.Errorf("%s: %d images, want %d", rec.RecordID, len(rec.Images), len(n.d.images))
	}
	if n.fr != nil && (rec.Translations.FR == nil || rec.Translations.FR.Title != guest.CleanText(n.d.titleFR)) {
		t.Errorf("%s: French title %+v, want %q", rec.RecordID, rec.Translations.FR, n.d.titleFR)
	}
	if _, err := strconv.Atoi(n.nid); err != nil {
		t.Fatal(err)
	}
}

// TestPageExt: the generator names its pages as the reader looks for them.
func TestPageExt(t *testing.T) {
	if pageExt != page.Ext {
		t.Fatalf("the generator writes pages as *%s, the reader reads *%s", pageExt, page.Ext)
	}
}
