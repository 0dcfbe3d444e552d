package alerts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/match"
)

// Watchlists are matched with the record events, by HookMatcher: the
// batch's records give the keys (match.RecordKeys) that find the items
// that may match them in the store's index, those items alone are
// screened against the batch's records (match.Batch), and each item a
// recall names (recalled or check_lot) becomes a hit, stored, and a
// watchlist.match delivery to each enabled endpoint of the list's key
// that takes the event. A refresh's cost grows with its changes and the
// items they name, not with the lists' size.

// hitStatuses are the statuses that make a hit: the product is the
// notice's. A possible match (words alone) is not sent; a catalog can be
// screened for those with POST /recall/match.
var hitStatuses = []string{match.StatusRecalled, match.StatusCheckLot}

// watchEventPrefix starts the event key of a hit's deliveries.
const watchEventPrefix = rappel.EventWatchlistMatch + ":"

// watchHits returns the hits of the events' records, stored, and the
// deliveries of each to the endpoints of hooks, with their event keys to
// mark. hooks are the enabled endpoints.
func (m *HookMatcher) watchHits(ctx context.Context, at time.Time, events []*hookEvent, hooks map[string]*rappel.Webhook) (keys []string, rows []*rappel.Delivery, err error) {
	if m.Watchlists == nil || len(events) == 0 {
		return nil, nil, nil
	}
	watched, err := m.watchedBy(ctx, events)
	if err != nil || len(watched) == 0 {
		return nil, nil, err
	}
	hits, err := m.screenWatched(ctx, at, events, watched)
	if err != nil || hits.len() == 0 {
		return nil, nil, err
	}
	if err := m.Watchlists.AddWatchHits(ctx, hits.list); err != nil {
		return nil, nil, fmt.Errorf("storing watchlist hits: %w", err)
	}
	keys, rows, err = m.hitDeliveries(ctx, at, hits, hooks)
	if err != nil {
		return nil, nil, err
	}
	m.Logger.Info("matched watchlists", "records", len(events), "items_found", len(watched), "hits", len(hits.list), "deliveries", len(rows))
	return keys, rows, nil
}

