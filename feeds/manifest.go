package feeds

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/rappel-ca/rappel"
)

// The documents a plugin's manifest names (Doc.FromManifest) are URLs the
// operator did not write: a signed plugin is trusted to turn its documents
// into records, not to choose what the node connects to from inside its
// network. So they are fetched as webhooks are posted (alerts.HookClient),
// under rappel.CheckWebhookAddress's rule (docs/operations.md, "Plugins'
// documents"):
//
//   - every address the client connects to is checked when connecting,
//     after name resolution (rappel.DialControl): a name resolving, or
//     re-resolving, to a private, loopback, link-local (the cloud metadata
//     address 169.254.169.254), CGNAT, documentation or reserved address,
//     or an IPv6 form of one, is refused, whatever the URL said;
//   - a host written as an address in a refused form ([::ffff:127.0.0.1])
//     or as a number in another form (0x7f000001) is refused before any
//     connection (rappel.CheckHost);
//   - at most MaxManifestRedirects redirects are followed, each to a URL
//     that passes the same checks and, from https, is https too;
//   - no proxy from the environment is used: the address checked would be
//     the proxy's.
//
// A refusal is not retried: it would be refused again. Loopback is
// allowed with Fetcher.ManifestLoopback, for development.

// MaxManifestRedirects is how many redirects a fetch of a plugin's
// document follows at most.
const MaxManifestRedirects = 5

// manifestWho names a plugin's documents in address refusals.
const manifestWho = "a plugin's document"

// GetManifest is GetLimited for a document a plugin's manifest names,
// under the address and redirect rules above.
func (f *Fetcher) GetManifest(ctx context.Context, rawURL string, prev rappel.FileState, maxBody int64) (*Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: the URL does not parse", spanURL(rawURL))
	}
	if r := rappel.CheckHost(u.Hostname(), f.ManifestLoopback, manifestWho); r != nil {
		return nil, refusal(rawURL, r)
	}
	f.manifestOnce.Do(f.buildManifest)
	return f.traced(ctx, f.manifest, rawURL, prev, maxBody)
}

// buildManifest makes the client of GetManifest: f's retries and timeout,
// over a transport of its own whose dialer checks every address.
func (f *Fetcher) buildManifest() {
	c := f.retrying()
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: rappel.DialControl(f.ManifestLoopback, manifestWho)}
	c.HTTPClient = &http.Client{
		Timeout: f.Timeout,
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           d.DialContext,
			TLSClientConfig:       &tls.Config{RootCAs: f.RootCAs, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:   10 * time.Second,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
			ExpectContinueTimeout: time.Second,
		},
		CheckRedirect: f.checkRedirect,
	}
	next := c.CheckRetry
	c.CheckRetry = func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if refused(err) {
			return false, err
		}
		return next(ctx, resp, err)
	}
	f.manifest = c
}

// redirectRefused is a redirect GetManifest does not follow, and why.
type redirectRefused struct{ why string }

func (e *redirectRefused) Error() string { return e.why }

// checkRedirect refuses a redirect past MaxManifestRedirects, from https
// to another scheme, or to a host CheckHost refuses; the dialer checks
// the address it then connects to.
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	to := spanURL(req.URL.String())
	switch {
	case len(via) > MaxManifestRedirects:
		return &redirectRefused{fmt.Sprintf("it was redirected more than %d times (the last time to %s)", MaxManifestRedirects, to)}
	case via[len(via)-1].URL.Scheme == "https" && req.URL.Scheme != "https":
		return &redirectRefused{"it redirects from https to " + to + ", which is not https"}
	}
	if r := rappel.CheckHost(req.URL.Hostname(), f.ManifestLoopback, manifestWho); r != nil {
		return &redirectRefused{"it redirects to " + to + ", whose host " + hostRefusal(r)}
	}
	return nil
}

// refused reports whether err is a refusal of the manifest rules.
func refused(err error) bool {
	var ra *rappel.RefusedAddressError
	var rr *redirectRefused
	return errors.As(err, &ra) || errors.As(err, &rr)
}

// refusal words a refusal of the manifest rules met fetching docURL as a
// sentence for /health, which is public: the URLs lose their query
// strings, and the address connected to is not named, only its block
// (the IANA registry's name of it). nil when err is no refusal.
func refusal(docURL string, err error) error {
	var rr *redirectRefused
	if errors.As(err, &rr) {
		return fmt.Errorf("refused to fetch %s: %s", spanURL(docURL), rr.why)
	}
	var ra *rappel.RefusedAddressError
	if !errors.As(err, &ra) {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.URL != docURL {
		return fmt.Errorf("refused to fetch %s: it redirects to %s, whose host %s", spanURL(docURL), spanURL(ue.URL), hostRefusal(ra))
	}
	return fmt.Errorf("refused to fetch %s: its host %s", spanURL(docURL), hostRefusal(ra))
}

// hostRefusal says why a host is refused, as the end of a sentence whose
// subject is the host.
func hostRefusal(r *rappel.RefusedAddressError) string {
	if r.Why == nil {
		return "is neither a name nor an IP address in its usual form (a.b.c.d, or IPv6 in brackets); a plugin's document must be on a public host"
	}
	block := "in " + r.Why.Range.String()
	if r.Why.Outside {
		block = "outside " + r.Why.Range.String()
	}
	s := "connects to an address " + block + ", and a plugin's documents are fetched from public addresses only"
	if r.Why.Range.Prefix.Addr().IsLoopback() {
		s += " (for development, --plugin-documents-allow-loopback allows loopback)"
	}
	return s
}
