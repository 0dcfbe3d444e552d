package feeds

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

func testFetcher() *Fetcher {
	f := NewFetcher()
	f.Retries = 2
	f.BackoffMin, f.BackoffMax = time.Millisecond, 5*time.Millisecond
	f.Timeout = 2 * time.Second
	f.Logger = nil
	return f
}

func TestFetcher_Get(t *testing.T) {
	body := []byte(strings.Repeat(`{"NID":"1"},`, 1000))
	var hits, fails atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/flaky":
			if fails.Add(1) <= 2 {
				http.Error(w, "try later", http.StatusServiceUnavailable)
				return
			}
		case "/down":
			http.Error(w, "down", http.StatusInternalServerError)
			return
		case "/missing":
			http.NotFound(w, r)
			return
		case "/forbidden":
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Mon, 02 Nov 2026 10:00:00 GMT")
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			zw.Write(body)
			zw.Close()
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	ctx := context.Background()

	t.Run("OK", func(t *testing.T) {
		resp, err := testFetcher().Get(ctx, srv.URL+"/doc", rappel.FileState{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(resp.Body, body) || resp.State.ETag != `"v1"` || resp.State.SHA256 != rappel.HashBytes(body) || resp.State.LastModified == "" {
			t.Fatalf("response %+v", resp.State)
		}
		again, err := testFetcher().Get(ctx, srv.URL+"/doc", resp.State)
		if err != nil || !again.NotModified || again.Body != nil || again.State != resp.State {
			t.Fatalf("conditional request: %+v, %v", again, err)
		}
		// Validators of another URL are not sent.
		other, err := testFetcher().Get(ctx, srv.URL+"/other", rappel.FileState{URL: srv.URL + "/doc", ETag: `"v1"`})
		if err != nil || other.NotModified {
			t.Fatalf("another URL's validators were sent: %+v, %v", other, err)
		}
	})
	t.Run("Retries", func(t *testing.T) {
		resp, err := testFetcher().Get(ctx, srv.URL+"/flaky", rappel.FileState{})
		if err != nil || !bytes.Equal(resp.Body, body) {
			t.Fatalf("after two 503s: %v", err)
		}
		hits.Store(0)
		_, err = testFetcher().Get(ctx, srv.URL+"/down", rappel.FileState{})
		if err == nil || !strings.Contains(err.Error(), "500") || hits.Load() != 3 {
			t.Fatalf("err = %v after %d attempts, want the status after 3", err, hits.Load())
		}
		hits.Store(0)
		_, err = testFetcher().Get(ctx, srv.URL+"/forbidden", rappel.FileState{})
		if err == nil || !strings.Contains(err.Error(), "403") || hits.Load() != 1 {
			t.Fatalf("err = %v after %d attempts, want a 403 not retried", err, hits.Load())
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		resp, err := testFetcher().Get(ctx, srv.URL+"/missing", rappel.FileState{})
		if err != nil || !resp.NotFound {
			t.Fatalf("404: %+v, %v", resp, err)
		}
	})
	t.Run("Cap", func(t *testing.T) {
		f := testFetcher()
		f.MaxBody = 100
		_, err := f.Get(ctx, srv.URL+"/doc", rappel.FileState{})
		if err == nil || !strings.Contains(err.Error(), "cap") {
			t.Fatalf("err = %v, want the body refused past the cap (decompressed)", err)
		}
	})
}

func TestJitterBackoff(t *testing.T) {
	lo, hi := 100*time.Millisecond, time.Second
	for attempt := range 10 {
		ceil := min(hi, lo<<attempt)
		for range 50 {
			if d := jitterBackoff(lo, hi, attempt, nil); d <= 0 || d > ceil {
				t.Fatalf("attempt %d waits %s, want (0, %s]", attempt, d, ceil)
			}
		}
	}
	resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3"}}}
	if d := jitterBackoff(lo, 5*time.Second, 0, resp); d != 3*time.Second {
		t.Fatalf("Retry-After 3: waits %s", d)
	}
	if d := jitterBackoff(lo, hi, 0, resp); d != hi {
		t.Fatalf("Retry-After past the cap: waits %s, want %s", d, hi)
	}
}
