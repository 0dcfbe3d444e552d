package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rappel-ca/rappel"
)

// schemaWatchlists holds watchlists, their items, the index that finds
// items by key, and their hits.
//
// A list is kept whole as JSONB next to its API key, like a webhook
// endpoint; watchlist_keys has a row per API key that ever created a list,
// which creating one locks, so that two nodes creating lists of one key at
// once cannot both pass the cap. An item is kept as JSONB with the keys it
// is indexed by.
//
// watchlist_index finds an item by one of its keys, exactly or by a prefix
// (a barcode prefix): a range of its primary key, key >= prefix AND key <
// the prefix's successor. Its keys, like item ids, are BYTEA, the UTF-8
// bytes of the text: bytes compare byte by byte on both databases, so a
// range is a prefix and items page in the order of the Pebble store,
// whatever the database's collation (in a database created with
// en_US.UTF-8, TEXT compares by language rules, under which a range is not
// a prefix). PostgreSQL's text_pattern_ops or a COLLATE "C" column would
// do on PostgreSQL alone: CockroachDB has neither.
//
// A hit is kept as JSONB but for its candidate, stored as the bytes
// encoding/json writes: JSONB would reorder the candidate's fields and
// respace it, and a hit must read back as the Pebble store returns it.
//
// No foreign keys: a list's rows are deleted with it in one transaction
// (DeleteWatchlist), and AddWatchHits holds a share lock on the lists it
// adds to, so that a list deleted meanwhile keeps no hit. A foreign key
// would add a check (a trigger's lookup) to each of a large list's
// 300,000 item and key rows.
const schemaWatchlists = `
CREATE TABLE IF NOT EXISTS watchlists (
	id         TEXT PRIMARY KEY,
	key        TEXT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	body       JSONB NOT NULL
);
CREATE INDEX IF NOT EXISTS watchlists_key ON watchlists (key);
CREATE TABLE IF NOT EXISTS watchlist_keys (
	key TEXT PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS watchlist_items (
	list    TEXT NOT NULL,
	item_id BYTEA NOT NULL,
	body    JSONB NOT NULL,
	PRIMARY KEY (list, item_id)
);
CREATE TABLE IF NOT EXISTS watchlist_index (
	key     BYTEA NOT NULL,
	list    TEXT NOT NULL,
	item_id BYTEA NOT NULL,
	PRIMARY KEY (key, list, item_id)
);
CREATE INDEX IF NOT EXISTS watchlist_index_list ON watchlist_index (list);
CREATE TABLE IF NOT EXISTS watchlist_hits (
	list       TEXT NOT NULL,
	hit_id     TEXT NOT NULL,
	matched_at TIMESTAMPTZ NOT NULL,
	candidate  TEXT NOT NULL,
	body       JSONB NOT NULL,
	PRIMARY KEY (list, hit_id)
);
`

var _ rappel.WatchlistStore = (*Store)(nil)

// watchInsertRows is how many items, or index keys, one INSERT of
// CreateWatchlist carries: a 100,000-item list is a few statements, each
// a message of a few megabytes.
var watchInsertRows = 10_000

// storedWatchItem is an item as stored: with the keys it is indexed by,
// as the Pebble store keeps it.
type storedWatchItem struct {
	Item rappel.CatalogItem `json:"item"`
	Keys []string           `json:"keys,omitempty"`
}

