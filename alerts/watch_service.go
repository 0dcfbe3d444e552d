package alerts

import (
	"context"
	"crypto/rand"
	"io"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/match"
)

// WatchService is the rappel.Watchlists the edge calls: lists per API
// key, each seen by its key alone, and their hits.
type WatchService struct {
	Store rappel.WatchlistStore
	// Max is how many lists a key may have.
	Max    int
	Now    func() time.Time
	Random io.Reader
}

var _ rappel.Watchlists = (*WatchService)(nil)

// NewWatchService returns a WatchService on store.
func NewWatchService(store rappel.WatchlistStore) *WatchService {
	return &WatchService{Store: store, Max: rappel.MaxWatchlistsPerKey, Now: time.Now, Random: rand.Reader}
}

// Create stores a list of items, each with the keys matching finds it by
// (match.ItemKeys). The edge has checked the items and their ids.
func (s *WatchService) Create(ctx context.Context, key, name string, items []rappel.CatalogItem) (*rappel.WatchlistView, error) {
	id, err := NewToken(s.Random)
	if err != nil {
		return nil, err
	}
	w := &rappel.Watchlist{ID: "wl_" + id, Key: key, Name: name, Size: len(items), CreatedAt: s.Now().UTC().Truncate(time.Microsecond)}
	watched := make([]rappel.WatchedItem, len(items))
	for i := range items {
		watched[i] = rappel.WatchedItem{List: w.ID, Item: items[i], Keys: match.ItemKeys(&items[i])}
	}
	if err := s.Store.CreateWatchlist(ctx, w, watched, s.Max); err != nil {
		return nil, err
	}
	return w.View(), nil
}

// List returns key's lists, oldest first.
func (s *WatchService) List(ctx context.Context, key string) ([]*rappel.WatchlistView, error) {
	ws, err := s.Store.Watchlists(ctx, key)
	if err != nil {
		return nil, err
	}
	out := make([]*rappel.WatchlistView, len(ws))
	for i, w := range ws {
		out[i] = w.View()
	}
	return out, nil
}

// own returns key's list id; another key's is ENOTFOUND.
func (s *WatchService) own(ctx context.Context, key, id string) (*rappel.Watchlist, error) {
	w, err := s.Store.Watchlist(ctx, id)
	if err != nil {
		return nil, err
	}
	if w.Key != key {
		return nil, rappel.NoWatchlist(id)
	}
	return w, nil
}

// Get returns key's list id.
func (s *WatchService) Get(ctx context.Context, key, id string) (*rappel.WatchlistView, error) {
	w, err := s.own(ctx, key, id)
	if err != nil {
		return nil, err
	}
	return w.View(), nil
}

// Items returns a page of the items of key's list id.
func (s *WatchService) Items(ctx context.Context, key, id, after string, limit int) ([]rappel.CatalogItem, error) {
	if _, err := s.own(ctx, key, id); err != nil {
		return nil, err
	}
	return s.Store.WatchItems(ctx, id, after, limit)
}

// Delete removes key's list id with its items and hits.
func (s *WatchService) Delete(ctx context.Context, key, id string) error {
	if _, err := s.own(ctx, key, id); err != nil {
		return err
	}
	return s.Store.DeleteWatchlist(ctx, id)
}

// Hits returns a page of the hits of key's list id, newest first.
func (s *WatchService) Hits(ctx context.Context, key, id, after string, limit int) ([]*rappel.WatchHitView, error) {
	if _, err := s.own(ctx, key, id); err != nil {
		return nil, err
	}
	hits, err := s.Store.WatchHits(ctx, id, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]*rappel.WatchHitView, len(hits))
	for i, h := range hits {
		out[i] = h.View()
	}
	return out, nil
}

// Handle marks the hit of key's list id handled now, or not handled.
func (s *WatchService) Handle(ctx context.Context, key, id, hit string, handled bool) (*rappel.WatchHitView, error) {
	if _, err := s.own(ctx, key, id); err != nil {
		return nil, err
	}
	var at time.Time
	if handled {
		at = s.Now().UTC().Truncate(time.Microsecond)
	}
	h, err := s.Store.SetWatchHitHandled(ctx, id, hit, at)
	if err != nil {
		return nil, err
	}
	return h.View(), nil
}
