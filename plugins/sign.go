package plugins

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"aead.dev/minisign"
)

// A plugin from --plugins-dir runs inside the server and writes the
// records it serves, so the server must know who built it: a candidate
// goes live only with a minisign signature (<file>.minisig beside it) by
// one of the keys the operator trusts. Minisign's format is kept as is so
// that "minisign -Vm FILE.wasm -p KEY.pub" verifies what "rappel plugin
// sign" writes, and a plugin signed with minisign itself is accepted. The
// bundled plugins are part of the binary and trusted with it.

// SignatureSuffix is appended to a plugin's file name to name its signature.
const SignatureSuffix = ".minisig"

// Verifier checks plugins' signatures against the trusted public keys.
type Verifier struct {
	// keys are the trusted keys by key id.
	keys map[uint64]minisign.PublicKey
	// AllowUnsigned accepts a plugin without a signature file: for
	// development only. A signature that is there is still checked.
	AllowUnsigned bool
}

// NewVerifier returns a Verifier trusting keys.
func NewVerifier(keys ...minisign.PublicKey) *Verifier {
	v := &Verifier{keys: make(map[uint64]minisign.PublicKey, len(keys))}
	for _, k := range keys {
		v.keys[k.ID()] = k
	}
	return v
}

// ParseTrustedKeys reads a trusted keys file: one minisign public key (the
// base64 line of a minisign .pub file) a line. Blank lines, lines starting
// with # and minisign's "untrusted comment:" lines are skipped, so .pub
// files can be concatenated into it as they are.
func ParseTrustedKeys(text []byte) (*Verifier, error) {
	v := NewVerifier()
	for i, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "untrusted comment:") {
			continue
		}
		var k minisign.PublicKey
		if err := k.UnmarshalText([]byte(line)); err != nil {
			return nil, fmt.Errorf("line %d is not a minisign public key (%s); give the base64 line of a minisign .pub file, as \"rappel plugin keygen\" or \"minisign -G\" write it, or start the line with # for a comment", i+1, trimLibPrefix(err))
		}
		v.keys[k.ID()] = k
	}
	if len(v.keys) == 0 {
		return nil, errors.New("it lists no public key; add the base64 line of each trusted key's .pub file, one a line")
	}
	return v, nil
}

// LoadTrustedKeys reads the trusted keys file at path (ParseTrustedKeys).
func LoadTrustedKeys(path string) (*Verifier, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the trusted plugin keys: %w", err)
	}
	v, err := ParseTrustedKeys(b)
	if err != nil {
		return nil, fmt.Errorf("the trusted plugin keys file %s: %w", path, err)
	}
	return v, nil
}

// KeyIDs lists the trusted keys' ids as minisign prints them.
func (v *Verifier) KeyIDs() []string {
	ids := make([]string, 0, len(v.keys))
	for id := range v.keys {
		ids = append(ids, KeyID(id))
	}
	sort.Strings(ids)
	return ids
}

// KeyID formats a key id as minisign prints it: 16 upper-case hex digits.
func KeyID(id uint64) string { return fmt.Sprintf("%016X", id) }

// ErrUnsigned is wrapped by Verify's error when there is no signature.
var ErrUnsigned = errors.New("no signature")