// CreateWatchlist stores w, its items and their index keys in one
// transaction holding the key's row of watchlist_keys, unless w.Key has
// max lists already. Items and keys go in as arrays (INSERT … SELECT FROM
// unnest), watchInsertRows a statement, rather than a statement each.
// COPY (pgx's CopyFrom) was 10 to 20% faster on PostgreSQL in
// BenchmarkStore_CreateWatchlist100k, but CockroachDB implements only
// part of COPY; INSERT keeps to the SQL both run.
func (s *Store) CreateWatchlist(ctx context.Context, w *rappel.Watchlist, items []rappel.WatchedItem, max int) error {
	if s.pool == nil {
		return errNotOpen
	}
	body, err := json.Marshal(w)
	if err != nil {
		return fmt.Errorf("encoding watchlist: %w", err)
	}
	ids, bodies, keys, keyItems, err := watchRows(items)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO watchlist_keys (key) VALUES ($1) ON CONFLICT (key) DO NOTHING`, w.Key); err != nil {
			return fmt.Errorf("storing watchlist: %w", err)
		}
		if _, err := tx.Exec(ctx, `SELECT key FROM watchlist_keys WHERE key = $1 FOR UPDATE`, w.Key); err != nil {
			return fmt.Errorf("storing watchlist: %w", err)
		}
		var n int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM watchlists WHERE key = $1`, w.Key).Scan(&n); err != nil {
			return fmt.Errorf("counting watchlists: %w", err)
		}
		if n >= int64(max) {
			return rappel.TooManyWatchlists(max)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO watchlists (id, key, created_at, body) VALUES ($1, $2, $3, $4)`,
			w.ID, w.Key, w.CreatedAt.UTC(), string(body)); err != nil {
			return fmt.Errorf("storing watchlist: %w", err)
		}
		for i := 0; i < len(ids); i += watchInsertRows {
			j := min(i+watchInsertRows, len(ids))
			if _, err := tx.Exec(ctx, `INSERT INTO watchlist_items (list, item_id, body)
				SELECT $1, i, b::JSONB FROM unnest($2::BYTEA[], $3::TEXT[]) AS t (i, b)`,
				w.ID, ids[i:j], bodies[i:j]); err != nil {
				return fmt.Errorf("storing watchlist items: %w", err)
			}
		}
		for i := 0; i < len(keys); i += watchInsertRows {
			j := min(i+watchInsertRows, len(keys))
			if _, err := tx.Exec(ctx, `INSERT INTO watchlist_index (key, list, item_id)
				SELECT k, $1, i FROM unnest($2::BYTEA[], $3::BYTEA[]) AS t (k, i)`,
				w.ID, keys[i:j], keyItems[i:j]); err != nil {
				return fmt.Errorf("storing watchlist index keys: %w", err)
			}
		}
		return nil
	})
}

// watchRows returns the columns of items' rows: ids and bodies, and the
// index keys with the id of the item of each. An id given twice is stored
// once, its last item as the Pebble store keeps it, and a key given twice
// for one item is indexed once (a primary key would refuse either).
func watchRows(items []rappel.WatchedItem) (ids [][]byte, bodies []string, keys, keyItems [][]byte, err error) {
	last := make(map[string]int, len(items))
	for i := range items {
		last[items[i].Item.ID] = i
	}
	ids = make([][]byte, 0, len(last))
	bodies = make([]string, 0, len(last))
	for i := range items {
		it := &items[i]
		if last[it.Item.ID] != i {
			continue
		}
		b, err := json.Marshal(storedWatchItem{Item: it.Item, Keys: it.Keys})
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("encoding watchlist item: %w", err)
		}
		id := []byte(it.Item.ID)
		ids, bodies = append(ids, id), append(bodies, string(b))
		for k, key := range it.Keys {
			if indexOf(it.Keys[:k], key) < 0 {
				keys, keyItems = append(keys, []byte(key)), append(keyItems, id)
			}
		}
	}
	return ids, bodies, keys, keyItems, nil
}

// indexOf is slices.Index for an item's few keys.
func indexOf(keys []string, key string) int {
	for i, k := range keys {
		if k == key {
			return i
		}
	}
	return -1
}

// Watchlist returns the list with id, or ENOTFOUND.
func (s *Store) Watchlist(ctx context.Context, id string) (*rappel.Watchlist, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	var body []byte
	err := s.pool.QueryRow(ctx, `SELECT body FROM watchlists WHERE id = $1`, id).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, rappel.NoWatchlist(id)
	}
	if err != nil {
		return nil, fmt.Errorf("reading watchlist %s: %w", id, err)
	}
	w := new(rappel.Watchlist)
	if err := json.Unmarshal(body, w); err != nil {
		return nil, fmt.Errorf("decoding watchlist %s: %w", id, err)
	}
	return w, nil
}

// Watchlists returns the lists of key, oldest first.
func (s *Store) Watchlists(ctx context.Context, key string) ([]*rappel.Watchlist, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	rows, err := s.pool.Query(ctx, `SELECT body FROM watchlists WHERE key = $1`, key)
	if err != nil {
		return nil, fmt.Errorf("reading watchlists: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rappel.Watchlist, error) {
		var body []byte
		if err := r.Scan(&body); err != nil {
			return nil, err
		}
		w := new(rappel.Watchlist)
		if err := json.Unmarshal(body, w); err != nil {
			return nil, fmt.Errorf("decoding watchlist: %w", err)
		}
		return w, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading watchlists: %w", err)
	}
	rappel.SortWatchlists(out)
	return out, nil
}

// WatchItems returns at most limit items of list id after the item id
// after, in id order: a range of watchlist_items' primary key.
func (s *Store) WatchItems(ctx context.Context, id, after string, limit int) ([]rappel.CatalogItem, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	rows, err := s.pool.Query(ctx, `SELECT body FROM watchlist_items WHERE list = $1 AND item_id > $2
		ORDER BY item_id LIMIT $3`, id, []byte(after), max(limit, 0))
	if err != nil {
		return nil, fmt.Errorf("reading watchlist items: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rappel.CatalogItem, error) {
		var body []byte
		if err := r.Scan(&body); err != nil {
			return rappel.CatalogItem{}, err
		}
		var it storedWatchItem
		if err := json.Unmarshal(body, &it); err != nil {
			return rappel.CatalogItem{}, fmt.Errorf("decoding watchlist item: %w", err)
		}
		return it.Item, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading watchlist items: %w", err)
	}
	return out, nil
}

// DeleteWatchlist removes the list, its items, their index keys and its
// hits in one transaction, or answers ENOTFOUND. The list's row goes
// first: its lock makes an AddWatchHits of the list wait, and then find
// it gone.
func (s *Store) DeleteWatchlist(ctx context.Context, id string) error {
	if s.pool == nil {
		return errNotOpen
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM watchlists WHERE id = $1`, id)
		if err != nil {
			return fmt.Errorf("deleting watchlist: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return rappel.NoWatchlist(id)
		}
		for _, table := range []string{"watchlist_index", "watchlist_items", "watchlist_hits"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE list = $1`, id); err != nil {
				return fmt.Errorf("deleting watchlist %s: %s: %w", id, table, err)
			}
		}
		return nil
	})
}

// watchedItemsOf reads the items of the index rows its FROM clause
// selects. Each item is read by a subquery on watchlist_items' primary
// key: as a join, PostgreSQL, which cannot tell how many keys a range of
// unknown bounds holds, estimates a third of them and reads every item
// into a hash table.
const watchedItemsOf = `SELECT k.list, (SELECT i.body FROM watchlist_items i WHERE i.list = k.list AND i.item_id = k.item_id) FROM `

// WatchedItems calls fn for the items found by the exact keys, in one
// query (= ANY), and for those found by the prefixes, in another
// (prefixRanges), so that either reads the rows it finds and no other.
// fn runs as the rows arrive, with the query's connection held.
func (s *Store) WatchedItems(ctx context.Context, exact, prefixes []string, fn func(*rappel.WatchedItem) error) error {
	if s.pool == nil {
		return errNotOpen
	}
	if len(exact) > 0 {
		keys := make([][]byte, len(exact))
		for i, k := range exact {
			keys[i] = []byte(k)
		}
		if err := s.watchedItems(ctx, fn, watchedItemsOf+`watchlist_index k WHERE k.key = ANY($1::BYTEA[])`, keys); err != nil {
			return err
		}
	}
	if len(prefixes) > 0 {
		q, args := prefixRanges(prefixes)
		if err := s.watchedItems(ctx, fn, watchedItemsOf+`watchlist_index k WHERE `+q, args...); err != nil {
			return err
		}
	}
	return nil
}

// prefixRanges returns the condition of keys starting with one of
// prefixes and its arguments: for each, k.key >= the prefix AND k.key <
// its successor, a range of watchlist_index's primary key; a prefix with
// no successor ("", or bytes 0xff alone, which no UTF-8 key holds) is
// every key from it on. The bounds are parameters of their own, rather
// than arrays to unnest, so that PostgreSQL plans each query with them
// and knows how few keys a range holds: from arrays it would take each
// range for a third of the index, plan a costly query and compile it
// (JIT) for most of a second.
func prefixRanges(prefixes []string) (string, []any) {
	var q strings.Builder
	args := make([]any, 0, 2*len(prefixes))
	for i, p := range prefixes {
		if i > 0 {
			q.WriteString(" OR ")
		}
		args = append(args, []byte(p))
		fmt.Fprintf(&q, "k.key >= $%d", len(args))
		if end := prefixEnd([]byte(p)); end != nil {
			args = append(args, end)
			fmt.Fprintf(&q, " AND k.key < $%d", len(args))
		}
	}
	return q.String(), args
}

// watchedItems runs q and calls fn with each row's item.
func (s *Store) watchedItems(ctx context.Context, fn func(*rappel.WatchedItem) error, q string, args ...any) error {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("reading watched items: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var list string
		var body []byte
		if err := rows.Scan(&list, &body); err != nil {
			return unreachable(fmt.Errorf("reading watched items: %w", err))
		}
		if body == nil {
			continue // its list was deleted in the meantime
		}
		var it storedWatchItem
		if err := json.Unmarshal(body, &it); err != nil {
			return fmt.Errorf("decoding watchlist item: %w", err)
		}
		if err := fn(&rappel.WatchedItem{List: list, Item: it.Item, Keys: it.Keys}); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return unreachable(fmt.Errorf("reading watched items: %w", err))
	}
	return nil
}

// prefixEnd returns the smallest byte string greater than every string
// starting with p, nil when there is none (p empty or all 0xff).
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// AddWatchHits stores the hits not stored yet in one transaction: it
// takes a share lock on the lists the hits are of, and inserts those of
// the lists found, each ON CONFLICT DO NOTHING, so that a hit stored
// already keeps its first time and its handling and one of a list deleted
// meanwhile is dropped.
func (s *Store) AddWatchHits(ctx context.Context, hits []*rappel.WatchHit) error {
	if s.pool == nil {
		return errNotOpen
	}
	if len(hits) == 0 {
		return nil
	}
	var lists []string
	seen := make(map[string]bool)
	for _, h := range hits {
		if !seen[h.Watchlist] {
			seen[h.Watchlist] = true
			lists = append(lists, h.Watchlist)
		}
	}
	type hitRow struct {
		list, id, cand, body string
		at                   time.Time
	}
	rows := make([]hitRow, 0, len(hits))
	for _, h := range hits {
		cand, err := json.Marshal(h.Candidate)
		if err != nil {
			return fmt.Errorf("encoding watchlist hit %s: its candidate: %w", h.ID, err)
		}
		bare := *h
		bare.Candidate = nil
		body, err := json.Marshal(&bare)
		if err != nil {
			return fmt.Errorf("encoding watchlist hit %s: %w", h.ID, err)
		}
		rows = append(rows, hitRow{h.Watchlist, h.ID, string(cand), string(body), h.MatchedAt.UTC()})
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		found, err := tx.Query(ctx, `SELECT id FROM watchlists WHERE id = ANY($1) FOR SHARE`, lists)
		if err != nil {
			return fmt.Errorf("storing watchlist hits: %w", err)
		}
		live, err := pgx.CollectRows(found, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("storing watchlist hits: %w", err)
		}
		kept := make(map[string]bool, len(live))
		for _, l := range live {
			kept[l] = true
		}
		var ls, ids, cands, bodies []string
		var ats []time.Time
		for _, r := range rows {
			if kept[r.list] {
				ls, ids, cands, bodies, ats = append(ls, r.list), append(ids, r.id), append(cands, r.cand), append(bodies, r.body), append(ats, r.at)
			}
		}
		if len(ls) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, `INSERT INTO watchlist_hits (list, hit_id, matched_at, candidate, body)
			SELECT l, h, m, c, b::JSONB FROM unnest($1::TEXT[], $2::TEXT[], $3::TIMESTAMPTZ[], $4::TEXT[], $5::TEXT[]) AS t (l, h, m, c, b)
			ON CONFLICT (list, hit_id) DO NOTHING`, ls, ids, ats, cands, bodies); err != nil {
			return fmt.Errorf("storing watchlist hits: %w", err)
		}
		return nil
	})
}

// WatchHits returns at most limit hits of list id, newest first, after
// the hit after. A list's hits are read whole and paged by
// rappel.PageWatchHits, as the Pebble store pages them: a list has hits
// for the recalls that name its items, not for every item.
func (s *Store) WatchHits(ctx context.Context, id, after string, limit int) ([]*rappel.WatchHit, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	rows, err := s.pool.Query(ctx, `SELECT candidate, body FROM watchlist_hits WHERE list = $1`, id)
	if err != nil {
		return nil, fmt.Errorf("reading watchlist hits: %w", err)
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rappel.WatchHit, error) {
		var cand string
		var body []byte
		if err := r.Scan(&cand, &body); err != nil {
			return nil, err
		}
		return decodeWatchHit(cand, body)
	})
	if err != nil {
		return nil, fmt.Errorf("reading watchlist hits: %w", err)
	}
	return rappel.PageWatchHits(all, after, limit), nil
}

// SetWatchHitHandled sets the hit's HandledAt in its body, in one
// statement: handled_at is written as encoding/json writes it, and left
// out when at is zero (the field is omitzero), as in the Pebble store.
func (s *Store) SetWatchHitHandled(ctx context.Context, id, hit string, at time.Time) (*rappel.WatchHit, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	set := `body - 'handled_at'`
	args := []any{id, hit}
	if !at.IsZero() {
		js, err := json.Marshal(at)
		if err != nil {
			return nil, fmt.Errorf("encoding watchlist hit %s: its handling time: %w", hit, err)
		}
		set = `body || jsonb_build_object('handled_at', $3::JSONB)`
		args = append(args, string(js))
	}
	var cand string
	var body []byte
	err := s.pool.QueryRow(ctx, `UPDATE watchlist_hits SET body = `+set+` WHERE list = $1 AND hit_id = $2
		RETURNING candidate, body`, args...).Scan(&cand, &body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, rappel.NoWatchHit(id, hit)
	}
	if err != nil {
		return nil, fmt.Errorf("storing watchlist hit %s: %w", hit, err)
	}
	h, err := decodeWatchHit(cand, body)
	if err != nil {
		return nil, err
	}
	h.HandledAt = at // as given, as the Pebble store returns it
	return h, nil
}

// decodeWatchHit returns the hit of a row: its body with its candidate.
func decodeWatchHit(cand string, body []byte) (*rappel.WatchHit, error) {
	h := new(rappel.WatchHit)
	if err := json.Unmarshal(body, h); err != nil {
		return nil, fmt.Errorf("decoding watchlist hit: %w", err)
	}
	h.Candidate = rappel.RawJSON(cand)
	return h, nil
}
