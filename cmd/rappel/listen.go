package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/internal/acme"
)

// ListenConfig is how rappel serve listens and stops: plain HTTP on --addr,
// or, with --tls-domains, HTTPS with certificates obtained and renewed by
// certmagic from an ACME CA and a plain-HTTP listener that answers ACME
// challenges and redirects everything else to HTTPS.
type ListenConfig struct {
	// Domains is the comma-separated list of names to serve over HTTPS;
	// empty serves plain HTTP on ServeCommand.Addr.
	Domains string
	// ACMECA is the directory URL of the ACME CA. It is also certmagic's
	// test CA, so that no retry ever goes to another CA.
	ACMECA string
	// ACMEEmail is the ACME account's contact; optional.
	ACMEEmail string
	// ACMECARoot is a PEM file of roots to trust for the ACME CA's own
	// HTTPS (a private CA); empty trusts the system's roots.
	ACMECARoot string
	// HTTPAddr and HTTPSAddr are where the two listeners of TLS mode bind.
	HTTPAddr  string
	HTTPSAddr string
	// DrainDelay is how long the node keeps accepting requests after the
	// first signal while /readyz answers 503, so that load balancers take
	// it out of rotation before its listeners close.
	DrainDelay time.Duration
	// ShutdownTimeout bounds the wait for requests in flight.
	ShutdownTimeout time.Duration

	// httpLn and httpsLn, when set, are used instead of listening on
	// HTTPAddr and HTTPSAddr: a test's ACME server must know the ports
	// before the node starts.
	httpLn, httpsLn net.Listener
	// bound, when set, is called with the API listener's address once it
	// is bound, before the data loads.
	bound func(net.Addr)
	// draining, when set, is called after /readyz turned 503 and before
	// the listeners close.
	draining func()
	// onlyChallenge, when set to "http-01" or "tls-alpn-01", disables the
	// other challenge, so that a test exercises each for certain (acmez
	// otherwise picks one at random).
	onlyChallenge string
}

func (c *ListenConfig) register(fs *flag.FlagSet) {
	c.defaults()
	fs.StringVar(&c.Domains, "tls-domains", c.Domains, "comma-separated domain `names` to serve over HTTPS with certificates from --acme-ca; empty serves plain HTTP on --addr")
	fs.StringVar(&c.ACMECA, "acme-ca", c.ACMECA, "directory `URL` of the ACME CA (also used as the test CA, so that nothing reaches another CA)")
	fs.StringVar(&c.ACMEEmail, "acme-email", c.ACMEEmail, "contact `address` of the ACME account (optional)")
	fs.StringVar(&c.ACMECARoot, "acme-ca-root", c.ACMECARoot, "PEM `file` of root certificates to trust for the ACME CA's HTTPS (a private CA); default: the system's roots")
	fs.StringVar(&c.HTTPAddr, "http-addr", c.HTTPAddr, "`host:port` of the plain-HTTP listener with --tls-domains (ACME HTTP-01 challenges, redirects to HTTPS)")
	fs.StringVar(&c.HTTPSAddr, "https-addr", c.HTTPSAddr, "`host:port` of the HTTPS listener with --tls-domains (the API, ACME TLS-ALPN-01 challenges)")
	fs.DurationVar(&c.DrainDelay, "drain-delay", c.DrainDelay, "`time` to keep serving, with /readyz at 503, after the first SIGTERM or SIGINT before the listeners close")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "`time` requests in flight get to finish at shutdown")
}

// defaults fills the settings left empty with the flags' defaults, also
// for a ServeCommand built without ParseFlags.
func (c *ListenConfig) defaults() {
	if c.ACMECA == "" {
		c.ACMECA = acme.LetsEncryptProductionCA
	}
	if c.HTTPAddr == "" {
		c.HTTPAddr = ":80"
	}
	if c.HTTPSAddr == "" {
		c.HTTPSAddr = ":443"
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 10 * time.Second
	}
}

// domains returns the domain names to serve over HTTPS, lower-cased.
func (c *ListenConfig) domains() []string {
	return splitList(strings.ToLower(c.Domains))
}

