package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	acmeca "github.com/letsencrypt/pebble/v2/ca"
	acmedb "github.com/letsencrypt/pebble/v2/db"
	acmeva "github.com/letsencrypt/pebble/v2/va"
	acmewfe "github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/internal/logtest"
)

// testDomain is the name the test ACME server validates; the test's DNS
// server resolves every name to 127.0.0.1.
const testDomain = "rappel.test"

// MustTinyBundle writes a bundle of one record, so that a test serves a
// dataset without building the plugins or loading the embedded bundle.
func MustTinyBundle(tb testing.TB) fs.FS {
	tb.Helper()
	return os.DirFS(tinyBundleDir(tb))
}

// tinyBundleDir writes MustTinyBundle's bundle and returns its directory.
func tinyBundleDir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	recs := []*rappel.Record{{
		RecordID: "hc-74012", RecallID: "74012", RecallType: rappel.TypeConsumerProduct,
		Agency: rappel.AgencyHealthCanada, Status: rappel.StatusArchived,
		EventDate: "2024-11-02", RecallDate: "2024-11-02", FetchedAt: "2025-03-04T10:00:00Z",
		Category: "Children's products",
		Translations: rappel.Translations{
			EN: &rappel.Translation{Title: "Wooden stacking toys recalled due to choking hazard"},
		},
	}}
	m := bundle.Manifest{BuiltAt: time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)}
	if err := bundle.Write(dir, recs, m); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// MustLoopbackDNS runs a DNS server over TCP (the ACME server's validation
// authority asks over TCP) on 127.0.0.1:0 that answers every A question
// with 127.0.0.1, and returns its address.
func MustLoopbackDNS(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &dns.Server{Listener: ln, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		for _, q := range r.Question {
			if q.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{
					Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
					A:   net.IPv4(127, 0, 0, 1),
				})
			}
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	tb.Cleanup(func() { _ = srv.Shutdown() })
	return ln.Addr().String()
}

// testACME is Let's Encrypt's test ACME server running in the test.
type testACME struct {
	// Directory is the ACME directory URL.
	Directory string
	// CARootFile is the PEM of the certificate the directory is served
	// with, for --acme-ca-root.
	CARootFile string
	// IssuerRoots holds the root the server issues certificates under.
	IssuerRoots *x509.CertPool
}

// MustACME starts Let's Encrypt's test ACME server (pebble) in-process,
// serving its directory over HTTPS on 127.0.0.1:0 with a certificate made
// here, and validating challenges against 127.0.0.1 on httpPort (HTTP-01)
// and tlsPort (TLS-ALPN-01), names resolved by the DNS server at dnsAddr.
func MustACME(tb testing.TB, httpPort, tlsPort int, dnsAddr string) testACME {
	tb.Helper()
	logger := log.New(io.Discard, "", 0)
	db := acmedb.NewMemoryStore()
	ca := acmeca.New(logger, db, "", "ecdsa", 0, 1, map[string]acmeca.Profile{"default": {Description: "test"}})
	va := acmeva.New(logger, httpPort, tlsPort, false, dnsAddr, db)
	wfe := acmewfe.New(logger, db, va, ca, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)

	cert, certPEM := mustSelfSigned(tb)
	ts := httptest.NewUnstartedServer(wfe.Handler())
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	ts.StartTLS()
	tb.Cleanup(ts.Close)

	rootFile := filepath.Join(tb.TempDir(), "acme-ca-root.pem")
	if err := os.WriteFile(rootFile, certPEM, 0o600); err != nil {
		tb.Fatal(err)
	}
	issuer := x509.NewCertPool()
	issuer.AddCert(ca.GetRootCert(0).Cert)
	return testACME{Directory: ts.URL + acmewfe.DirectoryPath, CARootFile: rootFile, IssuerRoots: issuer}
}

// mustSelfSigned returns a self-signed certificate for 127.0.0.1 and its
// PEM.
func mustSelfSigned(tb testing.TB) (tls.Certificate, []byte) {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test ACME server"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// mustListen listens on 127.0.0.1:0 and returns the listener and its port.
func mustListen(tb testing.TB) (net.Listener, int) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return ln, ln.Addr().(*net.TCPAddr).Port
}

