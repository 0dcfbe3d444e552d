package alerts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/rappel-ca/rappel"
)

// ConfirmationSender sends the e-mail whose link confirms a pending
// subscription. It honours ctx.
type ConfirmationSender interface {
	SendConfirmation(ctx context.Context, sub *rappel.Subscription, confirmToken, unsubscribeToken string) error
}

// Service is the rappel.Alerts the edge calls. Set Store; the other fields
// have defaults from NewService.
type Service struct {
	// Store keeps subscriptions. Required.
	Store rappel.SubscriptionStore
	// RequireConfirm asks for double opt-in: subscriptions start pending until the
	// link of the confirmation e-mail is followed. When false the API
	// client vouches for consent and subscriptions start active.
	RequireConfirm bool
	// Confirmations sends the confirmation e-mail; when nil, none is sent
	// and the subscription stays pending (logged).
	Confirmations ConfirmationSender
	// Now is the clock; Random the source of tokens.
	Now    func() time.Time
	Random io.Reader
	Logger *slog.Logger
}

var _ rappel.Alerts = (*Service)(nil)

// NewService returns a Service on store requiring confirmation.
func NewService(store rappel.SubscriptionStore) *Service {
	return &Service{Store: store, RequireConfirm: true, Now: time.Now, Random: rand.Reader, Logger: slog.Default()}
}

// NewToken returns a 128-bit random URL-safe token read from r.
func NewToken(r io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("reading random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// HashToken is what the store keeps of a token.
func HashToken(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// Subscribe validates req and stores a new subscription. Every call makes a
// new subscription with new tokens, so the answer is the same whether or not
// the address was subscribed already; the matcher sends an address at most
// one alert per recall however many identical subscriptions it has.
func (s *Service) Subscribe(ctx context.Context, req *rappel.SubscribeRequest) (*rappel.SubscribeResult, error) {
	email, lang, search, err := req.Validate()
	if err != nil {
		return nil, err
	}
	id, err := NewToken(s.Random)
	if err != nil {
		return nil, err
	}
	unsub, err := NewToken(s.Random)
	if err != nil {
		return nil, err
	}
	confirm, err := NewToken(s.Random)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	sub := &rappel.Subscription{ID: id, Email: email, Lang: lang, Search: search, Status: rappel.SubPending, CreatedAt: now}
	hashes := map[string][32]byte{rappel.TokenUnsubscribe: HashToken(unsub)}
	if s.RequireConfirm {
		hashes[rappel.TokenConfirm] = HashToken(confirm)
	} else {
		sub.Status = rappel.SubActive
		sub.Consent = &rappel.Consent{Method: rappel.ConsentIntegrator, At: now, RequestedAt: now, UserAgent: clipUA(req.UserAgent)}
	}
	if err := s.Store.CreateSubscription(ctx, sub, hashes); err != nil {
		return nil, fmt.Errorf("subscribing: %w", err)
	}
	if s.RequireConfirm {
		if s.Confirmations == nil {
			s.Logger.Warn("no mailer: confirmation e-mail not sent", "subscription", sub.ID)
		} else if err := s.Confirmations.SendConfirmation(ctx, sub, confirm, unsub); err != nil {
			// The subscription stays pending; subscribing again sends a
			// new link. The client is told nothing it could not learn.
			s.Logger.Error("sending confirmation e-mail", "subscription", sub.ID, "error", redactAddresses(err.Error()))
		}
	}
	return &rappel.SubscribeResult{Status: sub.Status, Token: unsub}, nil
}

// Confirm activates the subscription of a confirmation token and records
// the consent. A used token answers with the subscription's status.
func (s *Service) Confirm(ctx context.Context, token, userAgent string) (*rappel.UnsubscribeResult, error) {
	sub, err := s.byToken(ctx, token, rappel.TokenConfirm)
	if err != nil {
		return nil, err
	}
	if sub.Status == rappel.SubPending {
		now := s.Now().UTC()
		sub.Status = rappel.SubActive
		sub.Consent = &rappel.Consent{Method: rappel.ConsentDoubleOptIn, At: now, RequestedAt: sub.CreatedAt, UserAgent: clipUA(userAgent)}
		if err := s.Store.PutSubscription(ctx, sub); err != nil {
			return nil, fmt.Errorf("confirming subscription: %w", err)
		}
	}
	return &rappel.UnsubscribeResult{Status: sub.Status}, nil
}

// Unsubscribe ends the subscription of an unsubscribe token; a used token
// answers 200 again.
func (s *Service) Unsubscribe(ctx context.Context, token string) (*rappel.UnsubscribeResult, error) {
	sub, err := s.byToken(ctx, token, rappel.TokenUnsubscribe)
	if err != nil {
		return nil, err
	}
	if sub.Status != rappel.SubUnsubscribed {
		sub.Status = rappel.SubUnsubscribed
		sub.UnsubscribedAt = s.Now().UTC()
		if err := s.Store.PutSubscription(ctx, sub); err != nil {
			return nil, fmt.Errorf("unsubscribing: %w", err)
		}
	}
	return &rappel.UnsubscribeResult{Status: rappel.SubUnsubscribed}, nil
}

func (s *Service) byToken(ctx context.Context, token, kind string) (*rappel.Subscription, error) {
	notFound := rappel.Errorf(rappel.ENOTFOUND, "No subscription has this token; check that the link was copied whole.")
	if b, err := base64.RawURLEncoding.DecodeString(token); err != nil || len(b) != 16 {
		return nil, notFound
	}
	sub, k, err := s.Store.SubscriptionByToken(ctx, HashToken(token))
	if err != nil {
		return nil, err
	}
	if k != kind {
		return nil, notFound
	}
	return sub, nil
}

func clipUA(ua string) string {
	if len(ua) > 200 {
		return ua[:200]
	}
	return ua
}
