package rappel

import (
	"context"
	"fmt"
	"net/mail"
	"net/netip"
	"regexp"
	"strings"
	"time"
)

// Subscription states.
const (
	SubPending      = "pending_confirmation"
	SubActive       = "subscribed"
	SubUnsubscribed = "unsubscribed"
)

// Consent methods: how a subscriber agreed to receive alerts (Canada's
// anti-spam law asks for express consent and a record of it).
const (
	ConsentDoubleOptIn = "double_opt_in" // the confirmation link was followed
	ConsentIntegrator  = "integrator"    // the API client collected it (--alerts-confirm=false)
)

// Limits of a subscription request.
const (
	MaxEmailBytes = 254 // RFC 5321 path limit
)

// AlertSearch is the saved search of a subscription: the body's q and
// filters, validated. Agency uses the vocabulary of recall_agency.
type AlertSearch struct {
	Q string `json:"q,omitempty"`
	// FilterValues are the filters' values; a subscription's holds only
	// those of filters InAlerts.
	FilterValues
}

// Search returns the GET /recall search the saved search stands for.
func (a AlertSearch) Search() (*Search, error) {
	q, err := ParseQuery(a.Q)
	if err != nil {
		return nil, err
	}
	return &Search{Query: q, FilterValues: a.FilterValues}, nil
}

// Consent records when and how a subscriber agreed to receive alerts.
type Consent struct {
	Method string    `json:"method"`
	At     time.Time `json:"at"`
	// RequestedAt is when the subscribe request came in.
	RequestedAt time.Time `json:"requested_at"`
	// UserAgent is the User-Agent that followed the confirmation link (or
	// sent the subscribe request), clipped; kept as evidence of consent.
	UserAgent string `json:"user_agent,omitempty"`
}

// Subscription is a stored alert subscription. Tokens are never stored,
// only their SHA-256 (see the store).
type Subscription struct {
	ID        string      `json:"id"`
	Email     string      `json:"email"`
	Lang      string      `json:"lang,omitempty"` // "" means bilingual e-mails
	Search    AlertSearch `json:"search"`
	Status    string      `json:"status"`
	CreatedAt time.Time   `json:"created_at"`
	Consent   *Consent    `json:"consent,omitempty"`
	// UnsubscribedAt is set once the subscriber left.
	UnsubscribedAt time.Time `json:"unsubscribed_at,omitzero"`
}

// SubscribeRequest is the body of POST /recall/alerts/subscribe, decoded.
type SubscribeRequest struct {
	Email *string `json:"email"`
	Q     *string `json:"q"`
	// Filters are the values of the filters InAlerts, under their Field
	// names in the body; "" for one not sent.
	Filters FilterValues `json:"-"`
	Lang    *string      `json:"lang"`
	// UserAgent is the request's User-Agent, kept with the consent record.
	UserAgent string `json:"-"`
	// KeyID is the ID of the caller's API key, whose subscriptions a day
	// are capped; "" when the caller has none (no cap applies).
	KeyID string `json:"-"`
}

// SubscribeResult is the response of POST /recall/alerts/subscribe. It is
// the same whether or not the address was subscribed already.
type SubscribeResult struct {
	Status string `json:"status"`
	Token  string `json:"token"`
}

// UnsubscribeResult is the response of unsubscribe and confirm.
type UnsubscribeResult struct {
	Status string `json:"status"`
}

// LimitError refuses a request over a limit that resets after RetryAfter:
// a 429 whose Retry-After header the edge takes from RetryAfter. Its
// *Error is what the client reads.
type LimitError struct {
	Err        *Error
	RetryAfter time.Duration
}

func (e *LimitError) Error() string { return e.Err.Error() }
func (e *LimitError) Unwrap() error { return e.Err }

