package plugins_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"aead.dev/minisign"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/examples/openfda/fdatest"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// signedRegistry is a registry watching dir that trusts pub's signatures,
// keeping active plugins in active, telling added manifests to onSource.
func signedRegistry(t *testing.T, dir, active string, pub minisign.PublicKey, onSource func(*plugins.Manifest) error) *plugins.Registry {
	t.Helper()
	text, _ := pub.MarshalText()
	v, err := plugins.ParseTrustedKeys(text)
	if err != nil {
		t.Fatal(err)
	}
	return MustOpenRegistry(t, MustOpenHost(t), dir, func(r *plugins.Registry) {
		r.Verify = v.Verify
		r.ActiveDir = active
		r.OnSource = onSource
	})
}

// openfdaModule is the openFDA example with a manifest for a source named
// source, whose records are prefixed prefix.
func openfdaModule(t *testing.T, source, prefix string) ([]byte, *plugins.Manifest) {
	t.Helper()
	return openfdaModuleOf(t, source, prefix, rappel.Agency{Name: "FDA", EN: "U.S. Food and Drug Administration", FR: "Food and Drug Administration des États-Unis"})
}

// openfdaModuleOf is openfdaModule with a manifest naming agency, whatever
// agency the records it makes name (the openFDA example's say FDA).
func openfdaModuleOf(t *testing.T, source, prefix string, agency rappel.Agency) ([]byte, *plugins.Manifest) {
	t.Helper()
	m := &plugins.Manifest{Source: source, RecordIDPrefix: prefix, Agency: agency,
		Documents: []plugins.ManifestDocument{{Name: "food.json", URL: "https://127.0.0.1:1/food.json"}, {Name: "drug.json", URL: "https://127.0.0.1:1/drug.json"}}}
	wasm, err := plugins.EmbedManifest(plugintest.Build(t, "./plugins/examples/openfda/wasm"), m)
	if err != nil {
		t.Fatal(err)
	}
	return wasm, m
}

// TestRegistry_NewSource drops a signed plugin with a manifest for a source
// the registry does not know: found before its signature, it is refused,
// and taken once the signature is there; it runs at once, judged with its
// manifest (a record without its prefix is refused); a registry opened
// again on the same active dir runs it; removing it forgets it, and its
// files leave the directory.
func TestRegistry_NewSource(t *testing.T) {
	docs := fdatest.RealDocuments(t)
	pub, priv, err := minisign.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir, active := t.TempDir(), t.TempDir()
	var told []*plugins.Manifest
	onSource := func(m *plugins.Manifest) error { told = append(told, m); return nil }
	r := signedRegistry(t, dir, active, pub, onSource)

	wasm, _ := openfdaModule(t, "openfda", "fda-")
	plugintest.Install(t, dir, "openfda", wasm)
	r.Scan(context.Background())
	if st := status(t, r, "openfda"); st.Active != "" || !strings.Contains(st.RejectedReason, "no signature") {
		t.Fatalf("without its signature: %+v", st)
	}
	// The signature arrives after the module: the module is tried again.
	time.Sleep(10 * time.Millisecond)
	sig := plugins.Sign(priv, "openfda.wasm", "openfda", wasm, time.Now())
	if err := os.WriteFile(filepath.Join(dir, "openfda.wasm.minisig"), sig, 0o644); err != nil {
		t.Fatal(err)
	}
	r.Scan(context.Background())
	if got := r.Active("openfda"); got != plugins.SHA256(wasm) {
		t.Fatalf("active = %q after the signature came, want the new source's plugin; %+v", got, status(t, r, "openfda"))
	}
	if len(told) != 1 || told[0].Source != "openfda" || !rappel.IsAgency("FDA") {
		t.Fatalf("OnSource told %+v; FDA known: %v", told, rappel.IsAgency("FDA"))
	}
	out, err := r.Normalize(context.Background(), "openfda", mapFS(docs))
	if err != nil || len(out.Records) != 15 {
		t.Fatalf("a run of the new source: %v, %+v", err, out)
	}

	// A registry opened again on the same active dir runs it, and tells
	// OnSource of it again.
	told = nil
	again := signedRegistry(t, t.TempDir(), active, pub, onSource)
	if got := again.Active("openfda"); got != plugins.SHA256(wasm) || len(told) != 1 {
		t.Fatalf("after a restart: active %q, told %d", got, len(told))
	}

	// A second source may not take the first one's prefix, nor a bundled
	// source's; and a plugin whose records lack its prefix has them refused.
	for _, tc := range []struct{ source, prefix, want string }{
		{"openfda2", "fda-", `record_id_prefix "fda-" is the source openfda's`},
		{"openfda3", "hc-", "a bundled source's"},
	} {
		w, _ := openfdaModule(t, tc.source, tc.prefix)
		os.WriteFile(filepath.Join(dir, tc.source+".wasm.minisig"), plugins.Sign(priv, tc.source+".wasm", tc.source, w, time.Now()), 0o644)
		plugintest.Install(t, dir, tc.source, w)
	}
	misnamed, _ := openfdaModule(t, "fdaother", "other-")
	os.WriteFile(filepath.Join(dir, "fdaother.wasm.minisig"), plugins.Sign(priv, "fdaother.wasm", "fdaother", misnamed, time.Now()), 0o644)
	plugintest.Install(t, dir, "fdaother", misnamed)
	r.Scan(context.Background())
	for src, want := range map[string]string{"openfda2": "the source openfda's", "openfda3": "a bundled source's"} {
		if st := status(t, r, src); st.Active != "" || !strings.Contains(st.RejectedReason, want) {
			t.Errorf("%s: %+v, want refused saying %q", src, st, want)
		}
	}
	out, err = r.Normalize(context.Background(), "fdaother", mapFS(docs))
	if err != nil || len(out.Records) != 0 || len(out.Problems) < 15 || !strings.Contains(out.Problems[len(out.Problems)-1].Reason, `does not start with "other-"`) {
		t.Fatalf("records without the prefix: %v, %d records, problems %+v", err, len(out.Records), out.Problems)
	}

	if err := r.Remove("hcdump", "no"); err == nil || !strings.Contains(err.Error(), "only a source a plugin's manifest added") {
		t.Fatalf("removing a bundled source: %v", err)
	}
	if err := r.Remove("openfda", "the trial ended"); err != nil {
		t.Fatal(err)
	}
	if r.Active("openfda") != "" {
		t.Fatal("the removed source still runs")
	}
	for _, f := range []string{filepath.Join(dir, "openfda.wasm"), filepath.Join(dir, "openfda.wasm.minisig"), filepath.Join(active, "openfda.wasm")} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s is still there after the removal", f)
		}
	}
	if _, err := os.Stat(filepath.Join(active, "openfda.removed.json")); err != nil {
		t.Errorf("the removal is not kept: %v", err)
	}
	if ev := r.Report().History; ev[0].Event != "removed" || ev[0].Why != "the trial ended" {
		t.Errorf("history = %+v", ev[0])
	}
}

// mapFS is documents by name as a file system.
func mapFS(docs map[string][]byte) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, b := range docs {
		fsys[name] = &fstest.MapFile{Data: b}
	}
	return fsys
}
