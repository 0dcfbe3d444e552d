package feeds_test

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/feeds/feedstest"
)

// manifestFetcher is a Fetcher whose retries would wait seconds: a
// refusal that returns at once was not retried.
func manifestFetcher(loopback bool) *feeds.Fetcher {
	f := feeds.NewFetcher()
	f.BackoffMin, f.BackoffMax = 2*time.Second, 2*time.Second
	f.ManifestLoopback = loopback
	return f
}

// getManifest fetches u as a plugin's document and returns the error,
// failing the test when it took long enough to have been retried.
func getManifest(t *testing.T, f *feeds.Fetcher, u string) (*feeds.Response, error) {
	t.Helper()
	start := time.Now()
	resp, err := f.GetManifest(context.Background(), u, rappel.FileState{}, 1<<20)
	if err != nil && time.Since(start) > time.Second {
		t.Errorf("%s: refused after %s; a refusal is not retried", u, time.Since(start))
	}
	return resp, err
}

// TestFetcher_ManifestRefusesAddresses fetches a plugin's document from
// addresses the webhooks' rule refuses: loopback written every way
// (127.0.0.1, localhost, [::1], 0x7f000001, 2130706433, the IPv4-mapped
// form), the cloud metadata address, private and unique local ones. Each
// is refused with a sentence that keeps no query string and does not
// name the address a name resolved to, and the loopback upstream sees no
// request. The operator's URLs (GetLimited) still reach it; with
// ManifestLoopback the loopback forms written as such do too, the others
// stay refused.
func TestFetcher_ManifestRefusesAddresses(t *testing.T) {
	up := feedstest.NewUpstream(t)
	up.Set("/doc.json", []byte(`{"results": []}`))
	port := up.URL[strings.LastIndexByte(up.URL, ':')+1:]
	f := manifestFetcher(false)
	for _, tc := range []struct{ url, want string }{
		{"http://127.0.0.1:" + port + "/doc.json", "an address in 127.0.0.0/8 (loopback)"},
		{"http://localhost:" + port + "/doc.json", "(loopback)"},
		{"http://[::1]:" + port + "/doc.json", "an address in ::1/128 (loopback)"},
		{"http://0x7f000001:" + port + "/doc.json", "its host is neither a name nor an IP address in its usual form"},
		{"http://2130706433:" + port + "/doc.json", "its host is neither a name nor an IP address in its usual form"},
		{"http://[::ffff:127.0.0.1]:" + port + "/doc.json", "::ffff:0.0.0.0/96 (IPv4-mapped)"},
		{"http://169.254.169.254/latest/meta-data", "169.254.0.0/16 (link-local, which holds the cloud metadata address 169.254.169.254)"},
		{"http://10.0.0.1/doc.json", "10.0.0.0/8 (private use)"},
		{"http://[fd00:ec2::254]/latest/meta-data", "(AWS instance metadata)"},
	} {
		_, err := getManifest(t, f, tc.url+"?token=SECRET")
		switch {
		case err == nil:
			t.Errorf("%s was fetched", tc.url)
		case !strings.HasPrefix(err.Error(), "refused to fetch ") || !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: %q; want a refusal saying %q", tc.url, err, tc.want)
		case strings.Contains(err.Error(), "SECRET"):
			t.Errorf("%s: %q repeats the query string", tc.url, err)
		case strings.HasPrefix(tc.url, "http://localhost") && strings.Contains(err.Error(), "127.0.0.1"):
			t.Errorf("%s: %q names the address the name resolved to", tc.url, err)
		}
	}
	if n := up.Hits("/"); n != 0 {
		t.Fatalf("the loopback upstream got %d requests", n)
	}
	if _, err := f.GetLimited(context.Background(), up.URL+"/doc.json", rappel.FileState{}, 0); err != nil {
		t.Fatalf("the operator's loopback URL: %v", err)
	}

	dev := manifestFetcher(true)
	for _, u := range []string{"http://127.0.0.1:" + port + "/doc.json", "http://localhost:" + port + "/doc.json"} {
		if resp, err := getManifest(t, dev, u); err != nil || string(resp.Body) != `{"results": []}` {
			t.Errorf("%s with ManifestLoopback: %v", u, err)
		}
	}
	for _, u := range []string{"http://0x7f000001:" + port + "/doc.json", "http://[::ffff:127.0.0.1]:" + port + "/doc.json", "http://169.254.169.254/latest/meta-data"} {
		if _, err := getManifest(t, dev, u); err == nil || !strings.HasPrefix(err.Error(), "refused to fetch ") {
			t.Errorf("%s with ManifestLoopback: %v, want it refused", u, err)
		}
	}
}

