package plugins

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rappel-ca/rappel/internal/atomicfile"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// Refused plugins. A candidate refused for good is moved out of Dir into
// Dir's RefusedDir, with its signature and a record of why, so that it is
// not read, verified and compiled again at every start, yet stays there to
// be looked at. Only what will not change is moved: an upload (the node
// wrote it whole, its signature first), or a dropped file whose bytes are
// final, which a signature vouched for or which compiled. A dropped file
// refused as unverified or, with no signature required, as not a module
// stays where it is: its signature may still be on its way, or the file
// still being copied in, and either change makes it read again. The area
// keeps the RefusedMax newest, RefusedMaxBytes at most; older ones go first.

// Names inside Dir: directories, which readDir does not read.
const (
	// RefusedDir is where refused candidates are kept.
	RefusedDir = "refused"
	// StagingDir is where uploads are written before they are renamed
	// into Dir: on the same file system, so that the rename is atomic.
	StagingDir = "staging"
)

// Defaults of Registry.RefusedMax and Registry.RefusedMaxBytes: a few
// refusals of the bundled plugins' size, and ten modules however small.
const (
	DefaultRefusedMax      = 10
	DefaultRefusedMaxBytes = 256 << 20
)

// stagingMaxAge is how old a file of the staging directory is before Open
// deletes it: older than any upload still arriving (ten minutes at most),
// so that a node sharing Dir loses no upload in progress.
const stagingMaxAge = time.Hour

// RefusedPlugin is a refused candidate kept in RefusedDir, for
// GET /admin/plugins; it is kept as <File without .wasm>.json beside it.
type RefusedPlugin struct {
	Source string `json:"source"`
	SHA256 string `json:"sha256"`
	// File is the module's name in RefusedDir; its signature, when it
	// had one, is beside it with the .minisig suffix.
	File string `json:"file"`
	// Size is the module's size in bytes.
	Size int64     `json:"size"`
	At   time.Time `json:"at"`
	Why  string    `json:"why"`
}

// toRefuse is a refusal whose file waits to be moved into RefusedDir: the
// move is disk work, done after r.mu is released (keepRefused).
type toRefuse struct {
	source, sha, path, why string
	at                     time.Time
}

// final says whether a refused candidate's file will not change any more
// (see the package's note above), so that it may leave Dir. r.mu must be
// held.
func (r *Registry) final(path, sha string, why error) bool {
	if filepath.Dir(path) != filepath.Clean(r.Dir) || r.Dir == "" {
		return false // not a file of Dir: the fleet's, or kept ones
	}
	if r.uploading[path] == sha {
		return true
	}
	switch refusalClass(why) {
	case rappel.RefusedUnverified:
		return false
	case rappel.RefusedUnusable:
		return r.Verify != nil
	}
	return true
}

// openRefused reads the records of RefusedDir at Open, and deletes the
// staging directory's leftovers of uploads a stop cut short.
func (r *Registry) openRefused() error {
	r.refused = nil
	if r.Dir == "" {
		return nil
	}
	for _, d := range []string{RefusedDir, StagingDir} {
		if err := os.MkdirAll(filepath.Join(r.Dir, d), 0o755); err != nil {
			return fmt.Errorf("preparing the plugins dir: %w", err)
		}
	}
	staged, _ := os.ReadDir(filepath.Join(r.Dir, StagingDir))
	for _, de := range staged {
		if info, err := de.Info(); err == nil && time.Since(info.ModTime()) > stagingMaxAge {
			_ = os.Remove(filepath.Join(r.Dir, StagingDir, de.Name()))
		}
	}
	names, err := filepath.Glob(filepath.Join(r.Dir, RefusedDir, "*.json"))
	if err != nil {
		return err
	}
	for _, path := range names {
		var rp RefusedPlugin
		b, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(b, &rp)
		}
		if err != nil || rp.File == "" {
			r.Logger.Warn("reading a refused plugin's record", "path", path, "err", err)
			continue
		}
		r.refused = append(r.refused, rp)
	}
	sort.SliceStable(r.refused, func(i, j int) bool { return r.refused[i].At.Before(r.refused[j].At) })
	r.trimRefused()
	return nil
}

// keepRefused moves the files of the refusals reject queued into
// RefusedDir and trims it. A file that changed since it was read (a newer
// one written in its place) stays: the next scan reads it. r.scanMu must
// be held, r.mu not.
func (r *Registry) keepRefused() {
	r.mu.Lock()
	queued := r.toRefuse
	r.toRefuse = nil
	r.mu.Unlock()
	for _, q := range queued {
		info, err := os.Stat(q.path)
		seen, ok := r.files[q.path]
		if err != nil || !ok || info.Size() != seen.size || !info.ModTime().Equal(seen.mod) {
			continue
		}
		rp, err := r.moveRefused(q, info.Size())
		if err != nil {
			r.Logger.Error("moving a refused plugin out of the plugins dir: it is tried again at the next start", "source", q.source, "path", q.path, "err", err)
			continue
		}
		delete(r.files, q.path)
		r.mu.Lock()
		r.refused = append(r.refused, rp)
		if s := r.sources[q.source]; s != nil && s.rejected == q.sha && s.rejectedPath == q.path {
			s.rejectedPath = filepath.Join(r.Dir, RefusedDir, rp.File)
		}
		r.trimRefused()
		r.mu.Unlock()
		r.Logger.Info("refused plugin moved out of the plugins dir", "source", q.source, "sha256", q.sha, "kept_as", filepath.Join(r.Dir, RefusedDir, rp.File))
	}
}