// logBuffer collects a test server's logs, at every level, shown when the
// test fails.
func logBuffer(t *testing.T) (*slog.Logger, *logtest.Buffer) {
	t.Helper()
	b := &logtest.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server logs:\n%s", b.String())
		}
	})
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

func TestServe_TLS(t *testing.T) {
	// The validation authority otherwise waits up to 5 s before each
	// validation, and the front end rejects 5% of nonces.
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	t.Setenv("PEBBLE_WFE_NONCEREJECT", "0")
	tiny := MustTinyBundle(t)
	for _, challenge := range []string{"http-01", "tls-alpn-01"} {
		t.Run(challenge, func(t *testing.T) { testServeTLS(t, tiny, challenge) })
	}
}

// testServeTLS runs rappel serve with --tls-domains against the test ACME
// server, allowing only challenge, and checks that it obtains a certificate
// and serves HTTPS with it, TLS 1.3 only, and redirects plain HTTP.
func testServeTLS(t *testing.T, tiny fs.FS, challenge string) {
	httpLn, httpPort := mustListen(t)
	httpsLn, httpsPort := mustListen(t)
	acme := MustACME(t, httpPort, httpsPort, MustLoopbackDNS(t))

	c := NewServeCommand()
	dataDir := t.TempDir()
	if err := c.ParseFlags([]string{
		"--data-dir", dataDir,
		"--tls-domains", testDomain,
		"--acme-ca", acme.Directory,
		"--acme-ca-root", acme.CARootFile,
		// Mixed case and a "+": certmagic lower-cases the address and
		// spells "+" as "_plus_" in storage paths.
		"--acme-email", "Ops+ACME@Rappel.test",
		"--admin-key", adminKey,
	}); err != nil {
		t.Fatal(err)
	}
	c.Bundle = tiny
	var logs *logtest.Buffer
	c.Logger, logs = logBuffer(t)
	c.Listen.httpLn, c.Listen.httpsLn = httpLn, httpsLn
	c.Listen.onlyChallenge = challenge
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	// A client that knows the test domain lives at the HTTPS listener and
	// trusts only the test ACME server's issuing root.
	httpsAddr := httpsLn.Addr().String()
	client := &http.Client{
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, httpsAddr)
			},
			TLSClientConfig:   &tls.Config{RootCAs: acme.IssuerRoots},
			ForceAttemptHTTP2: true,
		},
		Timeout: 5 * time.Second,
	}
	base := "https://" + testDomain + ":" + strconv.Itoa(httpsPort)

	// The certificate is obtained in the background: poll until HTTPS
	// answers, within a bound far above the few seconds it takes.
	var resp *http.Response
	var lastErr error
	for deadline := time.Now().Add(25 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("serve ended before HTTPS answered: %v", err)
		default:
		}
		if resp, lastErr = client.Get(base + "/health"); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("HTTPS never answered with a certificate from the test ACME server: %v", lastErr)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"records":1`) {
		t.Errorf("GET /health over HTTPS = %d %s, want 200 with the dataset", resp.StatusCode, body)
	}
	if resp.TLS.Version != tls.VersionTLS13 {
		t.Errorf("TLS version %x, want TLS 1.3", resp.TLS.Version)
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("protocol %s, want HTTP/2 (ALPN h2 first)", resp.Proto)
	}
	leaf := resp.TLS.PeerCertificates[0]
	if err := leaf.VerifyHostname(testDomain); err != nil {
		t.Errorf("served certificate: %v", err)
	}
	if len(resp.TLS.VerifiedChains) == 0 {
		t.Error("the served chain was not verified against the ACME server's root")
	}

	t.Run("CertificateExpiry", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
		req.Header.Set("x-admin-key", adminKey)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := nodeMetrics(fams).value(t, "rappel_tls_certificate_expiry_timestamp_seconds", map[string]string{"name": testDomain})
		if want := float64(leaf.NotAfter.Unix()); got < want-1 || got > want+1 {
			t.Errorf("certificate expiry for %s = %v, want the served certificate's %v (%s)", testDomain, got, want, leaf.NotAfter)
		}
	})

	t.Run("NoEmailInLogs", func(t *testing.T) {
		// certmagic logs the account's address in several fields; no
		// e-mail address may reach the logs.
		l := logs.String()
		if regexp.MustCompile(`(?i)ops(\+|_plus_)acme@rappel\.test`).MatchString(l) {
			t.Error("the ACME account's e-mail address is in the logs")
		}
		if !strings.Contains(l, "[acme-email]") {
			t.Error("no redacted address in the logs: certmagic's logs did not come through")
		}
	})

	t.Run("Storage", func(t *testing.T) {
		// certmagic.FileStorage under <data-dir>/certmagic keeps the
		// certificate, so that a restart serves it without the CA.
		var found bool
		_ = filepath.WalkDir(filepath.Join(dataDir, "certmagic"), func(p string, d fs.DirEntry, err error) error {
			found = found || (err == nil && d.Name() == testDomain+".crt")
			return nil
		})
		if !found {
			t.Errorf("no %s.crt under %s", testDomain, filepath.Join(dataDir, "certmagic"))
		}
	})

	t.Run("NoTLS12", func(t *testing.T) {
		conn, err := tls.Dial("tcp", httpsAddr, &tls.Config{
			ServerName: testDomain, RootCAs: acme.IssuerRoots, MaxVersion: tls.VersionTLS12,
		})
		if err == nil {
			conn.Close()
			t.Fatal("a TLS 1.2 handshake succeeded; only TLS 1.3 is allowed")
		}
		if !strings.Contains(err.Error(), "protocol version") {
			t.Errorf("TLS 1.2 handshake failed with %v, want a protocol version alert", err)
		}
	})

	t.Run("Redirect", func(t *testing.T) {
		plain := &http.Client{
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Timeout:       5 * time.Second,
		}
		httpBase := "http://" + httpLn.Addr().String()
		for _, tc := range []struct {
			method, host, path string
			status             int
			location           string
		}{
			{"GET", testDomain, "/recall?q=cheese&limit=5", http.StatusMovedPermanently, base + "/recall?q=cheese&limit=5"},
			{"HEAD", testDomain + ":80", "/health", http.StatusMovedPermanently, base + "/health"},
			{"POST", testDomain, "/recall/alerts/subscribe", http.StatusPermanentRedirect, base + "/recall/alerts/subscribe"},
			// Another Host is never echoed into the redirect.
			{"GET", "attacker.example", "/health", http.StatusMovedPermanently, base + "/health"},
		} {
			req, _ := http.NewRequest(tc.method, httpBase+tc.path, nil)
			req.Host = tc.host
			resp, err := plain.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get("Location") != tc.location {
				t.Errorf("%s http://%s%s = %d Location %q, want %d %q", tc.method, tc.host, tc.path,
					resp.StatusCode, resp.Header.Get("Location"), tc.status, tc.location)
			}
			if tc.method != "HEAD" {
				var e struct{ Detail string }
				if json.Unmarshal(b, &e) != nil || !strings.Contains(e.Detail, "HTTPS") {
					t.Errorf("%s %s: body %q, want a JSON detail pointing to HTTPS", tc.method, tc.path, b)
				}
			}
		}
	})

	t.Run("Probes", func(t *testing.T) {
		for _, p := range []string{"/livez", "/readyz"} {
			resp, err := client.Get(base + p)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s over HTTPS = %d, want 200", p, resp.StatusCode)
			}
		}
	})
}

// TestServe_GracefulShutdown cancels Run's context while a request is in
// flight, and checks that /readyz turns 503 before the listener closes and
// that the request still completes with 200.
func TestServe_GracefulShutdown(t *testing.T) {
	c := NewServeCommand()
	c.DataDir = t.TempDir()
	c.Bundle = MustTinyBundle(t)
	c.APIKeys = "test-key"
	c.Alerts.Interval, c.Alerts.Confirm = time.Hour, false
	ready := make(chan net.Addr, 1)
	c.Addr = "127.0.0.1:0"
	c.Ready = func(a net.Addr) { ready <- a }
	c.Logger, _ = logBuffer(t)

	type probeResult struct {
		readyz, livez int
		detail        string
		err           error
	}
	probed := make(chan probeResult, 1)
	var base string
	c.Listen.draining = func() {
		// The listener is still open: this is the window in which a load
		// balancer sees the node leave.
		var r probeResult
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			probed <- probeResult{err: err}
			return
		}
		var e struct{ Detail string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		r.readyz, r.detail = resp.StatusCode, e.Detail
		if resp, err = http.Get(base + "/livez"); err != nil {
			probed <- probeResult{err: err}
			return
		}
		resp.Body.Close()
		r.livez = resp.StatusCode
		probed <- r
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve ended before listening: %v", err)
	}
	base = "http://" + addr.String()

	// Before the signal, the node is ready.
	if code, _ := get(t, base+"/readyz", ""); code != http.StatusOK {
		t.Fatalf("GET /readyz before shutdown = %d, want 200", code)
	}

	// A subscription whose handler is running when the signal comes: with
	// Expect: 100-continue the server answers 100 only once the handler
	// reads the body, which is sent after the signal.
	body := `{"email":"reader@example.ca","q":"cheese"}`
	conn, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /recall/alerts/subscribe HTTP/1.1\r\nHost: %s\r\nx-gateway-key: test-key\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n",
		addr, len(body))
	br := bufio.NewReader(conn)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusContinue {
		t.Fatalf("no 100 Continue before the body: %v %v", resp, err)
	}

	cancel()
	r := <-probed
	if r.err != nil {
		t.Fatalf("probing while draining: %v", r.err)
	}
	if r.readyz != http.StatusServiceUnavailable || !strings.Contains(r.detail, "shutting down") {
		t.Errorf("GET /readyz while draining = %d %q, want 503 saying the node is shutting down", r.readyz, r.detail)
	}
	if r.livez != http.StatusOK {
		t.Errorf("GET /livez while draining = %d, want 200", r.livez)
	}

	// Wait until the listener is closed: new connections are refused from
	// then on, while the request in flight goes on.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c, err := net.Dial("tcp", addr.String())
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener stayed open after the drain")
		}
	}
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the request in flight got no response: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"subscribed"`) {
		t.Errorf("request in flight at shutdown = %d %s, want 200 subscribed", resp.StatusCode, b)
	}
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestServe_PortTaken starts a node on a port another process holds: it
// fails at once with a sentence naming the setting, before the store opens
// or the bundle loads.
func TestServe_PortTaken(t *testing.T) {
	taken, _ := mustListen(t)
	defer taken.Close()
	addr := taken.Addr().String()
	for _, tc := range []struct {
		name, flag string
		args       []string
	}{
		{"HTTP", "--addr", []string{"--addr", addr}},
		{"TLS", "--https-addr", []string{"--tls-domains", testDomain, "--http-addr", "127.0.0.1:0", "--https-addr", addr}},
		{"Metrics", "--metrics-addr", []string{"--addr", "127.0.0.1:0", "--metrics-addr", addr}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dataDir := t.TempDir()
			c := NewServeCommand()
			if err := c.ParseFlags(append([]string{"--data-dir", dataDir}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			c.Bundle = MustTinyBundle(t)
			var logs *logtest.Buffer
			c.Logger, logs = logBuffer(t)
			err := c.Run(context.Background())
			if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), tc.flag+" "+addr+" cannot be listened on") || !strings.Contains(err.Error(), "give another "+tc.flag) {
				t.Fatalf("Run = %v, want a sentence saying %s %s is taken", err, tc.flag, addr)
			}
			if l := logs.String(); strings.Contains(l, "bundle") || strings.Contains(l, "dataset ready") {
				t.Errorf("the data loaded before the taken port failed the start:\n%s", l)
			}
			if _, err := os.Stat(filepath.Join(dataDir, "pebble")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the store was opened before the taken port failed the start: %v", err)
			}
		})
	}
}