// Alerts is the alert service the edge calls.
type Alerts interface {
	// Subscribe validates req and stores a subscription. It returns a
	// 422 *Error for an invalid request, and a *LimitError when req's key
	// has made all the subscriptions it may make today. Its answer is the
	// same whether or not a confirmation e-mail went out.
	Subscribe(ctx context.Context, req *SubscribeRequest) (*SubscribeResult, error)
	// Confirm activates the subscription of a confirmation token; ENOTFOUND
	// for an unknown token, or one whose pending subscription expired. A
	// used token answers as the first time did.
	Confirm(ctx context.Context, token, userAgent string) (*UnsubscribeResult, error)
	// Unsubscribe ends the subscription of an unsubscribe token; ENOTFOUND
	// for an unknown token, and success again for a used one.
	Unsubscribe(ctx context.Context, token string) (*UnsubscribeResult, error)
}

// Token kinds.
const (
	TokenConfirm     = "confirm"
	TokenUnsubscribe = "unsubscribe"
)

// SubscriptionStore keeps subscriptions durably; every write is synced.
// Methods honour ctx before doing I/O.
type SubscriptionStore interface {
	// CreateSubscription stores sub with the SHA-256 of its tokens, by kind.
	CreateSubscription(ctx context.Context, sub *Subscription, tokenHashes map[string][32]byte) error
	// CreatePending stores sub, pending, as CreateSubscription does and,
	// in the same transaction, row, its confirmation e-mail, in the
	// confirmation outbox (ConfirmOutbox), while allowance lasts: when
	// allowance is not nil, one use of it is counted as TakeAllowance
	// counts it, and row is written only if that use counted. It reports
	// whether row was written. When it fails nothing is written, so that
	// a subscription acknowledged always has its e-mail queued or its
	// allowance spent on an earlier one.
	CreatePending(ctx context.Context, sub *Subscription, tokenHashes map[string][32]byte, row *AlertRow, allowance *Allowance) (queued bool, err error)
	// SubscriptionByToken returns the subscription and the kind of the
	// token whose SHA-256 is hash, or an *Error ENOTFOUND.
	SubscriptionByToken(ctx context.Context, hash [32]byte) (*Subscription, string, error)
	// Subscription returns the subscription with id, or ENOTFOUND.
	Subscription(ctx context.Context, id string) (*Subscription, error)
	// AddToken stores one more token of kind for subscription id, by its
	// SHA-256 (each alert e-mail carries its own unsubscribe token).
	AddToken(ctx context.Context, id, kind string, hash [32]byte) error
	// PutSubscription replaces a stored subscription.
	PutSubscription(ctx context.Context, sub *Subscription) error
	// ForEachSubscription calls fn for every stored subscription, stopping
	// at fn's first error.
	ForEachSubscription(ctx context.Context, fn func(*Subscription) error) error
	// DeletePendingBefore deletes the subscriptions still pending whose
	// CreatedAt is before t, with all their tokens, and returns how many
	// it deleted.
	DeletePendingBefore(ctx context.Context, t time.Time) (int, error)

	// TakeAllowance counts one use of the allowance called name, which
	// allows limit uses (at least 1) in a window: when name has no window
	// open at now, it opens one ending at end and counts the use; inside
	// an open window it counts the use while fewer than limit were
	// counted, and otherwise counts nothing and answers ok false. until
	// is the end of the window. It is atomic across every handle on the
	// store (every node of a fleet). Names are the caller's and opaque to
	// the store; callers never put an e-mail address in clear in one.
	TakeAllowance(ctx context.Context, name string, limit int, now, end time.Time) (ok bool, until time.Time, err error)
	// DeleteAllowancesEnded deletes the allowances whose window ended at
	// or before now, and returns how many.
	DeleteAllowancesEnded(ctx context.Context, now time.Time) (int, error)
}

// Allowance is one use of an allowance, as TakeAllowance counts it: Name
// allows Limit uses in a window opened at Now and ending at End.
type Allowance struct {
	Name     string
	Limit    int
	Now, End time.Time
}

