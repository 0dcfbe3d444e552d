package plugins

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aead.dev/minisign"
)

// mustKey generates a real key pair.
func mustKey(tb testing.TB) (minisign.PublicKey, minisign.PrivateKey) {
	tb.Helper()
	pub, priv, err := minisign.GenerateKey(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return pub, priv
}

// keysFile is a trusted keys file listing pubs, with comments.
func keysFile(tb testing.TB, pubs ...minisign.PublicKey) []byte {
	tb.Helper()
	var b strings.Builder
	b.WriteString("# plugin signers\n\n")
	for _, p := range pubs {
		text, err := p.MarshalText() // with minisign's untrusted comment line
		if err != nil {
			tb.Fatal(err)
		}
		b.Write(text)
		b.WriteString("\n")
	}
	return []byte(b.String())
}

var testWasm = []byte("\x00asm\x01\x00\x00\x00 a plugin")

func TestVerify(t *testing.T) {
	pub, priv := mustKey(t)
	otherPub, otherPriv := mustKey(t)
	v, err := ParseTrustedKeys(keysFile(t, pub))
	if err != nil {
		t.Fatal(err)
	}
	sig := Sign(priv, "vrdb.wasm", "vrdb", testWasm, time.Unix(1700000000, 0))

	t.Run("RoundTrip", func(t *testing.T) {
		if err := v.Verify("vrdb", testWasm, sig); err != nil {
			t.Fatal(err)
		}
		// The library's own check agrees: the file is minisign's format.
		if !minisign.Verify(pub, testWasm, sig) {
			t.Fatal("minisign.Verify refused the signature")
		}
	})
	refused := func(t *testing.T, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Fatal("accepted")
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q lacks %q", err, w)
			}
		}
	}
	t.Run("Tampered", func(t *testing.T) {
		tampered := append([]byte{}, testWasm...)
		tampered[len(tampered)-1] ^= 1
		refused(t, v.Verify("vrdb", tampered, sig), "does not match", KeyID(pub.ID()), "sign this file again")
	})
	t.Run("TamperedComment", func(t *testing.T) {
		// The trusted comment is signed too: editing the source in it fails.
		edited := strings.Replace(string(sig), "source:vrdb", "source:hcdump", 1)
		refused(t, v.Verify("hcdump", testWasm, []byte(edited)), "does not match")
	})
	t.Run("UntrustedKey", func(t *testing.T) {
		other := Sign(otherPriv, "vrdb.wasm", "vrdb", testWasm, time.Now())
		refused(t, v.Verify("vrdb", testWasm, other), "signed by key "+KeyID(otherPub.ID()), "not a trusted key", KeyID(pub.ID()), "--plugin-keys")
	})
	t.Run("OtherSource", func(t *testing.T) {
		refused(t, v.Verify("hcdump", testWasm, sig), `signed as a plugin for source "vrdb", not "hcdump"`)
	})
	t.Run("Malformed", func(t *testing.T) {
		for _, bad := range []string{"", "hello", "untrusted comment: x\nRWQ!!\ntrusted comment: y\nAAAA\n", string(sig[:len(sig)/2])} {
			refused(t, v.Verify("vrdb", testWasm, []byte(bad)), "not a minisign signature", "rappel plugin sign")
		}
	})
	t.Run("Unsigned", func(t *testing.T) {
		err := v.Verify("vrdb", testWasm, nil)
		refused(t, err, "no signature beside it (vrdb.wasm.minisig)", "rappel plugin sign")
		if !errors.Is(err, ErrUnsigned) {
			t.Errorf("err = %v, not ErrUnsigned", err)
		}
		dev := *v
		dev.AllowUnsigned = true
		if err := dev.Verify("vrdb", testWasm, nil); err != nil {
			t.Errorf("allowed unsigned: %v", err)
		}
		// A signature that is there is checked all the same.
		refused(t, dev.Verify("vrdb", testWasm, []byte("junk")), "not a minisign signature")
	})
	t.Run("File", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "vrdb.wasm"), testWasm, 0o644); err != nil {
			t.Fatal(err)
		}
		refused(t, v.VerifyFile(filepath.Join(dir, "vrdb.wasm"), "vrdb", testWasm), "vrdb.wasm: it has no signature")
		os.WriteFile(filepath.Join(dir, "vrdb.wasm.minisig"), sig, 0o644)
		if err := v.VerifyFile(filepath.Join(dir, "vrdb.wasm"), "vrdb", testWasm); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSign_Format checks that what Sign writes is minisign's signature
