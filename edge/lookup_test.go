package edge

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// lookupNow is "today" for the stats and lookup tests: the day the
// fixtures' dates count back from.
var lookupNow = time.Date(2026, 11, 22, 15, 4, 5, 0, time.UTC)

// withCheck returns the digits of body followed by their GS1 check digit.
func withCheck(body string) string { return body + strconv.Itoa(rappel.CheckDigit(body)) }

// The printed forms of the barcodes in lookupRecords.
var (
	cheddarUPC = withCheck("06263931285") // UPC-A, printed in three forms
	datesUPCE  = "04252614"               // UPC-E of datesUPCA
	datesUPCA  = "042100005264"
	toyEAN8    = "96385074"
)

// lookupRecords are records shaped like the normalizers' output, chosen for
// the products, barcode and VIN lookups:
//
//   - hc-990101 and hc-990102 share recall_id 990101 (an updated notice);
//     hc-990101 is the newer.
//   - cheddarUPC is printed as a spaced UPC-A (hc-990101), an EAN-13
//     (hc-990102) and a GTIN-14 (hc-990103); datesUPCA as a UPC-E
//     (hc-990104) and a dashed UPC-A (hc-990105); toyEAN8 as an EAN-8 in
//     the record's own upc field (hc-990106).
//   - Vehicle recalls cover TOYOTA CAMRY 2010 (two of them), TOYOTA COROLLA
//     2010, HYUNDAI ELANTRA 2013, NISSAN PICKUP 1992 and HONDA CIVIC 2019;
//     a consumer product names a Toyota in its affected models, to check
//     that VIN lookups keep vehicle recalls only.
func lookupRecords() []*rappel.Record {
	units := func(n int) *int { return &n }
	food := func(id, date, titleEN, titleFR string, products ...rappel.Product) *rappel.Record {
		return &rappel.Record{
			RecordID: "hc-" + id, RecallID: id, RecallType: rappel.TypeFood, Agency: rappel.AgencyCFIA,
			Status: rappel.StatusActive, EventDate: date, RecallDate: date, FetchedAt: "2026-11-22T03:00:00Z",
			URLEn: "https://recalls-rappels.canada.ca/en/alert-recall/" + id, Category: "Dairy",
			Categories: []string{"Food", "Dairy"}, HazardClass: "class_2", AlertType: "Recall",
			IdentificationNumber: "RA-" + id, ProductList: products,
			Translations: rappel.Translations{
				EN: &rappel.Translation{Title: titleEN, Category: "Dairy"},
				FR: &rappel.Translation{Title: titleFR, Category: "Produits laitiers"},
			},
		}
	}
	vehicle := func(id, date, title string, u *int, models ...rappel.VehicleModel) *rappel.Record {
		return &rappel.Record{
			RecordID: "tc-" + id, RecallID: id, RecallType: rappel.TypeVehicle, Agency: rappel.AgencyTransportCanada,
			Status: rappel.StatusActive, EventDate: date, RecallDate: date, FetchedAt: "2026-11-22T03:00:00Z",
			Category: "Vehicles", System: "Air bags", NotificationType: "Safety Mfr", VehicleCategory: "Car",
			VehicleMake: models[0].Make, VehicleModel: models[0].Model, UnitsAffected: u, AffectedModels: models,
			Translations: rappel.Translations{
				EN: &rappel.Translation{Title: title, System: "Air bags"},
				FR: &rappel.Translation{Title: title + " (FR)", System: "Coussins gonflables"},
			},
		}
	}
	cheddar := food("990101", "2026-11-10", "Laiterie Charlevoix brand aged cheddar recalled due to Listeria monocytogenes",
		"Rappel de cheddar vieilli de marque Laiterie Charlevoix en raison de Listeria monocytogenes",
		rappel.Product{Name: "Aged cheddar", UPC: cheddarUPC[:1] + " " + cheddarUPC[1:6] + " " + cheddarUPC[6:11] + " " + cheddarUPC[11:],
			LotCodes: []string{"BB 2026 DE 15"}, Size: "200 g"},
		rappel.Product{Name: "Aged cheddar, family size", UPC: "", Size: "1 kg"})
	cheddar.HazardClass, cheddar.Allergens = "class_1", []string{"milk"}
	cheddar.Distribution = []string{"Ontario", "Quebec"}
	earlier := food("990102", "2026-11-03", "Laiterie Charlevoix brand aged cheddar recalled",
		"Rappel de cheddar vieilli de marque Laiterie Charlevoix",
		rappel.Product{Name: "Aged cheddar", UPC: "0" + cheddarUPC})
	earlier.RecallID = "990101"
	giftBox := food("990103", "2025-05-05", "Fromagerie du Lac cheese gift boxes recalled", "Rappel de coffrets de fromages Fromagerie du Lac",
		rappel.Product{Name: "Cheese gift box", UPC: "00" + cheddarUPC})
	giftBox.IdentificationNumber = ""
	dates := food("990104", "2026-08-19", "Desert Sun brand pitted dates recalled due to pieces of pit", "Rappel de dattes dénoyautées Desert Sun",
		rappel.Product{Name: "Pitted dates", UPC: datesUPCE, Size: "500 g"})
	datesBig := food("990105", "2024-02-12", "Desert Sun brand pitted dates, 1 kg, recalled", "Rappel de dattes dénoyautées Desert Sun, 1 kg",
		rappel.Product{Name: "Pitted dates", UPC: datesUPCA[:1] + "-" + datesUPCA[1:6] + "-" + datesUPCA[6:11] + "-" + datesUPCA[11:], Size: "1 kg"})
	for _, r := range []*rappel.Record{dates, datesBig} {
		r.Category, r.Categories, r.Translations.EN.Category, r.Translations.FR.Category = "Fruits and vegetables", []string{"Food", "Fruits and vegetables"}, "", ""
	}
	toy := &rappel.Record{
		RecordID: "hc-990106", RecallID: "990106", RecallType: rappel.TypeConsumerProduct, Agency: rappel.AgencyHealthCanada,
		Status: rappel.StatusActive, EventDate: "2026-10-30", RecallDate: "2026-10-30", FetchedAt: "2026-11-22T03:00:00Z",
		Category: "Baby and children's products", UPC: "12345; " + toyEAN8, // a bad code beside a good one
		AffectedModels: []rappel.VehicleModel{{Make: "Toyota", Model: "Camry", Year: 2010}},
		Translations:   rappel.Translations{EN: &rappel.Translation{Title: "Wooden stacking toys recalled due to choking hazard"}},
	}
	return []*rappel.Record{
		cheddar, earlier, giftBox, dates, datesBig, toy,
		vehicle("2026901", "2026-09-14", "Toyota Camry (2010-2011): passenger air bag may not deploy", units(12000),
			rappel.VehicleModel{Make: "TOYOTA", Model: "CAMRY", Year: 2010}, rappel.VehicleModel{Make: "TOYOTA", Model: "CAMRY", Year: 2011}),
		vehicle("2025902", "2025-03-02", "Toyota Camry and Corolla (2010): brake booster", units(800),
			rappel.VehicleModel{Make: "TOYOTA", Model: "COROLLA", Year: 2010}, rappel.VehicleModel{Make: "toyota", Model: " camry ", Year: 2010}),
		vehicle("2026903", "2026-01-20", "Hyundai Elantra (2013): steering column", units(5400),
			rappel.VehicleModel{Make: "HYUNDAI", Model: "ELANTRA", Year: 2013}),
		vehicle("1993904", "1993-06-01", "Nissan Pickup (1992): fuel line", nil,
			rappel.VehicleModel{Make: "NISSAN", Model: "PICKUP", Year: 1992}),
		vehicle("2026905", "2026-11-22", "Honda Civic (2019): seat belt", units(300),
			rappel.VehicleModel{Make: "HONDA", Model: "CIVIC", Year: 2019}),
	}
}

