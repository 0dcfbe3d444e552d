package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rappel-ca/rappel"
)

// schemaWebhooks holds webhook endpoints, their deliveries (an outbox as
// alert_outbox, with the payload to send) and the event keys already
// matched by some node.
//
// An endpoint is kept whole as JSONB, like a subscription, next to its key
// for listing. webhook_keys has a row per API key that ever registered an
// endpoint: creating one locks it, so that two nodes creating endpoints of
// one key at once cannot both pass the cap.
var schemaWebhooks = `
CREATE TABLE IF NOT EXISTS webhooks (
	id         TEXT PRIMARY KEY,
	key        TEXT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	body       JSONB NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_key ON webhooks (key);
CREATE TABLE IF NOT EXISTS webhook_keys (
	key TEXT PRIMARY KEY
);` + outboxTables(webhookOutbox)

var webhookOutbox = outbox{rows: "webhook_outbox", matched: "webhook_matched", payload: true, what: "webhook delivery"}

var (
	_ rappel.WebhookStore  = (*Store)(nil)
	_ rappel.WebhookOutbox = (*Store)(nil)
)

// CreateWebhook stores w unless its key has max endpoints already, in one
// transaction holding the key's row of webhook_keys.
func (s *Store) CreateWebhook(ctx context.Context, w *rappel.Webhook, max int) error {
	if s.pool == nil {
		return errNotOpen
	}
	body, err := json.Marshal(w)
	if err != nil {
		return fmt.Errorf("encoding webhook: %w", err)
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO webhook_keys (key) VALUES ($1) ON CONFLICT (key) DO NOTHING`, w.Key); err != nil {
			return fmt.Errorf("storing webhook: %w", err)
		}
		if _, err := tx.Exec(ctx, `SELECT key FROM webhook_keys WHERE key = $1 FOR UPDATE`, w.Key); err != nil {
			return fmt.Errorf("storing webhook: %w", err)
		}
		var n int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM webhooks WHERE key = $1`, w.Key).Scan(&n); err != nil {
			return fmt.Errorf("counting webhooks: %w", err)
		}
		if n >= int64(max) {
			return rappel.TooManyWebhooks(max)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO webhooks (id, key, created_at, body) VALUES ($1, $2, $3, $4)`,
			w.ID, w.Key, w.CreatedAt.UTC(), string(body)); err != nil {
			return fmt.Errorf("storing webhook: %w", err)
		}
		return nil
	})
}

// Webhook returns the endpoint with id, or ENOTFOUND.
func (s *Store) Webhook(ctx context.Context, id string) (*rappel.Webhook, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	var body []byte
	err := s.pool.QueryRow(ctx, `SELECT body FROM webhooks WHERE id = $1`, id).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, rappel.NoWebhook(id)
	}
	if err != nil {
		return nil, fmt.Errorf("reading webhook %s: %w", id, err)
	}
	return decodeWebhook(body)
}

// Webhooks returns the endpoints of key, oldest first.
func (s *Store) Webhooks(ctx context.Context, key string) ([]*rappel.Webhook, error) {
	return s.webhooks(ctx, `SELECT body FROM webhooks WHERE key = $1`, key)
}

// ForEachWebhook calls fn for every endpoint. Endpoints are few (a few
// dozen per key): they are read in one query, and fn runs with no
// connection held.
func (s *Store) ForEachWebhook(ctx context.Context, fn func(*rappel.Webhook) error) error {
	ws, err := s.webhooks(ctx, `SELECT body FROM webhooks`)
	if err != nil {
		return err
	}
	for _, w := range ws {
		if err := fn(w); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) webhooks(ctx context.Context, q string, args ...any) ([]*rappel.Webhook, error) {
	if s.pool == nil {
		return nil, errNotOpen
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("reading webhooks: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rappel.Webhook, error) {
		var body []byte
		if err := r.Scan(&body); err != nil {
			return nil, err
		}
		return decodeWebhook(body)
	})
	if err != nil {
		return nil, fmt.Errorf("reading webhooks: %w", err)
	}
	rappel.SortWebhooks(out)
	return out, nil
}

// PutWebhook replaces w; ENOTFOUND when it was deleted meanwhile.
func (s *Store) PutWebhook(ctx context.Context, w *rappel.Webhook) error {
	if s.pool == nil {
		return errNotOpen
	}
	body, err := json.Marshal(w)
	if err != nil {
		return fmt.Errorf("encoding webhook: %w", err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE webhooks SET body = $2 WHERE id = $1`, w.ID, string(body))
	if err != nil {
		return fmt.Errorf("storing webhook: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return rappel.NoWebhook(w.ID)
	}
	return nil
}

// DeleteWebhook removes the endpoint with id, or answers ENOTFOUND.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	if s.pool == nil {
		return errNotOpen
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM webhooks WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("deleting webhook: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return rappel.NoWebhook(id)
	}
	return nil
}

func decodeWebhook(body []byte) (*rappel.Webhook, error) {
	w := new(rappel.Webhook)
	if err := json.Unmarshal(body, w); err != nil {
		return nil, fmt.Errorf("decoding webhook: %w", err)
	}
	return w, nil
}

// UnmatchedEvents returns those of keys no node has marked as matched.
func (s *Store) UnmatchedEvents(ctx context.Context, keys []string) ([]string, error) {
	return s.unmatched(ctx, webhookOutbox, keys)
}

// CommitEvents marks event keys and writes the deliveries of those it
// marked, in one transaction, as CommitMatches does.
func (s *Store) CommitEvents(ctx context.Context, keys []string, ds []*rappel.Delivery) (int, error) {
	return s.commitMatches(ctx, webhookOutbox, keys, rappel.DeliveryRows(ds))
}

// ClaimDeliveries claims due deliveries for node, as ClaimAlerts does.
func (s *Store) ClaimDeliveries(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*rappel.Delivery, error) {
	rows, err := s.claim(ctx, webhookOutbox, node, now, lease, limit)
	return rappel.Deliveries(rows), err
}

// UpdateDeliveries records the outcome of claimed deliveries, as
// UpdateAlerts does.
func (s *Store) UpdateDeliveries(ctx context.Context, node string, ds []*rappel.Delivery) (int, error) {
	return s.update(ctx, webhookOutbox, node, rappel.DeliveryRows(ds))
}

// PendingDeliveries counts the deliveries still to be made, fleet-wide.
func (s *Store) PendingDeliveries(ctx context.Context) (int, error) {
	return s.pending(ctx, webhookOutbox)
}

// PruneDeliveries deletes final deliveries and event marks, as
// PruneAlerts does.
func (s *Store) PruneDeliveries(ctx context.Context, before time.Time) (int, int, error) {
	return s.prune(ctx, webhookOutbox, before)
}
