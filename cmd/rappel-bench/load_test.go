package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

const wrkOutput = `Running 2s test @ http://127.0.0.1:40123/recall
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.90ms    1.01ms  20.10ms   90.12%
    Req/Sec     8.43k   312.55     8.90k    80.00%
  16790 requests in 2.00s, 3.85GB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 4
Requests/sec:   8394.21
Transfer/sec:      1.93GB
`

func TestParseWrk(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		r, err := parseWrk(wrkOutput)
		if err != nil {
			t.Fatal(err)
		}
		if r.RPS != 8394.21 || r.Errors != 7 {
			t.Errorf("parseWrk = %+v, want 8394.21 req/s and 7 errors", r)
		}
	})
	t.Run("ErrNoRate", func(t *testing.T) {
		if _, err := parseWrk("unable to connect to 127.0.0.1:1 Connection refused\n"); err == nil {
			t.Error("parseWrk accepted output without Requests/sec")
		}
	})
}

// TestRunConstantRate runs the open-loop client against a real server:
// every request is sent, and non-200s are counted as errors.
func TestRunConstantRate(t *testing.T) {
	var hits, encoded atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Accept-Encoding") != "" {
			encoded.Add(1)
		}
		if r.URL.Path == "/fail" {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		w.Write([]byte(`{"count":3}`))
	}))
	defer srv.Close()
	client := loadClient()
	t.Run("OK", func(t *testing.T) {
		r, err := runConstantRate(context.Background(), client, srv.URL+"/ok", nil, 200, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if r.Sent != 20 || r.Errors != 0 || r.P50 <= 0 || r.P99 < r.P50 {
			t.Errorf("run = %+v, want 20 sent, no errors, 0 < p50 <= p99", r)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		r, err := runConstantRate(context.Background(), client, srv.URL+"/fail", nil, 100, 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if r.Errors != r.Sent || r.Sent != 5 {
			t.Errorf("run = %+v, want all 5 requests counted as errors", r)
		}
	})
	if hits.Load() != 25 {
		t.Errorf("server saw %d requests, want 25", hits.Load())
	}
	if encoded.Load() != 0 {
		t.Errorf("%d requests asked for a compressed body", encoded.Load())
	}
}

func TestReadBodyCount(t *testing.T) {
	for in, want := range map[string]int{
		`{"entity_type":"recall","count":27203,"results":[]}`: 27203,
		`{"entity_type":"recall","count":0,"results":[]}`:     0,
		`{"upc":"1"}`: -1,
	} {
		if got := readBodyCount([]byte(in)); got != want {
			t.Errorf("readBodyCount(%s) = %d, want %d", in, got, want)
		}
	}
}
