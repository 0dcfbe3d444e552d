package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rappel-ca/rappel/internal/atomicfile"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// Sources a plugin adds. A candidate for a source the registry does not
// know is a new source when it carries a manifest (ReadManifest), once it
// passed Verify like any candidate: there is no payload to try it on nor
// an active plugin to judge it against, so it becomes the source's plugin
// at once, is kept in ActiveDir like a swap, and OnSource is told, which
// starts fetching what the manifest lists. Its records are then judged at
// every run like any source's, and a record_id without the manifest's
// prefix is refused.

// reservedPrefixes are the record_id prefixes of the bundled sources'
// records: a new source may not take them, or it would overwrite them.
var reservedPrefixes = []string{"hc-", "tc-", "cfia-"}

// considerNew takes a candidate for a source the registry does not know.
// r.mu must not be held.
func (r *Registry) considerNew(ctx context.Context, name, path string, wasm, sig []byte) {
	m, err := r.newSourceManifest(name, wasm, sig)
	r.addNew(ctx, name, path, wasm, sig, m, err)
}

// addNew makes wasm, whose manifest m adds the source name, that source's
// plugin, unless err (why it cannot) is set: then it is refused with it.
// Its signature sig (nil for none) is kept with it.
func (r *Registry) addNew(ctx context.Context, name, path string, wasm, sig []byte, m *Manifest, err error) {
	sha := SHA256(wasm)
	var p *Plugin
	if err == nil {
		if p, err = r.Host.Load(ctx, name, wasm); err != nil {
			err = refusal{rappel.RefusedUnusable, fmt.Errorf("it is not a usable module: %v", err)}
		}
	}
	var note string
	if err == nil {
		note, err = r.registerAgency(name, m)
	}
	if err == nil && r.OnSource != nil {
		err = r.OnSource(m)
	}
	r.mu.Lock()
	if err != nil {
		s := r.sources[name]
		if s == nil {
			s = &source{name: name}
			r.sources[name] = s
		}
		r.reject(s, sha, path, err)
		r.mu.Unlock()
		if p != nil {
			_ = p.Close(context.Background())
		}
		return
	}
	why := fmt.Sprintf("%s (sha256 %s) adds the source %s its signed manifest describes: %d documents, records of %s prefixed %q.",
		filepath.Base(path), sha[:12], name, len(m.Documents), m.Agency.Name, m.RecordIDPrefix)
	s := &source{name: name, active: &entry{plugin: p}, since: r.Now(), origin: path, why: why, manifest: m, agencyNote: note}
	r.sources[name] = s
	r.remember(name, sha, "added", why)
	kept := activeManifest{SHA256: sha, Since: s.since, Why: why, From: path, Added: true}
	r.mu.Unlock()
	r.persist(name, wasm, sig, kept)
	r.Logger.Info("plugin for a new source activated", "source", name, "path", path, "sha256", sha,
		"agency", m.Agency.Name, "documents", len(m.Documents), "record_id_prefix", m.RecordIDPrefix)
	if r.OnActivated != nil && path != fleetOrigin {
		r.OnActivated(name, wasm, sig, why)
	}
}

// registerAgency registers the agency m names for source (see
// rappel.RegisterSourceAgency) and returns the sentence saying which of
// its names were ignored, also logged; "" when none was.
func (r *Registry) registerAgency(source string, m *Manifest) (string, error) {
	note, err := rappel.RegisterSourceAgency(source, m.Agency)
	if note != "" {
		r.Logger.Warn("the manifest's agency names are ignored", "source", source, "agency", m.Agency.Name, "reason", note)
	}
	return note, err
}

// newSourceManifest verifies a candidate for an unknown source and returns
// its manifest, or why it cannot add the source.
func (r *Registry) newSourceManifest(name string, wasm, sig []byte) (*Manifest, error) {
	if r.Verify != nil {
		if err := r.Verify(name, wasm, sig); err != nil {
			return nil, refusal{rappel.RefusedUnverified, fmt.Errorf("it failed verification: %v", err)}
		}
	}
	m, err := ReadManifest(wasm)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err != nil:
		return nil, refusal{rappel.RefusedUnusable, fmt.Errorf("it is not a usable module: %v", err)}
	case m == nil:
		return nil, fmt.Errorf("there is no source named %q to run it for (the sources are %s), and it carries no manifest to add one (rappel plugin manifest writes one)", name, strings.Join(r.sourceNames(), ", "))
	case m.Source != name:
		return nil, fmt.Errorf("its manifest is for the source %q, not %q: name the file %s.wasm", m.Source, name, m.Source)
	}
	if m.Merge == MergeOwn {
		for _, p := range reservedPrefixes {
			if m.RecordIDPrefix == p {
				return nil, fmt.Errorf("its record_id_prefix %q is a bundled source's; choose one of the new source's own", p)
			}
		}
		for _, s := range r.sources {
			if s.manifest != nil && s.manifest.Merge == MergeOwn && s.manifest.RecordIDPrefix == m.RecordIDPrefix {
				return nil, fmt.Errorf("its record_id_prefix %q is the source %s's already; choose one of its own", m.RecordIDPrefix, s.name)
			}
		}
	}
	return m, nil
}