// ConfirmRecord is the Record of a confirmation e-mail's outbox row: the
// row of a pending subscription's confirmation is keyed (its id,
// ConfirmRecord).
const ConfirmRecord = "confirm"

// ConfirmOutbox keeps the confirmation e-mails of pending subscriptions,
// written by SubscriptionStore.CreatePending, as outbox rows with the
// claims and leases of Outbox, so that an e-mail that could not be sent
// (the SMTP server down, the mail dir's disk full) is retried, by this
// node after a restart or by another node of a fleet. A row's Sub is the
// subscription and its Record is ConfirmRecord; nothing matches them, so
// there are no matched marks.
type ConfirmOutbox interface {
	// ClaimConfirmations and UpdateConfirmations are Outbox.ClaimAlerts
	// and Outbox.UpdateAlerts for confirmation rows.
	ClaimConfirmations(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*AlertRow, error)
	UpdateConfirmations(ctx context.Context, node string, rows []*AlertRow) (int, error)
	// PruneConfirmations deletes the confirmation rows in a final state
	// (sent or failed) created before before, and returns how many.
	PruneConfirmations(ctx context.Context, before time.Time) (int, error)
}

// Validate checks req as the subscribe endpoint does and returns the
// subscription's address, its domain written by names in ASCII, language
// and search, or a 422 *Error listing every problem, at loc
// BodyLoc(field).
func (req *SubscribeRequest) Validate(names DomainNames) (email, lang string, s AlertSearch, err error) {
	var c fieldCheck
	if req.Email == nil {
		c.items = append(c.items, InvalidMissing(BodyLoc("email"), "send the e-mail address to alert"))
	} else if e := c.str("email", req.Email, MaxEmailBytes); e != "" || *req.Email == "" {
		if addr, why := mailbox(e, names); why == nil {
			email = addr
		} else {
			c.items = append(c.items, InvalidValue(BodyLoc("email"), *req.Email, *why))
		}
	}
	// The saved search is checked as a webhook's is.
	s = c.search(req.Q, &req.Filters, true)
	lang = c.vocab("lang", req.Lang, Langs, 64)
	if len(c.items) > 0 {
		return "", "", AlertSearch{}, Invalids(c.items...)
	}
	return email, lang, s, nil
}

// fieldCheck validates the string fields of a request body, collecting a
// 422 item per problem: the subscribe body and the webhook body share it.
type fieldCheck struct{ items []Invalid }

// str returns *p, or "" when p is nil or the value is refused (too long,
// or a character BadChar refuses).
func (c *fieldCheck) str(field string, p *string, max int) string {
	if p == nil {
		return ""
	}
	if it, bad := checkText(field, *p, max, field == "email"); bad {
		c.items = append(c.items, it)
		return ""
	}
	return *p
}

// vocab returns *p when v has it, else "" with an item naming the nearest
// value.
func (c *fieldCheck) vocab(field string, p *string, v Vocabulary, max int) string {
	x := c.str(field, p, max)
	if x == "" || v.Has(x) {
		return x
	}
	c.items = append(c.items, InvalidEnum(BodyLoc(field), x, v))
	return ""
}

// search validates a saved search's q and filters, as GET /recall reads
// them: those InAlerts under their Field names for a subscription
// (alerts), every filter under its Param name for a webhook.
func (c *fieldCheck) search(q *string, fv *FilterValues, alerts bool) AlertSearch {
	var s AlertSearch
	s.Q = strings.TrimSpace(c.str("q", q, MaxQueryBytes))
	if s.Q != "" {
		if _, qerr := ParseQuery(s.Q); qerr != nil {
			if qe, ok := qerr.(*QueryError); ok {
				c.items = append(c.items, qe.Item(BodyLoc("q"), s.Q))
			}
		}
	}
	for i := range Filters {
		f := &Filters[i]
		if alerts && !f.InAlerts {
			continue
		}
		name, v := f.Param, f.Of(fv)
		if alerts {
			name = f.Field
		}
		if f.Free() {
			*f.Of(&s.FilterValues) = strings.TrimSpace(c.str(name, v, f.MaxBytes))
		} else {
			*f.Of(&s.FilterValues) = c.vocab(name, v, f.Vocab(), f.MaxBytes)
		}
	}
	return s
}

