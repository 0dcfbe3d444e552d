// Package acme serves HTTPS with certificates obtained and renewed from an
// ACME CA: a Manager wraps certmagic (its cache, its file storage, its
// ACME issuer and challenge handler), TLSConfig restricts what it serves
// to TLS 1.3, RedirectHTTPS answers plain HTTP, and certmagic's zap logs
// are written to a *slog.Logger with every e-mail address redacted. It is
// the one package that uses certmagic and zap (internal/importrules).
package acme

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/caddyserver/certmagic"
	"go.uber.org/zap"
)

// LetsEncryptProductionCA is the directory URL of Let's Encrypt's
// production CA, the default CA.
const LetsEncryptProductionCA = certmagic.LetsEncryptProductionCA

// Config is what a Manager manages and where it answers challenges.
type Config struct {
	// Domains are the names to obtain certificates for, lower-cased.
	Domains []string
	// CA is the directory URL of the ACME CA. It is also certmagic's test
	// CA, so that no retry ever goes to another CA.
	CA string
	// Email is the ACME account's contact; optional.
	Email string
	// Roots are the roots to trust for the CA's own HTTPS (a private CA);
	// nil trusts the system's roots.
	Roots *x509.CertPool
	// StorageDir is the directory certmagic keeps accounts, keys and
	// certificates in, so that a restart serves them without the CA.
	StorageDir string
	// HTTPAddr and HTTPSAddr are the addresses of the listeners that
	// answer HTTP-01 and TLS-ALPN-01 challenges.
	HTTPAddr, HTTPSAddr net.Addr
	// OnlyChallenge, when "http-01" or "tls-alpn-01", disables the other
	// challenge, so that a test exercises each for certain (acmez
	// otherwise picks one at random).
	OnlyChallenge string
	// Logger receives certmagic's logs; nil discards them.
	Logger *slog.Logger
}

// Manager obtains and renews the certificates of Config.Domains and hands
// them to TLS handshakes.
type Manager struct {
	domains []string
	magic   *certmagic.Config
	iss     *certmagic.ACMEIssuer
	cache   *certmagic.Cache
}

// New returns the Manager of c; Start starts it and Stop stops its cache.
//
// The issuer's listener settings name the ports of c.HTTPAddr and
// c.HTTPSAddr, so that certmagic, finding them taken, relies on the
// caller's listeners to answer the challenges (HTTPHandler, and TLSConfig
// for TLS-ALPN-01) instead of starting challenge servers of its own.
func New(c Config) (*Manager, error) {
	host, httpPort, err := splitPort(c.HTTPAddr)
	if err != nil {
		return nil, err
	}
	_, httpsPort, err := splitPort(c.HTTPSAddr)
	if err != nil {
		return nil, err
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	zl := zap.New(slogCore{log: log})
	var magic *certmagic.Config
	cache := certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert: func(certmagic.Certificate) (*certmagic.Config, error) { return magic, nil },
		Logger:           zl,
	})
	magic = certmagic.New(cache, certmagic.Config{
		Storage: &certmagic.FileStorage{Path: c.StorageDir},
		Logger:  zl,
	})
	iss := certmagic.NewACMEIssuer(magic, certmagic.ACMEIssuer{
		CA:             c.CA,
		TestCA:         c.CA,
		Email:          c.Email,
		Agreed:         true,
		TrustedRoots:   c.Roots,
		ListenHost:     host,
		AltHTTPPort:    httpPort,
		AltTLSALPNPort: httpsPort,
		Logger:         zl,

		DisableHTTPChallenge:    c.OnlyChallenge == "tls-alpn-01",
		DisableTLSALPNChallenge: c.OnlyChallenge == "http-01",
	})
	magic.Issuers = []certmagic.Issuer{iss}
	return &Manager{domains: c.Domains, magic: magic, iss: iss, cache: cache}, nil
}

// Start has the certificates obtained in the background and renewed until
// Stop: a certificate already in storage is served at once, and a CA that
// is down delays only the handshakes of names without one, which
// certmagic retries with backoff and logs, rather than keeping the caller
// from serving. An error says the domains cannot be managed at all.
func (m *Manager) Start(ctx context.Context) error {
	return m.magic.ManageAsync(ctx, m.domains)
}

// Stop stops the renewals and the certificate cache.
func (m *Manager) Stop() { m.cache.Stop() }

// TLSConfig is certmagic's TLS config restricted to TLS 1.3 (Mozilla's
// "modern" profile): every client of a JSON API from 2018 on speaks it, and
// it leaves no cipher suite to choose. ALPN offers HTTP/2 and HTTP/1.1, and
// acme-tls/1 for TLS-ALPN-01 challenges.
func (m *Manager) TLSConfig() *tls.Config {
	cfg := m.magic.TLSConfig()
	cfg.MinVersion = tls.VersionTLS13
	cfg.NextProtos = append([]string{"h2", "http/1.1"}, cfg.NextProtos...)
	return cfg
}

// HTTPHandler answers ACME HTTP-01 challenges and hands every other
// request to next.
func (m *Manager) HTTPHandler(next http.Handler) http.Handler {
	return m.iss.HTTPChallengeHandler(next)
}

// Expiry returns, for each domain that has a certificate in the cache,
// when the latest of them expires.
func (m *Manager) Expiry() map[string]time.Time {
	out := make(map[string]time.Time, len(m.domains))
	for _, d := range m.domains {
		for _, cert := range m.cache.AllMatchingCertificates(d) {
			leaf := cert.Leaf
			if leaf == nil && len(cert.Certificate.Certificate) > 0 {
				leaf, _ = x509.ParseCertificate(cert.Certificate.Certificate[0])
			}
			if leaf != nil && leaf.NotAfter.After(out[d]) {
				out[d] = leaf.NotAfter
			}
		}
	}
	return out
}

// splitPort splits a listener's address into its host and port number.
func splitPort(a net.Addr) (string, int, error) {
	host, p, err := net.SplitHostPort(a.String())
	if err != nil {
		return "", 0, fmt.Errorf("reading listener address: %w", err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("reading listener port: %w", err)
	}
	return host, port, nil
}
