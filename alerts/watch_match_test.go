package alerts

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

// watchRig is a Pebble store on disk with a webhook endpoint of key k1
// taking watchlist.match, and the matcher of its record events.
type watchRig struct {
	st  *kv.Store
	m   *HookMatcher
	svc *WatchService
	seq uint64
}

func newWatchRig(tb testing.TB) *watchRig {
	tb.Helper()
	ctx := context.Background()
	st := kvtest.Open(tb)
	s := NewHookSender()
	s.Outbox, s.Hooks, s.Logger = st, st, st.Logger
	s.Client.AllowHTTPLoopback = true
	u := "http://127.0.0.1:9/hook"
	ev := []string{rappel.EventWatchlistMatch}
	if _, err := NewHookService(st, s).Create(ctx, "k1", &rappel.WebhookRequest{URL: &u, Events: &ev}); err != nil {
		tb.Fatal(err)
	}
	m := NewHookMatcher(index.Engine{})
	m.Hooks, m.Outbox, m.Records, m.Watchlists, m.Logger = st, st, st, st, st.Logger
	return &watchRig{st: st, m: m, svc: NewWatchService(st)}
}

// event puts recs and matches them as one batch of events of typ; it
// returns the deliveries written.
func (r *watchRig) event(tb testing.TB, typ string, recs ...*rappel.Record) int {
	tb.Helper()
	ctx := context.Background()
	if err := r.st.PutRecords(ctx, recs); err != nil {
		tb.Fatal(err)
	}
	r.seq++
	e := &rappel.RecordEvents{Seq: r.seq, At: time.Now()}
	for _, rec := range recs {
		switch typ {
		case rappel.EventRecallCreated:
			e.Created = append(e.Created, rec.RecordID)
		case rappel.EventRecallUpdated:
			e.Updated = append(e.Updated, rec.RecordID)
		default:
			e.Archived = append(e.Archived, rec.RecordID)
		}
	}
	n, err := r.m.Match(ctx, e)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// peanutButter is a recall of one product with a barcode and lot codes.
func peanutButter(lots ...string) *rappel.Record {
	rec := newRecord("hc-pb1", "Acme brand Crunchy peanut butter recalled due to Salmonella")
	rec.ProductList = []rappel.Product{{Name: "Acme Crunchy peanut butter 500 g", UPC: "0 62800 12345 7", LotCodes: lots}}
	return rec
}

// TestWatch_Hits checks what a refresh makes of a list: a product's
// barcode with a lot the notice lists is recalled, without a lot
// check_lot, another brand's look-alike nothing; the same recall matched
// again, or changed elsewhere, is no new hit; one that widens (a new lot)
// or is archived is; every hit is listed and delivered once.
func TestWatch_Hits(t *testing.T) {
	ctx := context.Background()
	r := newWatchRig(t)
	gtin, err := rappel.ParseGTIN("062800123457")
	if err != nil {
		t.Fatal(err)
	}
	wl, err := r.svc.Create(ctx, "k1", "store", []rappel.CatalogItem{
		{ID: "no-lot", Brand: "Acme", Name: "Crunchy peanut butter", GTIN: gtin},
		{ID: "lot-in", Brand: "Acme", Name: "Crunchy peanut butter", GTIN: gtin, Lot: "L123"},
		{ID: "look-alike", Brand: "Zeta", Name: "Crunchy peanut butter"},
		{ID: "elsewhere", Brand: "Acme", Name: "Garden hose"},
	})
	if err != nil {
		t.Fatal(err)
	}
	statuses := func() map[string][]string {
		hits, err := r.svc.Hits(ctx, "k1", wl.ID, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, h := range hits {
			out[h.Item] = append(out[h.Item], h.Event+"/"+h.Status)
			var c struct {
				Why string `json:"why"`
			}
			if json.Unmarshal(h.Candidate, &c) != nil || c.Why == "" {
				t.Errorf("hit %s has no evidence: %s", h.ID, h.Candidate)
			}
		}
		for _, v := range out {
			slices.Sort(v)
		}
		return out
	}
	if n := r.event(t, rappel.EventRecallCreated, peanutButter("L123")); n != 2 {
		t.Errorf("the new recall made %d deliveries, want 2 (no-lot, lot-in)", n)
	}
	want := map[string][]string{"no-lot": {"recall.created/check_lot"}, "lot-in": {"recall.created/recalled"}}
	if got := statuses(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("hits after the new recall: %v, want %v", got, want)
	}
	changed := peanutButter("L123")
	changed.Translations.EN.WhatToDo = "Throw it out."
	if n := r.event(t, rappel.EventRecallUpdated, changed); n != 0 {
		t.Errorf("a change that leaves the codes as they were made %d deliveries, want none", n)
	}
	if n := r.event(t, rappel.EventRecallUpdated, peanutButter("L123", "L124")); n != 2 {
		t.Errorf("the recall widened to a new lot made %d deliveries, want 2", n)
	}
	archived := peanutButter("L123", "L124")
	archived.Status = rappel.StatusArchived
	if n := r.event(t, rappel.EventRecallArchived, archived); n != 2 {
		t.Errorf("archiving made %d deliveries, want 2", n)
	}
	want = map[string][]string{
		"no-lot": {"recall.archived/check_lot", "recall.created/check_lot", "recall.updated/check_lot"},
		"lot-in": {"recall.archived/recalled", "recall.created/recalled", "recall.updated/recalled"},
	}
	if got := statuses(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("hits at the end: %v, want %v", got, want)
	}
	// Handling a hit keeps it listed, handled.
	hits, _ := r.svc.Hits(ctx, "k1", wl.ID, "", 1)
	h, err := r.svc.Handle(ctx, "k1", wl.ID, hits[0].ID, true)
	if err != nil || !h.Handled || h.HandledAt == nil {
		t.Errorf("Handle = %+v, %v", h, err)
	}
	if _, err := r.svc.Hits(ctx, "k2", wl.ID, "", 1); rappel.ErrorCode(err) != rappel.ENOTFOUND {
		t.Errorf("another key's hits: %v, want ENOTFOUND", err)
	}
}

// BenchmarkWatch_Refresh measures what watchlists add to a refresh: per
// iteration a batch of 100 new recalls is matched against 100,000 watched
// items in 10 lists on a Pebble store on disk (barcodes, brands of which
// some are common words, models, vehicles), a tenth of the recalls naming
// a watched barcode, and the same batch against no list. It reports the time of each and what the lists add.
func BenchmarkWatch_Refresh(b *testing.B) {
	const changed, lists, perList = 100, 10, 10_000
	ctx := context.Background()
	with, without := newWatchRig(b), newWatchRig(b)
	without.m.Watchlists = nil
	rng := rand.New(rand.NewPCG(1, 2))
	brands := make([]string, 3000)
	for i := range brands {
		brands[i] = fmt.Sprintf("Brand%04d", i)
	}
	common := []string{"Natural", "Organic", "Kids", "Premium", "Fresh"}
	var watched []rappel.CatalogItem // with barcodes: a tenth of each batch names one
	for l := range lists {
		items := make([]rappel.CatalogItem, perList)
		for i := range items {
			it := rappel.CatalogItem{ID: fmt.Sprintf("sku-%d", i), Name: "Snack bar " + fmt.Sprint(i%50)}
			switch i % 10 {
			case 0:
				it.Brand = common[i%len(common)] + " Foods"
			case 1:
				it.Brand, it.Model, it.Year = "Honda", "Civic", 2015+i%8
			default:
				it.Brand = brands[rng.IntN(len(brands))]
			}
			if i%2 == 0 {
				it.GTIN = benchGTIN(b, rng)
				if len(watched) < 1000 {
					watched = append(watched, it)
				}
			}
			items[i] = it
		}
		if _, err := with.svc.Create(ctx, "k1", fmt.Sprintf("list %d", l), items); err != nil {
			b.Fatal(err)
		}
	}
	var tWith, tWithout time.Duration
	hits := 0
	for i := 0; i < b.N; i++ {
		recs := make([]*rappel.Record, changed)
		for j := range recs {
			brand := brands[rng.IntN(len(brands))]
			g := string(benchGTIN(b, rng))
			if j%10 == 0 {
				it := watched[rng.IntN(len(watched))]
				brand, g = it.Brand, string(it.GTIN)
			}
			rec := newRecord(fmt.Sprintf("hc-%d-%d", i, j), brand+" Natural snack bars recalled due to undeclared peanut")
			rec.ProductList = []rappel.Product{{Name: brand + " snack bar " + fmt.Sprint(j%50), UPC: g, LotCodes: []string{"BB 2027 JA 01"}}}
			recs[j] = rec
		}
		start := time.Now()
		n := with.event(b, rappel.EventRecallCreated, recs...)
		tWith += time.Since(start)
		start = time.Now()
		without.event(b, rappel.EventRecallCreated, recs...)
		tWithout += time.Since(start)
		hits += n
	}
	b.ReportMetric(float64(tWith.Microseconds())/1000/float64(b.N), "with-ms")
	b.ReportMetric(float64(tWithout.Microseconds())/1000/float64(b.N), "without-ms")
	b.ReportMetric(float64((tWith-tWithout).Microseconds())/1000/float64(b.N), "added-ms")
	b.ReportMetric(float64(hits)/float64(b.N), "deliveries/op")
}

// benchGTIN is a random valid UPC-A of prefix 0628, as a GTIN-14.
func benchGTIN(tb testing.TB, rng *rand.Rand) rappel.GTIN {
	body := fmt.Sprintf("0628%07d", rng.IntN(1e7))
	g, err := rappel.ParseGTIN(body + fmt.Sprint(rappel.CheckDigit(body)))
	if err != nil {
		tb.Fatal(err)
	}
	return g
}
