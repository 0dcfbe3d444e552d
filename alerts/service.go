package alerts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/idn"
)

// Service is the rappel.Alerts the edge calls. Set Store; the other fields
// have defaults from NewService.
type Service struct {
	// Store keeps subscriptions, and the confirmation e-mails to send.
	// Required.
	Store rappel.SubscriptionStore
	// RequireConfirm asks for double opt-in: subscriptions start pending until the
	// link of the confirmation e-mail is followed. When false the API
	// client vouches for consent and subscriptions start active.
	RequireConfirm bool
	// PendingTTL is how long a confirmation link works: a subscription
	// still pending after it cannot be confirmed, and Prune deletes it.
	// 0 keeps pending subscriptions forever.
	PendingTTL time.Duration
	// ConfirmPerAddress is how many confirmation e-mails one address may
	// receive in ConfirmWindow, however many subscribe requests name it
	// and whichever keys send them; 0 means no limit. Subscribe answers
	// the same whether or not the e-mail is queued.
	ConfirmPerAddress int
	ConfirmWindow     time.Duration
	// SubscriptionsPerKeyDay is how many subscriptions one API key may
	// make a calendar day (UTC); over it Subscribe refuses with a
	// *rappel.LimitError. 0 means no cap.
	SubscriptionsPerKeyDay int
	// Queued, when set, is called after every subscription that asks for
	// a confirmation, whether or not its e-mail was queued: the runner
	// wakes its sender with it, so that the e-mail goes out at once
	// rather than at the next tick. It must not block.
	Queued func()
	// Now is the clock; Random the source of tokens.
	Now    func() time.Time
	Random io.Reader
	Logger *slog.Logger
}

var _ rappel.Alerts = (*Service)(nil)

// domainNames writes the domains of e-mail addresses and webhook hosts in
// ASCII for the domain's validation (RATIONALE.md, the domain package).
var domainNames rappel.DomainNames = idn.Names{}

// Defaults of NewService, and of rappel serve's flags.
const (
	DefaultPendingTTL             = 7 * 24 * time.Hour
	DefaultConfirmPerAddress      = 1
	DefaultConfirmWindow          = 24 * time.Hour
	DefaultSubscriptionsPerKeyDay = 1000
)