// statsRecords are n valid generated records spread over 1990 to lookupNow,
// most in the last three years, with every group_by field populated some
// of the time, plus records on the edges of the default period (its first
// day, the day before, and today).
func statsRecords(n int, seed uint64) []*rappel.Record {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	pick := func(vs ...string) string { return vs[rng.IntN(len(vs))] }
	type cat struct{ en, fr, parent string }
	cats := []cat{{"Dairy", "Produits laitiers", "Food"}, {"Bakery products", "Produits de boulangerie", "Food"},
		{"Prescription drugs", "Médicaments sur ordonnance", "Health products"}, {"Household products", "Produits ménagers", "Consumer products"}}
	makes := map[string][]string{"FORD": {"F-150", "ESCAPE"}, "TOYOTA": {"CAMRY", "RAV4"}, "HONDA": {"CIVIC", "CR-V"}}
	start := rappel.PeriodStart(lookupNow, rappel.DefaultPeriodDays)
	edges := []string{start, rappel.PeriodStart(lookupNow, rappel.DefaultPeriodDays+1), rappel.PeriodStart(lookupNow, 0)}
	recs := make([]*rappel.Record, 0, n)
	for i := range n {
		date := lookupNow.AddDate(0, 0, -rng.IntN(3*365)).Format(time.DateOnly)
		switch {
		case i < len(edges):
			date = edges[i]
		case rng.IntN(4) == 0:
			date = time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(33*365)).Format(time.DateOnly)
		}
		typ := pick(rappel.RecallTypes...)
		id := strconv.Itoa(500000 + i)
		r := &rappel.Record{
			RecordID: "hc-" + id, RecallID: id, RecallType: typ, Agency: pick(rappel.AgencyCFIA, rappel.AgencyHealthCanada),
			Status: pick(rappel.Statuses...), EventDate: date, RecallDate: date, FetchedAt: "2026-11-22T03:00:00Z",
			AlertType: pick("", "Recall", "Advisory", "Allergy alert"), PlaceOfOrigin: pick("", "", "Canada", "China", "Mexico"),
			RecallingFirm: pick("", "", "Nordic Vitality Inc.", "Sanoria Inc."),
			Translations: rappel.Translations{
				EN: &rappel.Translation{Title: fmt.Sprintf("Generated recall %d", i)},
				FR: &rappel.Translation{Title: fmt.Sprintf("Rappel généré %d", i)},
			},
		}
		if rng.IntN(2) == 0 {
			r.HazardClass = pick(rappel.HazardClasses...)
		}
		if rng.IntN(5) > 0 {
			c := cats[rng.IntN(len(cats))]
			r.Category, r.Translations.FR.Category = c.en, c.fr
			if rng.IntN(2) == 0 {
				r.Categories = []string{c.parent, c.en}
			}
		}
		if rng.IntN(3) == 0 {
			r.Companies = []string{pick("Prairie Gold Distribution Inc.", "Heritage Distribution Inc.", `Dépôt "Nord" Ltée`)}
		}
		r.Distribution = []string{"Ontario", "Quebec", "National"}[:rng.IntN(4)]
		switch typ {
		case rappel.TypeFood:
			r.Agency = rappel.AgencyCFIA
			for range rng.IntN(3) {
				if a := pick(rappel.Allergens...); !slices.Contains(r.Allergens, a) {
					r.Allergens = append(r.Allergens, a)
				}
			}
		case rappel.TypeVehicle:
			r.RecordID, r.Agency, r.Category, r.Categories = "tc-"+id, rappel.AgencyTransportCanada, "Vehicles", nil
			r.Translations.FR.Category = "Véhicules"
			mk := pick("FORD", "TOYOTA", "HONDA")
			model := pick(makes[mk]...)
			r.VehicleMake, r.VehicleModel = mk, model
			r.System, r.NotificationType, r.VehicleCategory = pick("Brakes", "Air bags", "Lighting"), pick("Safety Mfr", "Compliance TC"), pick("Car", "Truck - Light")
			r.AffectedModels = []rappel.VehicleModel{{Make: mk, Model: model, Year: 2005 + rng.IntN(20)}}
			if rng.IntN(10) > 0 {
				u := rng.IntN(20000)
				r.UnitsAffected = &u
			}
		}
		recs = append(recs, r)
	}
	return recs
}

