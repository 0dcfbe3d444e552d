package alerts

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
)

// DefaultRetrySchedule is the wait before each retry of a failed delivery:
// eight attempts over about 27 hours, each wait spread by ±20 %.
var DefaultRetrySchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// DefaultDisableAfter is how long an endpoint may fail every delivery
// before it is disabled.
const DefaultDisableAfter = 72 * time.Hour

// HookSender drains the webhook outbox: each delivery is posted, signed,
// until the receiver answers 2xx, retried on the Schedule otherwise. A row
// becomes sent only after the receiver accepted it, so a crash loses
// nothing; a crash after the receiver accepted and before the row was
// recorded posts it again with the same webhook-id, by which receivers
// dedupe. As with alerts, senders on several nodes claim rows for Lease,
// so one node posts each.
//
// A 410 Gone disables the endpoint at once; an endpoint whose deliveries
// have all failed for DisableAfter is disabled too. Either way its
// pending deliveries are dropped, and GET /recall/webhooks/{id} says why.
type HookSender struct {
	Outbox rappel.WebhookOutbox
	Hooks  rappel.WebhookStore
	Client *HookClient
	// Schedule is the wait before each retry; past its end a delivery is
	// recorded as failed. Jitter spreads each wait by ± that fraction.
	Schedule     []time.Duration
	Jitter       float64
	DisableAfter time.Duration
	Node         string
	// Lease must exceed the client's Timeout (see Sender.Lease).
	Lease      time.Duration
	ClaimLimit int
	// Parallel is how many endpoints are posted to at once.
	Parallel int
	Now      func() time.Time
	Logger   *slog.Logger
	// Stats counts outcomes, for /metrics.
	Stats HookStats

	// accepted, when set, runs after a receiver accepted a delivery and
	// before the row is recorded as sent: the crash test kills the
	// process there.
	accepted func()
}

// HookConfig is a node's webhook settings.
type HookConfig struct {
	// AllowHTTPLoopback accepts http:// endpoints on loopback addresses,
	// for development (HookClient.AllowHTTPLoopback).
	AllowHTTPLoopback bool
	// DisableAfter is how long an endpoint may fail every delivery before
	// it is disabled; 0 is DefaultDisableAfter.
	DisableAfter time.Duration
	// Schedule, when set, replaces DefaultRetrySchedule; Jitter, when
	// negative, turns the spread off (tests).
	Schedule []time.Duration
	Jitter   float64
	// RootCAs, when set, replaces the system's roots (tests).
	RootCAs *x509.CertPool
	// Timeout, when set, bounds one delivery (15 s).
	Timeout time.Duration
}

// HookStats counts delivery outcomes since the process started.
type HookStats struct {
	Delivered, Retried, Failed, Disabled atomic.Int64
}

// NewHookSender returns a HookSender with defaults.
func NewHookSender() *HookSender {
	return &HookSender{Client: NewHookClient(), Schedule: DefaultRetrySchedule, Jitter: 0.2, DisableAfter: DefaultDisableAfter,
		Node: DefaultNode(), Lease: 2 * time.Minute, ClaimLimit: 200, Parallel: DefaultHookParallel, Now: time.Now, Logger: slog.Default()}
}

// DefaultHookParallel is HookSender.Parallel's default.
const DefaultHookParallel = 8

// SendDue claims and posts every delivery due now, and returns how many
// receivers accepted. The endpoints of a claim are posted to side by side
// (Parallel at a time), each endpoint's deliveries one after another in
// their order; once a receiver fails a delivery (no answer, a connection
// error, a 5xx or a 429), its other deliveries of the claim are put off
// to that delivery's retry without an attempt counted, so that a dead
// receiver costs one timeout per pass, not one per delivery, and holds up
// no other receiver.
func (s *HookSender) SendDue(ctx context.Context) (int, error) {
	if s.Lease <= s.Client.Timeout {
		return 0, fmt.Errorf("sending webhooks: the claim lease (%s) must exceed the webhook timeout (%s)", s.Lease, s.Client.Timeout)
	}
	sent := 0
	for {
		rows, err := s.Outbox.ClaimDeliveries(ctx, s.Node, s.Now(), s.Lease, max(s.ClaimLimit, 1))
		if err != nil {
			return sent, fmt.Errorf("claiming webhook deliveries: %w", err)
		}
		if len(rows) == 0 {
			return sent, nil
		}
		n, err := s.sendClaim(ctx, rows)
		sent += n
		if err != nil {
			return sent, err
		}
	}
}

// sendClaim posts one claim's rows, an endpoint per goroutine.
func (s *HookSender) sendClaim(ctx context.Context, rows []*rappel.Delivery) (int, error) {
	var order []string
	byHook := map[string][]*rappel.Delivery{}
	for _, r := range rows {
		if _, ok := byHook[r.Webhook]; !ok {
			order = append(order, r.Webhook)
		}
		byHook[r.Webhook] = append(byHook[r.Webhook], r)
	}
	var (
		mu   sync.Mutex
		sent int
		errs []error
		wg   sync.WaitGroup
	)
	slots := make(chan struct{}, max(s.Parallel, 1))
	for _, hook := range order {
		slots <- struct{}{}
		wg.Add(1)
		go func(rows []*rappel.Delivery) {
			defer func() { <-slots; wg.Done() }()
			n, err := s.sendEndpoint(ctx, rows)
			mu.Lock()
			sent += n
			errs = append(errs, err)
			mu.Unlock()
		}(byHook[hook])
	}
	wg.Wait()
	return sent, errors.Join(errs...)
}

