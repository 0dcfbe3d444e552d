package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/archive"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// bufferFile is a file of an archive read into memory.
type bufferFile struct {
	bytes.Buffer
	mode int64
}

func (*bufferFile) Close() error { return nil }

// tamperArchive reads the backup at file and writes it again with extra
// files added, its manifest rebuilt: what someone who can write the
// backups, but holds no signing key, could make.
func tamperArchive(t *testing.T, file string, extra map[string][]byte) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*bufferFile{}
	_, err = archive.Read(f, func(name string, mode int64) (io.WriteCloser, error) {
		b := &bufferFile{mode: mode}
		files[name] = b
		return b, nil
	})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range extra {
		files[name] = &bufferFile{Buffer: *bytes.NewBuffer(b), mode: 0o644}
	}
	var out bytes.Buffer
	a := archive.NewWriter(&out, time.Now())
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b := files[name]
		if err := a.Add(name, int64(b.Len()), b.mode, &b.Buffer); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBackup_RestoredUnsignedPluginNotRun backs up, with rappel backup, a
// node running a signed plugin that added a source, adds to the archive an
// unsigned plugin adding another (plugins/active/evil.wasm and evil.json),
// restores it with rappel restore and starts a node on it with
// --plugin-keys: the signed plugin runs (its signature came through the
// backup, beside it), the unsigned one does not, nothing its manifest
// lists is fetched, and /health says why for that source.
func TestBackup_RestoredUnsignedPluginNotRun(t *testing.T) {
	bundleDir, up, dir, pub, key := fdaNode(t)

	fda := &plugins.Manifest{Source: "openfda", RecordIDPrefix: "fda-",
		Agency:    rappel.Agency{Name: "FDA", EN: "U.S. Food and Drug Administration", FR: "Food and Drug Administration des États-Unis"},
		Documents: []plugins.ManifestDocument{{Name: "food.json", URL: up.URL + "/fda/food.json"}, {Name: "drug.json", URL: up.URL + "/fda/drug.json"}}}
	module := plugintest.Build(t, "./plugins/examples/openfda/wasm")
	wasm, err := plugins.EmbedManifest(module, fda)
	if err != nil {
		t.Fatal(err)
	}
	wasmFile := filepath.Join(dir, "openfda.wasm")
	os.WriteFile(wasmFile, wasm, 0o644)
	if err := run(context.Background(), []string{"plugin", "sign", wasmFile, "--key", key}); err != nil {
		t.Fatal(err)
	}
	sig, _ := os.ReadFile(wasmFile + plugins.SignatureSuffix)
	evilManifest := *fda
	evilManifest.Source, evilManifest.Documents = "evil", []plugins.ManifestDocument{{Name: "food.json", URL: up.URL + "/evil/food.json"}}
	evil, err := plugins.EmbedManifest(module, &evilManifest)
	if err != nil {
		t.Fatal(err)
	}

	start := func(dataDir string) (string, func()) {
		c := NewServeCommand()
		if err := c.ParseFlags([]string{
			"--data-dir", dataDir, "--api-keys", "k1", "--feeds", "on",
			"--feed-hc-en", up.URL + "/hc/recalls-en.json", "--feed-hc-fr", up.URL + "/hc/recalls-fr.json",
			"--feed-tc-vrdb", up.URL + "/tc/vrdb.csv", "--feed-detail", up.URL + "/detail/{lang}/{id}.json",
			"--refresh-interval", "1h", "--admin-key", adminKey, "--plugins-dir", t.TempDir(), "--plugin-keys", pub, "--feed-detail-rate", "0",
			"--plugin-documents-allow-loopback", // the manifest's documents are on the loopback upstream
		}); err != nil {
			t.Fatal(err)
		}
		c.Bundle = os.DirFS(bundleDir)
		return serve(t, c)
	}
	base, stop := start(t.TempDir())
	if code, body := putPlugin(t, base, "openfda", wasm, sig); code != 201 {
		t.Fatalf("PUT /admin/plugins/openfda = %d %s", code, body)
	}
	waitFor(t, "the new source refreshed", func() bool { return feed(t, base, "openfda").Records == 15 })

	file := filepath.Join(t.TempDir(), "node.tar")
	bc := NewBackupCommand()
	if err := bc.ParseFlags([]string{"--to", file, "--node", base, "--admin-key", adminKey}); err != nil {
		t.Fatal(err)
	}
	bc.Stdout = io.Discard
	if err := bc.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	stop()
	tamperArchive(t, file, map[string][]byte{
		"plugins/active/evil.wasm": evil,
		"plugins/active/evil.json": []byte(`{"sha256": "` + plugins.SHA256(evil) + `", "since": "2024-01-01T00:00:00Z", "why": "x", "from": "evil.wasm", "bundled": "", "added": true}`),
	})
	restored := filepath.Join(t.TempDir(), "restored")
	if err := restoreInto(file, restored); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(restored, "plugins", "active", "openfda.wasm.minisig")); err != nil {
		t.Fatalf("the backup did not keep the active plugin's signature: %v", err)
	}

	base, _ = start(restored)
	rep := adminPlugins(t, base)
	if a := activeOf(rep, "openfda"); a == nil || a.SHA256 != plugins.SHA256(wasm) {
		t.Fatalf("the signed plugin does not run after the restore: %+v", a)
	}
	if a := activeOf(rep, "evil"); a != nil && a.SHA256 != "" {
		t.Fatalf("the unsigned plugin runs after the restore: %+v", a)
	}
	waitFor(t, "the signed source refreshed", func() bool { return feed(t, base, "openfda").LastSuccess.After(time.Time{}) })
	f := feed(t, base, "evil")
	if f.Source != "evil" || f.Live || f.Records != 0 {
		t.Fatalf("/health on evil: %+v", f)
	}
	for _, want := range []string{"evil.wasm", "no signature", "failed verification", "not refreshed"} {
		if !strings.Contains(f.PluginRejected, want) {
			t.Errorf("/health says %q for evil, without %q", f.PluginRejected, want)
		}
	}
	if got := up.Requests("/evil/"); len(got) != 0 {
		t.Errorf("the unsigned plugin's manifest was fetched: %v", got)
	}
}
