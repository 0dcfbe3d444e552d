package feeds

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/rappel-ca/rappel"
)

// Fetcher gets upstream documents over HTTP with retries: capped, jittered
// exponential backoff on connection errors, 429 and 5xx; conditional
// requests (If-None-Match, If-Modified-Since); gzip; and a cap on the size
// of a body, compressed or not. A document a plugin's manifest names
// (GetManifest) is fetched by a client of its own, under the webhooks'
// address rules (manifest.go); the operator's own URLs (the flags') are
// not. Configure the exported fields before the first Get.
type Fetcher struct {
	// Retries is how many times a failed request is tried again.
	Retries int
	// BackoffMin and BackoffMax bound the wait before a retry: attempt n
	// waits a random time up to min(BackoffMax, BackoffMin·2ⁿ), or what a
	// 429 or 503 asks for in Retry-After, capped at BackoffMax.
	BackoffMin, BackoffMax time.Duration
	// Timeout bounds one attempt, body included.
	Timeout time.Duration
	// MaxBody caps the bytes of a body after decompression.
	MaxBody   int64
	UserAgent string
	Logger    *slog.Logger
	// ManifestLoopback lets GetManifest connect to loopback addresses
	// (127.0.0.0/8, ::1), for a plugin's documents served on the
	// developer's machine (--plugin-documents-allow-loopback).
	ManifestLoopback bool
	// RootCAs, when set, replaces the system's roots for GetManifest:
	// tests trust their own server's certificate with it.
	RootCAs *x509.CertPool

	client, manifest *retryablehttp.Client
	manifestOnce     sync.Once
}

// NewFetcher returns a Fetcher with defaults for the national feeds: three
// retries waiting 1 s to 30 s, 5 minutes per attempt, 512 MiB per body.
func NewFetcher() *Fetcher {
	return &Fetcher{
		Retries:    3,
		BackoffMin: time.Second,
		BackoffMax: 30 * time.Second,
		Timeout:    5 * time.Minute,
		MaxBody:    512 << 20,
		UserAgent:  "rappel (+https://github.com/rappel-ca/rappel)",
		Logger:     slog.Default(),
	}
}

// Response is one fetched document.
type Response struct {
	// NotModified is set on a 304: Body is empty and State unchanged.
	NotModified bool
	// NotFound is set on a 404 (a detail document that does not exist).
	NotFound bool
	Body     []byte
	// State is what the next conditional request for the URL sends.
	State rappel.FileState
}

func (f *Fetcher) init() *retryablehttp.Client {
	if f.client == nil {
		f.client = f.retrying()
	}
	return f.client
}

// retrying returns a client with f's retries, timeout and logger, over
// the pooled transport of retryablehttp.
func (f *Fetcher) retrying() *retryablehttp.Client {
	c := retryablehttp.NewClient()
	c.RetryMax = f.Retries
	c.RetryWaitMin, c.RetryWaitMax = f.BackoffMin, f.BackoffMax
	c.Backoff = jitterBackoff
	// Propagated, the reason of the last failed attempt ("unexpected HTTP
	// status 500") ends up in the error, and so in /health.
	c.CheckRetry = retryablehttp.ErrorPropagatedRetryPolicy
	c.HTTPClient.Timeout = f.Timeout
	c.Logger = nil
	if f.Logger != nil {
		c.Logger = retryLogger{f.Logger}
	}
	return c
}

// Get fetches url. prev is what was remembered of the URL (its ETag,
// Last-Modified and body hash): a 304 returns NotModified. Any status other
// than 200, 304 and 404 is an error, after the retries.
func (f *Fetcher) Get(ctx context.Context, url string, prev rappel.FileState) (resp *Response, err error) {
	return f.GetLimited(ctx, url, prev, f.MaxBody)
}

// GetLimited is Get with a cap of its own on the body's size after
// decompression, instead of MaxBody (0 for none).
func (f *Fetcher) GetLimited(ctx context.Context, url string, prev rappel.FileState, maxBody int64) (*Response, error) {
	return f.traced(ctx, f.init(), url, prev, maxBody)
}

// traced is get in a span.
func (f *Fetcher) traced(ctx context.Context, c *retryablehttp.Client, url string, prev rappel.FileState, maxBody int64) (resp *Response, err error) {
	ctx, span := tracer.Start(ctx, "feeds.Fetch", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("url.full", spanURL(url))))
	defer func() {
		if resp != nil {
			span.SetAttributes(attribute.Bool("rappel.fetch.not_modified", resp.NotModified),
				attribute.Int("rappel.fetch.body_bytes", len(resp.Body)))
		}
		endSpan(span, err)
	}()
	// Whatever fails here, the upstream could not be fetched.
	resp, err = f.get(ctx, c, url, prev, maxBody)
	return resp, rappel.Fail(rappel.FailureFetch, err)
}

