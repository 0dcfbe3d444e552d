package edge

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// mustPluginsReport returns the report of a real plugin registry whose
// hcdump source runs the shipped plugin, with a candidate held (waiting for
// a payload) and one refused for vrdb (not a module).
func mustPluginsReport(tb testing.TB) func() any {
	tb.Helper()
	h := mustPluginHost(tb) // nothing runs: the candidates are only compiled
	dir := tb.TempDir()
	for name, wasm := range map[string][]byte{
		"hcdump": plugintest.Build(tb, "./plugins/testdata/guests/upper"),
		"vrdb":   []byte("not a module"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name+".wasm"), wasm, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	r := plugins.NewRegistry(h, map[string][]byte{
		"hcdump": plugintest.Build(tb, "./plugins/hcdump/wasm"),
		"vrdb":   plugintest.Build(tb, "./plugins/vrdb/wasm"),
	})
	r.Dir, r.Logger = dir, slog.New(slog.DiscardHandler)
	if err := r.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return func() any { return r.Report() }
}

func TestServer_AdminPlugins(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	s.AdminKey = testAdminKey
	s.Plugins = mustPluginsReport(t)
	base := MustHTTP(t, s.Handler()).URL

	code, body := adminDo(t, http.MethodGet, base+"/admin/plugins", testAdminKey)
	var got plugins.Report
	if code != 200 || json.Unmarshal([]byte(body), &got) != nil || len(got.Sources) != 2 {
		t.Fatalf("GET /admin/plugins = %d %s", code, body)
	}
	hc, vrdb := got.Sources[0], got.Sources[1]
	if hc.Active == nil || hc.Active.From != "bundled" || hc.Active.Why == "" || len(hc.Candidates) != 1 || hc.Candidates[0].State != "held" {
		t.Errorf("hcdump = %+v, want the bundled plugin and a held candidate", hc)
	}
	if len(vrdb.Candidates) != 1 || vrdb.Candidates[0].State != "refused" || !strings.Contains(vrdb.Candidates[0].Why, "not a usable module") {
		t.Errorf("vrdb = %+v, want a refused candidate saying why", vrdb)
	}
	if len(got.History) != 1 || got.History[0].Event != "refused" || got.History[0].Source != "vrdb" {
		t.Errorf("history = %+v", got.History)
	}

	if code, body := adminDo(t, http.MethodGet, base+"/admin/plugins", ""); code != 403 || !strings.Contains(body, "Missing admin key") {
		t.Errorf("without the key: %d %s", code, body)
	}
	off, _ := MustServer(t, MustCatalog(t, testRecords()))
	off.AdminKey = testAdminKey
	if code, body := adminDo(t, http.MethodGet, MustHTTP(t, off.Handler()).URL+"/admin/plugins", testAdminKey); code != 503 || !strings.Contains(body, "--feeds off") {
		t.Errorf("with the feeds off: %d %s", code, body)
	}
}
