package plugins_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aead.dev/minisign"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/examples/openfda/fdatest"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// keptRegistry is a registry watching nothing that runs the plugins kept
// in active, checking them with keys' signatures; without keys it runs
// them unchecked, as a server without --plugin-keys does. Its host keeps
// compiled code in cache, as a data dir does.
func keptRegistry(t *testing.T, cache, active string, onSource func(*plugins.Manifest) error, keys ...minisign.PublicKey) *plugins.Registry {
	t.Helper()
	return MustOpenRegistry(t, MustOpenHost(t, func(h *plugins.Host) { h.CacheDir = cache }), "", func(r *plugins.Registry) {
		r.ActiveDir, r.OnSource = active, onSource
		if len(keys) > 0 {
			r.VerifyKept = plugins.NewVerifier(keys...).Verify
		}
	})
}

func mustGenerateKey(t *testing.T) (minisign.PublicKey, minisign.PrivateKey) {
	t.Helper()
	pub, priv, err := minisign.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

// TestRegistry_KeptAddedPluginVerified activates a signed plugin that adds
// a source: its signature is kept beside it in the active dir. A registry
// opened again on that dir with the trusted keys runs it; with the kept
// signature gone, replaced by another key's, or with other trusted keys,
// it does not run, OnSource is not told (nothing its manifest lists is
// fetched), and NotRun and the source's status say why. Without trusted
// keys the kept plugin runs unchecked, as before.
func TestRegistry_KeptAddedPluginVerified(t *testing.T) {
	pub, priv := mustGenerateKey(t)
	otherPub, otherPriv := mustGenerateKey(t)
	dir, active, cache := t.TempDir(), t.TempDir(), t.TempDir()
	r := signedRegistry(t, dir, active, pub, nil)
	wasm, _ := openfdaModule(t, "keptfda", "kfda-")
	sig := plugins.Sign(priv, "keptfda.wasm", "keptfda", wasm, time.Now())
	os.WriteFile(filepath.Join(dir, "keptfda.wasm.minisig"), sig, 0o644)
	plugintest.Install(t, dir, "keptfda", wasm)
	r.Scan(context.Background())
	sha := plugins.SHA256(wasm)
	if r.Active("keptfda") != sha {
		t.Fatalf("the signed plugin is not active: %+v", status(t, r, "keptfda"))
	}
	keptSig := filepath.Join(active, "keptfda.wasm.minisig")
	if b, err := os.ReadFile(keptSig); err != nil || !bytes.Equal(b, sig) {
		t.Fatalf("the signature kept beside the active plugin: %v (%d bytes, want %d)", err, len(b), len(sig))
	}
	r.Close()

	var told int
	onSource := func(*plugins.Manifest) error { told++; return nil }
	if again := keptRegistry(t, cache, active, onSource, pub); again.Active("keptfda") != sha || told != 1 {
		t.Fatalf("with its signature and the trusted key: active %q, OnSource told %d times", again.Active("keptfda"), told)
	}

	otherSig := plugins.Sign(otherPriv, "keptfda.wasm", "keptfda", wasm, time.Now())
	for _, tc := range []struct {
		name string
		sig  []byte // nil: no signature file
		keys []minisign.PublicKey
		want string
	}{
		{"Missing", nil, []minisign.PublicKey{pub}, "no signature"},
		{"OtherKey", otherSig, []minisign.PublicKey{pub}, "which is not a trusted key"},
		{"Garbage", []byte("not a signature"), []minisign.PublicKey{pub}, "not a minisign signature"},
		{"KeysChanged", sig, []minisign.PublicKey{otherPub}, "which is not a trusted key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(keptSig)
			if tc.sig != nil {
				os.WriteFile(keptSig, tc.sig, 0o644)
			}
			told = 0
			reg := keptRegistry(t, cache, active, onSource, tc.keys...)
			if a := reg.Active("keptfda"); a != "" || told != 0 {
				t.Fatalf("the kept plugin runs (%q) or its manifest was applied (%d)", a, told)
			}
			why := reg.NotRun()["keptfda"]
			for _, want := range []string{tc.want, "kept in the data dir", "failed verification", "not refreshed", "keptfda.wasm"} {
				if !strings.Contains(why, want) {
					t.Errorf("NotRun says %q, without %q", why, want)
				}
			}
			if st := status(t, reg, "keptfda"); st.Rejected != sha || st.RejectedReason != why {
				t.Errorf("status = %+v", st)
			}
			if _, err := reg.Normalize(context.Background(), "keptfda", mapFS(nil)); err == nil {
				t.Error("a run of the source whose kept plugin did not verify succeeded")
			}
		})
	}

	os.Remove(keptSig)
	if unchecked := keptRegistry(t, cache, active, nil); unchecked.Active("keptfda") != sha {
		t.Fatalf("without trusted keys the kept plugin does not run: %+v", status(t, unchecked, "keptfda"))
	}
}