// lookupEnv is a real server over a real Pebble store and a real snapshot
// of the same records, with its clock at lookupNow.
type lookupEnv struct {
	recs    []*rappel.Record
	catalog *index.Catalog
	store   *kv.Store
	srv     *Server
	h       http.Handler
	base    string
}

func mustLookupEnv(tb testing.TB, recs []*rappel.Record) *lookupEnv {
	tb.Helper()
	for _, r := range recs {
		if err := r.Validate(); err != nil {
			tb.Fatalf("test record %s: %v", r.RecordID, err)
		}
	}
	e := &lookupEnv{recs: recs, store: mustStore(tb, recs)}
	snap, err := index.Build(slices.Clone(recs), rappel.DatasetInfo{UpdatedAt: lookupNow, Source: "bundle"})
	if err != nil {
		tb.Fatal(err)
	}
	e.catalog = &index.Catalog{}
	e.catalog.Swap(snap)
	e.srv, _ = MustServer(tb, e.catalog)
	e.srv.Lookup = e.store
	e.srv.Now = func() time.Time { return lookupNow }
	e.srv.Logger = discardLogger()
	e.h = e.srv.Handler()
	e.base = MustHTTP(tb, e.h).URL
	return e
}

// mustStore returns a real Pebble store on a temporary directory holding
// recs, closed at the end of the test.
func mustStore(tb testing.TB, recs []*rappel.Record) *kv.Store {
	tb.Helper()
	st := kvtest.Open(tb)
	if err := st.PutRecords(tb.Context(), recs); err != nil {
		tb.Fatal(err)
	}
	return st
}

