package edge

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/logtest"
	"github.com/rappel-ca/rappel/kv/index"
)

// testKey is the one valid key of test servers.
const testKey = "rk_test_5f2c9a81d04e"

// datasetTime is when the test dataset was built.
var datasetTime = time.Date(2025, 3, 4, 5, 6, 7, 0, time.FixedZone("EST", -5*3600))

// testRecords are three records shaped like the normalizers' output: a CFIA
// food recall from the Health Canada dump, a Transport Canada vehicle recall
// and an English-only consumer product recall.
func testRecords() []*rappel.Record {
	units := 1520
	return []*rappel.Record{
		{
			RecordID: "hc-73841", RecallID: "73841", RecallType: rappel.TypeFood,
			Agency: rappel.AgencyCFIA, Status: rappel.StatusActive,
			EventDate: "2025-02-27", RecallDate: "2025-02-27", FetchedAt: "2025-03-04T10:00:00Z",
			URLEn:       "https://recalls-rappels.canada.ca/en/alert-recall/73841",
			URLFr:       "https://recalls-rappels.canada.ca/fr/avis-rappel/73841",
			Category:    "Food - Dairy",
			HazardClass: "class_2",
			Allergens:   []string{"milk"},
			ProductList: []rappel.Product{{Name: "Aged cheddar 200 g", UPC: "0 62639 31285 4", LotCodes: []string{"BB 2025 AL 15"}}},
			Translations: rappel.Translations{
				EN: &rappel.Translation{
					Title:             "Certain Laiterie Charlevoix brand aged cheddar recalled due to Listeria monocytogenes",
					HazardDescription: "Food contaminated with Listeria monocytogenes may not look or smell spoiled but can still make you sick.",
					WhatToDo:          "Do not consume, serve, use, sell, or distribute the recalled products.",
					URL:               "https://recalls-rappels.canada.ca/en/alert-recall/73841",
				},
				FR: &rappel.Translation{
					Title:             "Rappel de cheddar vieilli de marque Laiterie Charlevoix en raison de Listeria monocytogenes",
					HazardDescription: "Les aliments contaminés par la bactérie Listeria monocytogenes peuvent sembler ne pas être avariés.",
					WhatToDo:          "Ne consommez pas, ne servez pas, n'utilisez pas, ne vendez pas et ne distribuez pas les produits rappelés.",
					URL:               "https://recalls-rappels.canada.ca/fr/avis-rappel/73841",
				},
			},
		},
		{
			RecordID: "tc-2025123", RecallID: "2025123", RecallType: rappel.TypeVehicle,
			Agency: rappel.AgencyTransportCanada, Status: rappel.StatusActive,
			EventDate: "2025-01-15", RecallDate: "2025-01-15", FetchedAt: "2025-03-04T10:00:00Z",
			System: "Airbags", NotificationType: "Safety", VehicleCategory: "Car",
			VehicleMake: "HONDA", VehicleModel: "CIVIC", UnitsAffected: &units,
			ManufacturerRecallNumber: "X1Z",
			AffectedModels:           []rappel.VehicleModel{{Make: "HONDA", Model: "CIVIC", Year: 2019}, {Make: "HONDA", Model: "CIVIC", Year: 2020}},
			Translations: rappel.Translations{
				EN: &rappel.Translation{Title: "Honda Civic: front passenger airbag", System: "Airbags"},
				FR: &rappel.Translation{Title: "Honda Civic : coussin gonflable du passager avant", System: "Coussins gonflables"},
			},
		},
		{
			RecordID: "hc-74012", RecallID: "74012", RecallType: rappel.TypeConsumerProduct,
			Agency: rappel.AgencyHealthCanada, Status: rappel.StatusArchived,
			EventDate: "2024-11-02", RecallDate: "2024-11-02", FetchedAt: "2025-03-04T10:00:00Z",
			Category: "Children's products",
			Translations: rappel.Translations{
				EN: &rappel.Translation{Title: "Wooden stacking toys recalled due to choking hazard"},
			},
		},
	}
}

// MustCatalog returns a real index.Catalog holding recs.
func MustCatalog(tb testing.TB, recs []*rappel.Record) *index.Catalog {
	tb.Helper()
	for _, r := range recs {
		if err := r.Validate(); err != nil {
			tb.Fatalf("test record %s: %v", r.RecordID, err)
		}
	}
	snap, err := index.Build(recs, rappel.DatasetInfo{UpdatedAt: datasetTime, Source: "bundle"})
	if err != nil {
		tb.Fatal(err)
	}
	c := &index.Catalog{}
	c.Swap(snap)
	return c
}

// stepClock is a fake clock that moves one millisecond per reading.
func stepClock() func() time.Time {
	var n atomic.Int64
	return func() time.Time { return datasetTime.Add(time.Duration(n.Add(1)) * time.Millisecond) }
}

// MustServer returns a Server over catalog accepting testKey, logging JSON
// to the returned buffer.
func MustServer(tb testing.TB, catalog rappel.Catalog) (*Server, *logtest.Buffer) {
	tb.Helper()
	logs := &logtest.Buffer{}
	s := NewServer()
	s.Catalog = catalog
	s.Keys = NewStaticKeys([]string{testKey})
	s.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	s.Now = stepClock()
	return s, logs
}

// MustHTTP serves h on a real local HTTP server closed at the end of the
// test.
func MustHTTP(tb testing.TB, h http.Handler) *httptest.Server {
	tb.Helper()
	ts := httptest.NewServer(h)
	tb.Cleanup(ts.Close)
	return ts
}