// file: an untrusted comment, the prehashed algorithm ("ED"), the trusted
// comment naming the file, its SHA-256 and the source, and the comment's
// signature.
func TestSign_Format(t *testing.T) {
	_, priv := mustKey(t)
	sig := string(Sign(priv, "vrdb.wasm", "vrdb", testWasm, time.Unix(1700000000, 0)))
	lines := strings.Split(strings.TrimSuffix(sig, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines:\n%s", len(lines), sig)
	}
	raw, _ := base64.StdEncoding.DecodeString(lines[1])
	if !strings.HasPrefix(lines[0], "untrusted comment: ") || !bytes.HasPrefix(raw, []byte("ED")) {
		t.Errorf("not a prehashed minisign signature:\n%s", sig)
	}
	want := "trusted comment: timestamp:1700000000\tfile:vrdb.wasm\tsha256:" + SHA256(testWasm) + "\tsource:vrdb"
	if lines[2] != want {
		t.Errorf("trusted comment = %q, want %q", lines[2], want)
	}
	var s minisign.Signature
	if err := s.UnmarshalText([]byte(sig)); err != nil || s.Algorithm != minisign.HashEdDSA || s.KeyID != priv.ID() {
		t.Errorf("parsed %+v, %v", s, err)
	}
}

// TestSign_MinisignTool verifies a signature with the minisign program,
// where it is installed: "minisign -Vm" must accept what Sign writes.
func TestSign_MinisignTool(t *testing.T) {
	tool, err := exec.LookPath("minisign")
	if err != nil {
		t.Skip("minisign is not installed")
	}
	pub, priv := mustKey(t)
	dir := t.TempDir()
	wasm, pubFile := filepath.Join(dir, "vrdb.wasm"), filepath.Join(dir, "key.pub")
	pubText, _ := pub.MarshalText()
	os.WriteFile(wasm, testWasm, 0o644)
	os.WriteFile(pubFile, pubText, 0o644)
	os.WriteFile(wasm+SignatureSuffix, Sign(priv, "vrdb.wasm", "vrdb", testWasm, time.Now()), 0o644)
	out, err := exec.Command(tool, "-Vm", wasm, "-p", pubFile).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "source:vrdb") {
		t.Fatalf("minisign -Vm: %v\n%s", err, out)
	}
}

func TestParseTrustedKeys(t *testing.T) {
	pub1, _ := mustKey(t)
	pub2, _ := mustKey(t)
	v, err := ParseTrustedKeys(append(keysFile(t, pub1), "# another\n"+pub2.String()+"\n"...))
	if err != nil {
		t.Fatal(err)
	}
	if len(v.KeyIDs()) != 2 {
		t.Errorf("keys = %v", v.KeyIDs())
	}
	for text, want := range map[string]string{
		"":                    "lists no public key",
		"# only a comment\n":  "lists no public key",
		"RWQnot-a-key\n":      "line 1 is not a minisign public key",
		"# ok\n\nhello there": "line 3 is not a minisign public key",
	} {
		if _, err := ParseTrustedKeys([]byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTrustedKeys(%q) = %v, want %q", text, err, want)
		}
	}
	if _, err := LoadTrustedKeys(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("an absent file was accepted")
	}
}

// FuzzVerify feeds arbitrary trusted keys files and signature files: the
// parsers must refuse what is not theirs with an error, never panic, and
// never accept a signature that is not the trusted key's.
func FuzzVerify(f *testing.F) {
	pub, priv := mustKey(f)
	f.Add(keysFile(f, pub), Sign(priv, "vrdb.wasm", "vrdb", testWasm, time.Unix(1, 0)))
	f.Add([]byte("# nothing\n"), []byte("untrusted comment: x\n\ntrusted comment: \n\n"))
	f.Add([]byte(pub.String()), []byte("untrusted comment: \nRUQAAAAAAAAAAA==\ntrusted comment: source:\t\n==\n"))
	f.Fuzz(func(t *testing.T, keys, sig []byte) {
		if v, err := ParseTrustedKeys(keys); err == nil {
			_ = v.Verify("vrdb", testWasm, sig)
		}
		trusted := NewVerifier(pub)
		if err := trusted.Verify("vrdb", []byte("other bytes"), sig); err == nil {
			t.Fatalf("accepted a signature of other bytes:\n%q", sig)
		}
	})
}

// TestVerify_TrustedCommentNamesSourceAndModule: a signature whose trusted
// comment does not name the source and the module's SHA-256 (a plain
// "minisign -S", whose comment names only the file), or names another
// module, is refused with a sentence that says how to sign, though the
// signature itself is good.
func TestVerify_TrustedCommentNamesSourceAndModule(t *testing.T) {
	pub, priv := mustKey(t)
	v, err := ParseTrustedKeys(keysFile(t, pub))
	if err != nil {
		t.Fatal(err)
	}
	sign := func(comment string) []byte {
		r := minisign.NewReader(bytes.NewReader(testWasm))
		io.Copy(io.Discard, r)
		return r.SignWithComments(priv, comment, "plain")
	}
	for comment, want := range map[string]string{
		"timestamp:1700000000\tfile:vrdb.wasm":                                        "does not name the source",
		"timestamp:1700000000\tfile:vrdb.wasm\tsource:hcdump":                         "does not name the source",
		"timestamp:1700000000\tsha256:" + SHA256([]byte("other")) + "\tsource:hcdump": "names the module",
		"timestamp:1700000000\tsha256:" + SHA256(testWasm) + "\tsource:vrdb":          "signed as a plugin for source \"vrdb\"",
	} {
		if err := v.Verify("hcdump", testWasm, sign(comment)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("trusted comment %q: %v, want %q", comment, err, want)
		}
	}
	if err := v.Verify("hcdump", testWasm, sign("timestamp:1\tsha256:"+SHA256(testWasm)+"\tsource:hcdump")); err != nil {
		t.Errorf("a comment naming the source and the module: %v", err)
	}
}