// call sends GET target (a path and query) over HTTP with the test key and
// returns the status and body, checking that the body is JSON and, for an
// error, {"detail": ...} as docs/api.md shapes it.
func (e *lookupEnv) call(tb testing.TB, target string) (int, []byte) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, e.base+target, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("X-Gateway-Key", testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" || !json.Valid(b) {
		tb.Fatalf("%s: %d %q: %s", target, resp.StatusCode, ct, b)
	}
	if resp.StatusCode != http.StatusOK {
		checkDetail(tb, target, resp.StatusCode, b)
	}
	return resp.StatusCode, b
}

// ok sends GET target, which must answer 200, and decodes the body into v.
func (e *lookupEnv) ok(tb testing.TB, target string, v any) {
	tb.Helper()
	status, b := e.call(tb, target)
	if status != http.StatusOK {
		tb.Fatalf("%s: status %d: %s", target, status, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("%s: %v: %s", target, err, b)
	}
}

// invalid sends GET target, which must answer 422, and returns its items.
func (e *lookupEnv) invalid(tb testing.TB, target string) []rappel.Invalid {
	tb.Helper()
	status, b := e.call(tb, target)
	if status != http.StatusUnprocessableEntity {
		tb.Fatalf("%s: status %d, want 422: %s", target, status, b)
	}
	var body struct{ Detail []rappel.Invalid }
	if err := json.Unmarshal(b, &body); err != nil {
		tb.Fatal(err)
	}
	return body.Detail
}

// checkDetail checks an error body: a sentence, or for 422 a list of items
// whose loc starts with "query" and whose msg is a sentence.
func checkDetail(tb testing.TB, target string, status int, b []byte) {
	tb.Helper()
	var body struct{ Detail json.RawMessage }
	if err := json.Unmarshal(b, &body); err != nil || len(body.Detail) == 0 {
		tb.Fatalf("%s: %d without detail: %s", target, status, b)
	}
	sentence := func(s string) bool {
		return len(s) > 1 && s[0] >= 'A' && s[0] <= 'Z' && (s[len(s)-1] == '.' || s[len(s)-1] == '?')
	}
	if status != http.StatusUnprocessableEntity {
		var s string
		if err := json.Unmarshal(body.Detail, &s); err != nil || !sentence(s) {
			tb.Errorf("%s: %d detail is not a sentence: %s", target, status, b)
		}
		return
	}
	var items []rappel.Invalid
	if err := json.Unmarshal(body.Detail, &items); err != nil || len(items) == 0 {
		tb.Fatalf("%s: 422 detail is not a list of items: %s", target, b)
	}
	for _, it := range items {
		if len(it.Loc) != 2 || it.Loc[0] != "query" || it.Type == "" || !sentence(it.Msg) {
			tb.Errorf("%s: bad item %+v", target, it)
		}
	}
}

// serve sends GET target to the handler in process, for benchmarks and
// fuzzing, and returns the recorder.
func (e *lookupEnv) serve(target string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Header.Set("X-Gateway-Key", testKey)
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	return w
}

// The embedded bundle's records, read once per test binary, or why not.
var lookupBundle struct {
	once sync.Once
	recs []*rappel.Record
	err  error
}

// bundleRecords returns the embedded bundle's records (shared: do not
// change them), skipping when the binary embeds none and the test run does
// not require one (RAPPEL_TEST_BUNDLE, set by make test).
func bundleRecords(tb testing.TB) []*rappel.Record {
	tb.Helper()
	if _, err := bundle.ReadManifest(bundle.Embedded()); errors.Is(err, bundle.ErrEmpty) && os.Getenv("RAPPEL_TEST_BUNDLE") == "" {
		tb.Skip("no data bundle is embedded; run `make bundle` to test and benchmark against the real data")
	}
	b := &lookupBundle
	b.once.Do(func() {
		b.err = bundle.ReadRecords(bundle.Embedded(), func(r *rappel.Record) error {
			b.recs = append(b.recs, r)
			return nil
		})
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.recs
}

// FuzzLookups sends arbitrary values of the parameters of GET /recall/upc,
// /recall/vin, /recall/stats and /recall/products through the whole
// handler, over a real store and snapshot: the answer is a 200, a 404 for
// an unknown recall_id, or a 422 whose items name the parameter in
// sentences; never a 5xx, always JSON.
func FuzzLookups(f *testing.F) {
	e := mustLookupEnv(f, append(lookupRecords(), statsRecords(100, 4)...))
	targets := []struct{ path, param string }{
		{"/recall/upc", "upc"}, {"/recall/vin", "vin"}, {"/recall/stats", "period"},
		{"/recall/stats", "group_by"}, {"/recall/stats", "sum_field"}, {"/recall/products", "id"},
	}
	for i, seeds := range [][]string{
		{cheddarUPC, "0 62639 31285 4", "425261", datesUPCE, toyEAN8, "12345", "x", "", "0-0-0-0-0-0-0-0"},
		{camryVIN, nissanVIN, "4t1-bb3ek5-au118081", "IOQ", "\xff\xfe", "", "1M8GDM9AXKP042788"},
		{"30d", "2 weeks", "all", "-1y", "1.5mo", "99999999999999999999d", "", "\x00"},
		{"allergen", "year", "recall_agency", "", "units_affected"},
		{"units_affected", "units_sold", ""},
		{"990101", "2026901", "", " ", "nope"},
	} {
		for _, s := range seeds {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		tg := targets[int(which)%len(targets)]
		target := tg.path + "?" + url.Values{tg.param: {value}}.Encode()
		w := e.serve(target)
		if ct := w.Header().Get("Content-Type"); ct != "application/json" || !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s: %d %q: %s", target, w.Code, ct, w.Body)
		}
		switch {
		case w.Code == http.StatusOK:
		case w.Code == http.StatusNotFound && tg.param == "id":
			checkDetail(t, target, w.Code, w.Body.Bytes())
		case w.Code == http.StatusUnprocessableEntity:
			checkDetail(t, target, w.Code, w.Body.Bytes())
			var body struct{ Detail []rappel.Invalid }
			_ = json.Unmarshal(w.Body.Bytes(), &body)
			for _, it := range body.Detail {
				if it.Loc[1] != tg.param {
					t.Fatalf("%s: item for %v", target, it.Loc)
				}
			}
		default:
			t.Fatalf("%s: status %d: %s", target, w.Code, w.Body)
		}
	})
}

// BenchmarkLookups serves GET /recall/stats, /recall/upc and /recall/vin
// through the whole handler (middlewares, router, key check, parameters,
// the real Pebble store and snapshot) over the embedded bundle's 41,000
// records, or as many generated ones when the binary embeds no bundle, plus
// prefixRecords. Targets: stats over "all" for any group_by within 2 ms; a
// barcode or VIN lookup, decoding included, within 50 µs.
func BenchmarkLookups(b *testing.B) {
	recs := statsRecords(41000, 5)
	if _, err := bundle.ReadManifest(bundle.Embedded()); err == nil {
		recs = slices.Clone(bundleRecords(b))
	}
	e := mustLookupEnv(b, append(recs, prefixRecords()...))
	run := func(name, target string) {
		b.Run(name, func(b *testing.B) {
			if w := e.serve(target); w.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", target, w.Code, w.Body)
			}
			b.ReportAllocs()
			for b.Loop() {
				if w := e.serve(target); w.Code != http.StatusOK {
					b.Fatalf("%s: %d", target, w.Code)
				}
			}
		})
	}
	for _, field := range rappel.StatsGroupFields {
		run("stats/"+field+"_all", "/recall/stats?period=all&group_by="+field)
	}
	run("stats/default_30d", "/recall/stats")
	run("stats/vehicle_make_all_sum", "/recall/stats?period=all&group_by=vehicle_make&sum_field=units_affected")
	run("stats/category_all_sum", "/recall/stats?period=all&group_by=category&sum_field=units_affected")
	run("stats/companies_all_sum", "/recall/stats?period=all&group_by=companies&sum_field=units_affected")
	run("upc/upc_a_3_results", "/recall/upc?upc="+cheddarUPC)
	run("upc/upc_e_2_results", "/recall/upc?upc="+datesUPCE+"&lang=fr")
	run("upc/exact_and_prefix", "/recall/upc?upc="+hamCode)
	run("upc/printed_none", "/recall/upc?upc="+url.QueryEscape("0 77000 00001 "+strconv.Itoa(rappel.CheckDigit("07700000001"))))
	run("vin/make_model_year", "/recall/vin?vin="+camryVIN)
	run("vin/make_year_no_model", "/recall/vin?vin="+nissanVIN+"&lang=fr")
	run("vin/lower_dashed", "/recall/vin?vin=4t1-bb3ek5-au118081")
}
