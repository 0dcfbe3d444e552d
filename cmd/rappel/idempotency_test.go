package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/alerts/smtptest"
)

// postKeyed sends a JSON POST with the key k1 and the Idempotency-Key idem.
func postKeyed(t *testing.T, url, idem, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("x-gateway-key", "k1")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idem)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, string(b)
}

// testIdempotentRetry runs two nodes as processes on one shared store: a
// subscribe sent to node A and retried, with its Idempotency-Key, to node
// B makes one subscription, and B answers what A did, marked replayed;
// the key with another body is a 422 on either node.
func testIdempotentRetry(t *testing.T, f *fleetEnv) {
	smtp := smtptest.MustStart(t)
	var bases []string
	for range 2 {
		base, _, _ := startProcess(t, fleetNodeConfig{Args: append(f.args(t.TempDir(), smtp.Addr), "--alerts-confirm=false"), Bundle: f.bundleDir})
		bases = append(bases, base)
	}
	a, b := bases[0], bases[1]
	waitLive(t, a)
	waitLive(t, b)
	const key, body = "5f0c1c9e-6f4e-4b8e-9d55-7f0e2a7f3b10", `{"email":"ana@example.ca","q":"okra","lang":"en"}`
	code, h, first := postKeyed(t, a+"/recall/alerts/subscribe", key, body)
	if code != 200 || !strings.Contains(first, `"subscribed"`) || h.Get("Idempotent-Replayed") != "" {
		t.Fatalf("subscribing on A: %d %s", code, first)
	}
	code, h, again := postKeyed(t, b+"/recall/alerts/subscribe", key, body)
	if code != 200 || again != first || h.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the retry on B: %d %s (Idempotent-Replayed %q); want A's answer %s replayed", code, again, h.Get("Idempotent-Replayed"), first)
	}
	var n int
	if err := f.db.QueryRow(context.Background(), `SELECT count(*) FROM alert_subscriptions`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d subscriptions in the shared store after a subscribe and its retry (%v), want 1", n, err)
	}
	for _, base := range bases {
		if code, _, other := postKeyed(t, base+"/recall/alerts/subscribe", key, `{"email":"bob@example.ca"}`); code != 422 || !strings.Contains(other, "Idempotency-Key") {
			t.Errorf("the key with another body on %s: %d %s; want 422", base, code, other)
		}
	}
}
