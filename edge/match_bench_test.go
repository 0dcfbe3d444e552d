package edge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// mustBundleStore returns a real Pebble store holding the embedded
// bundle, for the barcode and vehicle lookups of POST /recall/match,
// loaded from the bundle's sstables as a node's first start loads it,
// and the bundle's records; it skips as mustBundleCatalog does when there
// is no bundle.
func mustBundleStore(tb testing.TB) (*kv.Store, []*rappel.Record) {
	tb.Helper()
	mustBundleCatalog(tb)
	st := kvtest.Open(tb)
	if err := bundle.Load(tb.Context(), bundle.Embedded(), st, discardLogger()); err != nil {
		tb.Fatal(err)
	}
	var recs []*rappel.Record
	if err := bundle.ReadRecords(bundle.Embedded(), func(r *rappel.Record) error {
		recs = append(recs, r)
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return st, recs
}

// benchCatalogItems returns n catalog items drawn from recs, as a
// retailer's catalog mixes them: two in five with the barcode of a
// recalled product (half with its first lot code), one in five with a
// barcode no notice prints and the brand and name of a notice, one in
// five with a brand and a name only, one in ten a vehicle's make, model
// and year, the rest a brand and a model number.
func benchCatalogItems(recs []*rappel.Record, n int) []map[string]any {
	rng := rand.New(rand.NewPCG(1, 2))
	var barcoded, named, vehicles, models []*rappel.Record
	for _, r := range recs {
		switch {
		case len(r.AffectedModels) > 0:
			vehicles = append(vehicles, r)
		case len(r.ProductList) > 0 && r.ProductList[0].UPC != "":
			barcoded = append(barcoded, r)
		case len(r.ProductList) > 0 && strings.Contains(r.ProductList[0].Name, "Model "):
			models = append(models, r)
		case len(r.ProductList) > 0:
			named = append(named, r)
		}
	}
	brandOf := func(r *rappel.Record) string {
		if b, _, ok := strings.Cut(r.Title(rappel.LangEN), " brand "); ok {
			return b
		}
		return strings.Join(strings.Fields(r.ProductList[0].Name)[:1], " ")
	}
	pick := func(list []*rappel.Record) *rappel.Record { return list[rng.IntN(len(list))] }
	items := make([]map[string]any, 0, n)
	for i := range n {
		it := map[string]any{"id": "sku-" + strconv.Itoa(i)}
		switch k := i % 10; {
		case k < 4:
			r := pick(barcoded)
			p := r.ProductList[0]
			it["gtin"], it["name"], it["brand"] = p.UPC, p.Name, brandOf(r)
			if k%2 == 0 && len(p.LotCodes) > 0 {
				it["lot"] = p.LotCodes[0]
			}
		case k < 6:
			body := fmt.Sprintf("7%010d", rng.Int64N(1e10))
			it["gtin"] = body + strconv.Itoa(rappel.CheckDigit(body))
			r := pick(named)
			it["brand"], it["name"] = brandOf(r), r.ProductList[0].Name
		case k < 8:
			r := pick(named)
			it["brand"], it["name"] = brandOf(r), r.ProductList[0].Name
		case k < 9:
			m := pick(vehicles).AffectedModels[0]
			it["brand"], it["model"], it["year"] = m.Make, m.Model, m.Year
		default:
			if len(models) == 0 {
				models = named
			}
			r := pick(models)
			name := r.ProductList[0].Name
			_, model, _ := strings.Cut(name, "Model ")
			it["brand"], it["name"], it["model"] = brandOf(r), name, model
		}
		items = append(items, it)
	}
	return items
}

// BenchmarkMatch_Bundle screens a catalog of 1,000 items against the
// embedded bundle through the whole handler, the current snapshot's
// records prepared by an earlier batch (a node's steady state). The goal
// is 150 ms a batch. It reports the batch's price (units) and the
// statuses answered.
func BenchmarkMatch_Bundle(b *testing.B) { benchmarkMatch(b, false) }

// BenchmarkMatch_BundleCold is BenchmarkMatch_Bundle with the records
// prepared afresh every batch, as the first batch after a refresh finds
// them.
func BenchmarkMatch_BundleCold(b *testing.B) { benchmarkMatch(b, true) }

func benchmarkMatch(b *testing.B, cold bool) {
	catalog, _ := mustBundleCatalog(b)
	st, recs := mustBundleStore(b)
	s, _ := MustServer(b, catalog)
	s.Lookup, s.Logger = st, discardLogger()
	h := s.Handler()
	body, _ := json.Marshal(map[string]any{"items": benchCatalogItems(recs, maxMatchItems)})
	post := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/recall/match", bytes.NewReader(body))
		r.Header.Set("X-Gateway-Key", testKey)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("POST /recall/match: %d %.300s", w.Code, w.Body)
		}
		return w
	}
	w := post()
	var a matchAnswerBody
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if cold {
			s.matchRecords.Store(nil)
		}
		post()
	}
	cost, _ := strconv.Atoi(w.Header().Get(headerSearchCost))
	b.ReportMetric(float64(cost), "units")
	for _, st := range []string{"recalled", "check_lot", "possible", "no_match"} {
		b.ReportMetric(float64(a.Counts[st]), st)
	}
}
