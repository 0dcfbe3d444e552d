package plugins

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// fileStamp is what the registry last saw of a file in Dir, so that an
// unchanged file is not read again.
type fileStamp struct {
	size int64
	mod  time.Time
	// sig is the stamp of the signature beside it, so that a signature
	// written after the module makes the module read again.
	sigSize int64
	sigMod  time.Time
}

// DefaultPollInterval is how often the registry checks Dir: a stat of the
// directory's files, cheap, so that a candidate is found within a second.
const DefaultPollInterval = 500 * time.Millisecond

// watch scans Dir every PollInterval, and soon after a refresh gives a
// waiting candidate its payload, until ctx is done.
func (r *Registry) watch(ctx context.Context) {
	defer close(r.done)
	every := r.PollInterval
	if every <= 0 {
		every = DefaultPollInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.kick:
		}
		r.Scan(ctx)
	}
}

// nudge asks the watching goroutine for a scan now.
func (r *Registry) nudge() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Scan reads Dir once, compiles every new or changed <source>.wasm in it
// as a candidate, and tries every candidate that has a payload to be tried
// on, activating or rejecting it. The watching goroutine calls it every
// PollInterval; a caller may call it to act now. It returns when every
// trial has ended.
func (r *Registry) Scan(ctx context.Context) {
	r.scanMu.Lock()
	defer r.scanMu.Unlock()
	if r.Dir != "" {
		r.readDir(ctx)
		defer r.keepRefused()
	}
	r.mu.Lock()
	var ready []string
	for name, s := range r.sources {
		if s.pending != nil && (s.payload != nil || s.current != nil) {
			ready = append(ready, name)
		}
	}
	r.mu.Unlock()
	sort.Strings(ready)
	for _, name := range ready {
		if ctx.Err() != nil {
			return
		}
		r.try(ctx, name)
	}
}

// readDir compiles the files of Dir that are new or changed since the last
// read. A file caught half written fails to compile and is rejected; once
// written it has changed again and is read again. Writing elsewhere and
// renaming into Dir avoids the noise.
func (r *Registry) readDir(ctx context.Context) {
	entries, err := os.ReadDir(r.Dir)
	if err != nil {
		r.Logger.Warn("reading plugins dir", "dir", r.Dir, "err", err)
		return
	}
	seen := make(map[string]bool, len(entries))
	for _, de := range entries {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".wasm") {
			continue
		}
		path := filepath.Join(r.Dir, de.Name())
		info, err := os.Stat(path)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		seen[path] = true
		stamp := fileStamp{size: info.Size(), mod: info.ModTime()}
		if si, err := os.Stat(path + SignatureSuffix); err == nil {
			stamp.sigSize, stamp.sigMod = si.Size(), si.ModTime()
		}
		if r.files[path] == stamp {
			continue
		}
		r.files[path] = stamp
		wasm, err := os.ReadFile(path)
		var sig []byte
		if err == nil {
			// The bytes verified are the bytes kept: the signature is
			// read once, here, for both.
			if sig, err = os.ReadFile(path + SignatureSuffix); errors.Is(err, os.ErrNotExist) {
				sig, err = nil, nil
			}
		}
		if err != nil {
			r.Logger.Warn("reading candidate plugin", "path", path, "err", err)
			continue
		}
		r.consider(ctx, strings.TrimSuffix(de.Name(), ".wasm"), path, wasm, sig)
	}
	for path := range r.files {
		if !seen[path] {
			delete(r.files, path)
		}
	}
}

