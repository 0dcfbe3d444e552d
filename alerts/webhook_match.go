package alerts

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rappel-ca/rappel"
)

// HookMatcher turns a refresh's record events into webhook deliveries: one
// per enabled endpoint whose search matches the record and that takes the
// event's type, written with the events' matched marks in one
// transaction. An event's key is its type, record_id and content, so a
// record changed twice makes two events, and the nodes of a fleet, whose
// refreshes find the same change, make one: the first to commit.
type HookMatcher struct {
	Hooks  rappel.WebhookStore
	Outbox rappel.WebhookOutbox
	// Watchlists, when set, are matched with the same events
	// (watch_match.go): their hits are stored, and delivered as
	// watchlist.match events.
	Watchlists rappel.WatchlistStore
	matching
}

// NewHookMatcher returns a HookMatcher of endpoints' searches with GET
// /recall's engine ix, the real clock and the default logger.
func NewHookMatcher(ix Index) *HookMatcher { return &HookMatcher{matching: newMatching(ix)} }

// Drain matches every unacknowledged batch of src, oldest first, and
// acknowledges each once its deliveries are durable. A crash between the
// two leaves the batch to be matched again, which the matched marks turn
// into a no-op. A source's first snapshot into a node that held none of
// its records (Initial) announces nothing.
func (m *HookMatcher) Drain(ctx context.Context, src rappel.RecordEventsSource) error {
	batches, err := src.RecordEvents(ctx)
	if err != nil {
		return fmt.Errorf("reading record events: %w", err)
	}
	for i := range batches {
		b := &batches[i]
		if !b.Initial {
			if _, err := m.Match(ctx, b); err != nil {
				return err
			}
		}
		if err := src.AckRecordEvents(ctx, b.Seq); err != nil {
			return fmt.Errorf("acknowledging record events %d: %w", b.Seq, err)
		}
	}
	return nil
}

// hookEvent is one record event of a batch.
type hookEvent struct {
	typ, key string
	rec      *rappel.Record
}

// Match writes the deliveries of the events of e no node has matched yet
// and returns how many it wrote.
func (m *HookMatcher) Match(ctx context.Context, e *rappel.RecordEvents) (int, error) {
	events, byKey, keys, err := m.readEvents(ctx, e)
	if err != nil {
		return 0, err
	}
	keys, err = m.Outbox.UnmatchedEvents(ctx, keys)
	if err != nil {
		return 0, fmt.Errorf("reading matched events: %w", err)
	}
	if len(keys) == 0 {
		return 0, nil
	}
	hooks := map[string]*rappel.Webhook{}
	var ss []saved
	err = m.Hooks.ForEachWebhook(ctx, func(w *rappel.Webhook) error {
		if w.Status == rappel.WebhookEnabled {
			hooks[w.ID] = w
			ss = append(ss, saved{id: w.ID, search: w.Search})
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reading webhooks: %w", err)
	}
	recs := make([]*rappel.Record, len(keys))
	evOf := map[string]*hookEvent{} // by record_id: one event per record and batch
	unmatched := make([]*hookEvent, len(keys))
	for i, k := range keys {
		ev := &events[byKey[k]]
		recs[i] = ev.rec
		evOf[ev.rec.RecordID] = ev
		unmatched[i] = ev
	}
	var rows []*rappel.Delivery
	if len(ss) > 0 {
		pairs, err := m.matchSaved(ctx, newSavedIndex(ss, m.Index.CategoryKey), recs)
		if err != nil {
			return 0, fmt.Errorf("matching record events: %w", err)
		}
		now := m.Now().UTC()
		for _, p := range pairs {
			ev := evOf[p.record]
			if !hooks[p.sub].Wants(ev.typ) {
				continue
			}
			body, err := hookPayload(ev.typ, e.At, ev.rec)
			if err != nil {
				return 0, err
			}
			rows = append(rows, &rappel.Delivery{Webhook: p.sub, Event: ev.key, Payload: body,
				OutboxState: rappel.OutboxState{Seq: e.Seq, Status: rappel.AlertPending, CreatedAt: now, NextAt: now}})
		}
	}
	wkeys, wrows, err := m.watchHits(ctx, e.At, unmatched, hooks)
	if err != nil {
		return 0, fmt.Errorf("matching watchlists with batch %d: %w", e.Seq, err)
	}
	for _, d := range wrows {
		d.Seq = e.Seq
	}
	keys, rows = append(keys, wkeys...), append(rows, wrows...)
	n, err := m.Outbox.CommitEvents(ctx, keys, rows)
	if err != nil {
		return 0, fmt.Errorf("writing webhook deliveries of batch %d: %w", e.Seq, err)
	}
	m.Logger.Info("matched record events", "seq", e.Seq, "events", len(keys), "endpoints", len(ss), "deliveries", n, "skipped", len(rows)-n)
	return n, nil
}

// readEvents reads the records of e's events, skipping those deleted
// since, and returns the events, each event key's place among them, and
// the keys in order.
func (m *HookMatcher) readEvents(ctx context.Context, e *rappel.RecordEvents) (events []hookEvent, byKey map[string]int, keys []string, err error) {
	byKey = map[string]int{}
	for _, list := range []struct {
		typ string
		ids []string
	}{{rappel.EventRecallCreated, e.Created}, {rappel.EventRecallUpdated, e.Updated}, {rappel.EventRecallArchived, e.Archived}} {
		for _, id := range list.ids {
			rec, err := m.Records.Record(ctx, id)
			if rappel.ErrorCode(err) == rappel.ENOTFOUND {
				continue // deleted since: nothing to announce
			}
			if err != nil {
				return nil, nil, nil, fmt.Errorf("reading recall %s: %w", id, err)
			}
			key, err := eventKey(list.typ, rec)
			if err != nil {
				return nil, nil, nil, err
			}
			byKey[key] = len(events)
			events = append(events, hookEvent{typ: list.typ, key: key, rec: rec})
			keys = append(keys, key)
		}
	}
	return events, byKey, keys, nil
}

// eventKey names an event across a fleet: its type, the record_id and the
// hash of the record without its fetched_at, which each node sets to its
// own refresh time.
func eventKey(typ string, rec *rappel.Record) (string, error) {
	c := *rec
	c.FetchedAt = ""
	h, err := rappel.ContentHash(&c)
	if err != nil {
		return "", fmt.Errorf("hashing recall %s: %w", rec.RecordID, err)
	}
	return typ + ":" + rec.RecordID + ":" + h, nil
}

// hookPayload is the body of a delivery: the event's type and time, and
// the record as GET /recall/{record_id} serves it.
func hookPayload(typ string, at time.Time, rec *rappel.Record) (json.RawMessage, error) {
	return json.Marshal(struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Data      struct {
			Record *rappel.Record `json:"record"`
		} `json:"data"`
	}{Type: typ, Timestamp: at.UTC().Format(time.RFC3339), Data: struct {
		Record *rappel.Record `json:"record"`
	}{rec}})
}
