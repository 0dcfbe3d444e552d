package edge

import (
	"net/http"
	"strings"
	"testing"
)

// TestServer_AdminGuessing: after ten wrong admin keys from one address,
// its admin requests are a 429 with Retry-After, the right key too, for
// the rest of the minute; a right key before that clears the count.
func TestServer_AdminGuessing(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	s.AdminKey = testAdminKey
	s.Plugins = mustPluginsReport(t)
	base := MustHTTP(t, s.Handler()).URL
	for i := range adminFailures - 1 {
		if code, body := adminDo(t, http.MethodGet, base+"/admin/plugins", "guess"); code != 403 {
			t.Fatalf("wrong key %d: %d %s", i+1, code, body)
		}
	}
	if code, _ := adminDo(t, http.MethodGet, base+"/admin/plugins", testAdminKey); code != 200 {
		t.Fatalf("the right key after nine wrong ones = %d", code)
	}
	for i := range adminFailures {
		if code, body := adminDo(t, http.MethodGet, base+"/admin/plugins", "guess"); code != 403 {
			t.Fatalf("wrong key %d after the count was cleared: %d %s", i+1, code, body)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/admin/plugins", nil)
	req.Header.Set("X-Admin-Key", testAdminKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("the right key after ten wrong ones = %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if code, body := adminDo(t, http.MethodGet, base+"/admin/plugins", "guess"); code != 429 || !strings.Contains(body, "Too many wrong admin keys") {
		t.Fatalf("another guess = %d %s", code, body)
	}
}