// checkUpdate says why a candidate for a known source cannot replace its
// plugin because of its manifest: a bundled source takes none (its feeds
// are the server's), and a source a manifest added needs one, for itself,
// with the same merge and prefix (records already stored carry them).
// r.mu must be held.
func (s *source) checkUpdate(wasm []byte) (*Manifest, error) {
	m, err := ReadManifest(wasm)
	switch {
	case err != nil:
		return nil, refusal{rappel.RefusedUnusable, fmt.Errorf("it is not a usable module: %v", err)}
	case s.manifest == nil && m != nil:
		return nil, fmt.Errorf("it carries a manifest, but %s is a bundled source whose feeds the server's flags set; build it without one", s.name)
	case s.manifest == nil:
		return nil, nil
	case m == nil:
		return nil, fmt.Errorf("it carries no manifest, and %s is a source a manifest added: embed its manifest (rappel plugin manifest) and sign it again", s.name)
	case m.Source != s.name:
		return nil, fmt.Errorf("its manifest is for the source %q, not %q", m.Source, s.name)
	case m.RecordIDPrefix != s.manifest.RecordIDPrefix || m.Merge != s.manifest.Merge:
		return nil, fmt.Errorf("its manifest changes the record_id_prefix or merge of %s (%q, %s), which the stored records carry; remove the source and add it again instead", s.name, s.manifest.RecordIDPrefix, s.manifest.Merge)
	}
	return m, nil
}

// manifestChanged tells OnSource of a new manifest of a source after its
// plugin was replaced, so that what is fetched follows it.
func (r *Registry) manifestChanged(old, m *Manifest) {
	if m == nil || reflect.DeepEqual(old, m) {
		return
	}
	note, err := r.registerAgency(m.Source, m)
	if err != nil {
		r.Logger.Error("the new plugin's agency cannot be registered", "source", m.Source, "err", err)
	}
	r.mu.Lock()
	if s := r.sources[m.Source]; s != nil && err == nil {
		s.agencyNote = note
	}
	r.mu.Unlock()
	if r.OnSource != nil {
		if err := r.OnSource(m); err != nil {
			r.Logger.Error("the new plugin's manifest cannot be applied: the source keeps fetching what the last one listed", "source", m.Source, "err", err)
		}
	}
}

// Manifest returns the manifest of a source a plugin added; nil for a
// bundled source or an unknown one.
func (r *Registry) Manifest(source string) *Manifest {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.sources[source]; s != nil && s.manifest != nil {
		c := *s.manifest
		return &c
	}
	return nil
}

// restoreAdded loads, at Open, the sources plugins added before a
// restart, from ActiveDir, and the agencies of those removed since (their
// archived records still name them), oldest first: an agency's names are
// its first registrant's, and a manifest may name an agency another
// source's registered, so the order must be the one they came in.
func (r *Registry) restoreAdded(ctx context.Context) error {
	if r.ActiveDir == "" {
		return nil
	}
	names, err := filepath.Glob(filepath.Join(r.ActiveDir, "*.json"))
	if err != nil {
		return err
	}
	type kept struct {
		name, path string
		since      time.Time
		removed    bool
	}
	var all []kept
	for _, path := range names {
		base := strings.TrimSuffix(filepath.Base(path), ".json")
		k := kept{name: base, path: path}
		k.name, k.removed = strings.CutSuffix(base, ".removed")
		if !k.removed && r.sources[base] != nil {
			continue // a bundled source's kept swap, read by openSource
		}
		var at struct {
			Since time.Time `json:"since"`
		}
		if b, err := os.ReadFile(path); err == nil {
			_ = json.Unmarshal(b, &at) // a file that does not parse is reported below
		}
		k.since = at.Since
		all = append(all, k)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].since.Before(all[j].since) })
	for _, k := range all {
		if k.removed {
			r.restoreRemovedAgency(k.name, k.path)
			continue
		}
		err := r.restoreOne(ctx, k.name)
		if unverified, ok := errors.AsType[*keptUnverified](err); ok {
			s := &source{name: k.name, notRun: true}
			r.sources[k.name] = s
			r.reject(s, unverified.sha, unverified.path, unverified.refusal("the source it added is not refreshed"))
			continue
		}
		if err != nil {
			r.Logger.Error("a source a plugin added cannot be restored: it is not refreshed until a plugin for it is dropped again", "source", k.name, "err", err)
		}
	}
	return nil
}