func (c *ListenConfig) validate() error {
	switch {
	case c.DrainDelay < 0:
		return fmt.Errorf("--drain-delay is %s; give zero or a positive duration such as 5s", c.DrainDelay)
	case c.ShutdownTimeout <= 0:
		return fmt.Errorf("--shutdown-timeout is %s; give a positive duration such as 10s", c.ShutdownTimeout)
	}
	domains := c.domains()
	if len(domains) == 0 {
		return nil
	}
	for _, d := range domains {
		if !acme.ValidDomain(d) {
			return fmt.Errorf("--tls-domains has %q, which is not a domain name; give names such as api.example.ca, separated by commas (no scheme, port or wildcard)", d)
		}
	}
	u, err := url.Parse(c.ACMECA)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("--acme-ca is %q; give the https URL of an ACME directory such as %s", c.ACMECA, acme.LetsEncryptProductionCA)
	}
	if c.ACMEEmail != "" {
		if a, err := mail.ParseAddress(c.ACMEEmail); err != nil || a.Address != c.ACMEEmail || !strings.Contains(a.Address, ".") {
			return fmt.Errorf("--acme-email is %q; give one bare address such as ops@example.ca", c.ACMEEmail)
		}
	}
	if c.ACMECARoot != "" {
		if _, err := loadRoots(c.ACMECARoot); err != nil {
			return err
		}
	}
	for _, a := range []struct{ flag, addr string }{{"--http-addr", c.HTTPAddr}, {"--https-addr", c.HTTPSAddr}} {
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			return fmt.Errorf("%s is %q; give a host:port such as :443 (needed with --tls-domains)", a.flag, a.addr)
		}
	}
	if c.HTTPAddr == c.HTTPSAddr {
		return fmt.Errorf("--http-addr and --https-addr are both %q; give them different ports", c.HTTPAddr)
	}
	return nil
}

// loadRoots reads a PEM bundle of root certificates.
func loadRoots(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--acme-ca-root: reading roots: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("--acme-ca-root %q holds no PEM certificate; give the CA's root certificate in PEM", path)
	}
	return pool, nil
}

// bound is the API's listeners, bound before the data loads: the plain
// HTTP one, or with TLS the HTTP and HTTPS ones.
type bound struct {
	addr            string // --addr, for plain HTTP
	plain           net.Listener
	httpLn, httpsLn net.Listener
}

// bind listens on --addr, or with --tls-domains on HTTPAddr and HTTPSAddr,
// without serving yet: a port that is taken fails the start at once, before
// the data loads, and connections made during the load wait in the
// listener's backlog until the node serves.
func (c *ListenConfig) bind(addr string) (*bound, error) {
	c.defaults()
	b := &bound{addr: addr}
	var err error
	if len(c.domains()) > 0 {
		b.httpLn, b.httpsLn, err = c.listeners()
	} else if b.plain, err = net.Listen("tcp", addr); err != nil {
		err = listenError("--addr", addr, err)
	}
	if err != nil {
		return nil, err
	}
	if c.bound != nil {
		c.bound(b.api().Addr())
	}
	return b, nil
}

// api is the listener the API is served on.
func (b *bound) api() net.Listener {
	if b.plain != nil {
		return b.plain
	}
	return b.httpsLn
}

