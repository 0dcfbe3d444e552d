package rappel

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A watchlist is a catalog an API key registers once (POST
// /recall/watchlists): every refresh matches its new, changed and archived
// recalls against every list, and each item a recall names becomes a hit,
// delivered to the key's webhook endpoints as a watchlist.match event and
// listed by GET /recall/watchlists/{id}/hits (docs/api.md, "Watching a
// catalog").

// EventWatchlistMatch is the webhook event of a watchlist's hit.
const EventWatchlistMatch = "watchlist.match"

// Limits of watchlists.
const (
	// MaxWatchlistsPerKey is how many lists one API key may have.
	MaxWatchlistsPerKey = 10
	// MaxWatchItems is the most items one list holds.
	MaxWatchItems = 100_000
	// MaxWatchlistName bounds a list's name, in bytes.
	MaxWatchlistName = 200
)

// CatalogItem is one product of a retailer's catalog, as POST
// /recall/match and POST /recall/watchlists read it and package match
// matches it. Every field is optional, but an item holds at least a
// barcode, a brand, a name or a model.
type CatalogItem struct {
	// ID is the caller's identifier of the item, echoed in answers and
	// hits.
	ID    string `json:"id,omitempty"`
	Name  string `json:"name,omitempty"`
	Brand string `json:"brand,omitempty"`
	Model string `json:"model,omitempty"`
	// GTIN is the item's barcode in its GTIN-14 form (ParseGTIN).
	GTIN GTIN `json:"gtin,omitempty"`
	// Lot and Date are the lot code and the best-before or other date
	// printed on the item, as printed.
	Lot  string `json:"lot,omitempty"`
	Date string `json:"date,omitempty"`
	// Year is a vehicle's model year, 0 when not given.
	Year int `json:"year,omitempty"`
	// Category is the retailer's own category, for the record: matching
	// does not depend on it.
	Category string `json:"category,omitempty"`
	// Lang is the language of the candidates' titles, "" for English.
	Lang string `json:"lang,omitempty"`
}

// Watchlist is a stored list of one API key. Its items are stored beside
// it (WatchlistStore).
type Watchlist struct {
	ID string `json:"id"`
	// Key is the ID of the API key that registered the list: only it sees
	// the list and its hits.
	Key       string    `json:"key"`
	Name      string    `json:"name,omitempty"`
	Size      int       `json:"items"` // how many items it holds
	CreatedAt time.Time `json:"created_at"`
}

// WatchlistView is a list as the API shows it.
type WatchlistView struct {
	ID        string    `json:"id"`
	Name      string    `json:"name,omitempty"`
	Size      int       `json:"items"`
	CreatedAt time.Time `json:"created_at"`
}

// View returns w as the API shows it: without its key.
func (w *Watchlist) View() *WatchlistView {
	return &WatchlistView{ID: w.ID, Name: w.Name, Size: w.Size, CreatedAt: w.CreatedAt}
}

// WatchedItem is an item of a list with the keys matching finds it by
// (package match's ItemKeys): a barcode, the first word of a brand or a
// name, a model, a vehicle's make.
type WatchedItem struct {
	List string
	Item CatalogItem
	Keys []string
}

// WatchHit is one item of a list that a recall names: the recall's
// record, what the matching said (the status, recalled or check_lot, and
// the candidate with its evidence, as POST /recall/match answers it) and
// the event that made it. A hit's ID is a digest of the list, the item,
// the record, the event's kind (archived or not), the status and the
// notice's codes, so that a recall matched again unchanged makes no new
// hit while one that widens (new lots) or is archived does.
type WatchHit struct {
	ID        string `json:"id"`
	Watchlist string `json:"watchlist_id"`
	Item      string `json:"item_id"`
	RecordID  string `json:"record_id"`
	RecallID  string `json:"recall_id"`
	// Event is the record event that made the hit: recall.created,
	// recall.updated or recall.archived.
	Event  string `json:"event"`
	Status string `json:"status"`
	// Candidate is the match's candidate as POST /recall/match answers
	// it: confidence, matched fields, why, applicability.
	Candidate RawJSON   `json:"candidate"`
	MatchedAt time.Time `json:"matched_at"`
	// HandledAt is when the key marked the hit handled; zero while not.
	HandledAt time.Time `json:"handled_at,omitzero"`
}

// WatchHitView is a hit as the API shows it: handled_at null while not
// handled.
type WatchHitView struct {
	ID        string     `json:"id"`
	Watchlist string     `json:"watchlist_id"`
	Item      string     `json:"item_id"`
	RecordID  string     `json:"record_id"`
	RecallID  string     `json:"recall_id"`
	Event     string     `json:"event"`
	Status    string     `json:"status"`
	Candidate RawJSON    `json:"candidate"`
	MatchedAt time.Time  `json:"matched_at"`
	Handled   bool       `json:"handled"`
	HandledAt *time.Time `json:"handled_at"`
}

// View returns h as the API shows it.
func (h *WatchHit) View() *WatchHitView {
	v := &WatchHitView{ID: h.ID, Watchlist: h.Watchlist, Item: h.Item, RecordID: h.RecordID, RecallID: h.RecallID,
		Event: h.Event, Status: h.Status, Candidate: h.Candidate, MatchedAt: h.MatchedAt}
	if !h.HandledAt.IsZero() {
		t := h.HandledAt
		v.Handled, v.HandledAt = true, &t
	}
	return v
}

// WatchlistStore keeps watchlists, their items, the index that finds
// items by key, and their hits, durably; every write is synced (or
// committed). Methods honour ctx before doing I/O.
type WatchlistStore interface {
	// CreateWatchlist stores w and its items, each findable by its keys,
	// unless w.Key has max lists already, which is a 400 *Error.
	CreateWatchlist(ctx context.Context, w *Watchlist, items []WatchedItem, max int) error
	// Watchlist returns the list with id, or ENOTFOUND.
	Watchlist(ctx context.Context, id string) (*Watchlist, error)
	// Watchlists returns the lists of API key key, oldest first.
	Watchlists(ctx context.Context, key string) ([]*Watchlist, error)
	// WatchItems returns at most limit items of list id whose ids sort
	// after after, in id order.
	WatchItems(ctx context.Context, id, after string, limit int) ([]CatalogItem, error)
	// DeleteWatchlist removes the list with id, its items, their keys and
	// its hits, or answers ENOTFOUND.
	DeleteWatchlist(ctx context.Context, id string) error
	// WatchedItems calls fn for every item of every list holding one of
	// the keys exact, or a key starting with one of prefixes, each item
	// once per key it is found by. It reads what it finds, never every
	// item: a refresh's cost grows with its changes.
	WatchedItems(ctx context.Context, exact, prefixes []string, fn func(*WatchedItem) error) error
	// AddWatchHits stores the hits not stored yet (by list and ID) and
	// leaves the others as they are (their first MatchedAt, their
	// handling).
	AddWatchHits(ctx context.Context, hits []*WatchHit) error
	// WatchHits returns at most limit hits of list id, newest first (by
	// MatchedAt, then ID), after the hit after ("" from the newest).
	WatchHits(ctx context.Context, id, after string, limit int) ([]*WatchHit, error)
	// SetWatchHitHandled sets the HandledAt of the hit hit of list id to
	// at (zero: not handled) and returns it, or answers ENOTFOUND.
	SetWatchHitHandled(ctx context.Context, id, hit string, at time.Time) (*WatchHit, error)
}

// Watchlists is the watchlist service the edge calls. key is the caller's
// API key ID: a list of another key is ENOTFOUND, as one that does not
// exist.
type Watchlists interface {
	// Create stores a list of the items, each checked by the edge, with
	// the keys matching finds them by; a 400 when the key has
	// MaxWatchlistsPerKey lists already.
	Create(ctx context.Context, key, name string, items []CatalogItem) (*WatchlistView, error)
	List(ctx context.Context, key string) ([]*WatchlistView, error)
	Get(ctx context.Context, key, id string) (*WatchlistView, error)
	Items(ctx context.Context, key, id, after string, limit int) ([]CatalogItem, error)
	Delete(ctx context.Context, key, id string) error
	Hits(ctx context.Context, key, id, after string, limit int) ([]*WatchHitView, error)
	// Handle marks the hit handled (or, with handled false, not) and
	// returns it.
	Handle(ctx context.Context, key, id, hit string, handled bool) (*WatchHitView, error)
}

// TooManyWatchlists is the 400 of a key at its cap of max lists.
func TooManyWatchlists(max int) *Error {
	return BadRequest(fmt.Sprintf("this API key has %d watchlists, the most one key may have", max),
		"delete one with DELETE /recall/watchlists/{id} first, or put its items in another list")
}

// NoWatchlist is the ENOTFOUND of a list that does not exist, or that
// another key owns: the two answer alike.
func NoWatchlist(id string) *Error {
	return Errorf(ENOTFOUND, "No watchlist of this API key has id %s; list them with GET /recall/watchlists.", Quote(id))
}

// NoWatchHit is the ENOTFOUND of a hit the list does not have.
func NoWatchHit(list, hit string) *Error {
	return Errorf(ENOTFOUND, "The watchlist %s has no hit with id %s; list its hits with GET /recall/watchlists/%s/hits.", Quote(list), Quote(hit), list)
}

// SortWatchlists orders lists oldest first, then by id, as
// WatchlistStore.Watchlists returns them.
func SortWatchlists(ws []*Watchlist) {
	slices.SortFunc(ws, func(a, b *Watchlist) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
}

// PageWatchHits sorts hits newest first (by MatchedAt, then ID) and
// returns at most limit of those after the hit with id after ("": from
// the first), as WatchlistStore.WatchHits pages them. An after that names
// no hit of the list gives an empty page: the edge checks cursors it
// hands out.
func PageWatchHits(hits []*WatchHit, after string, limit int) []*WatchHit {
	slices.SortFunc(hits, compareHits)
	start := 0
	if after != "" {
		i := slices.IndexFunc(hits, func(h *WatchHit) bool { return h.ID == after })
		if i < 0 {
			return nil
		}
		start = i + 1
	}
	hits = hits[start:]
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// compareHits orders hits newest first, then by id.
func compareHits(a, b *WatchHit) int {
	return cmp.Or(b.MatchedAt.Compare(a.MatchedAt), strings.Compare(a.ID, b.ID))
}