// checkText refuses over-long values and the characters BadChar refuses,
// with strict for an e-mail address.
func checkText(field, v string, max int, strict bool) (it Invalid, bad bool) {
	loc := BodyLoc(field)
	if len(v) > max {
		return InvalidTooLong(loc, v, len(v), max), true
	}
	if r, bad := BadChar(v, strict); bad {
		return InvalidValue(loc, v, r), true
	}
	return it, false
}

// mailbox accepts one bare address local@domain, with a dotted domain, and
// returns it with the domain as its lower-case A-label (xn--…, written by
// names.EmailDomain), so that
// the address reaches SMTP's RCPT TO, and every counter keyed by it, in
// one ASCII form however its domain was typed. The local part is kept as
// sent (RFC 6532 allows UTF-8 there; it has no ASCII form). The reason
// says what is wrong with an address refused.
func mailbox(s string, names DomainNames) (string, *Reason) {
	notMailbox := &Reason{Problem: "is not a valid e-mail address", Fix: "send one mailbox such as 'name@example.ca', without a display name"}
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		if domain := s[at+1:]; ipDomain(domain) || ipDomain(lookupForm(domain, names)) {
			return "", &Reason{Problem: fmt.Sprintf("has an IP address as its domain (%s)", Quote(domain)),
				Fix: "send an address at a domain name, such as 'name@example.ca': alerts are not e-mailed to IP addresses"}
		}
	}
	if s == "" || strings.ContainsAny(s, "<>\"(), ;:\\[]") {
		return "", notMailbox
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return "", notMailbox
	}
	at := strings.LastIndexByte(s, '@')
	local, domain := s[:at], s[at+1:]
	if local == "" || len(local) > 64 || !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") ||
		strings.HasSuffix(domain, ".") || strings.Contains(domain, "..") {
		return "", notMailbox
	}
	ascii, err := names.EmailDomain(domain)
	if err != nil {
		return "", &Reason{Problem: fmt.Sprintf("has the domain %s, which is not a valid internationalized domain name (%s)",
			Quote(domain), strings.TrimPrefix(err.Error(), "idna: ")),
			Fix: "check the part after '@': a domain in another script is sent as typed ('bücher.example') or as its A-label ('xn--bcher-kva.example'), with letters, digits and single hyphens between the dots"}
	}
	if addr := local + "@" + ascii; len(addr) <= MaxEmailBytes {
		return addr, nil
	}
	return "", &Reason{Problem: fmt.Sprintf("is longer than %d bytes once its domain is written as an A-label (%s)", MaxEmailBytes, Quote(ascii)),
		Fix: "send a shorter address"}
}

// ipDomain reports whether domain is an IP address rather than a name: an
// address literal in brackets (RFC 5321's [192.0.2.1], [IPv6:2001:db8::1]),
// or an address written bare in a form resolvers read as one: IPv6, or
// one to four dot-separated numbers, decimal, octal (0177) or hexadecimal
// (0x7f), as in 127.0.0.1, 127.1 or 0x7f.0.0.1. Mail to an IP address
// skips the domain's MX records and reaches whatever host the address
// names, the node's own network included, so it is never sent.
func ipDomain(domain string) bool {
	if strings.HasPrefix(domain, "[") && strings.HasSuffix(domain, "]") {
		return true
	}
	if _, err := netip.ParseAddr(domain); err == nil {
		return true
	}
	parts := strings.Split(strings.TrimSuffix(domain, "."), ".")
	if len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if !ipNumber(p) {
			return false
		}
	}
	return true
}

