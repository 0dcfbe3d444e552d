package edge

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
)

// coverageRecords are notices of three years whose products and barcodes
// are known, and a vehicle recall, which the coverage leaves out:
//
//	2025: 4 notices, 3 with products, 2 of them with a barcode (the third's
//	      code fails its check digit); the vehicle recall
//	2024: 2 notices, 1 with products, found by a upc_prefix
//	2022: 1 notice, without products (the per-notice source stopped)
func coverageRecords() []*rappel.Record {
	notice := func(id, agency, typ, date string, products ...rappel.Product) *rappel.Record {
		return &rappel.Record{RecordID: "hc-" + id, RecallID: id, RecallType: typ, Agency: agency,
			Status: rappel.StatusActive, EventDate: date, RecallDate: date, FetchedAt: "2025-12-01T00:00:00Z",
			ProductList:  products,
			Translations: rappel.Translations{EN: &rappel.Translation{Title: "Notice " + id}}}
	}
	vehicle := notice("2025001", rappel.AgencyTransportCanada, rappel.TypeVehicle, "2025-06-01")
	vehicle.RecordID = "tc-2025001"
	return []*rappel.Record{
		notice("81001", rappel.AgencyCFIA, rappel.TypeFood, "2025-11-03", rappel.Product{Name: "Cheddar 200 g", UPC: "0 62639 31285 5"}),
		notice("81002", rappel.AgencyCFIA, rappel.TypeFood, "2025-09-12", rappel.Product{Name: "Ham", UPC: "none"}, rappel.Product{Name: "Brie", UPC: "62639312855"}),
		notice("81003", rappel.AgencyHealthCanada, rappel.TypeConsumerProduct, "2025-04-30", rappel.Product{Name: "Kettle", UPC: "0 62639 31285 4"}),
		notice("81004", rappel.AgencyHealthCanada, rappel.TypeHealthProduct, "2025-01-02"),
		vehicle,
		notice("79001", rappel.AgencyCFIA, rappel.TypeFood, "2024-08-08", rappel.Product{Name: "Deli cuts", UPCPrefix: "0235278"}),
		notice("79002", rappel.AgencyHealthCanada, rappel.TypeMedicalDevice, "2024-02-02"),
		notice("76001", rappel.AgencyCFIA, rappel.TypeFood, "2022-05-05"),
	}
}

// wantCoverage is coverageRecords' coverage as /health gives it.
var wantCoverage = []yearCoverage{
	{Year: 2025, Notices: 4, WithProducts: 3, WithBarcode: 2, ProductsShare: 0.75, BarcodeShare: 0.5},
	{Year: 2024, Notices: 2, WithProducts: 1, WithBarcode: 1, ProductsShare: 0.5, BarcodeShare: 0.5},
	{Year: 2022, Notices: 1, WithProducts: 0, WithBarcode: 0, ProductsShare: 0, BarcodeShare: 0},
}