func (r *Registry) restoreOne(ctx context.Context, name string) error {
	wasm, m, err := r.restore(name, "")
	if err != nil || wasm == nil {
		return err
	}
	if !m.Added {
		return nil
	}
	man, err := ReadManifest(wasm)
	if err != nil || man == nil {
		return fmt.Errorf("its kept plugin's manifest: %v", err)
	}
	p, err := r.Host.Load(ctx, name, wasm)
	if err != nil {
		return err
	}
	note, err := r.registerAgency(name, man)
	if err != nil {
		_ = p.Close(ctx)
		return err
	}
	if r.OnSource != nil {
		if err := r.OnSource(man); err != nil {
			_ = p.Close(ctx)
			return err
		}
	}
	r.sources[name] = &source{name: name, active: &entry{plugin: p}, since: m.Since, origin: m.From, why: m.Why, manifest: man, agencyNote: note}
	r.Logger.Info("running the plugin of a source a plugin added", "source", name, "sha256", p.SHA256, "since", m.Since)
	return nil
}

// removedSource is what ActiveDir keeps of a removed source; Since is
// when its plugin became active, which orders its agency's registration
// at Open among the others'.
type removedSource struct {
	Manifest *Manifest `json:"manifest"`
	Reason   string    `json:"reason"`
	Since    time.Time `json:"since,omitzero"`
}

func (r *Registry) restoreRemovedAgency(name, path string) {
	b, err := os.ReadFile(path)
	var rm removedSource
	if err == nil {
		err = json.Unmarshal(b, &rm)
	}
	if err == nil && rm.Manifest != nil {
		_, err = rappel.RegisterSourceAgency(name, rm.Manifest.Agency)
	}
	if err != nil {
		r.Logger.Warn("reading a removed source's record", "source", name, "err", err)
	}
}

// ErrNotAdded is returned by Remove for a source no plugin added.
var ErrNotAdded = errors.New("only a source a plugin's manifest added can be removed")

// Remove stops running the plugin of a source a manifest added: it is
// closed once its runs end, forgotten from ActiveDir (which keeps the
// manifest and reason, so that the agency of its archived records is
// still known after a restart), and its files in Dir are deleted, so that
// the next scan does not add it again. Archiving its records is the
// feeds' part.
func (r *Registry) Remove(source, reason string) error {
	r.scanMu.Lock()
	defer r.scanMu.Unlock()
	r.mu.Lock()
	s := r.sources[source]
	if s == nil || s.manifest == nil || s.active == nil {
		r.mu.Unlock()
		return fmt.Errorf("%w: %q is not one (the sources are %s)", ErrNotAdded, source, strings.Join(r.sourceNames(), ", "))
	}
	m, sha, since := s.manifest, s.active.plugin.SHA256, s.since
	r.retire(s.active)
	for _, c := range []*candidate{s.pending, heldOf(s)} {
		if c != nil {
			_ = c.plugin.Close(context.Background())
		}
	}
	delete(r.sources, source)
	r.remember(source, sha, "removed", reason)
	r.mu.Unlock()
	var errs []error
	if r.ActiveDir != "" {
		b, err := json.MarshalIndent(removedSource{Manifest: m, Reason: reason, Since: since}, "", "  ")
		if err == nil {
			err = atomicfile.Write(filepath.Join(r.ActiveDir, source+".removed.json"), append(b, '\n'), 0o600)
		}
		errs = append(errs, err, removeIfThere(filepath.Join(r.ActiveDir, source+".json")), removeIfThere(filepath.Join(r.ActiveDir, source+".wasm")), removeIfThere(filepath.Join(r.ActiveDir, source+".wasm"+SignatureSuffix)))
	}
	if r.Dir != "" {
		for _, f := range []string{source + ".wasm", source + ".wasm.minisig"} {
			path := filepath.Join(r.Dir, f)
			errs = append(errs, removeIfThere(path))
			delete(r.files, path)
		}
	}
	r.Logger.Warn("plugin of a source removed", "source", source, "sha256", sha, "reason", reason)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("the source is removed, but its files are not all deleted: %w", err)
	}
	return nil
}

func heldOf(s *source) *candidate {
	if s.held == nil {
		return nil
	}
	return s.held.c
}

