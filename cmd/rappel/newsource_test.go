package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/examples/openfda/fdatest"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// putPlugin uploads a plugin and its signature (nil for none) with
// PUT /admin/plugins/{source}.
func putPlugin(tb testing.TB, base, source string, wasm, sig []byte) (int, []byte) {
	tb.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, p := range []struct {
		name string
		b    []byte
	}{{"plugin", wasm}, {"signature", sig}} {
		if p.b == nil {
			continue
		}
		w, _ := mw.CreateFormFile(p.name, source+".wasm")
		w.Write(p.b)
	}
	mw.Close()
	return adminDo(tb, http.MethodPut, base+"/admin/plugins/"+source, mw.FormDataContentType(), &body)
}

func adminDo(tb testing.TB, method, url, contentType string, body io.Reader) (int, []byte) {
	tb.Helper()
	h := http.Header{"X-Admin-Key": {adminKey}}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	return send(tb, method, url, h, body)
}

// recalls is the records /recall answers for query, on its first page of
// 100.
func recalls(tb testing.TB, base, query string) []rappel.Record {
	tb.Helper()
	code, body := get(tb, base+"/recall?limit=100&"+query, "k1")
	var page struct {
		Results []rappel.Record `json:"results"`
	}
	if code != 200 || json.Unmarshal(body, &page) != nil {
		tb.Fatalf("GET /recall?%s = %d %s", query, code, body)
	}
	return page.Results
}

func recallCount(tb testing.TB, base, query string) int { return len(recalls(tb, base, query)) }