// consider compiles a candidate for source name unless it is already
// active, pending or rejected, and makes it the source's pending candidate.
func (r *Registry) consider(ctx context.Context, name, path string, wasm, sig []byte) {
	sha := SHA256(wasm)
	r.mu.Lock()
	s := r.sources[name]
	switch {
	case s == nil || s.active == nil:
		// A source it does not know: a plugin with a manifest adds it.
		r.mu.Unlock()
		r.considerNew(ctx, name, path, wasm, sig)
		return
	case s.active.plugin.SHA256 == sha,
		s.pending != nil && s.pending.plugin.SHA256 == sha,
		s.held != nil && s.held.c.plugin.SHA256 == sha:
		// A refused candidate that stayed in Dir (refused.go) is
		// considered again when its file or its signature changed
		// (readDir reads only those): a signature copied in after the
		// module is not a refusal for ever.
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()

	// Verification (signatures) comes first: nothing else is done with
	// bytes it refuses, not even compiling them.
	var err error
	if r.Verify != nil {
		if verr := r.Verify(name, wasm, sig); verr != nil {
			err = refusal{rappel.RefusedUnverified, fmt.Errorf("it failed verification: %v", verr)}
		}
	}
	var m *Manifest
	if err == nil {
		r.mu.Lock()
		m, err = s.checkUpdate(wasm)
		r.mu.Unlock()
	}
	var p *Plugin
	if err == nil {
		if p, err = r.Host.Load(ctx, name, wasm); err != nil {
			err = refusal{rappel.RefusedUnusable, fmt.Errorf("it is not a usable module: %v", err)}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.reject(s, sha, path, err)
		return
	}
	if s.pending != nil {
		_ = s.pending.plugin.Close(context.Background())
	}
	s.pending = &candidate{plugin: p, path: path, wasm: wasm, sig: sig, found: r.Now(), manifest: m}
	r.Logger.Info("plugin candidate found", "source", name, "path", path, "sha256", sha,
		"has_payload", s.payload != nil, "has_current_payload", s.current != nil)
}

// trial is what a candidate is tried on: the upstream's current payload
// the active plugin failed on, when there is one (nothing to compare with:
// base is nil), or else the last good payload and the active plugin's
// baseline on it.
type trial struct {
	payload   *Payload
	digest    string
	base      *Baseline
	current   bool
	activeErr string
	// active is what the active plugin made of payload, for the content
	// gate; nil on the current payload, which it failed on.
	active []*rappel.Record
}

// trialOf picks s's trial payload. r.mu must be held.
func (s *source) trialOf() *trial {
	switch {
	case s.current != nil:
		return &trial{payload: s.current, digest: s.currentDigest, current: true, activeErr: s.currentErr}
	case s.payload != nil:
		t := &trial{payload: s.payload, digest: s.payloadDigest, base: s.baseline}
		if s.primed != nil {
			t.active = s.primed.Records
		}
		return t
	}
	return nil
}

// try runs the source's pending candidate on its trial payload and
// activates or rejects it.
func (r *Registry) try(ctx context.Context, name string) {
	r.mu.Lock()
	s := r.sources[name]
	c, t := s.pending, s.trialOf()
	if c == nil || t == nil {
		r.mu.Unlock()
		return
	}
	s.trying = true
	r.mu.Unlock()
	start := time.Now()
	res, err := c.plugin.Run(ctx, t.payload)
	r.countRun(name, res, err)
	var v *Verdict
	if err != nil {
		err = refusal{rappel.RefusedRunFailed, fmt.Errorf("its run on the %s failed: %v", t.what(), err)}
	} else {
		v = r.judge(name, res)
		if aerr := t.base.Accept(v, r.MaxLoss); aerr != nil {
			err = refusal{rappel.RefusedOutput, aerr}
		}
	}
	var diff DiffSummary
	var holdWhy string
	if err == nil && t.active != nil && !c.approved {
		diff = Diff(t.active, v.Records)
		holdWhy = diff.Exceeds(r.MaxChange)
	}
	r.mu.Lock()
	s.trying = false
	if ctx.Err() != nil {
		r.mu.Unlock()
		return // closing: leave it pending, it was not judged
	}
	if s.pending != c { // replaced by a newer candidate meanwhile
		r.mu.Unlock()
		_ = c.plugin.Close(context.Background())
		return
	}
	s.pending = nil
	if err != nil {
		r.reject(s, c.plugin.SHA256, c.path, err)
		r.mu.Unlock()
		_ = c.plugin.Close(context.Background())
		return
	}
	if holdWhy != "" {
		r.hold(s, c, diff, holdWhy)
		r.mu.Unlock()
		return
	}
	out := &rappel.Normalized{Records: v.Records, Problems: v.Problems, Plugin: c.plugin.SHA256, Duration: res.Duration}
	kept := r.activate(s, c, t, v, out)
	oldManifest := s.manifest
	if oldManifest != nil {
		s.manifest = c.manifest
		kept.Bundled, kept.Added = "", true
	}
	r.mu.Unlock()
	// Megabytes written and synced: not under the lock every run takes.
	r.persist(name, c.wasm, c.sig, kept)
	if oldManifest != nil {
		r.manifestChanged(oldManifest, c.manifest)
	}
	if r.OnActivated != nil {
		r.OnActivated(name, c.wasm, c.sig, kept.Why)
	}
	r.Logger.Info("plugin activated", "source", name, "path", c.path, "sha256", c.plugin.SHA256, "on", t.what(),
		"records", len(v.Records), "refused", v.Refused, "tried_in", time.Since(start).Round(time.Millisecond))
	if r.OnActivate != nil {
		r.OnActivate(name, out)
	}
}

// what names the trial's payload, for sentences.
func (t *trial) what() string {
	if t.current {
		return "upstream's current payload"
	}
	return "last good payload"
}

// activate makes c the active plugin of s, with its output out on t's
// payload as what later candidates are judged against,
// remembers why, and returns what to keep in ActiveDir. r.mu must be held.
func (r *Registry) activate(s *source, c *candidate, t *trial, v *Verdict, out *rappel.Normalized) activeManifest {
	why := fmt.Sprintf("%s (sha256 %s) made %d records of the last good payload, keeping the active plugin's within the allowed loss.", filepath.Base(c.path), c.plugin.SHA256[:12], len(v.Records))
	if t.current {
		why = fmt.Sprintf("%s (sha256 %s) made %d records of the upstream's current payload, which the plugin before it failed on: %s.", filepath.Base(c.path), c.plugin.SHA256[:12], len(v.Records), t.activeErr)
	}
	old := s.active
	s.active = &entry{plugin: c.plugin}
	s.since, s.origin, s.why = r.Now(), c.path, why
	s.payload, s.payloadDigest, s.primed = t.payload, t.digest, out
	s.baseline = NewBaseline(c.plugin.SHA256, v)
	s.current, s.currentDigest, s.currentErr = nil, "", ""
	if old != nil {
		r.retire(old)
	}
	r.remember(s.name, c.plugin.SHA256, "activated", why)
	return activeManifest{SHA256: c.plugin.SHA256, Since: s.since, Why: why, From: c.path, Bundled: SHA256(r.bundled[s.name])}
}

// hold keeps c, which passed its trial but changed too much of the
// records' content, until an operator approves its digest; a held
// candidate it replaces is closed. r.mu must be held.
func (r *Registry) hold(s *source, c *candidate, diff DiffSummary, why string) {
	if s.held != nil {
		_ = s.held.c.plugin.Close(context.Background())
	}
	reason := fmt.Sprintf("%s (sha256 %s) is held for approval: %s. Approve its sha256 to activate it.", filepath.Base(c.path), c.plugin.SHA256[:12], why)
	s.held = &heldCandidate{c: c, diff: diff, why: reason, at: r.Now()}
	r.remember(s.name, c.plugin.SHA256, "held", reason)
	r.Logger.Warn("plugin candidate held for approval", "source", s.name, "path", c.path, "sha256", c.plugin.SHA256, "reason", reason)
}

// ErrNotHeld is returned by Approve when the source holds no candidate
// of the digest given.
var ErrNotHeld = errors.New("no candidate of this digest is held for approval")

// Approve activates source's candidate held for approval whose SHA-256 is
// sha: it is tried again on the source's payload, without the content
// gate but with every other check, and activated. It returns why not,
// wrapping ErrNotHeld when no held candidate has that digest.
func (r *Registry) Approve(ctx context.Context, source, sha string) error {
	r.mu.Lock()
	s := r.sources[source]
	if s == nil || s.active == nil {
		r.mu.Unlock()
		return fmt.Errorf("%w: there is no source named %q", ErrNotHeld, source)
	}
	if s.held == nil || s.held.c.plugin.SHA256 != sha {
		held := "none is held"
		if s.held != nil {
			held = "the held one is " + s.held.c.plugin.SHA256
		}
		r.mu.Unlock()
		return fmt.Errorf("%w for %s (%s)", ErrNotHeld, source, held)
	}
	c := s.held.c
	c.approved, s.held = true, nil
	if s.pending != nil {
		_ = s.pending.plugin.Close(context.Background())
	}
	s.pending = c
	r.mu.Unlock()
	// Only this trial, not a scan: a file dropped in meanwhile must not
	// replace the candidate the operator approved.
	r.scanMu.Lock()
	r.try(ctx, source)
	if r.Dir != "" {
		r.keepRefused()
	}
	r.scanMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case s.active != nil && s.active.plugin.SHA256 == sha:
		return nil
	case s.rejected == sha:
		return errors.New(s.rejectedReason)
	}
	return fmt.Errorf("the approved candidate %s was not tried: the request ended first; it stays pending and is tried at the next scan", sha[:12])
}

// reject records why the candidate sha was not activated and logs it.
// r.mu must be held.
func (r *Registry) reject(s *source, sha, path string, why error) {
	s.rejected, s.rejectedAt, s.rejectedPath = sha, r.Now(), path
	s.rejectedReason = fmt.Sprintf("%s (sha256 %s) was not activated: %s.", filepath.Base(path), sha[:12], strings.TrimRight(why.Error(), ". "))
	r.remember(s.name, sha, "refused", s.rejectedReason)
	s.counted().refusals[refusalClass(why)]++
	if r.final(path, sha, why) {
		r.toRefuse = append(r.toRefuse, toRefuse{source: s.name, sha: sha, path: path, why: s.rejectedReason, at: s.rejectedAt})
	}
	r.Logger.Warn("plugin candidate rejected", "source", s.name, "path", path, "sha256", sha, "reason", s.rejectedReason)
}

// sourceNames lists the sources that have a plugin. r.mu must be held.
func (r *Registry) sourceNames() []string {
	var names []string
	for n, s := range r.sources {
		if s.active != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
