package alerts

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"sync"
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

	// testMu makes one node's simultaneous tests of an endpoint one test.
	testMu sync.Mutex
	// tests counts the test events under way; stop ends them (Close).
	tests     sync.WaitGroup
	lifeOnce  sync.Once
	life      context.Context
	stop      context.CancelFunc
	closeOnce sync.Once
}

var _ rappel.Webhooks = (*HookService)(nil)

// NewHookService returns a HookService on store, posting with sender.
func NewHookService(store rappel.WebhookStore, sender *HookSender) *HookService {
	return &HookService{Store: store, Sender: sender, Max: rappel.MaxWebhooksPerKey, Now: time.Now, Random: rand.Reader}
}

// lifetime returns the context the test events run under, ended by Close.
func (s *HookService) lifetime() context.Context {
	s.lifeOnce.Do(func() { s.life, s.stop = context.WithCancel(context.Background()) })
	return s.life
}

// Close ends the test events under way and waits for them; their
// endpoints keep them pending (a later test replaces them). Later tests
// end at once.
func (s *HookService) Close() {
	s.lifetime()
	s.closeOnce.Do(s.stop)
	s.tests.Wait()
}

// Create validates req and stores a new enabled endpoint with a new
// secret.
func (s *HookService) Create(ctx context.Context, key string, req *rappel.WebhookRequest) (*rappel.WebhookCreated, error) {
	u, search, events, err := req.Validate(ctx, domainNames, s.Sender.Client.AllowHTTPLoopback)
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
	now := s.Now().UTC()
	for i, w := range ws {
		out[i] = s.view(w, now)
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
	return s.view(w, s.Now().UTC()), nil
}

// view is w as the API shows it at now: a test still pending well past
// its ReadyAt was cut off (its node stopped) and reads as failed.
func (s *HookService) view(w *rappel.Webhook, now time.Time) *rappel.WebhookView {
	v := w.View()
	if t := w.LastTest; t != nil && t.State == rappel.TestPending && !t.Pending(now, testGrace) {
		cut := *t
		cut.State, cut.Error = rappel.TestDone, testCutOff
		v.LastTest = &cut
	}
	return v
}

// Delete removes key's endpoint id; its pending deliveries are dropped
// by the sender.
func (s *HookService) Delete(ctx context.Context, key, id string) error {
	if _, err := s.own(ctx, key, id); err != nil {
		return err
	}
	return s.Store.DeleteWebhook(ctx, id)
}

// testSettle is what a test event's ReadyAt adds to the client's Timeout,
// which bounds its post: the post has ended by then, however it went.
const testSettle = time.Second

// testGrace is how long after its ReadyAt a test may stay pending before
// it is taken as cut off: its outcome is recorded within a store write of
// ReadyAt unless its node stopped.
const testGrace = time.Minute

// testCutOff is the error of a test whose node stopped before recording
// its outcome.
const testCutOff = "the test was cut off before its outcome was recorded (the node running it stopped); send another"

// Test queues a webhook.test event to key's endpoint id, disabled or not
// (a receiver being fixed is tested before it is enabled again), and
// returns it, pending. It is posted at once, in the background; its
// outcome is written to the endpoint's LastTest at the event's ReadyAt, a
// fixed delay after the request (the client's Timeout and testSettle),
// never sooner: a refused connection and a receiver that never answers
// show their outcome at the same moment, in the same words (hookAnswer's
// public), so neither the answer nor the outcome's timing tells whether a
// port is open. The cause goes to the sender's log. Nothing is retried.
// While a test of the endpoint is pending, Test returns that one.
func (s *HookService) Test(ctx context.Context, key, id string) (*rappel.WebhookTest, error) {
	s.testMu.Lock()
	defer s.testMu.Unlock()
	w, err := s.own(ctx, key, id)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	if w.LastTest.Pending(now, testGrace) {
		return w.LastTest, nil
	}
	nonce, err := NewToken(s.Random)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(map[string]any{"type": rappel.EventWebhookTest, "timestamp": now.Format(time.RFC3339),
		"data": map[string]string{"endpoint_id": w.ID}})
	if err != nil {
		return nil, fmt.Errorf("encoding test event: %w", err)
	}
	delay := s.Sender.Client.Timeout + testSettle
	t := &rappel.WebhookTest{ID: "msg_test_" + nonce, Type: rappel.EventWebhookTest, RequestedAt: now,
		ReadyAt: now.Add(delay), State: rappel.TestPending}
	if err := updateHook(ctx, s.Store, id, func(w *rappel.Webhook) { w.LastTest = t }); err != nil {
		return nil, err
	}
	life, test, ready := s.lifetime(), *t, time.Now().Add(delay)
	s.tests.Add(1)
	go func() {
		defer s.tests.Done()
		s.runTest(life, w, test, body, ready)
	}()
	return t, nil
}

// runTest posts test t to w, waits until ready (by the real clock), and
// records the outcome, unless life ends first or a newer test replaced
// t.
func (s *HookService) runTest(life context.Context, w *rappel.Webhook, t rappel.WebhookTest, body []byte, ready time.Time) {
	ctx, cancel := context.WithDeadline(life, ready)
	defer cancel()
	a := s.Sender.post(ctx, w, t.ID, rappel.EventWebhookTest, body, t.RequestedAt)
	if !a.ok() {
		s.Sender.Logger.Info("webhook test event failed", "endpoint", w.ID, "webhook_id", t.ID, "error", a.describe())
	}
	<-ctx.Done()
	if life.Err() != nil {
		return
	}
	t.State, t.StatusCode, t.OK, t.Error = rappel.TestDone, a.status, a.ok(), a.public()
	rctx, rcancel := context.WithTimeout(life, recordTimeout)
	defer rcancel()
	err := updateHook(rctx, s.Store, w.ID, func(cur *rappel.Webhook) {
		if cur.LastTest != nil && cur.LastTest.ID == t.ID {
			cur.LastTest = &t
		}
	})
	if err != nil && rappel.ErrorCode(err) != rappel.ENOTFOUND {
		s.Sender.Logger.Error("recording a webhook test's outcome", "endpoint", w.ID, "webhook_id", t.ID, "error", err)
	}
}
