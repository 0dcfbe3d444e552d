package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
		w := &rappel.Watchlist{ID: id, Key: "k1", Name: "catalog", Size: len(items), CreatedAt: t0}
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

// TestStore_WatchlistNotOpen: every watchlist method of a store not open
// (never opened, or closed) answers errNotOpen rather than panicking on
// the missing pool.
func TestStore_WatchlistNotOpen(t *testing.T) {
	ctx := context.Background()
	s := NewStore("postgres://127.0.0.1:1/none")
	now := time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
	list := &rappel.Watchlist{ID: "wl1", Key: "k1", Size: 1, CreatedAt: now}
	hit := &rappel.WatchHit{ID: "h1", Watchlist: "wl1", Item: "sku-1", MatchedAt: now}
	for name, call := range map[string]func() error{
		"CreateWatchlist": func() error {
			return s.CreateWatchlist(ctx, list, []rappel.WatchedItem{{Item: rappel.CatalogItem{ID: "sku-1"}, Keys: []string{"b:acme"}}}, 10)
		},
		"Watchlist":       func() error { _, err := s.Watchlist(ctx, "wl1"); return err },
		"Watchlists":      func() error { _, err := s.Watchlists(ctx, "k1"); return err },
		"WatchItems":      func() error { _, err := s.WatchItems(ctx, "wl1", "", 10); return err },
		"DeleteWatchlist": func() error { return s.DeleteWatchlist(ctx, "wl1") },
		"WatchedItems": func() error {
			return s.WatchedItems(ctx, []string{"b:acme"}, []string{"g:0006"}, func(*rappel.WatchedItem) error { return nil })
		},
		"AddWatchHits":       func() error { return s.AddWatchHits(ctx, []*rappel.WatchHit{hit}) },
		"AddWatchHits(none)": func() error { return s.AddWatchHits(ctx, nil) },
		"WatchHits":          func() error { _, err := s.WatchHits(ctx, "wl1", "", 10); return err },
		"SetWatchHitHandled": func() error { _, err := s.SetWatchHitHandled(ctx, "wl1", "h1", now); return err },
	} {
		if err := call(); !errors.Is(err, errNotOpen) {
			t.Errorf("%s on a store not open: %v, want errNotOpen", name, err)
		}
	}
}

// TestStore_WatchlistBytes: keys and item ids compare as bytes, whatever
// the database's collation. On a database whose default collation is
// English (ICU's en-US, when the server has ICU), TEXT would sort
// "sku-B" after "sku-a" and put "g:1_2" inside the range of "g:1-"; here
// a prefix is a prefix, _ and % are characters like any other, and items
// page in the Pebble store's order.
func TestStore_WatchlistBytes(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	u, _ := url.Parse(dsn)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var icu bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collprovider = 'i')`).Scan(&icu); err != nil {
		t.Fatal(err)
	}
	if icu {
		name := strings.TrimPrefix(u.Path, "/") + "_en"
		if _, err := conn.Exec(ctx, `CREATE DATABASE `+name+` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`); err != nil {
			t.Fatalf("creating a database collated in English: %v", err)
		}
		u.Path = "/" + name
		dsn = u.String()
	} else {
		t.Log("the server has no ICU collations: checking on a database collated as C")
	}
	s := mustOpen(t, dsn)
	if icu {
		// The setting has teeth: TEXT there is not in byte order.
		var bytewise bool
		if err := s.pool.QueryRow(ctx, `SELECT 'SKU-c'::TEXT < 'sku-B'::TEXT`).Scan(&bytewise); err != nil || bytewise {
			t.Fatalf("the database collated in English sorts TEXT as bytes (%v): the test checks nothing", err)
		}
	}
	var items []rappel.WatchedItem
	for _, it := range []struct{ id, key string }{
		{"sku-a", "g:1-2"}, {"sku-B", "g:1_2"}, {"SKU-c", "g:1%2"}, {"sku-_", "g:12"}, {"sku-é", "b:élan"},
	} {
		items = append(items, rappel.WatchedItem{Item: rappel.CatalogItem{ID: it.id, Name: it.id}, Keys: []string{it.key}})
	}
	w := &rappel.Watchlist{ID: "wl1", Key: "k1", Size: len(items), CreatedAt: time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)}
	if err := s.CreateWatchlist(ctx, w, items, 10); err != nil {
		t.Fatal(err)
	}
	found := func(exact, prefixes []string) []string {
		t.Helper()
		var out []string
		if err := s.WatchedItems(ctx, exact, prefixes, func(w *rappel.WatchedItem) error {
			out = append(out, w.Item.ID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		prefix string
		want   []string
	}{
		{"g:1-", []string{"sku-a"}},
		{"g:1_", []string{"sku-B"}},
		{"g:1%", []string{"SKU-c"}},
		{"g:1", []string{"SKU-c", "sku-B", "sku-_", "sku-a"}},
		{"b:é", []string{"sku-é"}},
		{"", []string{"SKU-c", "sku-B", "sku-_", "sku-a", "sku-é"}},
	} {
		if got := found(nil, []string{c.prefix}); !slices.Equal(got, c.want) {
			t.Errorf("prefix %q finds %v, want %v", c.prefix, got, c.want)
		}
	}
	if got := found([]string{"g:1_2", "g:1%2"}, nil); !slices.Equal(got, []string{"SKU-c", "sku-B"}) {
		t.Errorf("exact keys with _ and %%: %v", got)
	}
	var ids []string
	for after := ""; ; {
		page, err := s.WatchItems(ctx, "wl1", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, it := range page {
			ids = append(ids, it.ID)
		}
		after = page[len(page)-1].ID
	}
	if want := []string{"SKU-c", "sku-B", "sku-_", "sku-a", "sku-é"}; !slices.Equal(ids, want) {
		t.Errorf("items page as %v, want byte order %v", ids, want)
	}
}

// TestStore_WatchHitsWhileDeleting: hits added by one node while another
// deletes their list either land before the deletion, which removes them,
// or find the list gone and are dropped: no error, no hit left behind.
func TestStore_WatchHitsWhileDeleting(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a, b := mustOpen(t, dsn), mustOpen(t, dsn)
	t0 := time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
	for round := range 5 {
		id := fmt.Sprintf("wl%d", round)
		w := &rappel.Watchlist{ID: id, Key: "k1", Size: 1, CreatedAt: t0}
		if err := a.CreateWatchlist(ctx, w, []rappel.WatchedItem{{Item: rappel.CatalogItem{ID: "sku-1"}, Keys: []string{"b:acme"}}}, 10); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			for i := range 20 {
				h := &rappel.WatchHit{ID: fmt.Sprintf("h%d", i), Watchlist: id, Item: "sku-1", Candidate: rappel.RawJSON(`{}`), MatchedAt: t0}
				if err := b.AddWatchHits(ctx, []*rappel.WatchHit{h}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		if err := a.DeleteWatchlist(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("adding hits while their list is deleted: %v", err)
		}
		var n int
		if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM watchlist_hits WHERE list = $1`, id).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%d hits of the deleted list %s left (%v)", n, id, err)
		}
	}
}