// ipNumber reports whether p is a number of a bare IPv4 address: decimal
// or octal digits, or 0x and hexadecimal digits.
func ipNumber(p string) bool {
	digits := "0123456789"
	if len(p) > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') {
		p, digits = p[2:], "0123456789abcdefABCDEF"
	}
	return p != "" && strings.Trim(p, digits) == ""
}

// lookupForm is domain as a resolver would look it up
// (names.EmailDomain), or domain itself when it has no such form, so that
// full-width digits and dots ('１２７．０．０．１') read as the address they
// stand for.
func lookupForm(domain string, names DomainNames) string {
	if a, err := names.EmailDomain(domain); err == nil {
		return a
	}
	return domain
}

// DomainNames writes internationalized domain names in ASCII (IDNA), for
// the validation of e-mail addresses and webhook URLs. The domain names
// what it needs and package idn implements it with golang.org/x/net/idna,
// so that this package imports the standard library only.
type DomainNames interface {
	// EmailDomain returns domain in the form mail is sent to: its
	// lower-case A-label (xn--…) under UTS #46 mapping for lookup (case
	// folded, full-width letters mapped), IDNA2008 label rules (no
	// hyphens in the third and fourth places, joiners only where a
	// script needs them), the bidi rule and DNS lengths. The error says
	// why the domain has no such form, after "idna: ".
	EmailDomain(domain string) (string, error)
	// HostALabel returns a host name's A-label form as resolvers look
	// it up (the UTS #46 lookup profile).
	HostALabel(host string) (string, error)
}

// RecordMatcher evaluates a search over a fixed set of records, with the
// query engine of GET /recall. MatchIDs returns the record_ids that match s
// (its q, filters and dates; paging and sorting are ignored).
type RecordMatcher interface {
	MatchIDs(ctx context.Context, s *Search) ([]string, error)
}

// Outbox row states.
const (
	AlertPending = "pending"
	AlertSent    = "sent"
	AlertFailed  = "failed" // permanently: the server refused the message
)

// AlertRow is one outbox row: recall Record is due to subscription Sub.
// Rows are keyed by (Sub, Record), so a recall reaches a subscription once.
// The stores keep webhook deliveries as rows too, one outbox code serving
// both (see Delivery.Row).
type AlertRow struct {
	Sub    string `json:"sub"`
	Record string `json:"record"`
	OutboxState
	// Payload is a webhook delivery's body, carried through the stores'
	// outbox code; alert rows have none.
	Payload RawJSON `json:"payload,omitempty"`
}

// OutboxState is where an outbox row stands, the same for alert rows and
// webhook deliveries.
type OutboxState struct {
	// Seq is the batch of new recalls the row came from, numbered by the
	// node that matched it (each node numbers its own refreshes): rows of
	// one subscription and batch go out as one e-mail.
	Seq       uint64    `json:"seq"`
	Status    string    `json:"status"`
	Attempts  int       `json:"attempts,omitempty"`
	NextAt    time.Time `json:"next_at,omitzero"`
	CreatedAt time.Time `json:"created_at"`
	SentAt    time.Time `json:"sent_at,omitzero"`
	Error     string    `json:"error,omitempty"`
	// ClaimedBy and ClaimedUntil are the claim of the node sending the row
	// (see Outbox.ClaimAlerts); empty when no node holds it.
	ClaimedBy    string    `json:"claimed_by,omitempty"`
	ClaimedUntil time.Time `json:"claimed_until,omitzero"`
}

// OutboxDepth is what an e-mail outbox holds still to be sent (pending
// rows, retries included), counted as it goes out: Mails e-mails, one per
// subscription and batch (Seq) as the sender groups rows into digests,
// made of Rows rows (an alert e-mail lists every recall of its batch; a
// confirmation e-mail is one row). Oldest is the CreatedAt of the oldest
// pending row, zero when none is pending. The stores count it for the
// metrics (the Pebble store keeps it as it writes, the shared store asks
// the database), so that a gauge says how many e-mails wait, not how many
// rows.
type OutboxDepth struct {
	Mails, Rows int
	Oldest      time.Time
}