// sendEndpoint posts one endpoint's rows in order. Rows it has no time
// left to send within their claim, or that it did not start because ctx
// ended or recording an outcome failed, are released unchanged (at
// shutdown, the last flush takes them at once); the rows after a failed
// post are put off to its retry.
func (s *HookSender) sendEndpoint(ctx context.Context, rows []*rappel.Delivery) (int, error) {
	sent := 0
	for i, r := range rows {
		if err := ctx.Err(); err != nil {
			return sent, errors.Join(err, s.record(ctx, rows[i:]))
		}
		if !s.Now().Add(s.Client.Timeout).Before(r.ClaimedUntil) {
			// The next claim takes them with a fresh lease; SendDue
			// checked that a fresh lease leaves time for a post.
			return sent, s.record(ctx, rows[i:])
		}
		out, err := s.send(ctx, r)
		if err != nil {
			// Its outcome is unknown (the receiver may have accepted it):
			// its claim stays, to expire; the rows after it are free.
			return sent, errors.Join(err, s.record(ctx, rows[i+1:]))
		}
		if out.ok {
			sent++
		}
		if !out.retryAt.IsZero() && i+1 < len(rows) {
			rest := rows[i+1:]
			for _, o := range rest {
				if o.NextAt.Before(out.retryAt) {
					o.NextAt = out.retryAt
				}
				o.Error = "put off: the endpoint failed an earlier delivery of the same pass"
			}
			return sent, s.record(ctx, rest)
		}
	}
	return sent, nil
}

// hookOutcome is what send did with one row: ok when the receiver
// accepted it; retryAt, when the receiver failed it (see receiverDown),
// is when the endpoint's other deliveries are tried again.
type hookOutcome struct {
	ok      bool
	retryAt time.Time
}

// record writes rows under their claims (an outcome, or the rows
// unchanged to release them), even when ctx has ended (within
// recordTimeout): a delivery a receiver accepted must be recorded, or it
// goes out again.
func (s *HookSender) record(ctx context.Context, rows []*rappel.Delivery) error {
	if len(rows) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	n, err := s.Outbox.UpdateDeliveries(ctx, s.Node, rows)
	if err != nil {
		return fmt.Errorf("recording webhook deliveries: %w", err)
	}
	if n < len(rows) {
		s.Logger.Warn("webhook claim lost to another node; its outcome stands", "rows", len(rows), "recorded", n)
	}
	return nil
}

// WebhookID is the webhook-id of a delivery: derived from the endpoint and
// the event, so that every attempt, from any node, carries the same.
func WebhookID(endpoint, eventKey string) string {
	h := sha256.Sum256([]byte(endpoint + "\x00" + eventKey))
	return "msg_" + base64.RawURLEncoding.EncodeToString(h[:18])
}