// get is Get without its span, by client c.
func (f *Fetcher) get(ctx context.Context, c *retryablehttp.Client, url string, prev rappel.FileState, maxBody int64) (*Response, error) {
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", url, err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	if f.UserAgent != "" {
		req.Header.Set("User-Agent", f.UserAgent)
	}
	if prev.URL == url {
		if prev.ETag != "" {
			req.Header.Set("If-None-Match", prev.ETag)
		}
		if prev.LastModified != "" {
			req.Header.Set("If-Modified-Since", prev.LastModified)
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		if r := refusal(url, err); r != nil {
			return nil, r
		}
		return nil, fmt.Errorf("fetching %s: %w", url, err)
	}
	defer resp.Body.Close()
	out := &Response{State: rappel.FileState{URL: url}}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotModified:
		out.NotModified, out.State = true, prev
		return out, nil
	case http.StatusNotFound:
		out.NotFound = true
		return out, nil
	default:
		return nil, fmt.Errorf("fetching %s: the upstream answered %s", url, resp.Status)
	}
	body, err := readBody(resp, maxBody)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", url, err)
	}
	out.Body = body
	out.State.ETag = resp.Header.Get("ETag")
	out.State.LastModified = resp.Header.Get("Last-Modified")
	out.State.SHA256 = rappel.HashBytes(body)
	return out, nil
}

// readBody reads a body whole, decompressing gzip, and fails past maxBody
// (0 for no cap) or when the body ends before its Content-Length or its
// gzip stream does.
//
// The body is read into a buffer of its size, when that is known, not one
// grown by doubling: a 207 MB vehicle file read so took 256 MB, and the
// 128 MB before them while it grew. A gzipped body of known length is read
// whole first, compressed, for the size its gzip trailer gives (modulo
// 2³², as a hint).
func readBody(resp *http.Response, maxBody int64) ([]byte, error) {
	var r io.Reader = resp.Body
	if maxBody > 0 {
		r = io.LimitReader(r, maxBody+1)
	}
	known := resp.ContentLength > 0 && (maxBody <= 0 || resp.ContentLength <= maxBody)
	size := int64(0)
	if known {
		size = resp.ContentLength
	}
	if strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		if known {
			z, err := readSized(r, size)
			if err != nil {
				return nil, err
			}
			size = 0
			if len(z) >= 18 {
				size = int64(binary.LittleEndian.Uint32(z[len(z)-4:]))
			}
			r = bytes.NewReader(z)
		}
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("reading gzip body: %w", err)
		}
		defer zr.Close()
		r = zr
		if maxBody > 0 {
			r = io.LimitReader(r, maxBody+1)
			size = min(size, maxBody)
		}
	}
	body, err := readSized(r, size)
	if err != nil {
		return nil, err
	}
	if maxBody > 0 && int64(len(body)) > maxBody {
		return nil, tooLarge{maxBody}
	}
	return body, nil
}

// tooLarge is a body cut at its cap.
type tooLarge struct{ cap int64 }

func (e tooLarge) Error() string {
	return fmt.Sprintf("reading body: it is larger than the %d-byte cap", e.cap)
}

// readSized reads r to its end into a buffer of size bytes, grown past it
// only if r holds more.
func readSized(r io.Reader, size int64) ([]byte, error) {
	var buf bytes.Buffer
	if size > 0 {
		// ReadFrom wants room for MinRead more before it sees the end.
		buf.Grow(int(size) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(r); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("reading body: it ended early after %d bytes (a truncated response)", buf.Len())
		}
		return nil, fmt.Errorf("reading body after %d bytes: %w", buf.Len(), err)
	}
	return buf.Bytes(), nil
}

// jitterBackoff waits a random time up to min(max, min·2ⁿ) ("full jitter"),
// so that many nodes retrying the same upstream spread out, or what a 429 or
// 503 asks for in Retry-After (in seconds), capped at max.
func jitterBackoff(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && s >= 0 {
			return min(time.Duration(s)*time.Second, hi)
		}
	}
	ceil := float64(lo) * math.Pow(2, float64(attempt))
	if ceil > float64(hi) || math.IsInf(ceil, 0) {
		ceil = float64(hi)
	}
	if ceil <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(ceil)) + 1)
}

// retryLogger passes retryablehttp's messages to slog at debug level, and
// its retries at info level. Their URLs lose their query strings (an
// upstream's API key) and user info. A refusal of the manifest rules is
// not logged here: its error names the address dialed, and the refresh
// that fails logs it in words that do not (refusal). Nor is the empty
// read of a redirect's body that a refused redirect leaves: net/http has
// closed it already.
type retryLogger struct{ l *slog.Logger }

// closedBody is net/http's error reading a body it closed (unexported).
const closedBody = "http: read on closed response body"

func (r retryLogger) Error(msg string, kv ...any) { r.log(slog.LevelWarn, msg, kv) }
func (r retryLogger) Info(msg string, kv ...any)  { r.log(slog.LevelInfo, msg, kv) }
func (r retryLogger) Debug(msg string, kv ...any) { r.log(slog.LevelDebug, msg, kv) }
func (r retryLogger) Warn(msg string, kv ...any)  { r.log(slog.LevelWarn, msg, kv) }

func (r retryLogger) log(level slog.Level, msg string, kv []any) {
	out := make([]any, len(kv))
	for i, v := range kv {
		switch v := v.(type) {
		case error:
			if refused(v) || v.Error() == closedBody {
				return
			}
			out[i] = redactURLs(v.Error())
		case string:
			out[i] = redactURLs(v)
		default:
			out[i] = v
		}
	}
	r.l.Log(context.Background(), level, msg, out...)
}
