package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rappel-ca/rappel/bundle/synth"
	"github.com/rappel-ca/rappel/plugins/plugintest"
	"github.com/rappel-ca/rappel/plugins/shipped"
)

// TestBundle_NativeMatchesWasm runs each shipped plugin twice on the same
// corpora, the hand-checked samples in testdata/ and a synthetic corpus of
// the bundle's seed and reference date: as its real .wasm module through
// wazero, as the live feeds run it, and natively, as `rappel bundle` runs
// it. The records and problems must be the same bytes, since the bundle's
// manifest names the module as their maker; a change that makes the two
// builds of a normalizer disagree (a build tag, a platform difference)
// fails here.
func TestBundle_NativeMatchesWasm(t *testing.T) {
	synthetic := filepath.Join(t.TempDir(), "corpus")
	ref := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	if _, err := synth.Generate(synthetic, synth.Config{Seed: 1, ReferenceDate: ref, Scale: 0.05}); err != nil {
		t.Fatal(err)
	}
	corpora := map[string]string{"testdata": filepath.Join(plugintest.ModuleRoot(t), "testdata"), "synthetic": synthetic}
	ctx := context.Background()
	wasmHost := bundleHost(slog.LevelError)
	wasmHost.CacheDir = filepath.Join(t.TempDir(), "cache")
	if err := wasmHost.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer wasmHost.Close(ctx)
	nativeHost := bundleHost(slog.LevelError)
	for name, src := range shipped.Sources {
		dir := src.CorpusDir
		wasm := plugintest.Build(t, "./plugins/"+name+"/wasm")
		compiled, err := wasmHost.Load(ctx, name, wasm)
		if err != nil {
			t.Fatal(err)
		}
		native := nativeHost.LoadNative(name, wasm, src.Normalize)
		if native.SHA256 != compiled.SHA256 {
			t.Errorf("%s: the native plugin is named %s, its module %s", name, native.SHA256, compiled.SHA256)
		}
		for corpus, root := range corpora {
			input := os.DirFS(filepath.Join(root, dir))
			want, err := compiled.Run(ctx, input)
			if err != nil {
				t.Fatalf("%s on %s through wazero: %v", name, corpus, err)
			}
			got, err := native.Run(ctx, input)
			if err != nil {
				t.Fatalf("%s on %s natively: %v", name, corpus, err)
			}
			if len(want.Records) == 0 {
				t.Fatalf("%s on %s gave no records through wazero, so there is nothing to compare", name, corpus)
			}
			compareRuns(t, name+" on "+corpus, "records", want.Records, got.Records)
			compareRuns(t, name+" on "+corpus, "problems", want.Problems, got.Problems)
		}
	}
}

// compareRuns fails t unless want and got, a Wasm run's and a native run's
// records or problems, encode to the same JSON lines; it names the first
// line that differs.
func compareRuns[T any](t *testing.T, run, what string, want, got []T) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%s: %d %s through wazero, %d natively", run, len(want), what, len(got))
		return
	}
	for i := range want {
		w, err := json.Marshal(want[i])
		if err != nil {
			t.Fatal(err)
		}
		g, err := json.Marshal(got[i])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w, g) {
			t.Errorf("%s: %s %d differs:\nwazero: %s\nnative: %s", run, what, i, w, g)
			return
		}
	}
}
