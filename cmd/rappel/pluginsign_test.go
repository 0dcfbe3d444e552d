package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// keygen runs "rappel plugin keygen" writing dir/name.pub and dir/name.key.
func keygen(tb testing.TB, dir, name string, args ...string) (pub, key string) {
	tb.Helper()
	pub, key = filepath.Join(dir, name+".pub"), filepath.Join(dir, name+".key")
	if err := run(context.Background(), append([]string{"plugin", "keygen", "--pub", pub, "--key", key}, args...)); err != nil {
		tb.Fatal(err)
	}
	return pub, key
}

// TestPluginSign signs a real plugin with keys "rappel plugin keygen"
// wrote, and checks it as the server would, with "rappel plugin test
// --plugin-keys": the signed plugin passes; changed bytes, another key's
// signature and a broken signature file are refused with what to do.
func TestPluginSign(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(passwordEnv, "correct horse")
	pub, key := keygen(t, dir, "signer")
	otherPub, otherKey := keygen(t, dir, "other", "--unencrypted")
	keyText, _ := os.ReadFile(key)
	otherText, _ := os.ReadFile(otherKey)
	if !strings.Contains(string(keyText), "encrypted secret key") || string(keyText) == string(otherText) {
		t.Fatalf("secret keys:\n%s\n%s", keyText, otherText)
	}
	if info, _ := os.Stat(key); info.Mode().Perm() != 0o600 {
		t.Errorf("secret key mode %v", info.Mode())
	}
	if err := run(context.Background(), []string{"plugin", "keygen", "--pub", pub, "--key", key}); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("overwrote a key: %v", err)
	}

	// The trusted keys file: the .pub file as it is, with a comment.
	pubText, _ := os.ReadFile(pub)
	trusted := filepath.Join(dir, "trusted.keys")
	os.WriteFile(trusted, append([]byte("# plugin signers\n"), pubText...), 0o644)

	root := plugintest.ModuleRoot(t)
	hc := filepath.Join(root, "testdata", "hc")
	cache := filepath.Join(dir, "cache")
	wasm := mustWasmFile(t, dir, "hcdump.wasm", "./plugins/hcdump/wasm")
	test := func(t *testing.T, wasm string) (string, error) {
		return runPluginTest(t, wasm, "--input", hc, "--cache-dir", cache, "--plugin-keys", trusted)
	}
	refused := func(t *testing.T, out string, err error, want string) {
		t.Helper()
		if !errors.Is(err, errRejected) || !strings.Contains(out, want) {
			t.Fatalf("err = %v, want a rejection saying %q:\n%s", err, want, out)
		}
	}

	out, err := test(t, wasm)
	refused(t, out, err, "no signature beside it")
	if out, _ := runPluginTest(t, wasm, "--input", hc, "--cache-dir", cache); !strings.Contains(out, "signature unsigned") {
		t.Errorf("without --plugin-keys:\n%s", out)
	}

	if err := run(context.Background(), []string{"plugin", "sign", wasm, "--key", key}); err != nil {
		t.Fatal(err)
	}
	out, err = test(t, wasm)
	if err != nil || !strings.Contains(out, "signature signed by a trusted key") || !strings.Contains(out, "verdict   accepted") {
		t.Fatalf("signed plugin: %v\n%s", err, out)
	}
	sig, _ := os.ReadFile(wasm + plugins.SignatureSuffix)
	if !strings.Contains(string(sig), "sha256:"+plugins.SHA256(mustRead(t, wasm))+"\tsource:hcdump") {
		t.Errorf("signature's trusted comment:\n%s", sig)
	}

	t.Run("Tampered", func(t *testing.T) {
		b := mustRead(t, wasm)
		tampered := filepath.Join(dir, "tampered", "hcdump.wasm")
		os.MkdirAll(filepath.Dir(tampered), 0o755)
		os.WriteFile(tampered, append(b, 0), 0o644)
		os.WriteFile(tampered+plugins.SignatureSuffix, sig, 0o644)
		out, err := test(t, tampered)
		refused(t, out, err, "does not match it")
	})
	t.Run("UntrustedKey", func(t *testing.T) {
		other := filepath.Join(dir, "other", "hcdump.wasm")
		os.MkdirAll(filepath.Dir(other), 0o755)
		os.WriteFile(other, mustRead(t, wasm), 0o644)
		if err := run(context.Background(), []string{"plugin", "sign", other, "--key", otherKey}); err != nil {
			t.Fatal(err)
		}
		otherPubText, _ := os.ReadFile(otherPub)
		id := strings.TrimSpace(strings.TrimPrefix(strings.Split(string(otherPubText), "\n")[0], "untrusted comment: minisign public key: "))
		out, err := test(t, other)
		refused(t, out, err, "is not a trusted key")
		if !strings.Contains(out, strings.Repeat("0", 16-len(id))+id) {
			t.Errorf("the refusal does not name key %s:\n%s", id, out)
		}
	})
	t.Run("Malformed", func(t *testing.T) {
		bad := filepath.Join(dir, "bad", "hcdump.wasm")
		os.MkdirAll(filepath.Dir(bad), 0o755)
		os.WriteFile(bad, mustRead(t, wasm), 0o644)
		os.WriteFile(bad+plugins.SignatureSuffix, []byte("untrusted comment: hello\nnot base64\n"), 0o644)
		out, err := test(t, bad)
		refused(t, out, err, "is not a minisign signature")
	})
	t.Run("WrongPassword", func(t *testing.T) {
		t.Setenv(passwordEnv, "wrong")
		err := run(context.Background(), []string{"plugin", "sign", wasm, "--key", key})
		if err == nil || !strings.Contains(err.Error(), "password is wrong") {
			t.Errorf("err = %v", err)
		}
	})
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestServe_PluginKeys checks that a watched plugins directory needs
// trusted keys (or the development switch), and that a keys file that is
// not one stops the server at start with the line at fault.
func TestServe_PluginKeys(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.keys")
	os.WriteFile(junk, []byte("# keys\nnot a key\n"), 0o644)
	pub, _ := keygen(t, dir, "signer", "--unencrypted")
	base := []string{"--data-dir", dir, "--feeds", "on", "--plugins-dir", dir}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--plugins-dir needs --plugin-keys FILE"},
		{[]string{"--plugin-keys", junk}, "line 2 is not a minisign public key"},
		{[]string{"--plugin-keys", filepath.Join(dir, "absent")}, "reading the trusted plugin keys"},
		{[]string{"--plugin-keys", pub}, ""},
		{[]string{"--plugins-allow-unsigned"}, ""},
	} {
		err := NewServeCommand().ParseFlags(append(base, c.args...))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: err = %v, want %q", c.args, err, c.want)
		}
	}
}
