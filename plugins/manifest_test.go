package plugins_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// testManifest is a manifest for a new source of a new agency.
func testManifest() *plugins.Manifest {
	return &plugins.Manifest{
		Source:         "newsource",
		Agency:         rappelAgency("Manifest Test Agency"),
		RecordIDPrefix: "mta-",
		Documents:      []plugins.ManifestDocument{{Name: "recalls.json", URL: "https://example.org/recalls.json"}},
		Interval:       "1h",
	}
}

func TestManifest_EmbedAndRead(t *testing.T) {
	wasm := plugintest.Build(t, guests+"upper")
	m := testManifest()
	with, err := plugins.EmbedManifest(wasm, m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := plugins.ReadManifest(with)
	if err != nil || got == nil {
		t.Fatalf("ReadManifest = %v, %v", got, err)
	}
	if got.Source != "newsource" || got.Merge != plugins.MergeOwn || got.Documents[0].Format != "json" ||
		got.Documents[0].MaxBytes != plugins.DefaultDocumentMax || got.ConditionalGet == nil || !*got.ConditionalGet {
		t.Fatalf("read back with its defaults: %+v", got)
	}
	// Embedding again replaces the section; the module still loads and
	// runs like the one without it.
	m.Interval = "2h"
	again, err := plugins.EmbedManifest(with, m)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(again, []byte(plugins.ManifestSection)); n != 1 {
		t.Fatalf("%d manifest sections after embedding twice", n)
	}
	if got, _ := plugins.ReadManifest(again); got.Interval != "2h" {
		t.Fatalf("interval %q after embedding again", got.Interval)
	}
	h := MustOpenHost(t)
	p, err := h.Load(context.Background(), "newsource", again)
	if err != nil {
		t.Fatalf("a module with a manifest does not load: %v", err)
	}
	defer p.Close(context.Background())
	if none, err := plugins.ReadManifest(wasm); none != nil || err != nil {
		t.Fatalf("a module without a manifest: %v, %v", none, err)
	}
}

func TestManifest_Refused(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"unknown field", `{"source":"abc","sourse":"x"}`, "unknown field"},
		{"bad source", `{"source":"A B"}`, "lower-case letters"},
		{"bad merge", `{"source":"abc","merge":"join"}`, "merge"},
		{"no prefix", `{"source":"abc","agency":{"name":"CFIA"}}`, "record_id_prefix"},
		{"unknown agency without names", `{"source":"abc","record_id_prefix":"a-","agency":{"name":"Nowhere Agency"}}`, "English"},
		{"no documents", `{"source":"abc","record_id_prefix":"a-","agency":{"name":"CFIA"}}`, "documents"},
		{"ftp", `{"source":"abc","record_id_prefix":"a-","agency":{"name":"CFIA"},"documents":[{"name":"a.json","url":"ftp://x/a"}]}`, "http or https"},
		{"twice", `{"source":"abc","record_id_prefix":"a-","agency":{"name":"CFIA"},"documents":[{"name":"a.json","url":"https://x/a"},{"name":"a.json","url":"https://x/b"}]}`, "twice"},
		{"format", `{"source":"abc","record_id_prefix":"a-","agency":{"name":"CFIA"},"documents":[{"name":"a","url":"https://x/a","format":"pdf"}]}`, "format"},
		{"interval", `{"source":"abc","record_id_prefix":"a-","agency":{"name":"CFIA"},"documents":[{"name":"a","url":"https://x/a"}],"interval":"5s"}`, "minute"},
		{"two objects", `{"source":"abc"} {}`, "more after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := plugins.ParseManifest([]byte(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseManifest(%s) = %v; want an error saying %q", tc.json, err, tc.want)
			}
		})
	}
	ok := `{"source":"abc","record_id_prefix":"a-","agency":{"name":"CFIA"},"documents":[{"name":"a.csv","url":"https://x/a"}]}`
	m, err := plugins.ParseManifest([]byte(ok))
	if err != nil || m.Documents[0].Format != "csv" {
		t.Fatalf("a minimal manifest of a known agency: %+v, %v", m, err)
	}
}

func TestReadManifest_CorruptModules(t *testing.T) {
	wasm := plugintest.Build(t, guests+"upper")
	with, err := plugins.EmbedManifest(wasm, testManifest())
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"not wasm":  []byte("#!/bin/sh\n"),
		"truncated": with[:len(with)-10],
		"two":       append(append([]byte(nil), with...), with[len(wasm):]...),
	} {
		if _, err := plugins.ReadManifest(b); err == nil {
			t.Errorf("%s: ReadManifest succeeded", name)
		}
	}
}

func FuzzReadManifest(f *testing.F) {
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x00\x05\x0frappel"))
	body := `{"source":"abc","record_id_prefix":"a-","agency":{"name":"CFIA"},"documents":[{"name":"a","url":"https://x/a"}]}`
	sec := append([]byte{byte(len(plugins.ManifestSection))}, plugins.ManifestSection...)
	sec = append(sec, body...)
	f.Add(append(append([]byte("\x00asm\x01\x00\x00\x00\x00"), byte(len(sec)), 1), sec...))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := plugins.ReadManifest(b)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		if m == nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("a manifest read back does not validate: %v", err)
		}
	})
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"source":"abc","record_id_prefix":"a-","agency":{"name":"X Y","en":"x","fr":"y"},"documents":[{"name":"a","url":"https://x/a"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := plugins.ParseManifest(b)
		if err != nil {
			return
		}
		again, err := plugins.EmbedManifest([]byte("\x00asm\x01\x00\x00\x00"), m)
		if err != nil {
			t.Fatalf("a valid manifest does not embed: %v", err)
		}
		back, err := plugins.ReadManifest(again)
		if err != nil || back == nil || back.Source != m.Source {
			t.Fatalf("embedded then read: %+v, %v", back, err)
		}
	})
}

func rappelAgency(name string) rappel.Agency {
	return rappel.Agency{Name: name, EN: name + " (English)", FR: name + " (français)"}
}