// moveRefused renames q's module and signature into RefusedDir, the
// signature first, and writes its record last, so that a record always
// names a module that is there.
func (r *Registry) moveRefused(q toRefuse, size int64) (RefusedPlugin, error) {
	base := fmt.Sprintf("%s-%s-%s", q.source, q.at.UTC().Format("20060102T150405.000Z"), q.sha[:12])
	rp := RefusedPlugin{Source: q.source, SHA256: q.sha, File: base + ".wasm", Size: size, At: q.at, Why: q.why}
	dir := filepath.Join(r.Dir, RefusedDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return rp, err
	}
	sig := q.path + SignatureSuffix
	if err := os.Rename(sig, filepath.Join(dir, rp.File+SignatureSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rp, err
	}
	if err := os.Rename(q.path, filepath.Join(dir, rp.File)); err != nil {
		return rp, err
	}
	b, err := json.MarshalIndent(rp, "", "  ")
	if err == nil {
		err = atomicfile.Write(filepath.Join(dir, base+".json"), append(b, '\n'), 0o600)
	}
	return rp, err
}

// trimRefused drops the oldest refused plugins until RefusedMax and
// RefusedMaxBytes hold. r.mu must be held.
func (r *Registry) trimRefused() {
	var total int64
	for _, rp := range r.refused {
		total += rp.Size
	}
	for len(r.refused) > 0 && (len(r.refused) > max(r.RefusedMax, 0) || total > r.RefusedMaxBytes) {
		old := r.refused[0]
		r.refused = r.refused[1:]
		total -= old.Size
		if err := r.deleteRefused(old); err != nil {
			r.Logger.Warn("deleting an old refused plugin", "file", old.File, "err", err)
		}
	}
}

// deleteRefused deletes a refused plugin's files, its record last.
func (r *Registry) deleteRefused(rp RefusedPlugin) error {
	dir := filepath.Join(r.Dir, RefusedDir)
	return errors.Join(
		removeIfThere(filepath.Join(dir, rp.File+SignatureSuffix)),
		removeIfThere(filepath.Join(dir, rp.File)),
		removeIfThere(filepath.Join(dir, strings.TrimSuffix(rp.File, ".wasm")+".json")))
}

// Refused returns the refused plugins kept in RefusedDir, newest first.
func (r *Registry) Refused() []RefusedPlugin {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refusedReport()
}

// refusedReport is Refused. r.mu must be held.
func (r *Registry) refusedReport() []RefusedPlugin {
	out := slices.Clone(r.refused)
	slices.Reverse(out)
	if out == nil {
		out = []RefusedPlugin{}
	}
	return out
}

// DropRefused deletes the refused plugins of source kept in RefusedDir,
// and a refused candidate of source still in Dir (one that stayed there:
// see final), and returns how many it deleted.
func (r *Registry) DropRefused(source string) (int, error) {
	r.scanMu.Lock()
	defer r.scanMu.Unlock()
	r.mu.Lock()
	var drop []RefusedPlugin
	r.refused = slices.DeleteFunc(r.refused, func(rp RefusedPlugin) bool {
		if rp.Source == source {
			drop = append(drop, rp)
			return true
		}
		return false
	})
	var inDir string
	if s := r.sources[source]; s != nil && s.rejected != "" {
		// The path may hold a newer file by now, pending, held or active:
		// that one is not the refused one, and stays.
		p := s.rejectedPath
		if filepath.Dir(p) == filepath.Clean(r.Dir) && p != s.origin && (s.pending == nil || s.pending.path != p) && (s.held == nil || s.held.c.path != p) {
			inDir = p
		}
		s.rejected, s.rejectedReason, s.rejectedPath, s.rejectedAt = "", "", "", time.Time{}
		if s.active == nil && s.pending == nil && s.held == nil {
			delete(r.sources, source) // only known for its refusal
		}
	}
	r.mu.Unlock()
	var errs []error
	n := len(drop)
	for _, rp := range drop {
		errs = append(errs, r.deleteRefused(rp))
	}
	if inDir != "" {
		if _, err := os.Stat(inDir); err == nil {
			n++
		}
		errs = append(errs, removeIfThere(inDir+SignatureSuffix), removeIfThere(inDir))
		delete(r.files, inDir)
	}
	if n > 0 {
		r.Logger.Info("refused plugins deleted", "source", source, "count", n)
	}
	return n, errors.Join(errs...)
}