// watchedBy returns the items the events' records may match, each once:
// those the records' keys find in the store's index.
func (m *HookMatcher) watchedBy(ctx context.Context, events []*hookEvent) ([]rappel.WatchedItem, error) {
	var exact, prefixes []string
	for _, ev := range events {
		e, p := match.RecordKeys(ev.rec)
		exact, prefixes = append(exact, e...), append(prefixes, p...)
	}
	type itemKey struct{ list, item string }
	seen := map[itemKey]bool{}
	var watched []rappel.WatchedItem
	err := m.Watchlists.WatchedItems(ctx, dedupe(exact), dedupe(prefixes), func(w *rappel.WatchedItem) error {
		k := itemKey{w.List, w.Item.ID}
		if !seen[k] {
			seen[k] = true
			watched = append(watched, *w)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("finding watched items: %w", err)
	}
	return watched, nil
}

// watchHitSet is a batch's hits, with the item and the event of each.
type watchHitSet struct {
	list  []*rappel.WatchHit
	item  map[*rappel.WatchHit]*rappel.WatchedItem
	event map[*rappel.WatchHit]*hookEvent
}

func (h *watchHitSet) len() int { return len(h.list) }

// screenWatched screens watched against the events' records alone and
// returns a hit per item and record it names recalled or check_lot.
func (m *HookMatcher) screenWatched(ctx context.Context, at time.Time, events []*hookEvent, watched []rappel.WatchedItem) (*watchHitSet, error) {
	recs := make([]*rappel.Record, len(events))
	evOf := map[string]*hookEvent{}
	for i, ev := range events {
		recs[i] = ev.rec
		evOf[ev.rec.RecordID] = ev
	}
	items := make([]match.Item, len(watched))
	for i := range watched {
		items[i] = watched[i].Item
	}
	results, err := match.Batch(recs, rappel.DatasetInfo{UpdatedAt: at}).Screen(ctx, items)
	if err != nil {
		return nil, fmt.Errorf("screening watched items: %w", err)
	}
	now := m.Now().UTC()
	hits := &watchHitSet{item: map[*rappel.WatchHit]*rappel.WatchedItem{}, event: map[*rappel.WatchHit]*hookEvent{}}
	for i, res := range results {
		for _, c := range res.Candidates {
			if !contains(hitStatuses, c.Status) {
				continue
			}
			ev := evOf[c.RecordID]
			h, err := newHit(&watched[i], ev, &c, now)
			if err != nil {
				return nil, err
			}
			hits.list = append(hits.list, h)
			hits.item[h], hits.event[h] = &watched[i], ev
		}
	}
	return hits, nil
}

// hitDeliveries returns a delivery of each hit to each endpoint of hooks
// of its list's key taking watchlist.match, and their event keys.
func (m *HookMatcher) hitDeliveries(ctx context.Context, at time.Time, hits *watchHitSet, hooks map[string]*rappel.Webhook) (keys []string, rows []*rappel.Delivery, err error) {
	byKey := map[string][]*rappel.Webhook{}
	for _, w := range hooks {
		if w.Wants(rappel.EventWatchlistMatch) {
			byKey[w.Key] = append(byKey[w.Key], w)
		}
	}
	now := m.Now().UTC()
	lists := map[string]*rappel.Watchlist{}
	for _, h := range hits.list {
		wl, ok := lists[h.Watchlist]
		if !ok {
			wl, err = m.Watchlists.Watchlist(ctx, h.Watchlist)
			if rappel.ErrorCode(err) == rappel.ENOTFOUND {
				wl, err = nil, nil // deleted meanwhile
			}
			if err != nil {
				return nil, nil, fmt.Errorf("reading watchlist %s: %w", h.Watchlist, err)
			}
			lists[h.Watchlist] = wl
		}
		if wl == nil || len(byKey[wl.Key]) == 0 {
			continue
		}
		key := watchEventPrefix + h.Watchlist + ":" + h.ID
		body, err := watchPayload(at, wl, &hits.item[h].Item, h, hits.event[h].rec)
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, key)
		for _, w := range byKey[wl.Key] {
			rows = append(rows, &rappel.Delivery{Webhook: w.ID, Event: key, Payload: body,
				OutboxState: rappel.OutboxState{Status: rappel.AlertPending, CreatedAt: now, NextAt: now}})
		}
	}
	return keys, rows, nil
}

// newHit is the hit of item w and candidate c of the event ev. Its ID is
// a digest of what makes it: the list, the item, the record, whether the
// record is archived, and the candidate's status and codes
// (match.HitCodes), so that the same recall matched again unchanged is the
// same hit and one that widens or is archived is a new one.
func newHit(w *rappel.WatchedItem, ev *hookEvent, c *match.Candidate, now time.Time) (*rappel.WatchHit, error) {
	archived := "0"
	if ev.typ == rappel.EventRecallArchived {
		archived = "1"
	}
	sum := sha256.Sum256([]byte(w.List + "\x00" + w.Item.ID + "\x00" + c.RecordID + "\x00" + archived + "\x00" + match.HitCodes(c)))
	cand, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encoding a hit's candidate: %w", err)
	}
	return &rappel.WatchHit{ID: "hit_" + hex.EncodeToString(sum[:12]), Watchlist: w.List, Item: w.Item.ID,
		RecordID: c.RecordID, RecallID: c.RecallID, Event: ev.typ, Status: c.Status, Candidate: cand, MatchedAt: now}, nil
}

// watchPayload is the body of a watchlist.match delivery: the list, the
// item as registered, the hit with its evidence, and the record as GET
// /recall/{record_id} serves it.
func watchPayload(at time.Time, wl *rappel.Watchlist, it *rappel.CatalogItem, h *rappel.WatchHit, rec *rappel.Record) (json.RawMessage, error) {
	type data struct {
		Watchlist *rappel.WatchlistView `json:"watchlist"`
		Item      *rappel.CatalogItem   `json:"item"`
		Hit       *rappel.WatchHitView  `json:"hit"`
		Record    *rappel.Record        `json:"record"`
	}
	return json.Marshal(struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Data      data   `json:"data"`
	}{Type: rappel.EventWatchlistMatch, Timestamp: at.UTC().Format(time.RFC3339),
		Data: data{Watchlist: wl.View(), Item: it, Hit: h.View(), Record: rec}})
}

// dedupe returns list without repeats, in first-seen order.
func dedupe(list []string) []string {
	seen := make(map[string]bool, len(list))
	out := list[:0:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