// Verify checks sig, the contents of the plugin's .minisig file (nil when
// there is none), for the plugin wasm of source. The error is a sentence
// that completes "the plugin was not activated: ", saying what is wrong
// and how to fix it.
func (v *Verifier) Verify(source string, wasm, sig []byte) error {
	if sig == nil {
		if v.AllowUnsigned {
			return nil
		}
		return fmt.Errorf("it has %w beside it (%s.wasm%s): sign it with \"rappel plugin sign\" and a key listed in the trusted keys (--plugin-keys), and put the signature file in place before the plugin", ErrUnsigned, source, SignatureSuffix)
	}
	var s minisign.Signature
	if err := s.UnmarshalText(sig); err != nil {
		return fmt.Errorf("its signature file is not a minisign signature (%s); write it again with \"rappel plugin sign\" or \"minisign -S\"", trimLibPrefix(err))
	}
	key, ok := v.keys[s.KeyID]
	if !ok {
		return fmt.Errorf("it is signed by key %s, which is not a trusted key (the trusted keys are %s): add that key's public key to the --plugin-keys file, or sign the plugin with a trusted key", KeyID(s.KeyID), orNone(v.KeyIDs()))
	}
	if !minisign.Verify(key, wasm, sig) {
		return fmt.Errorf("its signature by key %s does not match it: the file changed after it was signed, or the signature belongs to another file; sign this file again", KeyID(s.KeyID))
	}
	// The trusted comment is signed with the module: it must say which
	// source the signer meant and which module, or a signature made for
	// any file (a plain "minisign -S") would pass for every source's.
	signed, sum := commentField(s.TrustedComment, "source"), commentField(s.TrustedComment, "sha256")
	switch {
	case signed == "" || sum == "":
		return fmt.Errorf("its signature's trusted comment does not name the source and the module's SHA-256 (it says %q); sign it with \"rappel plugin sign --source %s\", or with minisign -S -t \"source:%s\tsha256:%s\"", commentSafe(s.TrustedComment), source, source, SHA256(wasm))
	case signed != source:
		return fmt.Errorf("it was signed as a plugin for source %q, not %q; sign it again with --source %s if it is meant for %s", signed, source, source, source)
	case sum != SHA256(wasm):
		return fmt.Errorf("its signature's trusted comment names the module %s, not this one (%s); sign this file again", sum, SHA256(wasm))
	}
	return nil
}

// VerifyFile checks the plugin file at path, whose bytes are wasm, with
// the signature beside it (path + SignatureSuffix). The error names the
// file.
func (v *Verifier) VerifyFile(path, source string, wasm []byte) error {
	if err := v.verifyBeside(path, source, wasm); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}

// verifyBeside reads the signature beside the plugin file at path, if
// there is one, and checks it.
func (v *Verifier) verifyBeside(path, source string, wasm []byte) error {
	sig, err := os.ReadFile(path + SignatureSuffix)
	switch {
	case errors.Is(err, os.ErrNotExist):
		sig = nil
	case err != nil:
		return fmt.Errorf("reading its signature: %w", err)
	}
	return v.Verify(source, wasm, sig)
}

// Sign returns the minisign signature of the plugin wasm of source, named
// file, with key. The trusted comment, signed with it, names the file, its
// SHA-256 and the source, so that the signature cannot pass for another
// source's plugin. Like minisign since 0.10, it signs the BLAKE2b digest
// (the prehashed algorithm).
func Sign(key minisign.PrivateKey, file, source string, wasm []byte, now time.Time) []byte {
	trusted := fmt.Sprintf("timestamp:%d\tfile:%s\tsha256:%s\tsource:%s", now.Unix(), commentSafe(file), SHA256(wasm), commentSafe(source))
	r := minisign.NewReader(bytes.NewReader(wasm))
	_, _ = io.Copy(io.Discard, r) // reading from memory cannot fail
	return r.SignWithComments(key, trusted, "signature from rappel secret key "+KeyID(key.ID()))
}

// commentField is the value of name:value in a tab-separated trusted
// comment, empty when it has none.
func commentField(comment, name string) string {
	for _, f := range strings.Split(comment, "\t") {
		if k, val, ok := strings.Cut(f, ":"); ok && k == name {
			return val
		}
	}
	return ""
}

// commentSafe keeps a field of a trusted comment on its line and field.
func commentSafe(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(s)
}

// trimLibPrefix is the library's error without its "minisign: " prefix,
// which would read as a program's name inside a sentence.
func trimLibPrefix(err error) string {
	return strings.TrimPrefix(err.Error(), "minisign: ")
}

func orNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}
