package alerts

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	mail "github.com/wneessen/go-mail"

	"github.com/rappel-ca/rappel"
)

// Sender drains the outbox over SMTP: one digest e-mail per subscription
// and batch of new recalls, retried with backoff on temporary failures,
// recorded as failed on permanent ones. A row becomes sent only after the
// server accepted its message, so a crash loses nothing; a crash after the
// server accepted a message and before the rows were marked sends it again
// (with the same Message-ID), the one duplicate SMTP allows.
type Sender struct {
	Outbox        rappel.Outbox
	Subscriptions rappel.SubscriptionStore
	Records       interface {
		Record(ctx context.Context, id string) (*rappel.Record, error)
	}
	// Addr is the SMTP server's host:port; User and Password, when set,
	// authenticate (AUTH PLAIN, over STARTTLS when the server offers it).
	Addr, User, Password string
	// From is the sender address; FromName names it.
	From, FromName string
	// PublicURL is the base of the links in e-mails, such as
	// https://rappel.example.ca.
	PublicURL string
	// MinBackoff and MaxBackoff bound the wait before a retry, doubling
	// from one to the other.
	MinBackoff, MaxBackoff time.Duration
	// MaxAttempts is how many temporary failures a digest survives before
	// it is recorded as failed.
	MaxAttempts int
	// Timeout bounds one SMTP conversation.
	Timeout time.Duration
	Now     func() time.Time
	Random  interface{ Read([]byte) (int, error) }
	Logger  *slog.Logger

	// accepted, when set, runs after the server accepted a message and
	// before the rows are recorded as sent: the crash test kills the
	// process there.
	accepted func()
}

// NewSender returns a Sender with defaults.
func NewSender() *Sender {
	return &Sender{Random: rand.Reader, FromName: "Rappel", MinBackoff: 30 * time.Second, MaxBackoff: time.Hour, Timeout: 30 * time.Second, MaxAttempts: 48,
		Now: time.Now, Logger: slog.Default()}
}

// digest is the rows of one subscription and batch.
type digest struct {
	sub  string
	seq  uint64
	rows []*rappel.AlertRow
}

// SendDue sends every digest due now and returns how many went out.
func (s *Sender) SendDue(ctx context.Context) (int, error) {
	rows, err := s.Outbox.DueAlerts(ctx, s.Now(), 10_000)
	if err != nil {
		return 0, fmt.Errorf("reading outbox: %w", err)
	}
	var ds []*digest
	for _, r := range rows {
		if n := len(ds); n > 0 && ds[n-1].sub == r.Sub && ds[n-1].seq == r.Seq {
			ds[n-1].rows = append(ds[n-1].rows, r)
			continue
		}
		ds = append(ds, &digest{sub: r.Sub, seq: r.Seq, rows: []*rappel.AlertRow{r}})
	}
	sent := 0
	for _, d := range ds {
		if err := ctx.Err(); err != nil {
			return sent, err
		}
		ok, err := s.send(ctx, d)
		if err != nil {
			return sent, err
		}
		if ok {
			sent++
		}
	}
	return sent, nil
}

// send sends one digest and records the outcome; the error is only for
// failures to record it.
func (s *Sender) send(ctx context.Context, d *digest) (bool, error) {
	now := s.Now().UTC()
	sub, err := s.Subscriptions.Subscription(ctx, d.sub)
	if err != nil && rappel.ErrorCode(err) != rappel.ENOTFOUND {
		return false, err
	}
	if sub == nil || sub.Status != rappel.SubActive {
		// Unsubscribed since the match: drop the rows.
		return false, s.finish(ctx, d, rappel.AlertFailed, "subscription not active", now)
	}
	var recs []*rappel.Record
	for _, r := range d.rows {
		rec, err := s.Records.Record(ctx, r.Record)
		if err == nil {
			recs = append(recs, rec)
		} else if rappel.ErrorCode(err) != rappel.ENOTFOUND {
			return false, err
		}
	}
	if len(recs) == 0 {
		return false, s.finish(ctx, d, rappel.AlertFailed, "recalls withdrawn", now)
	}
	token, err := NewToken(s.Random)
	if err != nil {
		return false, err
	}
	if err := s.Subscriptions.AddToken(ctx, sub.ID, rappel.TokenUnsubscribe, HashToken(token)); err != nil {
		return false, err
	}
	msg, err := s.compose(sub, d, recs, token)
	if err != nil {
		return false, s.finish(ctx, d, rappel.AlertFailed, err.Error(), now)
	}
	err = s.dialAndSend(ctx, msg)
	switch {
	case err == nil:
		if s.accepted != nil {
			s.accepted()
		}
		return true, s.finish(ctx, d, rappel.AlertSent, "", now)
	case isTemporary(err) && (s.MaxAttempts <= 0 || d.rows[0].Attempts+1 < s.MaxAttempts):
		s.Logger.Warn("alert e-mail deferred", "subscription", sub.ID, "seq", d.seq, "error", err)
		for _, r := range d.rows {
			r.Attempts++
			r.Error = err.Error()
			r.NextAt = now.Add(s.backoff(r.Attempts))
		}
		return false, s.Outbox.UpdateAlerts(ctx, d.rows)
	default:
		s.Logger.Error("alert e-mail refused", "subscription", sub.ID, "seq", d.seq, "error", err)
		return false, s.finish(ctx, d, rappel.AlertFailed, err.Error(), now)
	}
}

func (s *Sender) finish(ctx context.Context, d *digest, status, msg string, now time.Time) error {
	for _, r := range d.rows {
		r.Status, r.Error = status, msg
		r.Attempts++
		if status == rappel.AlertSent {
			r.SentAt = now
		}
	}
	return s.Outbox.UpdateAlerts(ctx, d.rows)
}

func (s *Sender) backoff(attempts int) time.Duration {
	d := s.MinBackoff
	for i := 1; i < attempts && d < s.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.MaxBackoff)
}

// isTemporary reports whether a send may succeed later: a 4xx reply, or
// no conversation at all (server down, timeout).
func isTemporary(err error) bool {
	var se *mail.SendError
	if errors.As(err, &se) {
		if c := se.ErrorCode(); c >= 400 && c < 500 {
			return true
		}
		if c := se.ErrorCode(); c >= 500 {
			return false
		}
		return se.IsTemp() || isNet(err)
	}
	return isNet(err)
}

func isNet(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, context.DeadlineExceeded)
}

func (s *Sender) dialAndSend(ctx context.Context, msg *mail.Msg) error {
	host, port, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return fmt.Errorf("parsing --smtp-addr %q: %w", s.Addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("parsing --smtp-addr %q: %w", s.Addr, err)
	}
	opts := []mail.Option{mail.WithPort(p), mail.WithTLSPolicy(mail.TLSOpportunistic), mail.WithTimeout(s.Timeout)}
	if s.User != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthPlain), mail.WithUsername(s.User), mail.WithPassword(s.Password))
	}
	c, err := mail.NewClient(host, opts...)
	if err != nil {
		return fmt.Errorf("configuring SMTP client: %w", err)
	}
	return c.DialAndSendWithContext(ctx, msg)
}
