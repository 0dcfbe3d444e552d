package plugins

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rappel-ca/rappel"
)

// Registry holds the active plugin of every source and implements
// rappel.Normalizer with them. It starts with the plugins it is given (the
// bundled ones) and, when Dir is set, watches Dir for candidates named
// <source>.wasm: a candidate is tried on the source's last good payload and
// replaces the active plugin only if the host accepts its output (see
// Baseline.Accept); otherwise the active plugin keeps running and the
// reason is kept for Status and logged. Configure the exported fields, then
// Open.
type Registry struct {
	Host *Host
	// Dir is watched for candidate plugins; "" watches nothing.
	Dir string
	// ActiveDir keeps each source's active plugin when it is not the
	// bundled one (<source>.wasm and its manifest <source>.json), so that
	// a swap outlives a restart; "" keeps nothing.
	ActiveDir string
	// PollInterval is how often Dir is checked: one stat of the directory
	// and of each file, cheap enough to do often so that a swap is quick.
	PollInterval time.Duration
	// Verify, when set, checks a candidate's bytes and its signature (the
	// file beside it, nil when there is none) before anything else is
	// done with them; an error refuses the candidate with it as the reason.
	// nil accepts every candidate. The signature is kept in ActiveDir with
	// the plugin once it is active.
	Verify func(source string, wasm, sig []byte) error
	// VerifyKept, when set, checks again, at Open, every plugin kept in
	// ActiveDir with the signature kept beside it, and a plugin adopted
	// from the fleet with the signature the fleet keeps: a plugin that no
	// longer verifies (no signature, another file's, or a key no longer
	// trusted) does not run. nil runs them unchecked.
	VerifyKept func(source string, wasm, sig []byte) error
	// MaxLoss is the share of records a candidate may lose against the
	// active plugin on the same payload.
	MaxLoss float64
	// MaxChange is the share of the records both plugins make that a
	// candidate may change in any one field (see Diff) and still go live;
	// one that changes more is held until approved (see Approve).
	MaxChange float64
	// Partial names the sources whose records are validated as partial
	// records (see Judge).
	Partial map[string]bool
	// OnActivate, when set, is called after a candidate replaced a source's
	// plugin, with the candidate's output on the source's last good payload,
	// so that its effect can be applied without waiting for the next
	// change upstream. It is called from the watching goroutine.
	OnActivate func(source string, out *rappel.Normalized)
	// OnSource, when set, is told of the manifest of a source a plugin
	// adds (at Open for those kept in ActiveDir, and when a candidate adds
	// one), and of a new manifest of such a source when its plugin is
	// replaced: it starts fetching what the manifest lists. An error
	// refuses the candidate with it.
	OnSource func(m *Manifest) error
	// OnActivated, when set, is told of every plugin that became a
	// source's plugin here (a swap, a new source), with why: a fleet's
	// leader records it for its successor (see Adopt).
	OnActivated func(source string, wasm, sig []byte, why string)
	// RefusedMax and RefusedMaxBytes bound what RefusedDir keeps of the
	// refused candidates (refused.go): the newest, older ones deleted
	// first.
	RefusedMax      int
	RefusedMaxBytes int64
	Now             func() time.Time
	Logger          *slog.Logger

	bundled map[string][]byte
	// history is the last swaps and refusals, newest last, for
	// GET /admin/plugins.
	history []Event
	scanMu  sync.Mutex // serializes Scan: the watcher's and callers'
	mu      sync.Mutex
	sources map[string]*source
	files   map[string]fileStamp // Dir's files as last read
	// refused is what RefusedDir keeps, oldest first; toRefuse the
	// refusals whose files wait to be moved there; uploading the files
	// Upload wrote and is scanning, by path, with their SHA-256.
	refused   []RefusedPlugin
	toRefuse  []toRefuse
	uploading map[string]string
	kick      chan struct{}
	stop      context.CancelFunc
	done      chan struct{}
}

