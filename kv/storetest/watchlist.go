package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// WatchlistStore runs the rappel.WatchlistStore contract. a and b are two
// handles on one store (two nodes of a fleet, or one store twice).
func WatchlistStore(t *testing.T, newStores func(t *testing.T) (a, b rappel.WatchlistStore)) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
	list := func(id, key string, at time.Time, n int) *rappel.Watchlist {
		return &rappel.Watchlist{ID: id, Key: key, Name: "catalog " + id, Size: n, CreatedAt: at}
	}
	items := func(n int) []rappel.WatchedItem {
		out := make([]rappel.WatchedItem, n)
		for i := range out {
			id := fmt.Sprintf("sku-%03d", i)
			out[i] = rappel.WatchedItem{Item: rappel.CatalogItem{ID: id, Brand: "Acme", Name: "Peanut butter " + id, GTIN: rappel.GTIN(fmt.Sprintf("000628%08d", i))},
				Keys: []string{"b:acme", fmt.Sprintf("g:000628%08d", i)}}
		}
		return out
	}
	t.Run("CRUD", func(t *testing.T) {
		a, b := newStores(t)
		for i, id := range []string{"wl2", "wl1"} {
			if err := a.CreateWatchlist(ctx, list(id, "k1", t0.Add(time.Duration(i)*time.Second), 3), items(3), 2); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.CreateWatchlist(ctx, list("wl3", "k1", t0, 1), items(1), 2); rappel.ErrorMessage(err) != rappel.TooManyWatchlists(2).Message {
			t.Fatalf("a third list of a key with a cap of 2: %v, want a 400", err)
		}
		if err := a.CreateWatchlist(ctx, list("x1", "k2", t0, 1), items(1), 2); err != nil {
			t.Fatal(err)
		}
		got, err := b.Watchlists(ctx, "k1")
		if err != nil || len(got) != 2 || got[0].ID != "wl2" || got[1].ID != "wl1" || got[0].Size != 3 {
			t.Fatalf("Watchlists(k1) = %v, %v; want wl2, wl1 oldest first", got, err)
		}
		w, err := b.Watchlist(ctx, "wl1")
		if err != nil || w.Key != "k1" || w.Name != "catalog wl1" || !w.CreatedAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("Watchlist(wl1) = %+v, %v", w, err)
		}
		page, err := b.WatchItems(ctx, "wl1", "", 2)
		if err != nil || len(page) != 2 || page[0].ID != "sku-000" || page[1].GTIN != "00062800000001" || page[0].Brand != "Acme" {
			t.Fatalf("WatchItems first page = %+v, %v", page, err)
		}
		page, err = b.WatchItems(ctx, "wl1", page[1].ID, 2)
		if err != nil || len(page) != 1 || page[0].ID != "sku-002" {
			t.Fatalf("WatchItems second page = %+v, %v", page, err)
		}
		if err := a.DeleteWatchlist(ctx, "wl1"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Watchlist(ctx, "wl1"); rappel.ErrorCode(err) != rappel.ENOTFOUND {
			t.Fatalf("Watchlist of a deleted list: %v, want ENOTFOUND", err)
		}
		if err := b.DeleteWatchlist(ctx, "wl1"); rappel.ErrorCode(err) != rappel.ENOTFOUND {
			t.Fatalf("DeleteWatchlist twice: %v, want ENOTFOUND", err)
		}
		if page, err := b.WatchItems(ctx, "wl1", "", 10); err != nil || len(page) != 0 {
			t.Fatalf("items of a deleted list: %v, %v", page, err)
		}
	})
	t.Run("FoundByKey", func(t *testing.T) {
		a, b := newStores(t)
		if err := a.CreateWatchlist(ctx, list("wa", "k1", t0, 3), items(3), 5); err != nil {
			t.Fatal(err)
		}
		if err := a.CreateWatchlist(ctx, list("wb", "k2", t0, 2), items(2), 5); err != nil {
			t.Fatal(err)
		}
		found := func(exact, prefixes []string) []string {
			t.Helper()
			var out []string
			err := b.WatchedItems(ctx, exact, prefixes, func(w *rappel.WatchedItem) error {
				if len(w.Keys) != 2 || w.Item.Brand != "Acme" {
					return fmt.Errorf("item found without its keys or fields: %+v", w)
				}
				out = append(out, w.List+"/"+w.Item.ID)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(out)
			return out
		}
		if got := found([]string{"g:00062800000001"}, nil); !slices.Equal(got, []string{"wa/sku-001", "wb/sku-001"}) {
			t.Errorf("by barcode: %v", got)
		}
		if got := found([]string{"b:acme"}, nil); len(got) != 5 {
			t.Errorf("by brand: %v, want the 5 items of both lists", got)
		}
		// A key is matched whole: b:acm is not b:acme.
		if got := found([]string{"b:acm", "g:0006280000000"}, nil); len(got) != 0 {
			t.Errorf("by a key's start given as exact: %v, want nothing", got)
		}
		if got := found(nil, []string{"g:0006280000000"}); len(got) != 5 {
			t.Errorf("by a barcode prefix: %v, want every item", got)
		}
		if err := a.DeleteWatchlist(ctx, "wa"); err != nil {
			t.Fatal(err)
		}
		if got := found([]string{"b:acme"}, nil); !slices.Equal(got, []string{"wb/sku-000", "wb/sku-001"}) {
			t.Errorf("after deleting a list: %v, want its items gone from the index", got)
		}
	})
	t.Run("Hits", func(t *testing.T) {
		a, b := newStores(t)
		if err := a.CreateWatchlist(ctx, list("wh", "k1", t0, 3), items(3), 5); err != nil {
			t.Fatal(err)
		}
		hit := func(id string, at time.Time) *rappel.WatchHit {
			return &rappel.WatchHit{ID: id, Watchlist: "wh", Item: "sku-001", RecordID: "hc-1", RecallID: "RA-1", Event: rappel.EventRecallCreated,
				Status: "recalled", Candidate: rappel.RawJSON(`{"confidence":1}`), MatchedAt: at}
		}
		if err := a.AddWatchHits(ctx, []*rappel.WatchHit{hit("h1", t0), hit("h2", t0.Add(time.Minute)), hit("h3", t0.Add(time.Minute))}); err != nil {
			t.Fatal(err)
		}
		// Adding a stored hit again keeps the first: its time and handling.
		if _, err := b.SetWatchHitHandled(ctx, "wh", "h1", t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		again := hit("h1", t0.Add(2*time.Hour))
		if err := b.AddWatchHits(ctx, []*rappel.WatchHit{again, {ID: "hx", Watchlist: "gone", MatchedAt: t0}}); err != nil {
			t.Fatal(err)
		}
		got, err := b.WatchHits(ctx, "wh", "", 10)
		if err != nil || len(got) != 3 {
			t.Fatalf("WatchHits = %v, %v; want 3", got, err)
		}
		if ids := []string{got[0].ID, got[1].ID, got[2].ID}; !slices.Equal(ids, []string{"h2", "h3", "h1"}) {
			t.Errorf("order %v, want newest first, then by id", ids)
		}
		if h := got[2]; !h.MatchedAt.Equal(t0) || !h.HandledAt.Equal(t0.Add(time.Hour)) || string(h.Candidate) != `{"confidence":1}` {
			t.Errorf("h1 after adding it again: %+v", h)
		}
		page, err := a.WatchHits(ctx, "wh", "h2", 1)
		if err != nil || len(page) != 1 || page[0].ID != "h3" {
			t.Errorf("the page after h2: %v, %v", page, err)
		}
		h, err := a.SetWatchHitHandled(ctx, "wh", "h1", time.Time{})
		if err != nil || !h.HandledAt.IsZero() {
			t.Errorf("unmarking: %+v, %v", h, err)
		}
		if _, err := a.SetWatchHitHandled(ctx, "wh", "nope", t0); rappel.ErrorCode(err) != rappel.ENOTFOUND {
			t.Errorf("marking a hit the list lacks: %v, want ENOTFOUND", err)
		}
		if err := a.DeleteWatchlist(ctx, "wh"); err != nil {
			t.Fatal(err)
		}
		if got, err := b.WatchHits(ctx, "wh", "", 10); err != nil || len(got) != 0 {
			t.Errorf("hits of a deleted list: %v, %v", got, err)
		}
	})
	t.Run("CapUnderRace", func(t *testing.T) {
		a, b := newStores(t)
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				st := a
				if i%2 == 1 {
					st = b
				}
				errs[i] = st.CreateWatchlist(ctx, list(fmt.Sprintf("r%d", i), "kr", t0, 1), items(1), 3)
			}(i)
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else if rappel.ErrorMessage(err) != rappel.TooManyWatchlists(3).Message {
				t.Errorf("unexpected error: %v", err)
			}
		}
		if got, _ := a.Watchlists(ctx, "kr"); ok != 3 || len(got) != 3 {
			t.Errorf("%d creations passed, %d stored; want 3 under a cap of 3", ok, len(got))
		}
	})
}