// NewService returns a Service on store requiring confirmation, with the
// default limits.
func NewService(store rappel.SubscriptionStore) *Service {
	return &Service{Store: store, RequireConfirm: true, PendingTTL: DefaultPendingTTL,
		ConfirmPerAddress: DefaultConfirmPerAddress, ConfirmWindow: DefaultConfirmWindow, SubscriptionsPerKeyDay: DefaultSubscriptionsPerKeyDay,
		Now: time.Now, Random: rand.Reader, Logger: slog.Default()}
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
//
// With RequireConfirm, the subscription and its confirmation e-mail's
// outbox row are written in one transaction, the row only while the
// address's allowance (ConfirmPerAddress in ConfirmWindow) lasts, so that
// nobody can flood an inbox by subscribing it again and again. The Sender
// sends the row after the answer, retrying until the e-mail goes out: a
// subscription acknowledged is never left without its e-mail by a server
// down or a disk full. The answer, and its time, are the same whether or
// not the row was written. A key over its daily cap gets a
// *rappel.LimitError before anything is stored.
func (s *Service) Subscribe(ctx context.Context, req *rappel.SubscribeRequest) (*rappel.SubscribeResult, error) {
	email, lang, search, err := req.Validate(domainNames)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	if err := s.takeKeyDay(ctx, req.KeyID, now); err != nil {
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
	sub := &rappel.Subscription{ID: id, Email: email, Lang: lang, Search: search, Status: rappel.SubPending, CreatedAt: now}
	hashes := map[string][32]byte{rappel.TokenUnsubscribe: HashToken(unsub)}
	if !s.RequireConfirm {
		sub.Status = rappel.SubActive
		sub.Consent = &rappel.Consent{Method: rappel.ConsentIntegrator, At: now, RequestedAt: now, UserAgent: clipUA(req.UserAgent)}
		if err := s.Store.CreateSubscription(ctx, sub, hashes); err != nil {
			return nil, fmt.Errorf("subscribing: %w", err)
		}
		return &rappel.SubscribeResult{Status: sub.Status, Token: unsub}, nil
	}
	row := &rappel.AlertRow{Sub: id, Record: rappel.ConfirmRecord, OutboxState: rappel.OutboxState{Status: rappel.AlertPending, NextAt: now, CreatedAt: now}}
	queued, err := s.Store.CreatePending(ctx, sub, hashes, row, s.confirmAllowance(sub, now))
	if err != nil {
		return nil, fmt.Errorf("subscribing: %w", err)
	}
	if !queued {
		// The subscription expires unconfirmed.
		s.Logger.Info("confirmation e-mail not queued: the address had its share within the window", "subscription", sub.ID,
			"limit", s.ConfirmPerAddress, "window", s.ConfirmWindow)
	}
	if s.Queued != nil {
		s.Queued()
	}
	return &rappel.SubscribeResult{Status: sub.Status, Token: unsub}, nil
}

// takeKeyDay counts one subscription of key today, or refuses it with a
// 429 when the key has made SubscriptionsPerKeyDay of them. The refusal
// names the key's limit only: it says nothing about any address.
func (s *Service) takeKeyDay(ctx context.Context, key string, now time.Time) error {
	if key == "" || s.SubscriptionsPerKeyDay <= 0 {
		return nil
	}
	day := now.Truncate(24 * time.Hour) // UTC days: now is UTC, and Unix days start at UTC midnights
	ok, until, err := s.Store.TakeAllowance(ctx, "key-day/"+day.Format(time.DateOnly)+"/"+key, s.SubscriptionsPerKeyDay, now, day.Add(24*time.Hour))
	if err != nil {
		return fmt.Errorf("counting the key's subscriptions: %w", err)
	}
	if ok {
		return nil
	}
	wait := until.Sub(now)
	secs := int64((wait + time.Second - 1) / time.Second)
	return &rappel.LimitError{RetryAfter: wait, Err: rappel.Errorf(rappel.ERATELIMIT,
		"Too many subscriptions: this API key may create %d a day (UTC) and has created them today; new subscriptions are accepted again at %s, in %d s (Retry-After).",
		s.SubscriptionsPerKeyDay, until.UTC().Format(time.RFC3339), secs)}
}

// confirmAllowance is the use of sub's address's allowance that its
// confirmation e-mail counts, nil when ConfirmPerAddress sets no limit.
// The allowance is named after a hash of the address as normalized by
// AddressKey, never the address itself.
func (s *Service) confirmAllowance(sub *rappel.Subscription, now time.Time) *rappel.Allowance {
	if s.ConfirmPerAddress <= 0 {
		return nil
	}
	return &rappel.Allowance{Name: "confirm/" + AddressKey(sub.Email), Limit: s.ConfirmPerAddress, Now: now, End: now.Add(s.ConfirmWindow)}
}

// AddressKey names an address in counters: the hex SHA-256 of the address
// lower-cased whole and without a "+tag" after its local part, so that
// ANA@example.ca and ana+1@example.ca count as ana@example.ca. The domain
// is already its A-label (rappel.SubscribeRequest.Validate). A hash keeps
// the address out of counter keys, which outlive the subscriptions they
// counted until their window ends.
func AddressKey(email string) string {
	e := strings.ToLower(email)
	if at := strings.LastIndexByte(e, '@'); at > 0 {
		if plus := strings.IndexByte(e[:at], '+'); plus > 0 {
			e = e[:plus] + e[at:]
		}
	}
	h := sha256.Sum256([]byte("rappel alert address\x00" + e))
	return hex.EncodeToString(h[:])
}

// Confirm activates the subscription of a confirmation token and records
// the consent. A used token answers with the subscription's status. A
// link older than PendingTTL, or unknown (an expired subscription is
// deleted by Prune), is a 404 saying to subscribe again.
func (s *Service) Confirm(ctx context.Context, token, userAgent string) (*rappel.UnsubscribeResult, error) {
	sub, err := s.byToken(ctx, token, rappel.TokenConfirm)
	if rappel.ErrorCode(err) == rappel.ENOTFOUND && s.PendingTTL > 0 {
		return nil, rappel.Errorf(rappel.ENOTFOUND, "No pending subscription has this confirmation link: it expired (links work for %s) or was not copied whole; "+
			"subscribe again to get a new link.", days(s.PendingTTL))
	}
	if err != nil {
		return nil, err
	}
	if sub.Status == rappel.SubPending {
		now := s.Now().UTC()
		if s.expired(sub, now) {
			return nil, rappel.Errorf(rappel.ENOTFOUND, "This confirmation link has expired: links work for %s after subscribing. Subscribe again to get a new link.",
				days(s.PendingTTL))
		}
		sub.Status = rappel.SubActive
		sub.Consent = &rappel.Consent{Method: rappel.ConsentDoubleOptIn, At: now, RequestedAt: sub.CreatedAt, UserAgent: clipUA(userAgent)}
		if err := s.Store.PutSubscription(ctx, sub); err != nil {
			return nil, fmt.Errorf("confirming subscription: %w", err)
		}
	}
	return &rappel.UnsubscribeResult{Status: sub.Status}, nil
}

// expired reports whether sub, pending, can no longer be confirmed.
func (s *Service) expired(sub *rappel.Subscription, now time.Time) bool {
	return s.PendingTTL > 0 && !now.Before(sub.CreatedAt.Add(s.PendingTTL))
}

// days writes d, positive, for a sentence: "7 days", or as Go writes a
// duration when it is not a whole number of days.
func days(d time.Duration) string {
	switch {
	case d == 24*time.Hour:
		return "1 day"
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}

// Prune deletes the subscriptions that stayed pending past PendingTTL,
// with their tokens, and the allowances whose window ended. Every node of
// a fleet may run it: each deletion is idempotent.
func (s *Service) Prune(ctx context.Context) (subs, allowances int, err error) {
	now := s.Now().UTC()
	if s.PendingTTL > 0 {
		if subs, err = s.Store.DeletePendingBefore(ctx, now.Add(-s.PendingTTL)); err != nil {
			return 0, 0, fmt.Errorf("pruning expired subscriptions: %w", err)
		}
	}
	if allowances, err = s.Store.DeleteAllowancesEnded(ctx, now); err != nil {
		return subs, 0, fmt.Errorf("pruning allowances: %w", err)
	}
	return subs, allowances, nil
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