// source is what the registry knows about one source.
type source struct {
	name   string
	active *entry
	since  time.Time
	origin string
	// why the active plugin became active, in a sentence.
	why string
	// payload is the last input the active plugin ran on successfully, and
	// baseline what the host made of its output; primed is that output,
	// and payloadDigest the payload's digest, so that the active plugin
	// is not run again on the same payload for every candidate.
	payload       *Payload
	payloadDigest string
	baseline      *Baseline
	primed        *rappel.Normalized
	// current is the upstream's payload the active plugin failed on (the
	// fetch succeeded, the run did not), and currentErr why: a candidate
	// is tried on it first, with nothing to lose against, since only a
	// new plugin can make that refresh succeed.
	current       *Payload
	currentDigest string
	currentErr    string
	// pending is a compiled candidate waiting for a payload to be tried
	// on, or being tried (trying).
	pending *candidate
	trying  bool
	// held is a candidate that passed its trial but changed more of the
	// records' content than MaxChange allows: it waits for an operator's
	// approval of its digest.
	held *heldCandidate
	// The last candidate that was not activated, and why.
	rejected, rejectedReason, rejectedPath string
	rejectedAt                             time.Time
	// manifest describes a source a plugin added; nil for a bundled one.
	manifest *Manifest
	// agencyNote says which of the manifest's agency names were ignored
	// (rappel.RegisterSourceAgency), added to every run's problems.
	agencyNote string
	// notRun is set for a source a plugin added whose kept plugin failed
	// verification at Open: it has no plugin, and /health says why.
	notRun bool
	// counters are what its plugins did, for Stats (stats.go).
	counters counters
}

// entry is an active (or retired) plugin and the runs using it, so that a
// swapped-out plugin is closed only when its last run ends.
type entry struct {
	plugin  *Plugin
	runs    int
	retired bool
}

type candidate struct {
	plugin *Plugin
	path   string
	wasm   []byte
	// sig is the signature read beside it, nil when there was none.
	sig   []byte
	found time.Time
	// approved is set when an operator approved the candidate's digest:
	// its trial skips the content gate, not the loss and refusal checks.
	approved bool
	// manifest is the candidate's, for a source a manifest added.
	manifest *Manifest
}

// heldCandidate is a candidate held for approval, with what it changed
// and why it was held, in a sentence.
type heldCandidate struct {
	c    *candidate
	diff DiffSummary
	why  string
	at   time.Time
}

// NewRegistry returns a registry of host's plugins, starting with the
// modules in initial by source name (the bundled plugins).
func NewRegistry(host *Host, initial map[string][]byte) *Registry {
	return &Registry{
		Host:            host,
		PollInterval:    DefaultPollInterval,
		MaxLoss:         DefaultMaxLoss,
		MaxChange:       DefaultMaxChange,
		Partial:         DefaultPartial(),
		RefusedMax:      DefaultRefusedMax,
		RefusedMaxBytes: DefaultRefusedMaxBytes,
		Now:             time.Now,
		Logger:          slog.Default(),
		bundled:         initial,
	}
}

// Open compiles the initial plugins, reads Dir once (so that a candidate
// already there is known before the first refresh) and starts watching it.
// The host must be open.
func (r *Registry) Open(ctx context.Context) error {
	r.sources = make(map[string]*source, len(r.bundled))
	r.files = make(map[string]fileStamp)
	r.kick = make(chan struct{}, 1)
	if err := r.openBundled(ctx); err != nil {
		return err
	}
	if err := r.restoreAdded(ctx); err != nil {
		return err
	}
	if r.Dir == "" {
		return nil
	}
	r.uploading = make(map[string]string)
	if err := r.openRefused(); err != nil {
		return err
	}
	r.Scan(ctx)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.stop, r.done = cancel, make(chan struct{})
	go r.watch(wctx)
	return nil
}

// openBundled opens every bundled source's plugin, compiling them in
// parallel: on a first start, before the data dir caches their machine
// code, compiling is most of a node's start (18 s for the three bundled
// plugins one after another on two cores).
func (r *Registry) openBundled(ctx context.Context) error {
	type opened struct {
		name string
		s    *source
		err  error
	}
	results := make(chan opened, len(r.bundled))
	for name, wasm := range r.bundled {
		go func() {
			s, err := r.openSource(ctx, name, wasm)
			results <- opened{name, s, err}
		}()
	}
	var errs []error
	for range r.bundled {
		o := <-results
		if o.err != nil {
			errs = append(errs, o.err)
			continue
		}
		r.sources[o.name] = o.s
	}
	return errors.Join(errs...)
}

