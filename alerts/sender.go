package alerts

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	mail "github.com/wneessen/go-mail"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/lograte"
)

// Sender drains the outbox over SMTP (or into a directory, see MailDir):
// one digest e-mail per subscription and batch of new recalls, retried
// with backoff on temporary failures, recorded as failed on permanent
// ones; and the confirmation e-mails' outbox (SendConfirmations) alike. A row becomes sent only after the server accepted its message, so
// a crash loses nothing; a crash after the server accepted a message and
// before the rows were marked sends it again (with the same Message-ID),
// the one duplicate SMTP allows.
//
// Senders on several nodes may drain one shared outbox: each claims rows
// for Lease before sending them (Outbox.ClaimAlerts), so one node sends
// each digest, and the rows of a node that died mid-send are claimed by
// another once its lease expires.
type Sender struct {
	Outbox rappel.Outbox
	// Confirmations holds the confirmation e-mails of pending
	// subscriptions, which SendConfirmations sends as SendDue sends the
	// alerts; nil when the sender sends alerts only.
	Confirmations rappel.ConfirmOutbox
	Subscriptions rappel.SubscriptionStore
	Records       interface {
		Record(ctx context.Context, id string) (*rappel.Record, error)
	}
	// Addr is the SMTP server's host:port; User and Password, when set,
	// authenticate (AUTH PLAIN, over STARTTLS when the server offers it).
	Addr, User, Password string
	// MailDir, when set, takes the SMTP server's place for development:
	// each e-mail is written whole into this directory as an .eml file and
	// its links are logged (see writeMailFile). Everything else, from the
	// outbox's states to the Message-IDs and headers, is as with SMTP.
	MailDir string
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
	// Node names this process in its outbox claims; nodes sharing an
	// outbox need distinct names. NewSender sets the host name and pid.
	Node string
	// Lease is how long a claim keeps other nodes off its rows. It must
	// exceed Timeout: a digest is only sent while at least Timeout is left
	// of its claim, so that a claim does not expire mid-conversation.
	Lease time.Duration
	// ClaimLimit is how many rows one claim takes; the sender claims again
	// until nothing is due.
	ClaimLimit int
	// RecordWait, when positive, is how long after its match a digest waits
	// for recalls this node does not hold yet: in a fleet, another node may
	// have matched a recall this node's refresh has not fetched. Past it,
	// a missing recall counts as withdrawn. Zero (one node) never waits.
	RecordWait time.Duration
	// PendingTTL is Service.PendingTTL: a confirmation e-mail still unsent
	// that long after its subscription is dropped, as its link would no
	// longer work. 0 sends it however late.
	PendingTTL time.Duration
	// LogEvery is the least time between two log lines of one failure: of
	// one kind of e-mail, deferred or refused, for one cause (failureCause:
	// the same SMTP step answering the same codes, the same network
	// error), however many e-mails it hits. The lines in between are
	// counted and the next one says how many; 0 logs every failure.
	// NewSender sets a minute.
	LogEvery time.Duration
	Now      func() time.Time
	Random   interface{ Read([]byte) (int, error) }
	Logger   *slog.Logger

	// failures holds back the repeated lines of LogEvery, which it takes
	// at its first use.
	failures     lograte.Limiter
	failuresOnce sync.Once

	// accepted, when set, runs after the server accepted a message and
	// before the rows are recorded as sent: the crash test kills the
	// process there.
	accepted func()
}

// NewSender returns a Sender with defaults.
func NewSender() *Sender {
	return &Sender{Random: rand.Reader, FromName: "Rappel", MinBackoff: 30 * time.Second, MaxBackoff: time.Hour, Timeout: 30 * time.Second, MaxAttempts: 48,
		Node: DefaultNode(), Lease: 2 * time.Minute, ClaimLimit: 500, LogEvery: time.Minute, Now: time.Now, Logger: slog.Default()}
}

// DefaultNode names this process in outbox claims: host name and pid.
func DefaultNode() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "node"
	}
	return h + "/" + strconv.Itoa(os.Getpid())
}