// close closes the listeners; after serving they are closed already, and
// closing again does nothing.
func (b *bound) close() {
	for _, ln := range []net.Listener{b.plain, b.httpLn, b.httpsLn} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// listenError says which setting names a port that cannot be listened on.
func listenError(flag, addr string, err error) error {
	return fmt.Errorf("%s %s cannot be listened on (%w); stop what holds the port or give another %s", flag, addr, err, flag)
}

// listen serves srv on the bound listeners until ctx is done, then shuts
// down gracefully (see serve). ready, when set, receives the address of
// the API's listener once it serves.
func (c *ListenConfig) listen(ctx context.Context, b *bound, dataDir string, srv *edge.Server, ready func(net.Addr), log *slog.Logger) error {
	if b.plain == nil {
		return c.listenTLS(ctx, b.httpLn, b.httpsLn, dataDir, srv, ready, log)
	}
	hs := srv.HTTPServer(b.addr)
	log.Info("serving", "addr", b.plain.Addr().String())
	if ready != nil {
		ready(b.plain.Addr())
	}
	return c.serve(ctx, srv, log, []*http.Server{hs}, []net.Listener{edge.JSONConnErrors(b.plain)})
}

// listenTLS serves the API over HTTPS on httpsLn with certificates that
// an acme.Manager obtains and renews for the domains, and serves ACME
// HTTP-01 challenges and redirects to HTTPS on httpLn.
//
// Certificates are obtained in the background (ManageAsync): the listeners
// open at once, a certificate already in storage is served at once, and a
// CA that is down delays only the handshakes of names without one, which
// certmagic retries with backoff and logs, rather than keeping the node
// from starting.
func (c *ListenConfig) listenTLS(ctx context.Context, httpLn, httpsLn net.Listener, dataDir string, srv *edge.Server, ready func(net.Addr), log *slog.Logger) error {
	domains := c.domains()
	var roots *x509.CertPool
	if c.ACMECARoot != "" {
		var err error
		if roots, err = loadRoots(c.ACMECARoot); err != nil {
			return err
		}
	}
	certs, err := acme.New(acme.Config{
		Domains:       domains,
		CA:            c.ACMECA,
		Email:         c.ACMEEmail,
		Roots:         roots,
		StorageDir:    filepath.Join(dataDir, "certmagic"),
		HTTPAddr:      httpLn.Addr(),
		HTTPSAddr:     httpsLn.Addr(),
		OnlyChallenge: c.onlyChallenge,
		Logger:        log.With("component", "certmagic"),
	})
	if err != nil {
		return err
	}
	defer certs.Stop()
	srv.Certificates = certs.Expiry

	tlsConfig := certs.TLSConfig()
	hs := srv.HTTPServer(c.HTTPSAddr)
	hs.TLSConfig = tlsConfig
	hs.ErrorLog = acme.ServerErrorLog(log)
	_, httpsPort, _ := net.SplitHostPort(httpsLn.Addr().String())
	hr := &http.Server{
		Addr:              c.HTTPAddr,
		Handler:           certs.HTTPHandler(acme.RedirectHTTPS(domains, httpsPort)),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          hs.ErrorLog,
	}
	if err := certs.Start(ctx); err != nil {
		return fmt.Errorf("managing certificates for %s: %w", strings.Join(domains, ", "), err)
	}
	log.Info("serving", "addr", httpsLn.Addr().String(), "http_addr", httpLn.Addr().String(),
		"domains", domains, "acme_ca", c.ACMECA)
	if ready != nil {
		ready(httpsLn.Addr())
	}
	return c.serve(ctx, srv, log, []*http.Server{hs, hr},
		[]net.Listener{tls.NewListener(httpsLn, tlsConfig), edge.JSONConnErrors(httpLn)})
}

// listeners returns the injected listeners, or listens on HTTPAddr and
// HTTPSAddr.
func (c *ListenConfig) listeners() (httpLn, httpsLn net.Listener, err error) {
	if c.httpLn != nil && c.httpsLn != nil {
		return c.httpLn, c.httpsLn, nil
	}
	httpLn, err = net.Listen("tcp", c.HTTPAddr)
	if err != nil {
		return nil, nil, listenError("--http-addr", c.HTTPAddr, err)
	}
	httpsLn, err = net.Listen("tcp", c.HTTPSAddr)
	if err != nil {
		httpLn.Close()
		return nil, nil, listenError("--https-addr", c.HTTPSAddr, err)
	}
	return httpLn, httpsLn, nil
}

// serve runs each server on its listener until ctx is done or one fails,
// then shuts down in order: srv is marked draining so that /readyz answers
// 503; after DrainDelay the listeners close and the requests in flight get
// ShutdownTimeout to finish. What follows (feeds, alerts, the store) is the
// caller's.
func (c *ListenConfig) serve(ctx context.Context, srv *edge.Server, log *slog.Logger, servers []*http.Server, lns []net.Listener) error {
	errc := make(chan error, len(servers))
	for i, hs := range servers {
		go func() { errc <- hs.Serve(lns[i]) }()
	}
	var serveErr error
	select {
	case err := <-errc:
		serveErr = fmt.Errorf("serving: %w", err)
		log.Error("serving", "error", err)
	case <-ctx.Done():
		log.Info("draining: /readyz answers 503", "drain_delay", c.DrainDelay, "shutdown_timeout", c.ShutdownTimeout)
	}
	srv.Drain()
	if c.draining != nil {
		c.draining()
	}
	if serveErr == nil && c.DrainDelay > 0 {
		// A second signal ends the process during this wait (main).
		t := time.NewTimer(c.DrainDelay)
		<-t.C
	}
	log.Info("closing listeners and finishing requests in flight")
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	errs := make(chan error, len(servers))
	for _, hs := range servers {
		go func() { errs <- hs.Shutdown(sctx) }()
	}
	var shutdownErr error
	for range servers {
		if err := <-errs; err != nil && !errors.Is(err, http.ErrServerClosed) {
			shutdownErr = err
		}
	}
	if shutdownErr != nil {
		// What still streams (a long export) is cut now, and logged so.
		srv.StopStreams()
		for _, hs := range servers {
			hs.Close()
		}
		// The requests cut return at their next read or write: their
		// access lines are written before the store closes and the
		// process exits, or they would be lost.
		if !srv.WaitRequests(time.Second) {
			log.Warn("requests still running after their connections were closed; exiting without their access lines")
		}
		return errors.Join(serveErr, fmt.Errorf("finishing requests in flight: %w", shutdownErr))
	}
	return serveErr
}
