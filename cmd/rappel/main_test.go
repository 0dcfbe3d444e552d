package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/plugins/plugintest"
	"github.com/rappel-ca/rappel/plugins/shipped"
)

// MustBuildBundle normalizes the hand-checked samples in testdata/ through
// the real .wasm plugins with the bundle command and returns the bundle dir.
func MustBuildBundle(tb testing.TB) string {
	tb.Helper()
	return mustBuildBundleAt(tb, "2026-11-01T12:00:00Z")
}

// mustBuildBundleAt is MustBuildBundle with --built-at builtAt, none when
// empty.
func mustBuildBundleAt(tb testing.TB, builtAt string) string {
	tb.Helper()
	root := plugintest.ModuleRoot(tb)
	out := tb.TempDir()
	// The plugins go into the bundle, as `make bundle` puts them.
	pluginsDir := filepath.Join(out, "plugins")
	if err := os.MkdirAll(pluginsDir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for name := range shipped.Sources {
		wasm := plugintest.Build(tb, "./plugins/"+name+"/wasm")
		if err := os.WriteFile(filepath.Join(pluginsDir, name+".wasm"), wasm, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	c := NewBundleCommand()
	c.Corpus = filepath.Join(root, "testdata")
	c.PluginsDir = pluginsDir
	c.Out = out
	c.BuiltAt = builtAt
	if err := c.Run(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return out
}

// serve runs a ServeCommand until the test ends and returns its base URL.
// Its logs are dropped unless c has a Logger.
func serve(tb testing.TB, c *ServeCommand) (base string, stop func()) {
	tb.Helper()
	ready := make(chan net.Addr, 1)
	c.Addr = "127.0.0.1:0"
	c.Ready = func(a net.Addr) { ready <- a }
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	select {
	case a := <-ready:
		base = "http://" + a.String()
	case err := <-done:
		tb.Fatalf("serve ended before listening: %v", err)
	case <-time.After(60 * time.Second):
		tb.Fatal("serve did not start listening")
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("serve: %v", err)
		}
	}
	tb.Cleanup(stop)
	return base, stop
}

func get(tb testing.TB, url, key string) (int, []byte) {
	tb.Helper()
	h := http.Header{}
	if key != "" {
		h.Set("x-gateway-key", key)
	}
	return send(tb, http.MethodGet, url, h, nil)
}

// send sends a request with header and body (nil for none) and returns
// the answer's status and body.
func send(tb testing.TB, method, url string, header http.Header, body io.Reader) (int, []byte) {
	tb.Helper()
	req, _ := http.NewRequest(method, url, body)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestServe_EndToEnd(t *testing.T) {
	bundleDir := MustBuildBundle(t)
	m, err := bundle.ReadManifest(os.DirFS(bundleDir))
	if err != nil {
		t.Fatal(err)
	}
	var first, withUPC *rappel.Record
	var upc string
	_ = bundle.ReadRecords(os.DirFS(bundleDir), func(r *rappel.Record) error {
		if first == nil {
			first = r
		}
		for _, p := range r.ProductList {
			if _, err := rappel.ParseGTIN(p.UPC); err == nil && withUPC == nil {
				withUPC, upc = r, p.UPC
			}
		}
		return nil
	})
	if first == nil || m.Records == 0 {
		t.Fatalf("the sample bundle is empty: %+v", m)
	}
	dataDir := t.TempDir()
	c := NewServeCommand()
	c.DataDir, c.APIKeys, c.Bundle = dataDir, "k1,k2", os.DirFS(bundleDir)
	base, stop := serve(t, c)

	t.Run("Record", func(t *testing.T) {
		code, body := get(t, base+"/recall/"+first.RecordID, "k2")
		var got rappel.Record
		if code != 200 || json.Unmarshal(body, &got) != nil || got.RecordID != first.RecordID {
			t.Fatalf("GET record = %d %s", code, body)
		}
	})
	t.Run("Lookups", func(t *testing.T) {
		// The store is wired as the server's Lookup.
		if withUPC == nil {
			t.Fatal("no record of the sample bundle has a valid product barcode")
		}
		code, body := get(t, base+"/recall/upc?upc="+url.QueryEscape(upc), "k1")
		if code != 200 || !strings.Contains(string(body), `"record_id":"`+withUPC.RecordID+`"`) {
			t.Fatalf("GET /recall/upc?upc=%s = %d %s", upc, code, body)
		}
		if code, body := get(t, base+"/recall/vin?vin=4T1BB3EK5AU118081", "k1"); code != 200 {
			t.Fatalf("GET /recall/vin = %d %s", code, body)
		}
		if code, body := get(t, base+"/recall/stats?period=all", "k1"); code != 200 || !strings.Contains(string(body), fmt.Sprintf(`"total":%d,`, m.Records)) {
			t.Fatalf("GET /recall/stats = %d %s", code, body)
		}
	})
	t.Run("NoKey", func(t *testing.T) {
		code, body := get(t, base+"/recall/"+first.RecordID, "")
		if code != 403 || strings.TrimSpace(string(body)) != `{"detail":"Missing API key: send it in the x-gateway-key header."}` {
			t.Fatalf("GET without key = %d %s", code, body)
		}
	})
	t.Run("Health", func(t *testing.T) {
		code, body := get(t, base+"/health", "")
		var h struct {
			Status  string `json:"status"`
			Records int    `json:"records"`
		}
		if code != 200 || json.Unmarshal(body, &h) != nil || h.Records != m.Records || h.Status != "ok" {
			t.Fatalf("GET /health = %d %s", code, body)
		}
	})
	stop()

	// A second start opens the existing store: it must not need the bundle.
	c2 := NewServeCommand()
	c2.DataDir, c2.APIKeys, c2.Bundle = dataDir, "k1", os.DirFS(t.TempDir())
	base2, _ := serve(t, c2)
	if code, body := get(t, base2+"/recall/"+first.RecordID, "k1"); code != 200 {
		t.Fatalf("after restart GET record = %d %s", code, body)
	}
}

func TestServe_EmptyBundle(t *testing.T) {
	c := NewServeCommand()
	c.DataDir, c.Bundle = t.TempDir(), os.DirFS(t.TempDir())
	c.Logger = slog.New(slog.DiscardHandler)
	err := c.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "make build") {
		t.Fatalf("err = %v, want a sentence saying how to build a bundle", err)
	}
}

func TestParseFlags_Environment(t *testing.T) {
	t.Setenv("RAPPEL_DATA_DIR", "/from/env")
	t.Setenv("RAPPEL_ADDR", "127.0.0.1:9")
	c := NewServeCommand()
	if err := c.ParseFlags([]string{"--addr", "127.0.0.1:7"}); err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/from/env" || c.Addr != "127.0.0.1:7" {
		t.Fatalf("DataDir %q Addr %q: the environment should fill, the command line win", c.DataDir, c.Addr)
	}
	if err := NewServeCommand().ParseFlags([]string{"--feeds", "sometimes"}); err == nil {
		t.Fatal("--feeds sometimes accepted")
	}
}