// openSource loads source name's plugin: the one kept in ActiveDir by an
// earlier swap, or else the bundled one.
func (r *Registry) openSource(ctx context.Context, name string, bundled []byte) (*source, error) {
	kept, m, err := r.restore(name, SHA256(bundled))
	unverified, isUnverified := errors.AsType[*keptUnverified](err)
	if err != nil && !isUnverified {
		r.Logger.Warn("the kept active plugin cannot be read: running the bundled one", "source", name, "err", err)
	}
	if kept != nil {
		p, err := r.Host.Load(ctx, name, kept)
		if err == nil {
			r.Logger.Info("running the plugin kept from an earlier swap", "source", name, "sha256", p.SHA256, "since", m.Since, "from", m.From)
			return &source{name: name, active: &entry{plugin: p}, since: m.Since, origin: m.From, why: m.Why}, nil
		}
		r.Logger.Warn("the kept active plugin does not load: running the bundled one", "source", name, "err", err)
	}
	p, err := r.Host.Load(ctx, name, bundled)
	if err != nil {
		return nil, fmt.Errorf("loading bundled plugin: %w", err)
	}
	s := &source{name: name, active: &entry{plugin: p}, since: r.Now(), origin: "bundled", why: "it is the plugin this binary bundles."}
	if isUnverified {
		r.reject(s, unverified.sha, unverified.path, unverified.refusal("the bundled plugin runs instead"))
	}
	return s, nil
}

