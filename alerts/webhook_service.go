package alerts

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/rappel-ca/rappel"
)

// HookService is the rappel.Webhooks the edge calls: endpoints per API
// key, each seen by its key alone.
type HookService struct {
	Store rappel.WebhookStore
	// Sender posts the test event with its client.
	Sender *HookSender
	// Max is how many endpoints a key may have.
	Max    int
	Now    func() time.Time
	Random io.Reader
}

var _ rappel.Webhooks = (*HookService)(nil)

// NewHookService returns a HookService on store, posting with sender.
func NewHookService(store rappel.WebhookStore, sender *HookSender) *HookService {
	return &HookService{Store: store, Sender: sender, Max: rappel.MaxWebhooksPerKey, Now: time.Now, Random: rand.Reader}
}

// Create validates req and stores a new enabled endpoint with a new
// secret.
func (s *HookService) Create(ctx context.Context, key string, req *rappel.WebhookRequest) (*rappel.WebhookCreated, error) {
	u, search, events, err := req.Validate(s.Sender.Client.AllowHTTPLoopback)
	if err != nil {
		return nil, err
	}
	id, err := NewToken(s.Random)
	if err != nil {
		return nil, err
	}
	secret, err := NewWebhookSecret(s.Random)
	if err != nil {
		return nil, err
	}
	w := &rappel.Webhook{ID: "wh_" + id, Key: key, URL: u, Search: search, Events: events, Secret: secret,
		Status: rappel.WebhookEnabled, CreatedAt: s.Now().UTC().Truncate(time.Microsecond)}
	if err := s.Store.CreateWebhook(ctx, w, s.Max); err != nil {
		return nil, err
	}
	return &rappel.WebhookCreated{WebhookView: *w.View(), Secret: secret}, nil
}

// List returns key's endpoints, oldest first.
func (s *HookService) List(ctx context.Context, key string) ([]*rappel.WebhookView, error) {
	ws, err := s.Store.Webhooks(ctx, key)
	if err != nil {
		return nil, err
	}
	out := make([]*rappel.WebhookView, len(ws))
	for i, w := range ws {
		out[i] = w.View()
	}
	return out, nil
}

// own returns key's endpoint id; another key's is ENOTFOUND.
func (s *HookService) own(ctx context.Context, key, id string) (*rappel.Webhook, error) {
	w, err := s.Store.Webhook(ctx, id)
	if err != nil {
		return nil, err
	}
	if w.Key != key {
		return nil, rappel.NoWebhook(id)
	}
	return w, nil
}

// Get returns key's endpoint id.
func (s *HookService) Get(ctx context.Context, key, id string) (*rappel.WebhookView, error) {
	w, err := s.own(ctx, key, id)
	if err != nil {
		return nil, err
	}
	return w.View(), nil
}

// Delete removes key's endpoint id; its pending deliveries are dropped
// by the sender.
func (s *HookService) Delete(ctx context.Context, key, id string) error {
	if _, err := s.own(ctx, key, id); err != nil {
		return err
	}
	return s.Store.DeleteWebhook(ctx, id)
}

// Test posts a webhook.test event to key's endpoint id now, disabled or
// not (a receiver being fixed is tested before it is enabled again), and
// returns the receiver's answer: its HTTP status, or that it did not
// answer, without the cause (a refused connection, a timeout), which would
// let a caller probe the ports of any public host. The cause goes to the
// sender's log. Nothing is recorded or retried.
func (s *HookService) Test(ctx context.Context, key, id string) (*rappel.WebhookTestResult, error) {
	w, err := s.own(ctx, key, id)
	if err != nil {
		return nil, err
	}
	nonce, err := NewToken(s.Random)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	body, err := json.Marshal(map[string]any{"type": rappel.EventWebhookTest, "timestamp": now.Format(time.RFC3339),
		"data": map[string]string{"endpoint_id": w.ID}})
	if err != nil {
		return nil, fmt.Errorf("encoding test event: %w", err)
	}
	msgID := "msg_test_" + nonce
	a := s.Sender.post(ctx, w, msgID, rappel.EventWebhookTest, body, now)
	if !a.ok() {
		s.Sender.Logger.Info("webhook test event failed", "endpoint", w.ID, "webhook_id", msgID, "error", a.describe())
	}
	return &rappel.WebhookTestResult{WebhookAttempt: rappel.WebhookAttempt{At: now, ID: msgID, Type: rappel.EventWebhookTest,
		StatusCode: a.status, OK: a.ok(), Error: a.public()}}, nil
}
