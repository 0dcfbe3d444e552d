package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/postgres/pgtest"
	"github.com/rappel-ca/rappel/kv/storetest"
)

func TestStore_WatchlistStore(t *testing.T) {
	storetest.WatchlistStore(t, func(t *testing.T) (rappel.WatchlistStore, rappel.WatchlistStore) {
		dsn := pgtest.DSN(t)
		return mustOpen(t, dsn), mustOpen(t, dsn)
	})
}

// BenchmarkStore_CreateWatchlist100k creates a list of MaxWatchItems
// items with two keys each (a brand's and a barcode's), as POST
// /recall/watchlists stores the largest catalog; each round a new list,
// the one before deleted outside the timer.
func BenchmarkStore_CreateWatchlist100k(b *testing.B) {
	ctx := context.Background()
	s := mustNew(b)
	items := make([]rappel.WatchedItem, rappel.MaxWatchItems)
	for i := range items {
		id := fmt.Sprintf("sku-%06d", i)
		gtin := fmt.Sprintf("000628%08d", i)
		items[i] = rappel.WatchedItem{Item: rappel.CatalogItem{ID: id, Brand: "Acme", Name: "Peanut butter " + id, GTIN: rappel.GTIN(gtin)},
			Keys: []string{"b:acme", "g:" + gtin}}
	}
	t0 := time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
	b.ResetTimer()
	for n := range b.N {
		id := fmt.Sprintf("wl%d", n)
		w := &rappel.Watchlist{ID: id, Key: "k1", Name: "catalog", Items: len(items), CreatedAt: t0}
		if err := s.CreateWatchlist(ctx, w, items, rappel.MaxWatchlistsPerKey); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.DeleteWatchlist(ctx, id); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