// Close stops watching and releases every plugin. It is safe after a
// partial Open. Runs still in progress keep their plugin until they end.
func (r *Registry) Close() error {
	if r.stop != nil {
		r.stop()
		<-r.done
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.sources {
		if s.active != nil {
			r.retire(s.active)
			s.active = nil
		}
		if s.pending != nil {
			_ = s.pending.plugin.Close(context.Background())
			s.pending = nil
		}
		if s.held != nil {
			_ = s.held.c.plugin.Close(context.Background())
			s.held = nil
		}
	}
	return nil
}

// Normalize runs the source's active plugin on input and returns the
// records the host accepted and every problem. It returns an error when
// the source has no plugin or the run failed (see Plugin.Run). Input may be
// any part of the source's payload (a refresh passes only what changed), so
// candidates are never tried on it: see Prime.
func (r *Registry) Normalize(ctx context.Context, name string, input fs.FS) (*rappel.Normalized, error) {
	return r.normalize(ctx, name, input, false)
}

// Prime is Normalize for the source's whole last good payload: it also
// keeps a copy of input, and what the active plugin made of it, as what
// candidates are tried on and judged against, and wakes the watcher for a
// candidate waiting for one. Passing part of the payload would let a
// candidate that drops records pass as one that keeps them all.
func (r *Registry) Prime(ctx context.Context, name string, full fs.FS) (*rappel.Normalized, error) {
	return r.normalize(ctx, name, full, true)
}

func (r *Registry) normalize(ctx context.Context, name string, input fs.FS, full bool) (*rappel.Normalized, error) {
	// Only a full payload is kept (for candidates); a part is only run.
	copyPayload := viewPayload
	if full {
		copyPayload = CopyPayload
	}
	payload, err := copyPayload(input)
	if err != nil {
		return nil, fmt.Errorf("normalizing %s: %w", name, err)
	}
	e, err := r.acquire(name)
	if err != nil {
		return nil, err
	}
	defer r.release(e)
	var digest string
	if full {
		digest = payload.Digest()
		if out := r.primedOutput(name, e, digest); out != nil {
			return out, nil
		}
	}
	res, err := e.plugin.Run(ctx, payload)
	r.countRun(name, res, err)
	if err != nil {
		if full && ctx.Err() == nil {
			r.Offer(name, payload, err)
		}
		return nil, err
	}
	v := r.judge(name, res)
	out := &rappel.Normalized{Records: v.Records, Problems: v.Problems, Plugin: e.plugin.SHA256, Duration: res.Duration}
	if full {
		r.mu.Lock()
		s := r.sources[name]
		if s.active == e {
			s.payload, s.payloadDigest, s.primed = payload, digest, out
			s.baseline = NewBaseline(e.plugin.SHA256, v)
			s.current, s.currentDigest, s.currentErr = nil, "", ""
		}
		waiting := s.pending != nil
		r.mu.Unlock()
		if waiting {
			r.nudge()
		}
	}
	return out, nil
}

// primedOutput returns what the active plugin e made of the payload of
// digest when it was last primed with it, or nil.
func (r *Registry) primedOutput(name string, e *entry, digest string) *rappel.Normalized {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sources[name]
	if s.active == e && s.primed != nil && s.payloadDigest == digest {
		return s.primed
	}
	return nil
}

// Offer gives the registry the upstream's current payload of source, whole,
// that the active plugin failed on with err (its fetch succeeded): a
// candidate is tried on it at once rather than on the last good payload,
// and without the active plugin's output to compare with, since there is
// none. Without a candidate it is kept for the next one. A refresh calls
// it; Prime does when the active plugin fails on the last good payload.
func (r *Registry) Offer(source string, current fs.FS, err error) {
	payload, cerr := CopyPayload(current)
	if cerr != nil {
		r.Logger.Warn("keeping the current payload for a candidate plugin", "source", source, "err", cerr)
		return
	}
	digest := payload.Digest()
	r.mu.Lock()
	s := r.sources[source]
	if s == nil || s.active == nil || s.currentDigest == digest {
		r.mu.Unlock()
		return
	}
	// Runs of several chunks fail alike: their joined errors repeat one
	// sentence, and the first says it.
	why, _, _ := strings.Cut(err.Error(), "\n")
	s.current, s.currentDigest, s.currentErr = payload, digest, strings.TrimRight(why, ". ")
	waiting := s.pending != nil
	r.mu.Unlock()
	if waiting {
		r.nudge()
	}
}

var _ rappel.Normalizer = (*Registry)(nil)

// errNoSource is returned for a source the registry has no plugin for.
var errNoSource = errors.New("no plugin is loaded for this source")

// acquire returns the source's active plugin, counting the run.
func (r *Registry) acquire(name string) (*entry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sources[name]
	if s == nil || s.active == nil {
		return nil, fmt.Errorf("normalizing %s: %w", name, errNoSource)
	}
	s.active.runs++
	return s.active, nil
}

func (r *Registry) release(e *entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.runs--
	if e.retired && e.runs == 0 {
		_ = e.plugin.Close(context.Background())
	}
}

// retire closes e once its runs end. r.mu must be held.
func (r *Registry) retire(e *entry) {
	e.retired = true
	if e.runs == 0 {
		_ = e.plugin.Close(context.Background())
	}
}

// PluginStatus is what the registry says about one source's plugin, for
// /health.
type PluginStatus struct {
	Source string `json:"source"`
	// Active is the SHA-256 of the running module; Origin is "bundled" or
	// the file it was read from; Since is when it became active.
	Active string    `json:"active,omitempty"`
	Origin string    `json:"origin,omitempty"`
	Since  time.Time `json:"since,omitzero"`
	// Why it became active, in a sentence.
	Why string `json:"why,omitempty"`
	// Pending is a candidate waiting for a payload to be tried on.
	Pending string `json:"pending,omitempty"`
	// Rejected is the last candidate that was not activated, and
	// RejectedReason why, in a sentence.
	Rejected       string    `json:"rejected,omitempty"`
	RejectedReason string    `json:"rejected_reason,omitempty"`
	RejectedAt     time.Time `json:"rejected_at,omitzero"`
}

// Status returns every source's plugin status, by source name.
func (r *Registry) Status() []PluginStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]PluginStatus, 0, len(r.sources))
	for _, s := range r.sources {
		st := PluginStatus{Source: s.name, Origin: s.origin, Since: s.since, Why: s.why, Rejected: s.rejected, RejectedReason: s.rejectedReason, RejectedAt: s.rejectedAt}
		if s.active != nil {
			st.Active = s.active.plugin.SHA256
		}
		if s.pending != nil {
			st.Pending = s.pending.plugin.SHA256
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	return out
}

// Active returns the SHA-256 of source's running plugin; "" when it has
// none.
func (r *Registry) Active(source string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.sources[source]; s != nil && s.active != nil {
		return s.active.plugin.SHA256
	}
	return ""
}

// Pending returns the SHA-256 of the candidate plugin of source waiting for
// a payload to be tried on (see Prime); "" when none waits.
func (r *Registry) Pending(source string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.sources[source]; s != nil && s.pending != nil {
		return s.pending.plugin.SHA256
	}
	return ""
}

// Holding says which candidate of source waits, and for what, for
// /health; "" when none does.
func (r *Registry) Holding(source string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sources[source]
	switch {
	case s == nil:
		return ""
	case s.held != nil:
		return s.held.why
	case s.pending != nil && !s.trying:
		return fmt.Sprintf("%s (sha256 %s) waits for a payload to be tried on: the source has had no refresh yet whose documents its active plugin parsed or failed on.", filepath.Base(s.pending.path), s.pending.plugin.SHA256[:12])
	}
	return ""
}

// Rejection says why the last candidate plugin of source was not
// activated, with when, for /health; "" when none was refused.
func (r *Registry) Rejection(source string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sources[source]
	if s == nil || s.rejected == "" {
		return ""
	}
	return fmt.Sprintf("%s (%s): %s", s.rejected, s.rejectedAt.UTC().Format(time.RFC3339), s.rejectedReason)
}

// NotRun lists, with why in a sentence, the sources a plugin added whose
// kept plugin did not verify at Open: they have no plugin to run.
func (r *Registry) NotRun() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for _, s := range r.sources {
		if s.notRun && s.active == nil && s.rejected != "" {
			out[s.name] = s.rejectedReason
		}
	}
	return out
}