// digest is the rows of one subscription and batch, from queue q: one
// e-mail. A confirmation e-mail is a digest of one row.
type digest struct {
	q    *queue
	sub  string
	seq  uint64
	rows []*rappel.AlertRow
}

// queue is an outbox the sender drains: how to claim and record its rows,
// and how to send a digest of them.
type queue struct {
	// what names the e-mails in errors and logs: "alert e-mail".
	what   string
	claim  func(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*rappel.AlertRow, error)
	update func(ctx context.Context, node string, rows []*rappel.AlertRow) (int, error)
	send   func(ctx context.Context, d *digest) (bool, error)
}

// SendDue claims and sends every digest of alerts due now, and returns
// how many went out. Digests it has no time left to send within their
// claim, or that it did not start because ctx ended or a digest failed,
// are released for the next pass (at shutdown, the last flush takes them
// at once).
func (s *Sender) SendDue(ctx context.Context) (int, error) {
	return s.drain(ctx, &queue{what: "alert e-mail", claim: s.Outbox.ClaimAlerts, update: s.Outbox.UpdateAlerts, send: s.sendDigest})
}

// SendConfirmations claims and sends every confirmation e-mail due now,
// as SendDue sends the alerts, and returns how many went out. A send that
// fails for a while (the SMTP server down or answering 4xx, the mail dir
// not writable) is retried with the alerts' backoff, by this process or
// the next, or by another node of a fleet.
func (s *Sender) SendConfirmations(ctx context.Context) (int, error) {
	if s.Confirmations == nil {
		return 0, nil
	}
	return s.drain(ctx, &queue{what: "confirmation e-mail", claim: s.Confirmations.ClaimConfirmations,
		update: s.Confirmations.UpdateConfirmations, send: s.sendConfirmation})
}

// drain claims and sends the digests of q due now, claim after claim
// until none is left, and returns how many went out. At the end it logs
// the failures held back for LogEvery, so that their count is told even
// when they do not come again.
func (s *Sender) drain(ctx context.Context, q *queue) (int, error) {
	if s.Lease <= s.Timeout {
		return 0, fmt.Errorf("sending %ss: the claim lease (%s) must exceed the SMTP timeout (%s)", q.what, s.Lease, s.Timeout)
	}
	defer func() { s.failureLog().Flush(ctx, s.Logger, s.Now()) }()
	sent := 0
	for {
		rows, err := q.claim(ctx, s.Node, s.Now(), s.Lease, max(s.ClaimLimit, 1))
		if err != nil {
			return sent, fmt.Errorf("claiming %ss: %w", q.what, err)
		}
		if len(rows) == 0 {
			return sent, nil
		}
		ds := digests(q, rows)
		for i, d := range ds {
			if err := ctx.Err(); err != nil {
				return sent, errors.Join(err, s.release(ctx, ds[i:]))
			}
			if !s.Now().Add(s.Timeout).Before(d.rows[0].ClaimedUntil) {
				err := s.release(ctx, ds[i:])
				if err == nil && i == 0 {
					err = fmt.Errorf("sending %ss: a fresh claim of %s leaves less than the SMTP timeout (%s)", q.what, s.Lease, s.Timeout)
				}
				if err != nil {
					return sent, err
				}
				break
			}
			ok, err := q.send(ctx, d)
			if err != nil {
				// d's outcome is unknown (the server may have accepted it):
				// its claim stays, to expire; the digests after it are free.
				return sent, errors.Join(err, s.release(ctx, ds[i+1:]))
			}
			if ok {
				sent++
			}
		}
	}
}

// digests groups rows of q, claimed and ordered by subscription and
// batch, into digests.
func digests(q *queue, rows []*rappel.AlertRow) []*digest {
	var ds []*digest
	for _, r := range rows {
		if n := len(ds); n > 0 && ds[n-1].sub == r.Sub && ds[n-1].seq == r.Seq {
			ds[n-1].rows = append(ds[n-1].rows, r)
			continue
		}
		ds = append(ds, &digest{q: q, sub: r.Sub, seq: r.Seq, rows: []*rappel.AlertRow{r}})
	}
	return ds
}