// TestServe_ServesAfterLoad sends a request as soon as the listener is
// bound, before the data loads: the request waits in the listener's
// backlog and is answered once the node serves, with the data loaded, and
// the node says "serving" only after the dataset is ready.
func TestServe_ServesAfterLoad(t *testing.T) {
	c := NewServeCommand()
	c.DataDir, c.Bundle = t.TempDir(), MustTinyBundle(t)
	var logs *logtest.Buffer
	c.Logger, logs = logBuffer(t)
	conns := make(chan net.Conn, 1)
	c.Listen.bound = func(a net.Addr) {
		// Called from Run, before the store opens.
		if l := logs.String(); strings.Contains(l, "bundle") {
			t.Errorf("the listener was bound after the data loaded:\n%s", l)
		}
		conn, err := net.Dial("tcp", a.String())
		if err != nil {
			t.Error(err)
			close(conns)
			return
		}
		fmt.Fprintf(conn, "GET /readyz HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", a)
		conns <- conn
	}
	serve(t, c)
	conn, ok := <-conns
	if !ok {
		t.Fatal("no connection to the bound listener")
	}
	defer conn.Close()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the request sent during the load got no response: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /readyz sent during the load = %d, want 200 once the node serves", resp.StatusCode)
	}
	l := logs.String()
	loaded, ready, serving := strings.Index(l, "loaded bundle into empty store"), strings.Index(l, `msg="dataset ready"`), strings.Index(l, "msg=serving")
	if loaded < 0 || ready < loaded || serving < ready {
		t.Errorf("log order: bundle loaded at %d, dataset ready at %d, serving at %d; want them in that order:\n%s", loaded, ready, serving, l)
	}
}

