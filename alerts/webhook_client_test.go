package alerts

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
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
	c.RootCAs, c.ConnectTimeout = pool, 500*time.Millisecond
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
		"https://192.0.2.2/hook", // documentation
		"https://203.0.113.1/hook",
		"https://192.88.99.1/hook", // 6to4 relay anycast
		"https://[2001:db8::1]/hook",
		"https://[2002:c000:202::1]/hook", // 6to4 of 192.0.2.2
		"https://[::ffff:1.1.1.1]/hook",   // IPv4-mapped: refused in any form
		"https://[::ffff:192.0.2.2]/hook",
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

// TestHookClient_RefusedAfterResolving posts to names that a DNS server
// resolves to addresses no delivery may reach (documentation, 6to4 relay
// and benchmarking blocks, IPv6 documentation and 6to4 forms, an
// IPv4-mapped answer): each is refused when connecting, by the check on
// the address dialed, with an error naming the address and its block.
func TestHookClient_RefusedAfterResolving(t *testing.T) {
	names := map[string]string{
		"doc.hooks.test.": "192.0.2.2", "net3.hooks.test.": "203.0.113.1", "relay.hooks.test.": "192.88.99.1",
		"bench.hooks.test.": "198.18.0.1", "doc6.hooks.test.": "2001:db8::1", "sixtofour.hooks.test.": "2002:c000:202::1",
		"mapped.hooks.test.": "::ffff:192.0.2.2", "teredo.hooks.test.": "2001:0:4136:e378:8000:63bf:3fff:fdd2",
	}
	c := NewHookClient()
	c.ConnectTimeout = 500 * time.Millisecond
	c.Resolver = mustDNS(t, names)
	for name, addr := range names {
		u := "https://" + strings.TrimSuffix(name, ".") + "/hook?token=SECRET"
		a := c.post(context.Background(), u, "msg_1", 1, "v1,x", []byte("{}"))
		var refused *RefusedAddressError
		if !errors.As(a.err, &refused) || refused.Why == nil {
			t.Errorf("%s (%s): %v, want a refused address", name, addr, a.err)
			continue
		}
		if want := strings.TrimPrefix(netip.MustParseAddr(addr).Unmap().String(), "::ffff:"); !strings.Contains(a.err.Error(), want+" is in ") || strings.Contains(a.err.Error(), "SECRET") {
			t.Errorf("%s: %q; want it to name %s and its block, without the query", name, a.err, want)
		}
	}
}

// mustDNS runs a DNS server on 127.0.0.1 answering A and AAAA questions
// for names (fully qualified) with their address, and returns a resolver
// that asks it alone.
func mustDNS(t *testing.T, names map[string]string) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		for _, q := range r.Question {
			a, err := netip.ParseAddr(names[strings.ToLower(q.Name)])
			if err != nil {
				m.Rcode = dns.RcodeNameError
				continue
			}
			hdr := dns.RR_Header{Name: q.Name, Rrtype: q.Qtype, Class: dns.ClassINET, Ttl: 60}
			switch {
			case q.Qtype == dns.TypeA && a.Is4():
				m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: a.AsSlice()})
			case q.Qtype == dns.TypeAAAA && a.Is6():
				m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: a.AsSlice()})
			}
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	server := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", server)
	}}
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
