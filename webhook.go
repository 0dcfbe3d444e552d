package rappel

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
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
var WebhookEvents = Vocabulary{EventRecallCreated, EventRecallUpdated, EventRecallArchived}

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
	URL         *string   `json:"url"`
	Q           *string   `json:"q"`
	Agency      *string   `json:"recall_agency"`
	RecallType  *string   `json:"recall_type"`
	HazardClass *string   `json:"hazard_class"`
	Allergen    *string   `json:"allergen"`
	Category    *string   `json:"category"`
	Events      *[]string `json:"events"`
}

// Validate checks req as POST /recall/webhooks does and returns the
// endpoint's URL, search and events (all of WebhookEvents when none are
// given), or a 422 *Error with an item per problem. allowHTTPLoopback
// accepts http:// URLs to a loopback host, for development.
func (req *WebhookRequest) Validate(allowHTTPLoopback bool) (u string, s AlertSearch, events []string, err error) {
	var c fieldCheck
	if req.URL == nil {
		c.items = append(c.items, InvalidMissing(BodyLoc("url"), "send the https URL that receives the events"))
	} else if v := c.str("url", req.URL, MaxWebhookURLBytes); v != "" || *req.URL == "" {
		if r, bad := checkWebhookURL(v, allowHTTPLoopback); bad {
			c.items = append(c.items, InvalidValue(BodyLoc("url"), v, r))
		} else {
			u = v
		}
	}
	s = c.search("recall_agency", req.Q, req.Agency, req.RecallType, req.HazardClass, req.Allergen)
	s.Category = strings.TrimSpace(c.str("category", req.Category, 200))
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

// checkWebhookURL refuses what can never be delivered to: a URL that is not
// absolute https (http only to a loopback host when allowed), carries
// credentials or a fragment, or names an address no delivery may reach.
// Names are resolved only when connecting, where the address is checked
// again (see package webhooks).
func checkWebhookURL(v string, allowHTTPLoopback bool) (Reason, bool) {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return Reason{Problem: "is not an absolute URL", Fix: "send one such as 'https://hooks.example.ca/rappel'"}, true
	}
	host := u.Hostname()
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
	// A scoped IPv6 literal (fe80::1%eth0) names an address of the node's
	// own links; ParseIP does not read the zone, so it is cut first.
	literal, _, _ := strings.Cut(host, "%")
	if ip := net.ParseIP(literal); ip != nil && !(allowHTTPLoopback && ip.IsLoopback()) && !PublicIP(ip) {
		return Reason{Problem: "names a private, loopback or reserved address", Fix: "send a URL reachable on the public Internet"}, true
	}
	if !allowHTTPLoopback && isLoopbackHost(host) {
		return Reason{Problem: "names this machine (localhost)", Fix: "send a URL reachable on the public Internet"}, true
	}
	return Reason{}, false
}

// isLoopbackHost reports whether host is a loopback address or a name
// that always resolves to one: localhost and the names under it (RFC
// 6761, section 6.3), with or without the root's trailing dot.
func isLoopbackHost(host string) bool {
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// refusedNets are the ranges no webhook delivery may connect to, beyond
// what net.IP's own predicates cover: CGNAT and the cloud metadata
// addresses (169.254.169.254 is link-local already; AWS's IPv6 one is in
// fc00::/7, listed anyway so that the list says it), and the IPv6 forms
// that carry an IPv4 address a host may translate or tunnel to: NAT64
// (both prefixes) and the deprecated IPv4-compatible ::a.b.c.d.
var refusedNets = func() []*net.IPNet {
	var out []*net.IPNet
	for _, s := range []string{"100.64.0.0/10", "fd00:ec2::254/128", "192.0.0.0/24", "198.18.0.0/15", "240.0.0.0/4", "64:ff9b::/96", "64:ff9b:1::/48", "::/96"} {
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			panic(err)
		}
		out = append(out, n)
	}
	return out
}()

// PublicIP reports whether a webhook delivery may connect to ip: not
// private (RFC 1918, fc00::/7), loopback, link-local (the metadata address
// 169.254.169.254 included), multicast, unspecified, CGNAT, broadcast or
// reserved. An IPv4-mapped IPv6 address is judged as its IPv4 address.
func PublicIP(ip net.IP) bool {
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	if ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || ip.Equal(net.IPv4bcast) {
		return false
	}
	if len(ip) == net.IPv4len && ip[0] == 0 { // 0.0.0.0/8, "this network"
		return false
	}
	for _, n := range refusedNets {
		if n.Contains(ip) {
			return false
		}
	}
	// 6to4 (2002::/16) carries the IPv4 address its packets are tunnelled
	// to: judged as that address.
	if len(ip) == net.IPv6len && ip[0] == 0x20 && ip[1] == 0x02 {
		return PublicIP(net.IPv4(ip[2], ip[3], ip[4], ip[5]))
	}
	return true
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
	Events         []string        `json:"events"`
	Status         string          `json:"status"`
	CreatedAt      time.Time       `json:"created_at"`
	DisabledReason string          `json:"disabled_reason,omitempty"`
	DisabledAt     *time.Time      `json:"disabled_at,omitempty"`
	FailingSince   *time.Time      `json:"failing_since,omitempty"`
	LastDelivery   *WebhookAttempt `json:"last_delivery,omitempty"`
}

// View returns w as the API shows it.
func (w *Webhook) View() *WebhookView {
	v := &WebhookView{ID: w.ID, URL: w.URL, Q: w.Search.Q, Agency: w.Search.Agency, RecallType: w.Search.RecallType,
		HazardClass: w.Search.HazardClass, Allergen: w.Search.Allergen, Category: w.Search.Category,
		Events: w.Events, Status: w.Status, CreatedAt: w.CreatedAt, DisabledReason: w.DisabledReason, LastDelivery: w.LastDelivery}
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

// WebhookTestResult is the answer of POST /recall/webhooks/{id}/test.
type WebhookTestResult struct {
	WebhookAttempt
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
	// Test sends a webhook.test event to the endpoint now and returns the
	// receiver's answer.
	Test(ctx context.Context, key, id string) (*WebhookTestResult, error)
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

// WebhookOutbox keeps webhook deliveries as outbox rows, with the claims
// and leases of Outbox: a row is an AlertRow whose Sub is the endpoint and
// whose Record is the event's key, (type, record_id, content), and whose
// Payload is the body to send. Matching marks event keys, so that each
// event is matched once across a fleet.
type WebhookOutbox interface {
	// UnmatchedEvents returns those of keys no node has marked as matched.
	UnmatchedEvents(ctx context.Context, keys []string) ([]string, error)
	// CommitEvents marks keys as matched and writes the rows of the keys
	// it marks itself, as Outbox.CommitMatches does.
	CommitEvents(ctx context.Context, keys []string, rows []*AlertRow) (int, error)
	// ClaimDeliveries and UpdateDeliveries are Outbox.ClaimAlerts and
	// Outbox.UpdateAlerts for webhook rows.
	ClaimDeliveries(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*AlertRow, error)
	UpdateDeliveries(ctx context.Context, node string, rows []*AlertRow) (int, error)
	// PruneDeliveries is Outbox.PruneAlerts for webhook rows and event
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
	// Initial is set on a source's first live snapshot, whose records are
	// new to the node, not to the world (as NewRecalls.Initial).
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