func removeIfThere(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// judge is Judge with the source's manifest applied (JudgeManifest), and
// the sentence saying which of the manifest's agency names were ignored
// among the problems, so that /health keeps showing it until the manifest
// is fixed.
func (r *Registry) judge(name string, res *Result) *Verdict {
	r.mu.Lock()
	var m *Manifest
	var note string
	if s := r.sources[name]; s != nil {
		m, note = s.manifest, s.agencyNote
	}
	r.mu.Unlock()
	v := JudgeManifest(name, res, m, r.Partial[name])
	if note != "" {
		v.Problems = append(v.Problems, rappel.Problem{Source: name, Reason: note})
	}
	return v
}

// JudgeManifest is Judge for a source m describes (nil for a bundled one,
// whose records are partial when partial is set): a source that enriches
// emits partial records, every record of a source that owns its records
// must carry the manifest's record_id prefix, and every record is of the
// manifest's agency (forceAgency).
func JudgeManifest(name string, res *Result, m *Manifest, partial bool) *Verdict {
	if m == nil {
		return Judge(name, res, partial)
	}
	forced := forceAgency(name, res, m)
	v := Judge(name, res, m.Merge == MergeEnrich)
	v.Problems = append(v.Problems, forced...)
	if m.Merge != MergeOwn {
		return v
	}
	kept := v.Records[:0]
	for _, rec := range v.Records {
		if strings.HasPrefix(rec.RecordID, m.RecordIDPrefix) {
			kept = append(kept, rec)
			continue
		}
		p := rappel.Problem{Source: name, RecordID: rec.RecordID, Reason: fmt.Sprintf("The host refused the record: its record_id does not start with %q, the prefix the source's manifest gives.", m.RecordIDPrefix)}
		v.Refused++
		v.Problems = append(v.Problems, p)
		v.Refusals = append(v.Refusals, p)
	}
	v.Records = kept
	return v
}

// forceAgency sets the agency of res's records to the manifest's, and
// returns a problem for each record that named another: a manifest names
// one agency, the one a node's operator trusted when the plugin was signed,
// and a source's records must not pass for another agency's. A record that
// enriches others' and names no agency is left to the record it enriches.
func forceAgency(name string, res *Result, m *Manifest) []rappel.Problem {
	var problems []rappel.Problem
	for _, rec := range res.Records {
		switch {
		case rec.Agency == m.Agency.Name, rec.Agency == "" && m.Merge == MergeEnrich:
			continue
		case rec.Agency != "":
			problems = append(problems, rappel.Problem{Source: name, RecordID: rec.RecordID, Reason: fmt.Sprintf("The host set the record's agency to %q, the one the source's manifest names, in place of %q.", m.Agency.Name, rec.Agency)})
		}
		rec.Agency = m.Agency.Name
	}
	return problems
}

// Outcomes of Upload.
const (
	UploadAdded     = "added"     // the plugin added a new source
	UploadActivated = "activated" // it is the source's plugin now
	UploadHeld      = "held"      // it waits for a payload, or an approval
)

// Upload takes a plugin for source as if it had been dropped into Dir:
// its module and its signature ("" for none), files written whole in Dir's
// StagingDir, are renamed into Dir, the signature first, so that a watcher
// never sees the module without it; then Dir is scanned at once, which
// verifies and tries it. The staged files are Dir's afterwards, or gone. A
// refused upload leaves Dir for RefusedDir at once, whatever the reason
// (refused.go). It returns what became of the plugin, or why it was
// refused.
func (r *Registry) Upload(ctx context.Context, source, wasmPath, sigPath string) (string, error) {
	if r.Dir == "" {
		return "", errors.New("this node watches no plugins directory (--plugins-dir) to keep uploads in")
	}
	if !sourceNamePattern.MatchString(source) && r.Active(source) == "" {
		return "", fmt.Errorf("%q is not a source name: 2 to 32 lower-case letters, digits and _, starting with a letter", source)
	}
	sha, err := fileSHA256(wasmPath)
	if err != nil {
		return "", fmt.Errorf("reading the staged upload: %w", err)
	}
	before := r.Active(source)
	path := filepath.Join(r.Dir, source+".wasm")
	if sigPath != "" {
		err = os.Rename(sigPath, path+SignatureSuffix)
	} else {
		err = removeIfThere(path + SignatureSuffix)
	}
	if err == nil {
		err = os.Rename(wasmPath, path)
	}
	if err != nil {
		return "", fmt.Errorf("moving the upload into the plugins directory: %w", err)
	}
	r.mu.Lock()
	r.uploading[path] = sha
	r.mu.Unlock()
	r.Scan(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.uploading, path)
	s := r.sources[source]
	switch {
	case s == nil:
		return "", errors.New("it was not considered: the plugins directory could not be read (see the server's log)")
	case s.active != nil && s.active.plugin.SHA256 == sha && before == "":
		return UploadAdded, nil
	case s.active != nil && s.active.plugin.SHA256 == sha:
		return UploadActivated, nil
	case s.pending != nil && s.pending.plugin.SHA256 == sha, s.held != nil && s.held.c.plugin.SHA256 == sha:
		return UploadHeld, nil
	case s.rejected == sha:
		return "", errors.New(s.rejectedReason)
	}
	return "", errors.New("it was replaced by another plugin written into the plugins directory meanwhile")
}

// fileSHA256 is SHA256 of the file at path, read as a stream.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
