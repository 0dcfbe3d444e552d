package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
)

// Watchlist keys live under l/: l/list/<id> holds a list,
// l/item/<list>\x00<item id> an item with its keys, l/key/<key>\x00<list>\x00<item id>
// finds an item by one of its keys and holds it too (a refresh reads what
// it finds in one pass), and l/hit/<list>\x00<hit id> holds a hit. Keys sort so that the items of a key, and every key with a
// prefix (a barcode prefix), are one range scan.
const (
	watchPrefix     = "l/"
	watchListPrefix = watchPrefix + "list/"
	watchItemPrefix = watchPrefix + "item/"
	watchKeyPrefix  = watchPrefix + "key/"
	watchHitPrefix  = watchPrefix + "hit/"
)

var _ rappel.WatchlistStore = (*Store)(nil)

func watchListKey(id string) []byte { return []byte(watchListPrefix + id) }

func watchItemKey(list, item string) []byte { return []byte(watchItemPrefix + list + "\x00" + item) }

func watchIndexKey(key, list, item string) []byte {
	return []byte(watchKeyPrefix + key + "\x00" + list + "\x00" + item)
}

func watchHitKey(list, hit string) []byte { return []byte(watchHitPrefix + list + "\x00" + hit) }

// storedWatchItem is an item as stored: with the keys it is indexed by,
// so that deleting its list deletes them.
type storedWatchItem struct {
	Item rappel.CatalogItem `json:"item"`
	Keys []string           `json:"keys,omitempty"`
}

// CreateWatchlist stores w, its items and their index keys in one synced
// batch, unless w.Key has max lists already; s.mu serializes it with the
// other writers, so that two creations cannot both pass the count.
func (s *Store) CreateWatchlist(ctx context.Context, w *rappel.Watchlist, items []rappel.WatchedItem, max int) error {
	return s.writeLocked(ctx, "CreateWatchlist", func(ctx context.Context, span trace.Span, b *pebble.Batch) error {
		have, err := s.Watchlists(ctx, w.Key)
		if err != nil {
			return err
		}
		if len(have) >= max {
			return rappel.TooManyWatchlists(max)
		}
		if err := setValue(b, watchListKey(w.ID), w); err != nil {
			return fmt.Errorf("encoding watchlist: %w", err)
		}
		for i := range items {
			it := &items[i]
			if err := ctx.Err(); err != nil {
				return err
			}
			val, err := encodeValue(nil, storedWatchItem{Item: it.Item, Keys: it.Keys})
			if err != nil {
				return fmt.Errorf("encoding watchlist item: %w", err)
			}
			if err := b.Set(watchItemKey(w.ID, it.Item.ID), val, nil); err != nil {
				return err
			}
			for _, k := range it.Keys {
				if err := b.Set(watchIndexKey(k, w.ID, it.Item.ID), val, nil); err != nil {
					return err
				}
			}
		}
		return endWrite(span, b, s.db.commit(b, "storing watchlist"))
	})
}

// Watchlist returns the list with id, or ENOTFOUND.
func (s *Store) Watchlist(ctx context.Context, id string) (*rappel.Watchlist, error) {
	w := new(rappel.Watchlist)
	found, err := s.getValue(ctx, watchListKey(id), w)
	if err != nil {
		return nil, fmt.Errorf("reading watchlist %s: %w", id, err)
	}
	if !found {
		return nil, rappel.NoWatchlist(id)
	}
	return w, nil
}

// Watchlists returns the lists of key, oldest first. It scans every list:
// a key has at most MaxWatchlistsPerKey, and all keys' together are few.
func (s *Store) Watchlists(ctx context.Context, key string) ([]*rappel.Watchlist, error) {
	var out []*rappel.Watchlist
	err := scanValues(ctx, s, []byte(watchListPrefix), "watchlist", func(w *rappel.Watchlist) error {
		if w.Key == key {
			out = append(out, w)
		}
		return nil
	})
	rappel.SortWatchlists(out)
	return out, err
}