// send posts one delivery and records its outcome; the error is only for
// failures to record it, or ctx ending mid-post.
func (s *HookSender) send(ctx context.Context, r *rappel.Delivery) (hookOutcome, error) {
	now := s.Now().UTC()
	hook, err := s.Hooks.Webhook(ctx, r.Webhook)
	if err != nil && rappel.ErrorCode(err) != rappel.ENOTFOUND {
		return hookOutcome{}, err
	}
	switch {
	case hook == nil:
		return hookOutcome{}, s.finish(ctx, r, rappel.AlertFailed, "endpoint deleted", now)
	case hook.Status != rappel.WebhookEnabled:
		return hookOutcome{}, s.finish(ctx, r, rappel.AlertFailed, "endpoint disabled", now)
	}
	id, typ := WebhookID(r.Webhook, r.Event), eventType(r.Event)
	a := s.post(ctx, hook, id, typ, r.Payload, now)
	attempt := &rappel.WebhookAttempt{At: now, ID: id, Type: typ, StatusCode: a.status, OK: a.ok(), Error: a.public()}
	switch {
	case a.ok():
		if s.accepted != nil {
			s.accepted()
		}
		s.Stats.Delivered.Add(1)
		err := s.finish(ctx, r, rappel.AlertSent, "", now)
		s.noteHook(ctx, hook.ID, func(w *rappel.Webhook) { w.LastDelivery, w.FailingSince = attempt, time.Time{} })
		return hookOutcome{ok: true}, err
	case ctx.Err() != nil:
		// Cut off (shutdown): the receiver may or may not have it. The
		// claim expires, or the next process of a single node takes it.
		return hookOutcome{}, fmt.Errorf("posting webhook: %w", ctx.Err())
	}
	s.Logger.Warn("webhook delivery failed", "endpoint", hook.ID, "webhook_id", id, "attempt", r.Attempts+1, "error", a.describe())
	disable := ""
	switch {
	case a.status == http.StatusGone:
		disable = "the receiver answered 410 Gone"
	case !hook.FailingSince.IsZero() && now.Sub(hook.FailingSince) >= s.DisableAfter:
		disable = fmt.Sprintf("every delivery failed for more than %s, since %s", s.DisableAfter, hook.FailingSince.Format(time.RFC3339))
	}
	if disable != "" {
		s.Stats.Failed.Add(1)
		s.Stats.Disabled.Add(1)
		s.Logger.Error("webhook endpoint disabled", "endpoint", hook.ID, "reason", disable)
		err := s.finish(ctx, r, rappel.AlertFailed, a.describe(), now)
		s.noteHook(ctx, hook.ID, func(w *rappel.Webhook) {
			w.LastDelivery = attempt
			w.Status, w.DisabledReason, w.DisabledAt = rappel.WebhookDisabled, disable, now
		})
		return hookOutcome{}, err
	}
	failing := func(w *rappel.Webhook) {
		w.LastDelivery = attempt
		if w.FailingSince.IsZero() {
			w.FailingSince = now
		}
	}
	out := hookOutcome{}
	if r.Attempts >= len(s.Schedule) {
		s.Stats.Failed.Add(1)
		if a.receiverDown() {
			out.retryAt = s.retryAt(0, a, now)
		}
		err := s.finish(ctx, r, rappel.AlertFailed, a.describe(), now)
		s.noteHook(ctx, hook.ID, failing)
		return out, err
	}
	s.Stats.Retried.Add(1)
	r.NextAt = s.retryAt(r.Attempts, a, now)
	if a.receiverDown() {
		out.retryAt = r.NextAt
	}
	r.Attempts++
	r.Error = a.describe()
	err = s.record(ctx, []*rappel.Delivery{r})
	s.noteHook(ctx, hook.ID, failing)
	return out, err
}

// wait is the jittered wait before retry n (0 for the first).
func (s *HookSender) wait(n int) time.Duration {
	d := s.Schedule[min(n, len(s.Schedule)-1)]
	if s.Jitter > 0 {
		d += time.Duration((rand.Float64()*2 - 1) * s.Jitter * float64(d))
	}
	return d
}

// retryAt is when retry n (0 for the first) of a delivery that got answer
// a at now is due: the jittered wait, or the receiver's Retry-After when
// longer, up to the schedule's last step.
func (s *HookSender) retryAt(n int, a hookAnswer, now time.Time) time.Time {
	return now.Add(max(s.wait(n), min(a.retryAfter, s.Schedule[len(s.Schedule)-1])))
}

func (s *HookSender) finish(ctx context.Context, r *rappel.Delivery, status, msg string, now time.Time) error {
	r.Status, r.Error = status, msg
	r.Attempts++
	if status == rappel.AlertSent {
		r.SentAt = now
	}
	return s.record(ctx, []*rappel.Delivery{r})
}

// noteHook applies change to the endpoint as stored now, so that an
// outcome recorded by one node does not undo another's (an endpoint
// another delivery disabled stays disabled). It logs what it cannot
// record: the delivery's outcome is in the outbox already.
func (s *HookSender) noteHook(ctx context.Context, id string, change func(*rappel.Webhook)) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := updateHook(ctx, s.Hooks, id, change); err != nil && rappel.ErrorCode(err) != rappel.ENOTFOUND {
		s.Logger.Error("recording a webhook endpoint's last delivery", "endpoint", id, "error", err)
	}
}

// updateHook applies change to the endpoint id as stored now and stores
// it; ENOTFOUND when it was deleted.
func updateHook(ctx context.Context, hooks rappel.WebhookStore, id string, change func(*rappel.Webhook)) error {
	w, err := hooks.Webhook(ctx, id)
	if err != nil {
		return err
	}
	change(w)
	return hooks.PutWebhook(ctx, w)
}

// eventType reads the type out of an event key.
func eventType(key string) string {
	typ, _, _ := strings.Cut(key, ":")
	return typ
}

// post signs and posts body, in a span.
func (s *HookSender) post(ctx context.Context, hook *rappel.Webhook, id, typ string, body []byte, now time.Time) hookAnswer {
	ctx, span := tracer.Start(ctx, "alerts.WebhookPost", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("rappel.webhook.endpoint", hook.ID), attribute.String("rappel.webhook.type", typ)))
	defer span.End()
	sig, err := SignWebhook(hook.Secret, id, now.Unix(), body)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		return hookAnswer{err: err}
	}
	a := s.Client.post(ctx, hook.URL, id, now.Unix(), sig, body)
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("http.response.status_code", a.status))
		if !a.ok() {
			span.SetStatus(codes.Error, a.describe())
		}
	}
	return a
}

// Counts returns the outcome counters, for /metrics.
func (s *HookSender) Counts() rappel.WebhookStats {
	return rappel.WebhookStats{Delivered: s.Stats.Delivered.Load(), Retried: s.Stats.Retried.Load(),
		Failed: s.Stats.Failed.Load(), Disabled: s.Stats.Disabled.Load()}
}
