package edge

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// mustHeldRegistry returns a real registry running the shipped hcdump
// plugin, primed with the Health Canada sample, and the digest of the
// norisk candidate its content gate holds for approval.
func mustHeldRegistry(tb testing.TB) (*plugins.Registry, string) {
	tb.Helper()
	h := mustPluginHost(tb)
	dir := tb.TempDir()
	norisk := plugintest.Build(tb, "./plugins/testdata/guests/norisk")
	if err := os.WriteFile(filepath.Join(dir, "hcdump.wasm"), norisk, 0o644); err != nil {
		tb.Fatal(err)
	}
	r := plugins.NewRegistry(h, map[string][]byte{"hcdump": plugintest.Build(tb, "./plugins/hcdump/wasm")})
	r.Dir, r.Logger = dir, slog.New(slog.DiscardHandler)
	if err := r.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	if _, err := r.Prime(context.Background(), "hcdump", os.DirFS(filepath.Join(plugintest.ModuleRoot(tb), "testdata", "hc"))); err != nil {
		tb.Fatal(err)
	}
	r.Scan(context.Background())
	return r, plugins.SHA256(norisk)
}

// A candidate that rewrites every hazard description is held, with its
// diff, in GET /admin/plugins; approving another digest is a 422 saying
// so, approving its own activates it; every answer matches the document.
func TestServer_AdminApprovePlugin(t *testing.T) {
	d := mustOpenAPI(t)
	r, sha := mustHeldRegistry(t)
	bundled := r.Active("hcdump")
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	s.AdminKey = testAdminKey
	s.Plugins = func() any { return r.Report() }
	s.ApprovePlugin = r.Approve
	base := MustHTTP(t, s.Handler()).URL
	admin := map[string]string{"X-Admin-Key": testAdminKey}
	run := d.runner(t, base)

	var rep plugins.Report
	if err := json.Unmarshal(run(docCase{"GET", "/admin/plugins", "", admin, 200}), &rep); err != nil {
		t.Fatal(err)
	}
	c := rep.Sources[0].Candidates
	if len(c) != 1 || c[0].State != "held" || c[0].Reason != "awaiting_approval" || c[0].SHA256 != sha || c[0].Diff == nil {
		t.Fatalf("hcdump's candidates = %+v, want norisk held for approval with its diff", c)
	}

	approve := "/admin/plugins/hcdump/approve"
	other := `{"sha256": "` + strings.Repeat("ab", 32) + `"}`
	if body := run(docCase{"POST", approve, other, admin, 422}); !strings.Contains(string(body), "held for approval") {
		t.Errorf("approving another digest: %s", body)
	}
	run(docCase{"POST", approve, `{"sha256": "` + sha + `"}`, nil, 403})
	if got := r.Active("hcdump"); got != bundled {
		t.Fatalf("active before approval = %s", got)
	}
	if err := json.Unmarshal(run(docCase{"POST", approve, `{"sha256": "` + sha + `"}`, admin, 200}), &rep); err != nil {
		t.Fatal(err)
	}
	if a := rep.Sources[0].Active; a == nil || a.SHA256 != sha || r.Active("hcdump") != sha {
		t.Fatalf("after approval: %+v, active %s", a, r.Active("hcdump"))
	}
	if code, body := adminDo(t, http.MethodPost, MustHTTP(t, func() http.Handler {
		off, _ := MustServer(t, MustCatalog(t, testRecords()))
		off.AdminKey = testAdminKey
		return off.Handler()
	}()).URL+approve, testAdminKey); code != 422 || !strings.Contains(body, "body") {
		t.Errorf("without a body: %d %s", code, body)
	}
}

// FuzzDecodeApprove sends any body to the approval's decoding: it returns
// a digest of 64 lower-case hex digits, or a 415, or a 422 whose items are
// shaped as rappel's constructors shape them.
func FuzzDecodeApprove(f *testing.F) {
	for _, b := range []string{``, `{}`, `null`, `[1]`, `{"sha256":"` + strings.Repeat("ab", 32) + `"}`, `{"sha256":"AB"}`,
		`{"sha256":42,"digest":"x"}`, `{"sha256":"` + strings.Repeat("ab", 31) + "a\xff" + `"}`, `{"sha256":null}`} {
		f.Add(b, "application/json")
	}
	f.Add(`sha256=ab`, "application/x-www-form-urlencoded")
	f.Fuzz(func(t *testing.T, body, contentType string) {
		r := httptest.NewRequest(http.MethodPost, "/admin/plugins/hcdump/approve", strings.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		sha, err := decodeApprove(r)
		if err == nil {
			if !sha256Hex.MatchString(sha) {
				t.Fatalf("%q: accepted digest %q", body, sha)
			}
			return
		}
		var e *rappel.Error
		if !errors.As(err, &e) || (e.Code != rappel.EMEDIATYPE && e.Code != rappel.EBADREQUEST && (e.Code != rappel.EINVALID || len(e.Items) == 0)) {
			t.Fatalf("%q: %v, want a 415 or a 422 with items", body, err)
		}
		for _, it := range e.Items {
			for _, p := range itemProblems(it, false) {
				t.Errorf("%q: %s: %+v", body, p, it)
			}
		}
	})
}