func TestServeCommand_ListenFlags(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root.pem")
	_, pemBytes := mustSelfSigned(t)
	if err := os.WriteFile(root, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(t.TempDir(), "root.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		c := NewServeCommand()
		if err := c.ParseFlags([]string{"--tls-domains", "API.example.ca, www.example.ca", "--acme-email", "ops@example.ca", "--acme-ca-root", root}); err != nil {
			t.Fatal(err)
		}
		if got := c.Listen.domains(); len(got) != 2 || got[0] != "api.example.ca" {
			t.Errorf("domains = %q", got)
		}
		if c.Listen.ACMECA != "https://acme-v02.api.letsencrypt.org/directory" || c.Listen.HTTPAddr != ":80" || c.Listen.HTTPSAddr != ":443" {
			t.Errorf("defaults: %+v", c.Listen)
		}
	})
	t.Run("Env", func(t *testing.T) {
		t.Setenv("RAPPEL_TLS_DOMAINS", "api.example.ca")
		t.Setenv("RAPPEL_HTTPS_ADDR", ":8443")
		c := NewServeCommand()
		if err := c.ParseFlags(nil); err != nil {
			t.Fatal(err)
		}
		if c.Listen.Domains != "api.example.ca" || c.Listen.HTTPSAddr != ":8443" {
			t.Errorf("from the environment: %+v", c.Listen)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"Wildcard", []string{"--tls-domains", "*.example.ca"}, "not a domain name"},
		{"Scheme", []string{"--tls-domains", "https://example.ca"}, "not a domain name"},
		{"IP", []string{"--tls-domains", "192.0.2.1"}, "not a domain name"},
		{"CAHTTP", []string{"--tls-domains", "example.ca", "--acme-ca", "http://ca.example/dir"}, "--acme-ca"},
		{"Email", []string{"--tls-domains", "example.ca", "--acme-email", "Ops <ops@example.ca>"}, "--acme-email"},
		{"RootMissing", []string{"--tls-domains", "example.ca", "--acme-ca-root", filepath.Join(t.TempDir(), "none.pem")}, "--acme-ca-root"},
		{"RootNotPEM", []string{"--tls-domains", "example.ca", "--acme-ca-root", notPEM}, "no PEM certificate"},
		{"SameAddr", []string{"--tls-domains", "example.ca", "--http-addr", ":8443", "--https-addr", ":8443"}, "different ports"},
		{"BadAddr", []string{"--tls-domains", "example.ca", "--https-addr", "443"}, "--https-addr"},
		{"DrainDelay", []string{"--drain-delay", "-1s"}, "--drain-delay"},
		{"ShutdownTimeout", []string{"--shutdown-timeout", "0s"}, "--shutdown-timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := NewServeCommand().ParseFlags(tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseFlags(%q) = %v, want an error about %s", tc.args, err, tc.want)
			}
		})
	}
	t.Run("NoDomainsNoChecks", func(t *testing.T) {
		// Without domains the ACME settings are unused: an environment
		// holding them for later does not stop a plain-HTTP node.
		c := NewServeCommand()
		if err := c.ParseFlags([]string{"--acme-ca", "http://unused"}); err != nil {
			t.Errorf("ParseFlags without domains: %v", err)
		}
	})
}
