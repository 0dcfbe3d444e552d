package rappel

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// RawJSON is JSON kept as bytes: a webhook row's payload.
type RawJSON = json.RawMessage

// Webhook event types: the type of a delivery's payload.
const (
	EventRecallCreated  = "recall.created"
	EventRecallUpdated  = "recall.updated"
	EventRecallArchived = "recall.archived"
	// EventWebhookTest is sent by POST /recall/webhooks/{id}/test only.
	EventWebhookTest = "webhook.test"
)

// WebhookEvents are the event types an endpoint may subscribe to.
var WebhookEvents = Vocabulary{EventRecallCreated, EventRecallUpdated, EventRecallArchived, EventWatchlistMatch}

// Webhook endpoint states.
const (
	WebhookEnabled  = "enabled"
	WebhookDisabled = "disabled"
)

// Limits of a webhook endpoint.
const (
	MaxWebhookURLBytes = 2048
	// MaxWebhooksPerKey is how many endpoints one API key may register.
	MaxWebhooksPerKey = 20
)

// Webhook is a stored webhook endpoint of one API key. Secret signs every
// delivery; it is shown once, when the endpoint is created.
type Webhook struct {
	ID string `json:"id"`
	// Key is the ID of the API key that registered the endpoint: only it
	// sees the endpoint.
	Key    string      `json:"key"`
	URL    string      `json:"url"`
	Search AlertSearch `json:"search"`
	Events []string    `json:"events"`
	// Secret is "whsec_" and the base64 of the signing key's bytes.
	Secret    string    `json:"secret"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	// DisabledReason and DisabledAt say why and since when a disabled
	// endpoint gets nothing.
	DisabledReason string    `json:"disabled_reason,omitempty"`
	DisabledAt     time.Time `json:"disabled_at,omitzero"`
	// FailingSince is the first failed delivery after the last success;
	// zero while deliveries succeed.
	FailingSince time.Time `json:"failing_since,omitzero"`
	// LastDelivery is the outcome of the last delivery attempt.
	LastDelivery *WebhookAttempt `json:"last_delivery,omitempty"`
	// LastTest is the last test event, pending or done.
	LastTest *WebhookTest `json:"last_test,omitempty"`
}

// Wants reports whether the endpoint takes events of type typ.
func (w *Webhook) Wants(typ string) bool {
	return slices.Contains(w.Events, typ)
}

// WebhookAttempt is the outcome of one delivery attempt.
type WebhookAttempt struct {
	At time.Time `json:"at"`
	// ID is the webhook-id header: the same for every attempt of an event.
	ID   string `json:"webhook_id"`
	Type string `json:"type"`
	// StatusCode is the receiver's answer, 0 when there was none.
	StatusCode int    `json:"status_code,omitempty"`
	OK         bool   `json:"ok"`
	Error      string `json:"error,omitempty"`
}

// WebhookRequest is the body of POST /recall/webhooks, decoded: nil is a
// field not sent.
type WebhookRequest struct {
	URL *string `json:"url"`
	Q   *string `json:"q"`
	// Filters are the values of every filter, under their Param names in
	// the body; "" for one not sent.
	Filters FilterValues `json:"-"`
	Events  *[]string    `json:"events"`
	// Served is the data the node serves, set by the edge: the search's
	// filters are checked against it as GET /recall checks its
	// parameters (a category no record has is refused). Nil skips that
	// check.
	Served Searcher `json:"-"`
}

// Validate checks req as POST /recall/webhooks does and returns the
// endpoint's URL, search and events (all of WebhookEvents when none are
// given), or a 422 *Error with an item per problem. names writes a host
// that is not ASCII in the form suggested instead. allowHTTPLoopback
// accepts http:// URLs to a loopback host, for development. Another error
// is the searcher's failure.
func (req *WebhookRequest) Validate(ctx context.Context, names DomainNames, allowHTTPLoopback bool) (u string, s AlertSearch, events []string, err error) {
	var c fieldCheck
	if req.URL == nil {
		c.items = append(c.items, InvalidMissing(BodyLoc("url"), "send the https URL that receives the events"))
	} else if v := c.str("url", req.URL, MaxWebhookURLBytes); v != "" || *req.URL == "" {
		if r, bad := checkWebhookURL(v, names, allowHTTPLoopback); bad {
			c.items = append(c.items, InvalidValue(BodyLoc("url"), v, r))
		} else {
			u = v
		}
	}
	s = c.search(req.Q, &req.Filters, false)
	if s.Category != "" && req.Served != nil {
		if err := c.knownCategory(ctx, s.Category, req.Served); err != nil {
			return "", AlertSearch{}, nil, err
		}
	}
	if req.Events == nil || len(*req.Events) == 0 {
		events = append(events, WebhookEvents...)
	} else {
		for _, e := range *req.Events {
			if !WebhookEvents.Has(e) {
				c.items = append(c.items, InvalidEnum(BodyLoc("events"), e, WebhookEvents))
				continue
			}
			if !slices.Contains(events, e) {
				events = append(events, e)
			}
		}
	}
	if len(c.items) > 0 {
		return "", AlertSearch{}, nil, Invalids(c.items...)
	}
	return u, s, events, nil
}

// knownCategory refuses a category GET /recall refuses, by running GET
// /recall's own check: a search of served for the category alone, whose
// unknown-category error (with its nearest category) becomes an item at
// the body field, worded as GET /recall words it. Another error is the
// searcher failing, returned as is.
func (c *fieldCheck) knownCategory(ctx context.Context, category string, served Searcher) error {
	q, err := (&Search{FilterValues: FilterValues{Category: category}, Limit: 1}).Checked()
	if err != nil {
		return err
	}
	_, err = served.Search(ctx, q)
	var ue *UnknownError
	if errors.As(err, &ue) {
		c.items = append(c.items, InvalidValue(BodyLoc("category"), category, ue.Reason()))
		return nil
	}
	return err
}

// checkWebhookURL refuses what can never be delivered to: a URL that is not
// absolute https (http only to a loopback host when allowed), carries
// credentials or a fragment, has a host that is not ASCII, or names an
// address no delivery may reach (CheckWebhookAddress). Names are resolved
// only when connecting, where each address is checked again.
func checkWebhookURL(v string, names DomainNames, allowHTTPLoopback bool) (Reason, bool) {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return Reason{Problem: "is not an absolute URL", Fix: "send one such as 'https://hooks.example.ca/rappel'"}, true
	}
	host := u.Hostname()
	if r, bad := checkHostText(u, host, names); bad {
		return r, true
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowHTTPLoopback && isLoopbackHost(host):
	default:
		return Reason{Problem: "is not an https URL", Fix: "send the https URL of an endpoint served over TLS"}, true
	}
	if u.User != nil {
		return Reason{Problem: "carries credentials", Fix: "remove them; check the webhook-signature header instead"}, true
	}
	if u.Fragment != "" || strings.Contains(v, "#") {
		return Reason{Problem: "has a fragment", Fix: "remove the part from '#' on"}, true
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return Reason{Problem: "has port " + port + ", which is not one from 1 to 65535", Fix: "send the receiver's port, or none for 443"}, true
		}
	}
	// The path and query are text a client reads back in GET
	// /recall/webhooks: no invisible format characters there either.
	if r, bad := BadChar(v, true); bad {
		r.Fix = "remove it, or percent-encode it if the receiver needs it"
		return r, true
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if ref := CheckWebhookAddress(a, allowHTTPLoopback); ref != nil {
			return Reason{Problem: "is refused: " + ref.String() + ", which a webhook may not reach", Fix: "give a public address or a host name"}, true
		}
		return Reason{}, false
	}
	if numericName(host) {
		return Reason{Problem: "has the host " + Quote(host) + ", which is neither a host name nor an IPv4 address written a.b.c.d",
			Fix: "write an IPv4 address as four numbers from 0 to 255 without leading zeros, or give a host name"}, true
	}
	if !allowHTTPLoopback && isLoopbackHost(host) {
		return Reason{Problem: "names this machine (localhost)", Fix: "send a URL reachable on the public Internet"}, true
	}
	return Reason{}, false
}

// checkHostText refuses a host that is not ASCII: an internationalized
// name, a character that looks like another or reorders the text (U+202E),
// U+FFFD (a lone surrogate in the JSON) or bytes that are not UTF-8. What
// the client reads back must be what is dialed, so the A-label form
// (xn--…) is asked for, and suggested when the name has one
// (names.HostALabel).
func checkHostText(u *url.URL, host string, names DomainNames) (Reason, bool) {
	if strings.IndexFunc(host, func(r rune) bool { return r >= utf8.RuneSelf }) < 0 {
		return Reason{}, false
	}
	r := Reason{Fix: "send the host name in its A-label (xn--) form, in ASCII"}
	if why, bad := BadChar(host, true); bad {
		r.Problem = "has a host name that " + why.Problem
		return r, true
	}
	r.Problem = "has the host name " + Quote(host) + ", which is not ASCII"
	if alabel, err := names.HostALabel(host); err == nil {
		a := *u
		a.Host = strings.Replace(u.Host, host, alabel, 1)
		r.Suggestion = a.String()
	}
	return r, true
}

// numericName reports whether host, not an IP address, ends in a label
// that is a number (decimal, or 0x hexadecimal): no host name does (no
// top-level domain is numeric), while some resolvers read such a host as
// an IPv4 address in another notation (2130706433, 0x7f.1, 010.0.0.1 are
// loopback or private addresses).
func numericName(host string) bool {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	last := strings.ToLower(labels[len(labels)-1])
	digits := "0123456789"
	if h, ok := strings.CutPrefix(last, "0x"); ok {
		last, digits = h, "0123456789abcdef"
	}
	return strings.Trim(last, digits) == ""
}

// isLoopbackHost reports whether host is a loopback address or a name
// that always resolves to one: localhost and the names under it (RFC
// 6761, section 6.3), with or without the root's trailing dot.
func isLoopbackHost(host string) bool {
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback() && !a.Is4In6()
}

// TooManyWebhooks is the 400 of a key at its cap of max endpoints.
func TooManyWebhooks(max int) *Error {
	return BadRequest(fmt.Sprintf("this API key has %d webhook endpoints, the most one key may have", max),
		"delete one with DELETE /recall/webhooks/{id} first")
}

// NoWebhook is the ENOTFOUND of an endpoint that does not exist, or that
// another key owns: the two answer alike.
func NoWebhook(id string) *Error {
	return Errorf(ENOTFOUND, "No webhook endpoint of this API key has id %s; list them with GET /recall/webhooks.", Quote(id))
}

// SortWebhooks orders endpoints oldest first, then by id, as
// WebhookStore.Webhooks returns them.
func SortWebhooks(ws []*Webhook) {
	slices.SortFunc(ws, func(a, b *Webhook) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
}

// WebhookView is an endpoint as GET /recall/webhooks shows it: without its
// secret.
type WebhookView struct {
	ID             string          `json:"id"`
	URL            string          `json:"url"`
	Q              string          `json:"q,omitempty"`
	Agency         string          `json:"recall_agency,omitempty"`
	RecallType     string          `json:"recall_type,omitempty"`
	HazardClass    string          `json:"hazard_class,omitempty"`
	Allergen       string          `json:"allergen,omitempty"`
	Category       string          `json:"category,omitempty"`
	RecallStatus   string          `json:"recall_status,omitempty"`
	Events         []string        `json:"events"`
	Status         string          `json:"status"`
	CreatedAt      time.Time       `json:"created_at"`
	DisabledReason string          `json:"disabled_reason,omitempty"`
	DisabledAt     *time.Time      `json:"disabled_at,omitempty"`
	FailingSince   *time.Time      `json:"failing_since,omitempty"`
	LastDelivery   *WebhookAttempt `json:"last_delivery,omitempty"`
	LastTest       *WebhookTest    `json:"last_test,omitempty"`
}

// View returns w as the API shows it.
func (w *Webhook) View() *WebhookView {
	v := &WebhookView{ID: w.ID, URL: w.URL, Q: w.Search.Q, Agency: w.Search.Agency, RecallType: w.Search.RecallType,
		HazardClass: w.Search.HazardClass, Allergen: w.Search.Allergen, Category: w.Search.Category,
		RecallStatus: w.Search.Status,
		Events:       w.Events, Status: w.Status, CreatedAt: w.CreatedAt, DisabledReason: w.DisabledReason, LastDelivery: w.LastDelivery,
		LastTest: w.LastTest}
	if !w.DisabledAt.IsZero() {
		t := w.DisabledAt
		v.DisabledAt = &t
	}
	if !w.FailingSince.IsZero() {
		t := w.FailingSince
		v.FailingSince = &t
	}
	return v
}

// WebhookCreated is the answer of POST /recall/webhooks: the endpoint and,
// this once, its signing secret.
type WebhookCreated struct {
	WebhookView
	Secret string `json:"secret"`
}

// States of a test event (WebhookTest.State).
const (
	TestPending = "pending"
	TestDone    = "done"
)

// WebhookTest is a webhook.test event that POST /recall/webhooks/{id}/test
// queued, as the answer and the endpoint's last_test show it. Its outcome
// shows from ReadyAt on, whatever the receiver did and however soon: the
// time an outcome takes to appear says nothing of whether a port is open
// (docs/api.md, "Which addresses rappel posts to").
type WebhookTest struct {
	// ID is the event's webhook-id header.
	ID          string    `json:"webhook_id"`
	Type        string    `json:"type"`
	RequestedAt time.Time `json:"requested_at"`
	ReadyAt     time.Time `json:"ready_at"`
	// State is TestPending until ReadyAt, then TestDone with the outcome:
	// the receiver's HTTP status, or Error saying there was none.
	State      string `json:"state"`
	StatusCode int    `json:"status_code,omitempty"`
	OK         bool   `json:"ok"`
	Error      string `json:"error,omitempty"`
}

// Pending reports whether t is under way at now: pending, and not past
// ReadyAt by more than grace (the node that ran it stopped).
func (t *WebhookTest) Pending(now time.Time, grace time.Duration) bool {
	return t != nil && t.State == TestPending && now.Before(t.ReadyAt.Add(grace))
}

// Webhooks is the webhook service the edge calls. key is the caller's API
// key ID: an endpoint of another key is ENOTFOUND, as one that does not
// exist.
type Webhooks interface {
	// Create validates req and stores an endpoint: a 422 *Error for an
	// invalid request, a 400 when the key has MaxWebhooksPerKey already.
	Create(ctx context.Context, key string, req *WebhookRequest) (*WebhookCreated, error)
	List(ctx context.Context, key string) ([]*WebhookView, error)
	Get(ctx context.Context, key, id string) (*WebhookView, error)
	Delete(ctx context.Context, key, id string) error
	// Test queues a webhook.test event to the endpoint and returns it,
	// pending; its outcome shows in the endpoint's LastTest from its
	// ReadyAt on. While a test of the endpoint is pending, it returns that
	// one.
	Test(ctx context.Context, key, id string) (*WebhookTest, error)
}

// WebhookStore keeps webhook endpoints durably; every write is synced (or
// committed). Methods honour ctx before doing I/O.
type WebhookStore interface {
	// CreateWebhook stores w unless w.Key has max endpoints already, which
	// is a 400 *Error.
	CreateWebhook(ctx context.Context, w *Webhook, max int) error
	// Webhook returns the endpoint with id, or ENOTFOUND.
	Webhook(ctx context.Context, id string) (*Webhook, error)
	// Webhooks returns the endpoints of API key key, oldest first.
	Webhooks(ctx context.Context, key string) ([]*Webhook, error)
	// ForEachWebhook calls fn for every endpoint, stopping at fn's first
	// error.
	ForEachWebhook(ctx context.Context, fn func(*Webhook) error) error
	// PutWebhook replaces a stored endpoint; ENOTFOUND when it was deleted.
	PutWebhook(ctx context.Context, w *Webhook) error
	// DeleteWebhook removes the endpoint with id, or answers ENOTFOUND.
	DeleteWebhook(ctx context.Context, id string) error
}

// Delivery is one webhook outbox row: the event whose key is Event (its
// type, record_id and content) is due to the endpoint Webhook, with the
// body Payload, fixed when matched so that every attempt sends the same
// bytes. Deliveries are keyed by (Webhook, Event), so an event reaches an
// endpoint once.
type Delivery struct {
	Webhook string
	Event   string
	Payload RawJSON
	OutboxState
}

// Row is d as the stores keep it: an outbox row whose Sub is the endpoint
// and whose Record is the event's key, so that one outbox code (keys,
// claims, leases, pruning) serves alerts and deliveries.
func (d *Delivery) Row() *AlertRow {
	return &AlertRow{Sub: d.Webhook, Record: d.Event, Payload: d.Payload, OutboxState: d.OutboxState}
}

// DeliveryOf is the delivery a stored outbox row holds (Delivery.Row).
func DeliveryOf(r *AlertRow) *Delivery {
	return &Delivery{Webhook: r.Sub, Event: r.Record, Payload: r.Payload, OutboxState: r.OutboxState}
}

// DeliveryRows and Deliveries convert lists with Delivery.Row and
// DeliveryOf, for the stores.
func DeliveryRows(ds []*Delivery) []*AlertRow { return convert(ds, (*Delivery).Row) }
func Deliveries(rows []*AlertRow) []*Delivery { return convert(rows, DeliveryOf) }

func convert[A, B any](in []A, f func(A) B) []B {
	if in == nil {
		return nil
	}
	out := make([]B, len(in))
	for i, a := range in {
		out[i] = f(a)
	}
	return out
}

// WebhookOutbox keeps webhook deliveries with the claims and leases of
// Outbox. Matching marks event keys, so that each event is matched once
// across a fleet.
type WebhookOutbox interface {
	// UnmatchedEvents returns those of keys no node has marked as matched.
	UnmatchedEvents(ctx context.Context, keys []string) ([]string, error)
	// CommitEvents marks keys as matched and writes the deliveries of the
	// keys it marks itself, as Outbox.CommitMatches does.
	CommitEvents(ctx context.Context, keys []string, ds []*Delivery) (int, error)
	// ClaimDeliveries and UpdateDeliveries are Outbox.ClaimAlerts and
	// Outbox.UpdateAlerts for deliveries.
	ClaimDeliveries(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*Delivery, error)
	UpdateDeliveries(ctx context.Context, node string, ds []*Delivery) (int, error)
	// PruneDeliveries is Outbox.PruneAlerts for deliveries and event
	// marks.
	PruneDeliveries(ctx context.Context, before time.Time) (rows, marks int, err error)
}

// WebhookStats counts webhook delivery outcomes since a node started:
// deliveries receivers accepted, failed attempts retried later, deliveries
// given up, and endpoints disabled.
type WebhookStats struct {
	Delivered, Retried, Failed, Disabled int64
}

// RecordEvents is one refresh's records that were created, changed or
// archived, kept durably until the webhooks acknowledge it.
type RecordEvents struct {
	// Seq orders batches; the store assigns it.
	Seq    uint64    `json:"seq"`
	At     time.Time `json:"at"`
	Source string    `json:"source"`
	// Initial is set on a source's first live snapshot when the source
	// held no records before it (no bundle's): its records are new to the
	// node, not to the world (as NewRecalls.Initial). A first live
	// snapshot over the bundle's records is not Initial: what it changed
	// changed since the bundle was built.
	Initial  bool     `json:"initial,omitempty"`
	Created  []string `json:"created,omitempty"`
	Updated  []string `json:"updated,omitempty"`
	Archived []string `json:"archived,omitempty"`
}

// Empty reports whether e names no record.
func (e *RecordEvents) Empty() bool {
	return len(e.Created)+len(e.Updated)+len(e.Archived) == 0
}

// RecordEventsSource hands out each refresh's record events durably until
// they are acknowledged (kv.Store implements it).
type RecordEventsSource interface {
	RecordEvents(ctx context.Context) ([]RecordEvents, error)
	AckRecordEvents(ctx context.Context, seq uint64) error
}
