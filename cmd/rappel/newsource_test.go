package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
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

// fdaNode is what a node adding the openFDA source needs: the bundle's
// directory, an upstream serving the agencies' samples and the real
// openFDA sample under /fda/, and a signing key pair (the public key's
// file, the secret key's) in dir.
func fdaNode(t *testing.T) (bundleDir string, up *feedstest.Upstream, dir, pub, key string) {
	t.Helper()
	docs := fdatest.RealDocuments(t)
	bundleDir, up = MustBuildBundle(t), sampleUpstream(t)
	for name, b := range docs {
		up.Set("/fda/"+name, b)
	}
	dir = t.TempDir()
	t.Setenv(passwordEnv, "correct horse")
	pub, key = keygen(t, dir, "signer")
	return bundleDir, up, dir, pub, key
}

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
	bundleDir, up, dir, pub, key := fdaNode(t)
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
			"--plugin-documents-allow-loopback", // the manifest's documents are on the loopback upstream
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
	return openfdaPluginMax(tb, up, 0)
}

// openfdaPluginMax is openfdaPlugin with its documents' max_bytes (0 for
// the default).
func openfdaPluginMax(tb testing.TB, up *feedstest.Upstream, maxBytes int64) ([]byte, int) {
	tb.Helper()
	for name, b := range fdatest.RealDocuments(tb) {
		up.Set("/fda/"+name, b)
	}
	m := &plugins.Manifest{Source: "openfda", RecordIDPrefix: "fda-",
		Agency: rappel.Agency{Name: "FDA", EN: "U.S. Food and Drug Administration", FR: "Food and Drug Administration des États-Unis"},
		Documents: []plugins.ManifestDocument{{Name: "food.json", URL: up.URL + "/fda/food.json", MaxBytes: maxBytes},
			{Name: "drug.json", URL: up.URL + "/fda/drug.json", MaxBytes: maxBytes}}}
	wasm, err := plugins.EmbedManifest(plugintest.Build(tb, "./plugins/examples/openfda/wasm"), m)
	if err != nil {
		tb.Fatal(err)
	}
	return wasm, 15
}

// TestServe_ManifestDocumentRules adds the openFDA source, its manifest's
// documents on a loopback upstream, on a running node. Without
// --plugin-documents-allow-loopback the refresh is refused before any
// request, and /health says why in a sentence without the query string.
// Restarted with it, the source refreshes; then a document becomes a
// gzip bomb (300 MiB decompressed, within the manifest's max_bytes, about
// 300 KiB on the wire): the refresh fails past the 256 MiB budget with a
// sentence, the last good records keep serving, and the server gives the
// memory it read back.
func TestServe_ManifestDocumentRules(t *testing.T) {
	bundleDir := MustBuildBundle(t)
	up := sampleUpstream(t)
	wasm, n := openfdaPluginMax(t, up, 300<<20)
	dataDir, pluginsDir := t.TempDir(), t.TempDir()
	start := func(extra ...string) (string, func()) {
		c := NewServeCommand()
		if err := c.ParseFlags(append([]string{
			"--data-dir", dataDir, "--api-keys", "k1", "--feeds", "on",
			"--feed-hc-en", up.URL + "/hc/recalls-en.json", "--feed-hc-fr", up.URL + "/hc/recalls-fr.json",
			"--feed-tc-vrdb", up.URL + "/tc/vrdb.csv", "--feed-detail", up.URL + "/detail/{lang}/{id}.json",
			"--refresh-interval", "1h", "--admin-key", adminKey, "--plugins-dir", pluginsDir, "--plugins-allow-unsigned", "--feed-detail-rate", "0",
		}, extra...)); err != nil {
			t.Fatal(err)
		}
		c.Bundle = os.DirFS(bundleDir)
		return serve(t, c)
	}

	base, stop := start()
	if code, body := putPlugin(t, base, "openfda", wasm, nil); code != 201 {
		t.Fatalf("PUT /admin/plugins/openfda = %d %s", code, body)
	}
	waitFor(t, "the refusal on /health", func() bool { return feed(t, base, "openfda").LastError != "" })
	f := feed(t, base, "openfda")
	if want := "Refused to fetch " + up.URL + "/fda/food.json: its host connects to an address in 127.0.0.0/8 (loopback)"; !strings.HasPrefix(f.LastError, want) || f.Live || f.Records != 0 {
		t.Fatalf("/health says of openfda %+v; want a refusal starting %q", f, want)
	}
	if n := up.Hits("/fda/"); n != 0 {
		t.Fatalf("the refused documents were requested %d times", n)
	}
	stop()

	base, stop = start("--plugin-documents-allow-loopback")
	defer stop()
	waitFor(t, "the source refreshed with loopback allowed", func() bool {
		f := feed(t, base, "openfda")
		return f.Live && f.LastError == "" && f.Records == n
	})

	up.SetGzip("/fda/drug.json", gzipBomb(t, 300<<20))
	debug.FreeOSMemory() // the bomb's making is not the server's
	before := retained()
	if code, body := adminRefresh(t, base, adminKey); code != 200 {
		t.Fatalf("POST /admin/refresh = %d %s", code, body)
	}
	after := retained()
	f = feed(t, base, "openfda")
	if want := "Refused to read drug.json (" + up.URL + "/fda/drug.json) whole: the documents of openfda come to more than 256 MiB"; !strings.HasPrefix(f.LastError, want) {
		t.Fatalf("/health says of openfda %+v; want a refusal starting %q", f, want)
	}
	if got := recallCount(t, base, "recall_agency=FDA"); got != n || f.Records != n {
		t.Fatalf("after the refused refresh recall_agency=FDA finds %d records, /health %d; want the last good %d", got, f.Records, n)
	}
	t.Logf("heap held from the system: %d MiB before the refresh, %d MiB after", before>>20, after>>20)
	if after > before+64<<20 {
		t.Fatalf("the server holds %d MiB more of the system's memory after the refused refresh", (after-before)>>20)
	}
}

// gzipBomb is a gzip stream of a JSON array of size bytes, nearly all
// spaces: a thousandth of that on the wire.
func gzipBomb(tb testing.TB, size int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write([]byte("["))
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for n := 1; n < size-1; n += len(chunk) {
		zw.Write(chunk[:min(len(chunk), size-1-n)])
	}
	zw.Write([]byte("]"))
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// retained is the heap memory this process holds from the system: what
// the Go runtime has mapped for the heap less what it gave back.
func retained() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapSys - m.HeapReleased
}