// recordTimeout bounds recording outcomes and releasing claims once ctx
// has ended.
const recordTimeout = 5 * time.Second

// release gives the claims of ds, digests of one queue, back unchanged,
// so that any node may take them at once. It runs even when ctx has ended
// (within recordTimeout): claims left behind would hold the rows until
// their lease expires.
func (s *Sender) release(ctx context.Context, ds []*digest) error {
	var rows []*rappel.AlertRow
	for _, d := range ds {
		rows = append(rows, d.rows...)
	}
	if len(rows) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if _, err := ds[0].q.update(ctx, s.Node, rows); err != nil {
		return fmt.Errorf("releasing %s claims: %w", ds[0].q.what, err)
	}
	return nil
}

// update records d's rows under their claim, even when ctx has ended
// (within recordTimeout): a message the server accepted must be recorded,
// or it goes out again. A claim lost meanwhile (the lease expired and
// another node took the rows) is logged: that node's outcome stands.
func (s *Sender) update(ctx context.Context, d *digest) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	n, err := d.q.update(ctx, s.Node, d.rows)
	if err != nil {
		return fmt.Errorf("recording %ss: %w", d.q.what, err)
	}
	if n < len(d.rows) {
		s.Logger.Warn(d.q.what+" claim lost to another node; its outcome stands", "subscription", d.sub, "seq", d.seq, "rows", len(d.rows), "recorded", n)
	}
	return nil
}