// TestServe_NewSourcePlugin is the integrator's walk for a new source, on a
// running node: the openFDA example plugin, its manifest written in with
// "rappel plugin manifest" and signed with "rappel plugin sign", uploaded
// with PUT /admin/plugins/openfda, adds the source; the node fetches the
// documents the manifest lists (the real openFDA sample, served on
// loopback) and its records answer GET /recall, the agency filter and the
// statistics. An unsigned upload and one signed by another key are refused
// with sentences, and kept under refused. After a restart the source is
// still refreshed and its agency known. Removing it archives its records
// with the reason and deletes its refused uploads.
func TestServe_NewSourcePlugin(t *testing.T) {
	docs := fdatest.RealDocuments(t)
	bundleDir := MustBuildBundle(t)
	up := sampleUpstream(t)
	for name, b := range docs {
		up.Set("/fda/"+name, b)
	}

	dir := t.TempDir()
	t.Setenv(passwordEnv, "correct horse")
	pub, key := keygen(t, dir, "signer")
	_, otherKey := keygen(t, dir, "other", "--unencrypted")

	// The integrator's module: built, its manifest written in (pointing
	// at the loopback upstream), signed.
	root := plugintest.ModuleRoot(t)
	manifest, err := os.ReadFile(filepath.Join(root, "plugins", "examples", "openfda", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	manifest = bytes.ReplaceAll(manifest, []byte("https://api.fda.gov/food/enforcement.json?limit=1000&sort=report_date:desc"), []byte(up.URL+"/fda/food.json"))
	manifest = bytes.ReplaceAll(manifest, []byte("https://api.fda.gov/drug/enforcement.json?limit=1000&sort=report_date:desc"), []byte(up.URL+"/fda/drug.json"))
	manifestFile := filepath.Join(dir, "manifest.json")
	os.WriteFile(manifestFile, manifest, 0o644)
	wasmFile := mustWasmFile(t, dir, "openfda.wasm", "./plugins/examples/openfda/wasm")
	for _, args := range [][]string{
		{"plugin", "manifest", wasmFile, "--manifest", manifestFile},
		{"plugin", "sign", wasmFile, "--key", key},
	} {
		if err := run(context.Background(), args); err != nil {
			t.Fatalf("rappel %s: %v", strings.Join(args, " "), err)
		}
	}
	wasm, _ := os.ReadFile(wasmFile)
	sig, _ := os.ReadFile(wasmFile + plugins.SignatureSuffix)
	otherDir := t.TempDir()
	otherWasm := filepath.Join(otherDir, "openfda.wasm")
	os.WriteFile(otherWasm, wasm, 0o644)
	if err := run(context.Background(), []string{"plugin", "sign", otherWasm, "--key", otherKey}); err != nil {
		t.Fatal(err)
	}
	otherSig, _ := os.ReadFile(otherWasm + plugins.SignatureSuffix)

	dataDir, pluginsDir := t.TempDir(), t.TempDir()
	start := func() (string, func()) {
		c := NewServeCommand()
		if err := c.ParseFlags([]string{
			"--data-dir", dataDir, "--api-keys", "k1", "--feeds", "on",
			"--feed-hc-en", up.URL + "/hc/recalls-en.json", "--feed-hc-fr", up.URL + "/hc/recalls-fr.json",
			"--feed-tc-vrdb", up.URL + "/tc/vrdb.csv", "--feed-detail", up.URL + "/detail/{lang}/{id}.json",
			"--refresh-interval", "1h", "--admin-key", adminKey, "--plugins-dir", pluginsDir, "--plugin-keys", pub, "--feed-detail-rate", "0",
		}); err != nil {
			t.Fatal(err)
		}
		c.Bundle = os.DirFS(bundleDir)
		return serve(t, c)
	}
	base, stop := start()

	for _, tc := range []struct {
		name string
		sig  []byte
		want string
	}{
		{"unsigned", nil, "no signature"},
		{"another key", otherSig, "trusted"},
	} {
		code, body := putPlugin(t, base, "openfda", wasm, tc.sig)
		if code != 422 || !strings.Contains(string(body), tc.want) || !strings.Contains(string(body), "was not activated") {
			t.Fatalf("PUT /admin/plugins/openfda %s = %d %s; want a 422 saying %q", tc.name, code, body, tc.want)
		}
	}
	// The refused uploads left --plugins-dir for its refused/, listed.
	if got := adminPlugins(t, base).Refused; len(got) != 2 || got[0].Source != "openfda" || !strings.Contains(got[1].Why, "no signature") {
		t.Fatalf("GET /admin/plugins lists the refused uploads as %+v", got)
	}
	// Agencies are registered per process: another test of this binary
	// may have registered FDA already.
	if code, _ := get(t, base+"/recall?recall_agency=FDA", "k1"); code != 422 && !rappel.IsAgency("FDA") {
		t.Fatalf("before the source is added, recall_agency=FDA = %d, want 422", code)
	}

	code, body := putPlugin(t, base, "openfda", wasm, sig)
	if code != 201 {
		t.Fatalf("PUT /admin/plugins/openfda signed = %d %s, want 201", code, body)
	}
	waitFor(t, "the new source refreshed", func() bool {
		f := feed(t, base, "openfda")
		return f.Live && f.Records == 15 && f.Plugin == plugins.SHA256(wasm)
	})
	waitFor(t, "its records in the index", func() bool { return recallCount(t, base, "recall_agency=FDA") == 15 })
	if n := recallCount(t, base, "q=pringles"); n < 1 {
		t.Errorf("a search for pringles finds %d records", n)
	}
	if code, r := record(t, base, "fda-f-0087-2014"); code != 200 || r.Agency != "FDA" || r.Status != rappel.StatusArchived && r.Status != rappel.StatusActive {
		t.Fatalf("GET /recall/fda-f-0087-2014 = %d %+v", code, r)
	}
	if code, body := get(t, base+"/recall/stats?group_by=agency&period=all", "k1"); code != 200 || !bytes.Contains(body, []byte(`"FDA"`)) {
		t.Errorf("stats by agency = %d %s, want FDA counted", code, body)
	}
	if code, body := get(t, base+"/openapi.json", ""); code != 200 || !bytes.Contains(body, []byte("Food and Drug Administration des États-Unis")) {
		t.Errorf("GET /openapi.json = %d, without the new agency's names", code)
	}
	rep := adminPlugins(t, base)
	if a := activeOf(rep, "openfda"); a == nil || a.SHA256 != plugins.SHA256(wasm) || !strings.Contains(a.Why, "adds the source openfda") {
		t.Fatalf("/admin/plugins says openfda runs %+v", a)
	}
	stop()

	// A restart: the kept plugin runs, the agency is known again.
	base, stop = start()
	if a := activeOf(adminPlugins(t, base), "openfda"); a == nil || a.SHA256 != plugins.SHA256(wasm) {
		t.Fatalf("after a restart /admin/plugins says openfda runs %+v", a)
	}
	waitFor(t, "the new source refreshed after a restart", func() bool {
		f := feed(t, base, "openfda")
		return f.Live && f.LastError == "" && f.Records == 15
	})
	if n := recallCount(t, base, "recall_agency=FDA"); n != 15 {
		t.Fatalf("after a restart recall_agency=FDA finds %d records, want 15", n)
	}

	// Removing it: a bundled source cannot be; the new one is archived.
	if code, body := adminDo(t, http.MethodDelete, base+"/admin/plugins/hcdump", "application/json", strings.NewReader(`{"reason": "no"}`)); code != 400 || !strings.Contains(string(body), "bundles") {
		t.Fatalf("DELETE /admin/plugins/hcdump = %d %s, want a 400", code, body)
	}
	if code, body := adminDo(t, http.MethodDelete, base+"/admin/plugins/openfda", "application/json", strings.NewReader(`{}`)); code != 422 || !strings.Contains(string(body), "reason") {
		t.Fatalf("DELETE without a reason = %d %s, want a 422 naming reason", code, body)
	}
	if code, body := adminDo(t, http.MethodDelete, base+"/admin/plugins/openfda", "application/json", strings.NewReader(`{"reason": "the trial of foreign recalls ended"}`)); code != 200 {
		t.Fatalf("DELETE /admin/plugins/openfda = %d %s", code, body)
	}
	waitFor(t, "the removed source's records archived in the index", func() bool {
		recs := recalls(t, base, "recall_agency=FDA")
		for _, r := range recs {
			if r.Status != rappel.StatusArchived {
				return false
			}
		}
		return len(recs) == 15
	})
	if f := feed(t, base, "openfda"); !strings.Contains(f.Removed, "the trial of foreign recalls ended") {
		t.Fatalf("/health says of the removed source %+v", f)
	}
	if _, err := os.Stat(filepath.Join(pluginsDir, "openfda.wasm")); !os.IsNotExist(err) {
		t.Fatalf("the removed source's plugin is still in --plugins-dir: %v", err)
	}
	if got := adminPlugins(t, base).Refused; len(got) != 0 {
		t.Fatalf("the removed source's refused uploads are still kept: %+v", got)
	}
	if code, r := record(t, base, "fda-f-0087-2014"); code != 200 || r.Status != rappel.StatusArchived {
		t.Fatalf("GET /recall/fda-f-0087-2014 after the removal = %d %+v", code, r)
	}
}

// openfdaPlugin is the openFDA example with its manifest, fetching the
// real sample's documents from up (which it serves them under /fda/), and
// the number of records they make.
func openfdaPlugin(tb testing.TB, up *feedstest.Upstream) ([]byte, int) {
	tb.Helper()
	for name, b := range fdatest.RealDocuments(tb) {
		up.Set("/fda/"+name, b)
	}
	m := &plugins.Manifest{Source: "openfda", RecordIDPrefix: "fda-",
		Agency:    rappel.Agency{Name: "FDA", EN: "U.S. Food and Drug Administration", FR: "Food and Drug Administration des États-Unis"},
		Documents: []plugins.ManifestDocument{{Name: "food.json", URL: up.URL + "/fda/food.json"}, {Name: "drug.json", URL: up.URL + "/fda/drug.json"}}}
	wasm, err := plugins.EmbedManifest(plugintest.Build(tb, "./plugins/examples/openfda/wasm"), m)
	if err != nil {
		tb.Fatal(err)
	}
	return wasm, 15
}