// WatchItems returns at most limit items of list id after the item id
// after, in id order.
func (s *Store) WatchItems(ctx context.Context, id, after string, limit int) ([]rappel.CatalogItem, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	prefix := []byte(watchItemPrefix + id + "\x00")
	opts := prefixOptions(prefix)
	if after != "" {
		opts.LowerBound = append(watchItemKey(id, after), 0)
	}
	var out []rappel.CatalogItem
	errEnough := errors.New("enough")
	err := scanRange(ctx, s.db, opts, func(_, val []byte) error {
		if len(out) >= limit {
			return errEnough
		}
		var it storedWatchItem
		if err := decodeValue(val, &it); err != nil {
			return fmt.Errorf("decoding watchlist item: %w", err)
		}
		out = append(out, it.Item)
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, err
	}
	return out, nil
}

// DeleteWatchlist removes the list, its items, their index keys and its
// hits in one synced batch, or answers ENOTFOUND.
func (s *Store) DeleteWatchlist(ctx context.Context, id string) error {
	return s.writeLocked(ctx, "DeleteWatchlist", func(ctx context.Context, span trace.Span, b *pebble.Batch) error {
		ok, err := s.has(watchListKey(id))
		if err != nil {
			return err
		}
		if !ok {
			return rappel.NoWatchlist(id)
		}
		if err := b.Delete(watchListKey(id), nil); err != nil {
			return err
		}
		items := []byte(watchItemPrefix + id + "\x00")
		err = s.scan(ctx, items, func(_, val []byte) error {
			var it storedWatchItem
			if err := decodeValue(val, &it); err != nil {
				return fmt.Errorf("decoding watchlist item: %w", err)
			}
			for _, k := range it.Keys {
				if err := b.Delete(watchIndexKey(k, id, it.Item.ID), nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		hits := []byte(watchHitPrefix + id + "\x00")
		for _, p := range [][]byte{items, hits} {
			if err := b.DeleteRange(p, prefixEnd(p), nil); err != nil {
				return err
			}
		}
		return endWrite(span, b, s.db.commit(b, "deleting watchlist"))
	})
}

// WatchedItems calls fn for the items found by each exact key and each
// key prefix. Each index key holds its item (written with it), so that a
// refresh reads the items it finds in key order with one iterator,
// seeking from key to key, and reads no item key by key.
func (s *Store) WatchedItems(ctx context.Context, exact, prefixes []string, fn func(*rappel.WatchedItem) error) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	seeks := make([][]byte, 0, len(exact)+len(prefixes))
	for _, k := range exact {
		seeks = append(seeks, []byte(watchKeyPrefix+k+"\x00"))
	}
	for _, p := range prefixes {
		seeks = append(seeks, []byte(watchKeyPrefix+p))
	}
	slices.SortFunc(seeks, bytes.Compare)
	it, err := s.db.NewIterWithContext(ctx, prefixOptions([]byte(watchKeyPrefix)))
	if err != nil {
		return fmt.Errorf("opening iterator: %w", err)
	}
	defer it.Close()
	for _, p := range seeks {
		if err := ctx.Err(); err != nil {
			return err
		}
		for it.SeekGE(p); it.Valid() && bytes.HasPrefix(it.Key(), p); it.Next() {
			parts := bytes.Split(it.Key()[len(watchKeyPrefix):], []byte{0})
			if len(parts) != 3 {
				return fmt.Errorf("reading watchlist index: %w: %q", errBadKey, it.Key())
			}
			val, err := it.ValueAndErr()
			if err != nil {
				return fmt.Errorf("reading %q: %w", it.Key(), err)
			}
			var st storedWatchItem
			if err := decodeValue(val, &st); err != nil {
				return fmt.Errorf("decoding watchlist item: %w", err)
			}
			if err := fn(&rappel.WatchedItem{List: string(parts[1]), Item: st.Item, Keys: st.Keys}); err != nil {
				return err
			}
		}
	}
	return it.Error()
}

// AddWatchHits stores the hits not stored yet, in one synced batch.
func (s *Store) AddWatchHits(ctx context.Context, hits []*rappel.WatchHit) error {
	if len(hits) == 0 {
		return s.ready(ctx)
	}
	return s.writeLocked(ctx, "AddWatchHits", func(ctx context.Context, span trace.Span, b *pebble.Batch) error {
		n := 0
		for _, h := range hits {
			k := watchHitKey(h.Watchlist, h.ID)
			ok, err := s.has(k)
			if err != nil {
				return err
			}
			if ok {
				continue
			}
			// A hit of a list deleted meanwhile is not kept.
			if ok, err := s.has(watchListKey(h.Watchlist)); err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
			if err := setValue(b, k, h); err != nil {
				return fmt.Errorf("encoding watchlist hit: %w", err)
			}
			n++
		}
		if n == 0 {
			return nil
		}
		return endWrite(span, b, s.db.commit(b, "storing watchlist hits"))
	})
}

// WatchHits returns at most limit hits of list id, newest first, after
// the hit after. A list's hits are read whole and sorted: a list has
// hits for the recalls that name its items, not for every item.
func (s *Store) WatchHits(ctx context.Context, id, after string, limit int) ([]*rappel.WatchHit, error) {
	var all []*rappel.WatchHit
	err := scanValues(ctx, s, []byte(watchHitPrefix+id+"\x00"), "watchlist hit", func(h *rappel.WatchHit) error {
		all = append(all, h)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rappel.PageWatchHits(all, after, limit), nil
}

// SetWatchHitHandled sets the hit's HandledAt, synced.
func (s *Store) SetWatchHitHandled(ctx context.Context, id, hit string, at time.Time) (*rappel.WatchHit, error) {
	var out *rappel.WatchHit
	err := s.locked(ctx, func() error {
		h := new(rappel.WatchHit)
		found, err := s.getValue(ctx, watchHitKey(id, hit), h)
		if err != nil {
			return fmt.Errorf("reading watchlist hit: %w", err)
		}
		if !found {
			return rappel.NoWatchHit(id, hit)
		}
		h.HandledAt = at
		if err := s.putValue(watchHitKey(id, hit), h, "watchlist hit"); err != nil {
			return err
		}
		out = h
		return nil
	})
	return out, err
}
