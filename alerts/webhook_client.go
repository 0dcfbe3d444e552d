package alerts

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/rappel-ca/rappel"
)

// maxWebhookResponse bounds what is read of a receiver's answer: only its
// status matters, and a receiver must not make a node read a large body.
const maxWebhookResponse = 64 << 10

// HookClient posts webhook deliveries without letting an endpoint's URL
// reach what it should not (server-side request forgery): https only (http
// to a loopback address only with AllowHTTPLoopback, for development),
// and every address the client connects to is checked at connect time,
// after name resolution, so a name that resolves (or re-resolves, DNS
// rebinding) to an address of rappel.CheckWebhookAddress's refused
// blocks (private, loopback, link-local, CGNAT, metadata, documentation,
// reserved, the IPv6 forms of IPv4 addresses…) is refused. Redirects are not followed, no proxy from the
// environment is used, and the answer's body is read up to 64 KiB.
type HookClient struct {
	// AllowHTTPLoopback accepts http:// URLs and connections to loopback
	// addresses (127.0.0.0/8, ::1), for a receiver on the developer's
	// machine (--webhooks-allow-http-loopback).
	AllowHTTPLoopback bool
	// RootCAs, when set, replaces the system's roots: tests trust their
	// own receiver's certificate with it.
	RootCAs *x509.CertPool
	// Resolver, when set, replaces the system's resolver: tests resolve
	// names with a DNS server of their own.
	Resolver *net.Resolver
	// ConnectTimeout, TLSTimeout and Timeout bound the connection, the
	// TLS handshake and the whole exchange.
	ConnectTimeout, TLSTimeout, Timeout time.Duration

	once   sync.Once
	client *http.Client
}

// NewHookClient returns a HookClient with 5 s to connect, 5 s for TLS and
// 15 s in all.
func NewHookClient() *HookClient {
	return &HookClient{ConnectTimeout: 5 * time.Second, TLSTimeout: 5 * time.Second, Timeout: 15 * time.Second}
}

// RefusedAddressError is a connection refused because of its address.
type RefusedAddressError = rappel.RefusedAddressError

// who names webhooks in the refusals.
const who = "a webhook"

// checkLiteral refuses a URL whose host is an address written in a form
// CheckWebhookAddress refuses, before dialing: the dialer sees an
// IPv4-mapped address (::ffff:a.b.c.d) as the IPv4 address it maps, so
// the dialer's check alone would let through an endpoint that
// registration refuses (one stored before that rule).
func (c *HookClient) checkLiteral(u *url.URL) error {
	if r := rappel.CheckHost(u.Hostname(), c.AllowHTTPLoopback, who); r != nil {
		r.Addr = u.Host
		return r
	}
	return nil
}

func (c *HookClient) http() *http.Client {
	c.once.Do(c.build)
	return c.client
}

func (c *HookClient) build() {
	d := &net.Dialer{Timeout: c.ConnectTimeout, Control: rappel.DialControl(c.AllowHTTPLoopback, who), Resolver: c.Resolver}
	t := &http.Transport{
		Proxy:                  nil, // an HTTPS_PROXY would make the checked address the proxy's
		DialContext:            d.DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: c.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    c.TLSTimeout,
		ResponseHeaderTimeout:  c.Timeout,
		MaxResponseHeaderBytes: 16 << 10,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	c.client = &http.Client{Transport: t, Timeout: c.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// hookAnswer is a receiver's answer to one delivery.
type hookAnswer struct {
	status int
	// retryAfter is the Retry-After of a 429 or 503, zero otherwise.
	retryAfter time.Duration
	err        error
}

func (a hookAnswer) ok() bool { return a.err == nil && a.status >= 200 && a.status < 300 }

// receiverDown reports whether the answer says the receiver cannot take
// deliveries now (no answer, a connection error, a 5xx, a 429), rather
// than refusing this one: its other deliveries would fare the same.
func (a hookAnswer) receiverDown() bool {
	return a.err != nil || a.status >= 500 || a.status == http.StatusTooManyRequests
}

// unreachable is what an API caller reads of a post that got no HTTP
// answer, whatever the cause: which of a refused connection, a timeout or
// a TLS error it was would tell whether a port is open on any host the
// caller names (the test route would be a port scanner). The node's log
// has the cause.
const unreachable = "the endpoint did not answer: the connection was refused, timed out or failed before an HTTP answer (the node's log has the cause)"

// public is the outcome as an API caller reads it (the test route, the
// endpoint's last delivery): the HTTP status when one came back, else
// unreachable.
func (a hookAnswer) public() string {
	if a.err != nil {
		return unreachable
	}
	return a.describe()
}

// describe is the outcome in full, for the node's log and the outbox row.
func (a hookAnswer) describe() string {
	switch {
	case a.err != nil:
		return a.err.Error()
	case a.ok():
		return ""
	default:
		return "the receiver answered " + strconv.Itoa(a.status) + " " + http.StatusText(a.status)
	}
}

// Post sends body to rawURL with the Standard Webhooks headers. Errors are
// worded without the URL's query string, which may hold a receiver's
// token: they reach logs and the endpoint's last delivery.
func (c *HookClient) post(ctx context.Context, rawURL, id string, ts int64, sig string, body []byte) hookAnswer {
	u, err := url.Parse(rawURL)
	if err != nil {
		return hookAnswer{err: errors.New("the endpoint's URL does not parse")}
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && c.AllowHTTPLoopback) {
		return hookAnswer{err: fmt.Errorf("refused to post to %s: not https", RedactURL(u))}
	}
	if err := c.checkLiteral(u); err != nil {
		return hookAnswer{err: fmt.Errorf("posting to %s: %w", RedactURL(u), err)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return hookAnswer{err: fmt.Errorf("posting to %s: %w", RedactURL(u), err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Rappel-Webhooks/1")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sig)
	res, err := c.http().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the whole URL
		}
		return hookAnswer{err: fmt.Errorf("posting to %s: %w", RedactURL(u), err)}
	}
	defer res.Body.Close()
	// Read (a bounded part of) the body so that the connection can be
	// reused; its content is not used.
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxWebhookResponse))
	a := hookAnswer{status: res.StatusCode}
	if res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable {
		a.retryAfter = parseRetryAfter(res.Header.Get("Retry-After"), time.Now())
	}
	return a
}

// parseRetryAfter reads a Retry-After in seconds or as an HTTP date; zero
// when absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// RedactURL is u as logs and messages show it: scheme, host and path,
// without credentials, query or fragment.
func RedactURL(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
