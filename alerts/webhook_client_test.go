package alerts

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// tlsReceiver starts an HTTPS server with its own certificate, counting
// requests, and returns it with a pool trusting it.
func tlsReceiver(t testing.TB, h http.HandlerFunc) (*httptest.Server, *x509.CertPool, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv, pool, &n
}

// TestHookClient_Refused posts to addresses no delivery may reach: each is
// refused when connecting, after name resolution, with an error that does
// not repeat the URL's query string, and the loopback receiver never sees
// a request.
func TestHookClient_Refused(t *testing.T) {
	srv, pool, n := tlsReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "https://"))
	c := NewHookClient()
	c.RootCAs, c.ConnectTimeout = pool, 2*time.Second
	for _, u := range []string{
		"https://127.0.0.1:" + port + "/hook",
		"https://localhost:" + port + "/hook", // a name resolving to loopback
		"https://[::1]:" + port + "/hook",
		"https://[::ffff:127.0.0.1]:" + port + "/hook", // IPv4-mapped
		"https://10.0.0.1/hook",
		"https://192.168.1.10/hook",
		"https://100.64.0.1/hook",
		"https://169.254.169.254/latest/meta-data",
		"https://[::ffff:169.254.169.254]/latest/meta-data",
		"https://[fd00:ec2::254]/latest/meta-data",
		"https://[fe80::1]/hook",
		"https://0.0.0.0:" + port + "/hook",
	} {
		a := c.post(context.Background(), u+"?token=SECRET", "msg_1", 1, "v1,x", []byte("{}"))
		var refused *RefusedAddressError
		if !errors.As(a.err, &refused) {
			t.Errorf("%s: %v, want a refused address", u, a.err)
		} else if strings.Contains(a.err.Error(), "SECRET") {
			t.Errorf("%s: the error %q repeats the query string", u, a.err)
		}
	}
	if got := n.Load(); got != 0 {
		t.Fatalf("the loopback receiver got %d requests", got)
	}
	// http:// is refused without the development flag, before any dial.
	if a := c.post(context.Background(), "http://127.0.0.1:"+port+"/hook", "msg_1", 1, "v1,x", nil); a.err == nil || !strings.Contains(a.err.Error(), "not https") {
		t.Fatalf("http without the flag: %v", a.err)
	}
}

// TestHookClient_Loopback is the development flag: a receiver on 127.0.0.1
// is reached, its certificate trusted through RootCAs; redirects are not
// followed and the answer's status is what counts.
func TestHookClient_Loopback(t *testing.T) {
	srv, pool, n := tlsReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/hook", http.StatusFound)
			return
		}
		if r.Header.Get("webhook-id") != "msg_1" || r.Header.Get("webhook-timestamp") != "1700000000" || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(strings.Repeat("x", 1<<20)))
	})
	c := NewHookClient()
	c.RootCAs, c.AllowHTTPLoopback = pool, true
	a := c.post(context.Background(), srv.URL+"/hook", "msg_1", 1700000000, "v1,x", []byte("{}"))
	if a.err != nil || a.status != http.StatusServiceUnavailable || a.retryAfter != 2*time.Minute {
		t.Fatalf("post = %+v; want 503 with Retry-After 2m", a)
	}
	a = c.post(context.Background(), srv.URL+"/moved", "msg_1", 1700000000, "v1,x", []byte("{}"))
	if a.err != nil || a.status != http.StatusFound || a.ok() {
		t.Fatalf("post to a redirect = %+v; want the 302 itself, not ok", a)
	}
	if got := n.Load(); got != 2 {
		t.Fatalf("the receiver got %d requests, want 2 (the redirect not followed)", got)
	}
	// Without RootCAs the receiver's certificate is not trusted.
	c2 := NewHookClient()
	c2.AllowHTTPLoopback = true
	if a := c2.post(context.Background(), srv.URL+"/hook", "msg_1", 1, "v1,x", nil); a.err == nil {
		t.Fatal("a certificate no root vouches for was accepted")
	}
}

func TestPublicIP(t *testing.T) {
	for s, want := range map[string]bool{
		"8.8.8.8": true, "2606:4700:4700::1111": true, "142.250.64.78": true,
		"10.1.2.3": false, "172.16.0.1": false, "192.168.0.1": false, "127.0.0.1": false, "::1": false,
		"169.254.169.254": false, "fe80::1": false, "fc00::1": false, "fd00:ec2::254": false,
		"100.64.0.1": false, "100.127.255.254": false, "224.0.0.1": false, "ff02::1": false,
		"0.0.0.0": false, "::": false, "255.255.255.255": false, "::ffff:10.0.0.1": false, "::ffff:8.8.8.8": true,
	} {
		if got := rappel.PublicIP(net.ParseIP(s)); got != want {
			t.Errorf("PublicIP(%s) = %v, want %v", s, got, want)
		}
	}
}

func TestSignWebhook(t *testing.T) {
	// The example of the Standard Webhooks specification's reference
	// implementations.
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"test": 2432232314}`)
	sig, err := SignWebhook(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)
	if err != nil || sig != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
		t.Fatalf("SignWebhook = %q, %v", sig, err)
	}
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", "v1,bm90IGl0 "+sig)
	if err := VerifyWebhook(secret, h, body, time.Unix(1614265330, 0), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := VerifyWebhook(secret, h, append(body, ' '), time.Unix(1614265330, 0), time.Minute); err == nil {
		t.Fatal("a changed body verified")
	}
	if err := VerifyWebhook(secret, h, body, time.Unix(1614265330, 0).Add(time.Hour), time.Minute); err == nil {
		t.Fatal("an old timestamp verified")
	}
}