// sendDigest sends one digest of alerts and records the outcome; the
// error is only for failures to record it.
func (s *Sender) sendDigest(ctx context.Context, d *digest) (bool, error) {
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
	if len(recs) < len(d.rows) && s.RecordWait > 0 && now.Sub(d.rows[0].CreatedAt) < s.RecordWait {
		// Not fetched here yet: wait for this node's next refresh, or for
		// another node to take the rows.
		for _, r := range d.rows {
			r.NextAt = now.Add(max(s.MinBackoff, time.Second))
			r.Error = "recall not on this node yet"
		}
		return false, s.update(ctx, d)
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
	return s.record(ctx, d, s.deliver(ctx, msg, "unsubscribe", unsubscribeURL(s.PublicURL, token)), now)
}

// sendConfirmation sends the confirmation e-mail of d's subscription, with
// a confirmation and an unsubscribe token of its own (only their hashes
// are stored, so a retry cannot send the tokens of an earlier attempt),
// and records the outcome; the error is only for failures to record it.
// A subscription no longer pending (confirmed, unsubscribed, or deleted
// once expired), or past PendingTTL, drops its e-mail: its link would do
// nothing.
func (s *Sender) sendConfirmation(ctx context.Context, d *digest) (bool, error) {
	now := s.Now().UTC()
	sub, err := s.Subscriptions.Subscription(ctx, d.sub)
	if err != nil && rappel.ErrorCode(err) != rappel.ENOTFOUND {
		return false, err
	}
	switch {
	case sub == nil || sub.Status != rappel.SubPending:
		return false, s.finish(ctx, d, rappel.AlertFailed, "subscription no longer pending", now)
	case s.PendingTTL > 0 && !now.Before(sub.CreatedAt.Add(s.PendingTTL)):
		return false, s.finish(ctx, d, rappel.AlertFailed, "confirmation link expired before the e-mail could be sent", now)
	}
	var tokens [2]string
	for i, kind := range []string{rappel.TokenConfirm, rappel.TokenUnsubscribe} {
		if tokens[i], err = NewToken(s.Random); err != nil {
			return false, err
		}
		if err := s.Subscriptions.AddToken(ctx, sub.ID, kind, HashToken(tokens[i])); err != nil {
			return false, err
		}
	}
	msg, links, err := s.composeConfirmation(sub, tokens[0], tokens[1])
	if err != nil {
		return false, s.finish(ctx, d, rappel.AlertFailed, err.Error(), now)
	}
	return s.record(ctx, d, s.deliver(ctx, msg, links...), now)
}

// record records err, the outcome of sending d at now: sent; nothing when
// ctx ended; a retry after the backoff for a temporary failure while
// attempts are left; failed otherwise. The error is only for failures to
// record it.
func (s *Sender) record(ctx context.Context, d *digest, err error, now time.Time) (bool, error) {
	switch {
	case err == nil:
		if s.accepted != nil {
			s.accepted()
		}
		return true, s.finish(ctx, d, rappel.AlertSent, "", now)
	case ctx.Err() != nil:
		// Cut off (shutdown): the server may or may not have the message.
		// Recording nothing leaves the rows to the claim's expiry, or to
		// the next process of a single node, rather than failing them.
		return false, fmt.Errorf("sending %s: %w", d.q.what, ctx.Err())
	case isTemporary(err) && (s.MaxAttempts <= 0 || d.rows[0].Attempts+1 < s.MaxAttempts):
		s.logFailure(ctx, d, slog.LevelWarn, "deferred", err, now)
		for _, r := range d.rows {
			r.Attempts++
			r.Error = err.Error()
			r.NextAt = now.Add(s.backoff(r.Attempts))
		}
		return false, s.update(ctx, d)
	default:
		s.logFailure(ctx, d, slog.LevelError, "refused", err, now)
		return false, s.finish(ctx, d, rappel.AlertFailed, err.Error(), now)
	}
}

// logFailure logs err, the failure of sending d at now (outcome is
// "deferred" or "refused"), at most once per LogEvery for its kind of
// e-mail, outcome and cause: a server down fails every e-mail of a pass
// alike, and one line says so as well as hundreds.
func (s *Sender) logFailure(ctx context.Context, d *digest, level slog.Level, outcome string, err error, now time.Time) {
	msg := d.q.what + " " + outcome
	s.failureLog().Log(ctx, s.Logger, now, msg+": "+failureCause(err), level, msg,
		"subscription", d.sub, "seq", d.seq, "error", redactAddresses(err.Error()))
}

// failureLog is the limiter of logFailure.
func (s *Sender) failureLog() *lograte.Limiter {
	s.failuresOnce.Do(func() { s.failures.Every = s.LogEvery })
	return &s.failures
}

// failureCause names the class of a send's failure, what makes two
// failures alike for the log, without what varies from one e-mail to the
// next (addresses, message and queue ids): an SMTP reply by the step it
// answered and its codes, a network error by its operation and error, a
// mail dir's by its errno.
func failureCause(err error) string {
	var se *mail.SendError
	if errors.As(err, &se) {
		return fmt.Sprintf("smtp %s: %d %s", se.Reason, se.ErrorCode(), se.EnhancedStatusCode())
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return "net " + oe.Op + ": " + redactAddresses(oe.Err.Error())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return "errno: " + errno.Error()
	}
	return redactAddresses(err.Error())
}

func (s *Sender) finish(ctx context.Context, d *digest, status, msg string, now time.Time) error {
	for _, r := range d.rows {
		r.Status, r.Error = status, msg
		r.Attempts++
		if status == rappel.AlertSent {
			r.SentAt = now
		}
	}
	return s.update(ctx, d)
}

func (s *Sender) backoff(attempts int) time.Duration {
	d := s.MinBackoff
	for i := 1; i < attempts && d < s.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.MaxBackoff)
}

// isTemporary reports whether a send may succeed later: a 4xx reply, no
// conversation at all (server down, timeout), or a file the mail dir could
// not take (a full disk, a directory not writable yet).
func isTemporary(err error) bool {
	var fe *mailFileError
	if errors.As(err, &fe) {
		return true
	}
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

// deliver hands msg to the SMTP server, or writes it into MailDir with
// links (pairs of a name and a URL, for the log) when that is set.
func (s *Sender) deliver(ctx context.Context, msg *mail.Msg, links ...string) error {
	if s.MailDir != "" {
		return s.writeMailFile(msg, links)
	}
	return s.dialAndSend(ctx, msg)
}

func (s *Sender) dialAndSend(ctx context.Context, msg *mail.Msg) (err error) {
	ctx, span := tracer.Start(ctx, "alerts.SMTPSend", trace.WithSpanKind(trace.SpanKindClient))
	defer func() { endSend(span, err) }()
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