// TestRegistry_KeptSwapVerified keeps, for a bundled source, a plugin that
// replaced the bundled one: without a signature that verifies it does not
// run, the bundled plugin does, and the source's rejection says why; with
// a trusted signature kept beside it, it runs.
func TestRegistry_KeptSwapVerified(t *testing.T) {
	pub, priv := mustGenerateKey(t)
	active, cache := t.TempDir(), t.TempDir()
	upper := plugintest.Build(t, "./plugins/testdata/guests/upper")
	bundled := plugins.SHA256(plugintest.Build(t, hcdumpPkg))
	manifest, _ := json.Marshal(map[string]any{"sha256": plugins.SHA256(upper), "since": time.Now(), "why": "a swap", "from": "hcdump.wasm", "bundled": bundled})
	os.WriteFile(filepath.Join(active, "hcdump.wasm"), upper, 0o644)
	os.WriteFile(filepath.Join(active, "hcdump.json"), manifest, 0o644)

	r := keptRegistry(t, cache, active, nil, pub)
	if a := r.Active("hcdump"); a != bundled {
		t.Fatalf("an unsigned kept plugin runs: active %s, want the bundled %s", a, bundled)
	}
	why := r.Rejection("hcdump")
	for _, want := range []string{"no signature", "failed verification", "the bundled plugin runs instead"} {
		if !strings.Contains(why, want) {
			t.Errorf("the rejection says %q, without %q", why, want)
		}
	}
	if len(r.NotRun()) != 0 {
		t.Errorf("NotRun = %v for a source whose bundled plugin runs", r.NotRun())
	}

	os.WriteFile(filepath.Join(active, "hcdump.wasm.minisig"), plugins.Sign(priv, "hcdump.wasm", "hcdump", upper, time.Now()), 0o644)
	if signed := keptRegistry(t, cache, active, nil, pub); signed.Active("hcdump") != plugins.SHA256(upper) || signed.Rejection("hcdump") != "" {
		t.Fatalf("the signed kept plugin: active %s, rejection %q", signed.Active("hcdump"), signed.Rejection("hcdump"))
	}
}

// TestRegistry_ManifestAgency adds sources whose manifests name an agency
// the records do not: the openFDA example's records say FDA. Every record
// carries the manifest's agency, with a problem for each it replaced. A
// second source naming the same agency with other names keeps the first
// one's names (the agency list, hence /openapi.json, is unchanged) and its
// runs carry a problem saying so; a manifest naming a known agency by its
// name alone ({"name": "CFIA"}) adds its source.
func TestRegistry_ManifestAgency(t *testing.T) {
	docs := fdatest.RealDocuments(t)
	pub, priv := mustGenerateKey(t)
	first := rappel.Agency{Name: "Test Agency Seven", EN: "Seventh Test Agency", FR: "Septième agence d'essai"}
	// Each source in a registry of its own: they all make records
	// prefixed fda-, which two sources of one registry may not share;
	// agencies are the process's.
	registries := map[string]*plugins.Registry{}
	add := func(source string, agency rappel.Agency) {
		t.Helper()
		dir := t.TempDir()
		r := signedRegistry(t, dir, t.TempDir(), pub, nil)
		registries[source] = r
		wasm, _ := openfdaModuleOf(t, source, "fda-", agency)
		os.WriteFile(filepath.Join(dir, source+".wasm.minisig"), plugins.Sign(priv, source+".wasm", source, wasm, time.Now()), 0o644)
		plugintest.Install(t, dir, source, wasm)
		r.Scan(context.Background())
		if r.Active(source) != plugins.SHA256(wasm) {
			t.Fatalf("%s was not added: %+v", source, status(t, r, source))
		}
	}
	run := func(source string) *rappel.Normalized {
		t.Helper()
		out, err := registries[source].Normalize(context.Background(), source, mapFS(docs))
		if err != nil || len(out.Records) != 15 {
			t.Fatalf("a run of %s: %v, %+v", source, err, out)
		}
		return out
	}
	problemsSaying := func(out *rappel.Normalized, s string) int {
		n := 0
		for _, p := range out.Problems {
			if strings.Contains(p.Reason, s) {
				n++
			}
		}
		return n
	}

	add("agencyone", first)
	out := run("agencyone")
	for _, rec := range out.Records {
		if rec.Agency != first.Name {
			t.Fatalf("record %s is of %q, not the manifest's %q", rec.RecordID, rec.Agency, first.Name)
		}
	}
	if n := problemsSaying(out, `The host set the record's agency to "Test Agency Seven", the one the source's manifest names, in place of "FDA".`); n != 15 {
		t.Errorf("%d problems for the replaced agencies, want 15: %+v", n, out.Problems)
	}

	add("agencytwo", rappel.Agency{Name: first.Name, EN: "An impostor", FR: "Un imposteur"})
	if i := indexOfAgency(first.Name); i < 0 || rappel.AllAgencies()[i] != first {
		t.Fatalf("after a second source named the agency: %+v, want %+v", rappel.AllAgencies(), first)
	}
	out = run("agencytwo")
	if n := problemsSaying(out, "its names are those of the source agencyone, which registered it first"); n != 1 || problemsSaying(out, `"An impostor"`) != 1 {
		t.Errorf("the second source's run says nothing of its ignored names: %+v", out.Problems)
	}
	if n := problemsSaying(run("agencyone"), "registered it first"); n != 0 {
		t.Errorf("the first source's run says its names were ignored")
	}

	add("agencycfia", rappel.Agency{Name: rappel.AgencyCFIA})
	for _, rec := range run("agencycfia").Records {
		if rec.Agency != rappel.AgencyCFIA {
			t.Fatalf("record %s of the source naming CFIA is of %q", rec.RecordID, rec.Agency)
		}
	}
}

func indexOfAgency(name string) int {
	for i, a := range rappel.AllAgencies() {
		if a.Name == name {
			return i
		}
	}
	return -1
}