func getHealthCoverage(t *testing.T, url string) []yearCoverage {
	t.Helper()
	code, body := adminDo(t, http.MethodGet, url+"/health", "")
	var h struct {
		Coverage []yearCoverage `json:"coverage"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &h) != nil {
		t.Fatalf("GET /health = %d %s", code, body)
	}
	return h.Coverage
}

// TestHealth_Coverage: /health gives each year's notices, those with
// products and with a barcode, and their shares, newest year first; and
// after a change to the data, the new figures.
func TestHealth_Coverage(t *testing.T) {
	byID := map[string]*rappel.Record{}
	for _, r := range coverageRecords() {
		byID[r.RecordID] = r
	}
	cat := MustCatalog(t, coverageRecords())
	s, _ := MustServer(t, cat)
	url := MustHTTP(t, s.Handler()).URL
	if got := getHealthCoverage(t, url); !reflect.DeepEqual(got, wantCoverage) {
		t.Fatalf("coverage = %+v, want %+v", got, wantCoverage)
	}

	t.Run("AfterChange", func(t *testing.T) {
		// Two notices of 2026 arrive without products, the 2022 one
		// gains its product, and 81002 is withdrawn.
		base, err := index.Build(coverageRecords(), rappel.DatasetInfo{Source: "feeds"})
		if err != nil {
			t.Fatal(err)
		}
		fixed := *byID["hc-76001"]
		fixed.ProductList = []rappel.Product{{Name: "Pâté", UPC: "0 62639 31285 5"}}
		put := []*rappel.Record{&fixed}
		for i := range 2 {
			r := *byID["hc-81004"]
			r.RecordID, r.RecallID, r.EventDate, r.RecallDate = fmt.Sprintf("hc-8200%d", i), fmt.Sprintf("8200%d", i), "2026-01-0"+fmt.Sprint(i+3), "2026-01-03"
			put = append(put, &r)
		}
		v, err := index.WithChanges(base, put, []string{"hc-81002"}, rappel.DatasetInfo{Source: "feeds"}, index.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cat.SwapView(v)
		want := []yearCoverage{
			{Year: 2026, Notices: 2},
			{Year: 2025, Notices: 3, WithProducts: 2, WithBarcode: 1, ProductsShare: 0.6667, BarcodeShare: 0.3333},
			wantCoverage[1],
			{Year: 2022, Notices: 1, WithProducts: 1, WithBarcode: 1, ProductsShare: 1, BarcodeShare: 1},
		}
		if got := getHealthCoverage(t, url); !reflect.DeepEqual(got, want) {
			t.Fatalf("coverage = %+v, want %+v", got, want)
		}
	})

	t.Run("NoNotices", func(t *testing.T) {
		// Vehicle recalls alone: the list is empty, not null.
		s, _ := MustServer(t, MustCatalog(t, []*rappel.Record{byID["tc-2025001"]}))
		code, body := adminDo(t, http.MethodGet, MustHTTP(t, s.Handler()).URL+"/health", "")
		var h map[string]json.RawMessage
		if code != http.StatusOK || json.Unmarshal([]byte(body), &h) != nil || string(h["coverage"]) != "[]" {
			t.Fatalf("GET /health = %d %s, want coverage []", code, body)
		}
	})

	t.Run("NewestYears", func(t *testing.T) {
		var many []*rappel.Record
		for y := range rappel.CoverageYears + 3 {
			r := *byID["hc-81001"]
			r.RecordID, r.EventDate = fmt.Sprintf("hc-%d", y), fmt.Sprintf("%d-03-01", 2000+y)
			many = append(many, &r)
		}
		s, _ := MustServer(t, MustCatalog(t, many))
		got := getHealthCoverage(t, MustHTTP(t, s.Handler()).URL)
		if len(got) != rappel.CoverageYears || got[0].Year != 2000+rappel.CoverageYears+2 || got[len(got)-1].Year != 2003 {
			t.Fatalf("coverage = %+v, want the %d newest years, 2012 to 2003", got, rappel.CoverageYears)
		}
		// The document's bound is the node's.
		cov, _ := mustOpenAPI(t).resolve(t, "components", "schemas", "Health", "properties", "coverage")
		if max := fmt.Sprint(cov["maxItems"]); max != fmt.Sprint(rappel.CoverageYears) {
			t.Errorf("the OpenAPI document bounds coverage to %s years, the node reports %d", max, rappel.CoverageYears)
		}
	})
}

// TestMetrics_Coverage: the metrics give the same figures, a series per
// year and gauge.
func TestMetrics_Coverage(t *testing.T) {
	s := mustMetricsServer(t)
	s.Catalog = MustCatalog(t, coverageRecords())
	fams := scrape(t, MustHTTP(t, s.Handler()).URL+"/metrics", map[string]string{"x-admin-key": metricsAdminKey})
	for _, c := range wantCoverage {
		year := map[string]string{"year": fmt.Sprint(c.Year)}
		for name, want := range map[string]float64{
			"rappel_coverage_notices":               float64(c.Notices),
			"rappel_coverage_notices_with_products": float64(c.WithProducts),
			"rappel_coverage_notices_with_barcode":  float64(c.WithBarcode),
			"rappel_coverage_products_ratio":        c.ProductsShare,
			"rappel_coverage_barcode_ratio":         c.BarcodeShare,
		} {
			m := series(fams, name, year)
			if m == nil || m.GetGauge().GetValue() != want {
				t.Errorf("%s%v = %v, want %v", name, year, m, want)
			}
		}
	}
	for _, name := range []string{"rappel_coverage_notices", "rappel_coverage_products_ratio"} {
		if n := len(fams[name].GetMetric()); n != len(wantCoverage) {
			t.Errorf("%d %s series, want one per year, %d", n, name, len(wantCoverage))
		}
	}
}
