package kv

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/rappel-ca/rappel"
)

// Webhook keys live under w/: w/hook/<endpoint id> holds an endpoint,
// w/out/<endpoint id>\x00<event key> is a delivery (an outbox row, as the
// alerts' a/out/) and w/matched/<event key> marks an event as matched. The
// refreshes' record events wait under o/ev/<seq> until the webhooks
// acknowledge them.
const (
	webhookPrefix        = "w/"
	hookPrefix           = webhookPrefix + "hook/"
	webhookOutboxPrefix  = webhookPrefix + "out/"
	webhookMatchedPrefix = webhookPrefix + "matched/"
)

var webhookOutbox = outbox{rows: webhookOutboxPrefix, matched: webhookMatchedPrefix, what: "webhook delivery"}

var (
	_ rappel.WebhookStore       = (*Store)(nil)
	_ rappel.WebhookOutbox      = (*Store)(nil)
	_ rappel.RecordEventsSource = (*Store)(nil)
)

func hookKey(id string) []byte { return append([]byte(hookPrefix), id...) }

// CreateWebhook stores w, synced, unless its key has max endpoints
// already. s.mu serializes it with other writers, so that two creations
// cannot both pass the count.
func (s *Store) CreateWebhook(ctx context.Context, w *rappel.Webhook, max int) error {
	return s.locked(ctx, func() error {
		have, err := s.Webhooks(ctx, w.Key)
		if err != nil {
			return err
		}
		if len(have) >= max {
			return rappel.TooManyWebhooks(max)
		}
		return s.putWebhook(w)
	})
}

func (s *Store) putWebhook(w *rappel.Webhook) error {
	return s.putValue(hookKey(w.ID), w, "webhook")
}

// Webhook returns the endpoint with id, or ENOTFOUND.
func (s *Store) Webhook(ctx context.Context, id string) (*rappel.Webhook, error) {
	w := new(rappel.Webhook)
	found, err := s.getValue(ctx, hookKey(id), w)
	if err != nil {
		return nil, fmt.Errorf("reading webhook %s: %w", id, err)
	}
	if !found {
		return nil, rappel.NoWebhook(id)
	}
	return w, nil
}

// Webhooks returns the endpoints of key, oldest first. It scans every
// endpoint: a key has at most a few dozen, and all keys' together are few.
func (s *Store) Webhooks(ctx context.Context, key string) ([]*rappel.Webhook, error) {
	var out []*rappel.Webhook
	err := s.ForEachWebhook(ctx, func(w *rappel.Webhook) error {
		if w.Key == key {
			out = append(out, w)
		}
		return nil
	})
	rappel.SortWebhooks(out)
	return out, err
}

// ForEachWebhook calls fn for every endpoint in id order.
func (s *Store) ForEachWebhook(ctx context.Context, fn func(*rappel.Webhook) error) error {
	return scanValues(ctx, s, []byte(hookPrefix), "webhook", fn)
}

// PutWebhook replaces w durably; ENOTFOUND when it was deleted meanwhile,
// so that a delivery's outcome never brings a deleted endpoint back.
func (s *Store) PutWebhook(ctx context.Context, w *rappel.Webhook) error {
	return s.withHook(ctx, w.ID, func() error { return s.putWebhook(w) })
}

// DeleteWebhook removes the endpoint with id, durably. Its pending
// deliveries stay in the outbox: the sender drops them when it finds the
// endpoint gone.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	return s.withHook(ctx, id, func() error {
		if err := s.db.Delete(hookKey(id), pebble.Sync); err != nil {
			return fmt.Errorf("deleting webhook: %w", err)
		}
		return nil
	})
}

// withHook runs fn under s.mu once the endpoint id is known to exist, or
// answers ENOTFOUND.
func (s *Store) withHook(ctx context.Context, id string, fn func() error) error {
	return s.locked(ctx, func() error {
		ok, err := s.has(hookKey(id))
		if err != nil {
			return err
		}
		if !ok {
			return rappel.NoWebhook(id)
		}
		return fn()
	})
}

// locked runs fn under s.mu, the lock of every writer, on an open store.
func (s *Store) locked(ctx context.Context, fn func() error) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn()
}

// UnmatchedEvents returns the event keys without a matched mark, in order.
func (s *Store) UnmatchedEvents(ctx context.Context, keys []string) ([]string, error) {
	return s.unmatched(ctx, webhookOutbox, keys)
}

// CommitEvents marks event keys as matched and writes their deliveries,
// as CommitMatches does for alerts.
func (s *Store) CommitEvents(ctx context.Context, keys []string, ds []*rappel.Delivery) (int, error) {
	return s.commitMatches(ctx, webhookOutbox, "CommitEvents", keys, rappel.DeliveryRows(ds))
}

// ClaimDeliveries claims due webhook deliveries, as ClaimAlerts does.
func (s *Store) ClaimDeliveries(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*rappel.Delivery, error) {
	rows, err := s.claim(ctx, webhookOutbox, "ClaimDeliveries", node, now, lease, limit)
	return rappel.Deliveries(rows), err
}

// UpdateDeliveries records the outcome of claimed deliveries, as
// UpdateAlerts does.
func (s *Store) UpdateDeliveries(ctx context.Context, node string, ds []*rappel.Delivery) (int, error) {
	return s.update(ctx, webhookOutbox, "UpdateDeliveries", node, rappel.DeliveryRows(ds))
}

// PendingDeliveries counts the webhook deliveries still to be made, for
// the outbox-depth metric.
func (s *Store) PendingDeliveries(ctx context.Context) (int, error) {
	d, err := s.outboxDepth(ctx, webhookOutbox)
	return d.Rows, err
}

// RecordEvents returns the batches of record events not yet acknowledged,
// oldest first.
func (s *Store) RecordEvents(ctx context.Context) ([]rappel.RecordEvents, error) {
	return queued[rappel.RecordEvents](ctx, s, recordEventsQueue)
}

// AckRecordEvents deletes the batch of record events numbered seq,
// durably.
func (s *Store) AckRecordEvents(ctx context.Context, seq uint64) error {
	return s.ack(ctx, recordEventsQueue, seq)
}

// PruneDeliveries deletes final deliveries and event marks, as
// PruneAlerts does.
func (s *Store) PruneDeliveries(ctx context.Context, before time.Time) (int, int, error) {
	return s.prune(ctx, webhookOutbox, "PruneDeliveries", before)
}