// TestFetcher_ManifestRedirects follows a plugin's document's redirects
// from a loopback upstream the development setting allows: five are
// followed, a sixth refused; a redirect to the metadata address, to a
// private address, to a host written as a number, or from https to http
// is refused, each with a sentence naming where it led without its query
// string, and no refused target is requested. The operator's URLs follow
// a redirect to loopback as before.
func TestFetcher_ManifestRedirects(t *testing.T) {
	up := feedstest.NewUpstream(t)
	up.Set("/secret", []byte(`{"secret": true}`))
	port := up.URL[strings.LastIndexByte(up.URL, ':')+1:]
	for i := 1; i <= 6; i++ {
		up.Fail("/hop/"+strconv.Itoa(i), feedstest.Fault{Redirect: "/hop/" + strconv.Itoa(i-1)})
	}
	up.Fail("/hop/0", feedstest.Fault{Redirect: "/secret"})
	up.Fail("/metadata", feedstest.Fault{Redirect: "http://169.254.169.254/latest/meta-data?token=SECRET"})
	up.Fail("/private", feedstest.Fault{Redirect: "http://10.1.2.3/x?token=SECRET"})
	up.Fail("/hex", feedstest.Fault{Redirect: "http://0x7f000001:" + port + "/secret"})
	f := manifestFetcher(true)

	// /hop/4 redirects five times (4, 3, 2, 1, 0, then /secret).
	if resp, err := getManifest(t, f, up.URL+"/hop/4"); err != nil || !strings.Contains(string(resp.Body), "secret") {
		t.Fatalf("five redirects: %v", err)
	}
	up.ResetHits()
	for _, tc := range []struct{ path, want string }{
		{"/hop/5", "it was redirected more than 5 times (the last time to " + up.URL + "/secret)"},
		{"/metadata", "it redirects to http://169.254.169.254/latest/meta-data, whose host connects to an address in 169.254.0.0/16"},
		{"/private", "it redirects to http://10.1.2.3/x, whose host connects to an address in 10.0.0.0/8 (private use)"},
		{"/hex", "it redirects to http://0x7f000001:" + port + "/secret, whose host is neither a name nor an IP address"},
	} {
		_, err := getManifest(t, f, up.URL+tc.path+"?token=SECRET")
		if err == nil || !strings.Contains(err.Error(), "refused to fetch "+up.URL+tc.path+": "+tc.want) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: %v; want a refusal saying %q", tc.path, err, tc.want)
		}
	}
	if n := up.Hits("/secret"); n != 0 {
		t.Fatalf("/secret was requested %d times after refused redirects", n)
	}

	// From https to http: a TLS upstream redirecting to the plain one.
	tlsUp := httptest.NewTLSServer(http.RedirectHandler(up.URL+"/secret", http.StatusFound))
	t.Cleanup(tlsUp.Close)
	f = manifestFetcher(true)
	f.RootCAs = x509.NewCertPool()
	f.RootCAs.AddCert(tlsUp.Certificate())
	if _, err := getManifest(t, f, tlsUp.URL+"/doc.json"); err == nil || !strings.Contains(err.Error(), "it redirects from https to "+up.URL+"/secret, which is not https") {
		t.Fatalf("https to http: %v", err)
	}
	if n := up.Hits("/secret"); n != 0 {
		t.Fatalf("/secret was requested %d times after a downgrade", n)
	}

	if resp, err := manifestFetcher(false).GetLimited(context.Background(), up.URL+"/hop/0", rappel.FileState{}, 0); err != nil || !strings.Contains(string(resp.Body), "secret") {
		t.Fatalf("the operator's URL redirecting on loopback: %v", err)
	}
}
