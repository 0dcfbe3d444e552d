package plugins

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rappel-ca/rappel/internal/atomicfile"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// activeManifest says which plugin a source runs when it is not the bundled
// one, written beside the module as <source>.json in Registry.ActiveDir,
// with the module's signature as <source>.wasm.minisig when it had one.
// The module is written first, then its signature, and the manifest last,
// each atomically, so that a manifest always names a module that is whole:
// a crash before the manifest leaves the previous one, whose digest no
// longer matches the module, and the bundled plugin runs.
type activeManifest struct {
	SHA256 string    `json:"sha256"`
	Since  time.Time `json:"since"`
	Why    string    `json:"why"`
	From   string    `json:"from"`
	// Bundled is the SHA-256 of the bundled plugin this one replaced: a
	// binary that bundles another plugin for the source (an upgrade) runs
	// its own, since it may well carry the same fix.
	Bundled string `json:"bundled"`
	// Added is set for the plugin of a source its manifest added: there
	// is no bundled plugin to fall back to.
	Added bool `json:"added,omitempty"`
}

// persist writes source's active plugin and its signature (nil for none)
// into ActiveDir, so that it is the one that runs after a restart, once
// its signature verifies again (VerifyKept). A failure is logged: the swap
// holds until the restart.
func (r *Registry) persist(source string, wasm, sig []byte, m activeManifest) {
	if r.ActiveDir == "" {
		return
	}
	err := os.MkdirAll(r.ActiveDir, 0o755)
	path := filepath.Join(r.ActiveDir, source+".wasm")
	if err == nil {
		err = atomicfile.Write(path, wasm, 0o600)
	}
	if err == nil && sig != nil {
		err = atomicfile.Write(path+SignatureSuffix, sig, 0o600)
	} else if err == nil {
		err = removeIfThere(path + SignatureSuffix)
	}
	if err == nil {
		var b []byte
		if b, err = json.MarshalIndent(m, "", "  "); err == nil {
			err = atomicfile.Write(filepath.Join(r.ActiveDir, source+".json"), append(b, '\n'), 0o600)
		}
	}
	if err != nil {
		r.Logger.Error("keeping the active plugin for the next start; after a restart the bundled one runs", "source", source, "dir", r.ActiveDir, "err", err)
	}
}

// restore reads source's persisted plugin. It returns nil, nil when there
// is none, or when it replaced another bundled plugin than bundledSHA, and
// a *keptUnverified error when VerifyKept refuses it with the signature
// kept beside it.
func (r *Registry) restore(source, bundledSHA string) (wasm []byte, m *activeManifest, err error) {
	if r.ActiveDir == "" {
		return nil, nil, nil
	}
	b, err := os.ReadFile(filepath.Join(r.ActiveDir, source+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	m = new(activeManifest)
	if err := json.Unmarshal(b, m); err != nil {
		return nil, nil, fmt.Errorf("reading %s.json: %w", source, err)
	}
	if m.Bundled != bundledSHA {
		r.Logger.Info("this binary bundles another plugin than the one the kept plugin replaced: running the bundled one", "source", source, "kept", m.SHA256, "bundled", bundledSHA)
		return nil, nil, nil
	}
	wasm, err = os.ReadFile(filepath.Join(r.ActiveDir, source+".wasm"))
	if err != nil {
		return nil, nil, err
	}
	if got := SHA256(wasm); got != m.SHA256 {
		return nil, nil, fmt.Errorf("%s.wasm has SHA-256 %s where its manifest says %s (a write was cut short)", source, got, m.SHA256)
	}
	if r.VerifyKept != nil {
		path := filepath.Join(r.ActiveDir, source+".wasm")
		sig, err := os.ReadFile(path + SignatureSuffix)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		if verr := r.VerifyKept(source, wasm, sig); verr != nil {
			return nil, m, &keptUnverified{sha: m.SHA256, path: path, err: verr}
		}
	}
	return wasm, m, nil
}

// keptUnverified is why a plugin kept in ActiveDir does not run: it failed
// verification at Open (its signature is missing or bad, or the trusted
// keys changed since it was activated). A backup restored with a plugin
// added to it, or a data dir written by hand, gets no further.
type keptUnverified struct {
	sha, path string
	err       error
}

func (k *keptUnverified) Error() string {
	return fmt.Sprintf("%s: it fails verification: %v", filepath.Base(k.path), k.err)
}

// refusal is the sentence the source's rejection shows, saying what runs
// instead (then).
func (k *keptUnverified) refusal(then string) error {
	return refusal{rappel.RefusedUnverified, fmt.Errorf("it is the plugin kept in the data dir (plugins/active), and at start it failed verification with the trusted keys (--plugin-keys): %v; %s; to run it, put it and a signature by a trusted key in --plugins-dir again", strings.TrimRight(k.err.Error(), ". "), then)}
}