// Outbox keeps alert rows durably; every write is synced (or committed).
// Methods honour ctx before doing I/O. Several nodes may share one Outbox
// and run matching and sending at the same time: matching marks record ids
// so that each new recall is matched once across them, and sending claims
// rows so that one node sends each.
type Outbox interface {
	// UnmatchedRecords returns those of ids no node has marked as matched
	// (see CommitMatches), in the order given.
	UnmatchedRecords(ctx context.Context, ids []string) ([]string, error)
	// CommitMatches marks records as matched and writes rows, in one
	// transaction. Only the rows of records it marks itself are written: a
	// record another node marked first keeps that node's rows. A row whose
	// (Sub, Record) exists is left as it is, so that a row already sent is
	// never reset to pending. It returns how many rows it wrote.
	CommitMatches(ctx context.Context, records []string, rows []*AlertRow) (int, error)
	// ClaimAlerts claims for node, until now+lease, up to limit pending rows
	// whose NextAt is not after now and that no live claim holds, and
	// returns them with ClaimedBy and ClaimedUntil set, ordered by Sub,
	// Seq, then Record. A claim whose ClaimedUntil is not after now has
	// expired: its rows are due again (the node holding it died or
	// stalled). The limit never splits the rows of one subscription and
	// batch unless they alone exceed it.
	ClaimAlerts(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*AlertRow, error)
	// UpdateAlerts records the outcome of rows claimed by node and releases
	// their claims, in one transaction. A row is written only while the
	// claim it carries (ClaimedBy, ClaimedUntil) still holds it, even if
	// expired: once another claim took the row, the stale node's result is
	// dropped. It returns how many rows it wrote.
	UpdateAlerts(ctx context.Context, node string, rows []*AlertRow) (int, error)
	// PruneAlerts deletes the rows in a final state (sent or failed)
	// created before before, and the matched marks written before it,
	// and returns how many of each it deleted. Pending rows stay, whatever
	// their age. A record whose mark is gone would be matched again if a
	// node saw it as new once more: before must be far enough back that
	// none can (see docs/api.md, section E-mail alerts).
	PruneAlerts(ctx context.Context, before time.Time) (rows, marks int, err error)
}

// NewRecallsSource hands out each refresh's new recalls durably until they
// are acknowledged (kv.Store implements it; see SourceStore).
type NewRecallsSource interface {
	NewRecalls(ctx context.Context) ([]NewRecalls, error)
	AckNewRecalls(ctx context.Context, seq uint64) error
}

// addressPattern is anything shaped like an e-mail address.
var addressPattern = regexp.MustCompile(`[^\s<>()\[\]"',;:@]+@[^\s<>()\[\]"',;:@]+`)

// RedactAddresses replaces every e-mail address in s by with. An address
// is personal data that neither logs nor spans may carry: SMTP servers
// quote the recipient in their replies ("550 <a@b.example>: mailbox
// unavailable"), and libraries log the address they were given. It is the
// one rule of what counts as an address, for every place that redacts.
func RedactAddresses(s, with string) string {
	if strings.IndexByte(s, '@') < 0 {
		return s
	}
	return addressPattern.ReplaceAllString(s, with)
}

// TrimClaim cuts rows, sorted by subscription and batch (group gives a
// row's), to limit without splitting the last group, unless that group is
// all there is: the rows of one subscription and batch are one e-mail,
// claimed and sent together, so that a claim's limit never sends half of
// one and the other half later as a second e-mail. Both stores' claims cut
// with it.
func TrimClaim[R any](rows []R, limit int, group func(R) (string, uint64)) []R {
	if len(rows) <= limit {
		return rows
	}
	sub, seq := group(rows[limit])
	n := limit
	for n > 0 {
		if s, q := group(rows[n-1]); s != sub || q != seq {
			break
		}
		n--
	}
	if n == 0 {
		n = limit
	}
	return rows[:n]
}
