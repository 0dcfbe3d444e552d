package alerts

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
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
	Now        func() time.Time
	Logger     *slog.Logger
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
		Node: DefaultNode(), Lease: 2 * time.Minute, ClaimLimit: 200, Now: time.Now, Logger: slog.Default()}
}

// SendDue claims and posts every delivery due now, and returns how many
// receivers accepted.
func (s *HookSender) SendDue(ctx context.Context) (int, error) {
	if s.Lease <= s.Client.Timeout {
		return 0, fmt.Errorf("sending webhooks: the claim lease (%s) must exceed the webhook timeout (%s)", s.Lease, s.Client.Timeout)
	}
	return drainer[*rappel.AlertRow]{
		claim: func(ctx context.Context) ([]*rappel.AlertRow, error) {
			rows, err := s.Outbox.ClaimDeliveries(ctx, s.Node, s.Now(), s.Lease, max(s.ClaimLimit, 1))
			if err != nil {
				return nil, fmt.Errorf("claiming webhook deliveries: %w", err)
			}
			return rows, nil
		},
		until:   func(r *rappel.AlertRow) time.Time { return r.ClaimedUntil },
		send:    s.send,
		release: s.record,
		now:     s.Now, timeout: s.Client.Timeout, lease: s.Lease,
		what: "webhooks", timeoutName: "webhook timeout",
	}.run(ctx)
}

// record writes rows under their claims (an outcome, or the rows
// unchanged to release them), even when ctx has ended (within
// recordTimeout): a delivery a receiver accepted must be recorded, or it
// goes out again.
func (s *HookSender) record(ctx context.Context, rows []*rappel.AlertRow) error {
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
func (s *HookSender) send(ctx context.Context, r *rappel.AlertRow) (bool, error) {
	now := s.Now().UTC()
	hook, err := s.Hooks.Webhook(ctx, r.Sub)
	if err != nil && rappel.ErrorCode(err) != rappel.ENOTFOUND {
		return false, err
	}
	switch {
	case hook == nil:
		return false, s.finish(ctx, r, rappel.AlertFailed, "endpoint deleted", now)
	case hook.Status != rappel.WebhookEnabled:
		return false, s.finish(ctx, r, rappel.AlertFailed, "endpoint disabled", now)
	}
	id := WebhookID(r.Sub, r.Record)
	a := s.post(ctx, hook, id, eventType(r.Record), r.Payload, now)
	attempt := &rappel.WebhookAttempt{At: now, ID: id, Type: eventType(r.Record), StatusCode: a.status, OK: a.ok(), Error: a.describe()}
	switch {
	case a.ok():
		if s.accepted != nil {
			s.accepted()
		}
		s.Stats.Delivered.Add(1)
		err := s.finish(ctx, r, rappel.AlertSent, "", now)
		s.noteHook(ctx, hook.ID, func(w *rappel.Webhook) { w.LastDelivery, w.FailingSince = attempt, time.Time{} })
		return true, err
	case ctx.Err() != nil:
		// Cut off (shutdown): the receiver may or may not have it. The
		// claim expires, or the next process of a single node takes it.
		return false, fmt.Errorf("posting webhook: %w", ctx.Err())
	}
	s.Logger.Warn("webhook delivery failed", "endpoint", hook.ID, "webhook_id", id, "attempt", r.Attempts+1, "error", attempt.Error)
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
		err := s.finish(ctx, r, rappel.AlertFailed, attempt.Error, now)
		s.noteHook(ctx, hook.ID, func(w *rappel.Webhook) {
			w.LastDelivery = attempt
			w.Status, w.DisabledReason, w.DisabledAt = rappel.WebhookDisabled, disable, now
		})
		return false, err
	}
	failing := func(w *rappel.Webhook) {
		w.LastDelivery = attempt
		if w.FailingSince.IsZero() {
			w.FailingSince = now
		}
	}
	if r.Attempts >= len(s.Schedule) {
		s.Stats.Failed.Add(1)
		err := s.finish(ctx, r, rappel.AlertFailed, attempt.Error, now)
		s.noteHook(ctx, hook.ID, failing)
		return false, err
	}
	s.Stats.Retried.Add(1)
	r.NextAt = now.Add(max(s.wait(r.Attempts), min(a.retryAfter, s.Schedule[len(s.Schedule)-1])))
	r.Attempts++
	r.Error = attempt.Error
	err = s.record(ctx, []*rappel.AlertRow{r})
	s.noteHook(ctx, hook.ID, failing)
	return false, err
}

// wait is the jittered wait before retry n (0 for the first).
func (s *HookSender) wait(n int) time.Duration {
	d := s.Schedule[min(n, len(s.Schedule)-1)]
	if s.Jitter > 0 {
		d += time.Duration((rand.Float64()*2 - 1) * s.Jitter * float64(d))
	}
	return d
}

func (s *HookSender) finish(ctx context.Context, r *rappel.AlertRow, status, msg string, now time.Time) error {
	r.Status, r.Error = status, msg
	r.Attempts++
	if status == rappel.AlertSent {
		r.SentAt = now
	}
	return s.record(ctx, []*rappel.AlertRow{r})
}

// noteHook applies change to the endpoint as stored now, so that an
// outcome recorded by one node does not undo another's (an endpoint
// another delivery disabled stays disabled). It logs what it cannot
// record: the delivery's outcome is in the outbox already.
func (s *HookSender) noteHook(ctx context.Context, id string, change func(*rappel.Webhook)) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	w, err := s.Hooks.Webhook(ctx, id)
	if err == nil {
		change(w)
		err = s.Hooks.PutWebhook(ctx, w)
	}
	if err != nil && rappel.ErrorCode(err) != rappel.ENOTFOUND {
		s.Logger.Error("recording a webhook endpoint's last delivery", "endpoint", id, "error", err)
	}
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
