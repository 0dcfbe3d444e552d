package plugins

import (
	"sort"
	"time"
)

// maxHistory is how many swaps and refusals the registry remembers.
const maxHistory = 50

// Event is one swap or refusal of a candidate plugin, for the history in
// GET /admin/plugins.
type Event struct {
	At     time.Time `json:"at"`
	Source string    `json:"source"`
	SHA256 string    `json:"sha256"`
	// Event is "activated", "held" or "refused"; Why says why, in a sentence.
	Event string `json:"event"`
	Why   string `json:"why"`
}

// ActiveReport is a source's active plugin: its SHA-256, since when and why
// it runs, and where it came from: "bundled" (the binary's) or "dir" (a
// candidate of --plugins-dir, at Path).
type ActiveReport struct {
	SHA256 string    `json:"sha256"`
	Since  time.Time `json:"since"`
	Why    string    `json:"why"`
	From   string    `json:"from"`
	Path   string    `json:"path,omitempty"`
}

// CandidateReport is a candidate plugin of a source: "trying" (its trial
// runs now), "held" (it waits for a payload to be tried on, or for an
// operator's approval: see Reason) or "refused" (the last refused, with
// why).
type CandidateReport struct {
	SHA256 string    `json:"sha256"`
	Path   string    `json:"path,omitempty"`
	State  string    `json:"state"`
	Since  time.Time `json:"since"`
	Why    string    `json:"why"`
	// Reason says why a held candidate is held: "awaiting_payload" (it
	// has not been tried yet) or "awaiting_approval" (it passed its trial
	// but changed more of the records' content than allowed; Diff says
	// what it changed, and approving its sha256 activates it).
	Reason string       `json:"reason,omitempty"`
	Diff   *DiffSummary `json:"diff,omitempty"`
}

// SourceReport is what the registry knows of one source's plugins.
type SourceReport struct {
	Source     string            `json:"source"`
	Active     *ActiveReport     `json:"active,omitempty"`
	Candidates []CandidateReport `json:"candidates"`
	// Manifest is the manifest of a source a plugin added.
	Manifest *Manifest `json:"manifest,omitempty"`
}

// Report is the registry's state for GET /admin/plugins: every source's
// plugins, the last swaps and refusals, newest first, and the refused
// candidates kept.
type Report struct {
	Sources []SourceReport `json:"sources"`
	History []Event        `json:"history"`
	// Refused is what RefusedDir keeps of the refused candidates, newest
	// first.
	Refused []RefusedPlugin `json:"refused"`
}

// Report returns every source's active plugin and candidates, and the
// history of swaps and refusals.
func (r *Registry) Report() Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := Report{Sources: make([]SourceReport, 0, len(r.sources)), History: make([]Event, 0, len(r.history))}
	for _, s := range r.sources {
		rep.Sources = append(rep.Sources, s.report())
	}
	sort.Slice(rep.Sources, func(i, j int) bool { return rep.Sources[i].Source < rep.Sources[j].Source })
	for i := len(r.history) - 1; i >= 0; i-- {
		rep.History = append(rep.History, r.history[i])
	}
	rep.Refused = r.refusedReport()
	return rep
}

// report is s's part of Report. r.mu must be held.
func (s *source) report() SourceReport {
	sr := SourceReport{Source: s.name, Candidates: []CandidateReport{}, Manifest: s.manifest}
	if s.active != nil {
		a := &ActiveReport{SHA256: s.active.plugin.SHA256, Since: s.since, Why: s.why, From: "bundled"}
		switch s.origin {
		case "bundled":
		case fleetOrigin:
			a.From = fleetOrigin
		default:
			a.From, a.Path = "dir", s.origin
		}
		sr.Active = a
	}
	if c := s.pending; c != nil {
		cr := CandidateReport{SHA256: c.plugin.SHA256, Path: c.path, State: "held", Reason: "awaiting_payload", Since: c.found,
			Why: "It waits for a payload to be tried on: the source has had no refresh yet whose payload its active plugin parsed or failed on."}
		if s.trying {
			cr.State, cr.Reason, cr.Why = "trying", "", "Its trial on the source's payload is running."
		}
		sr.Candidates = append(sr.Candidates, cr)
	}
	if h := s.held; h != nil {
		diff := h.diff
		sr.Candidates = append(sr.Candidates, CandidateReport{SHA256: h.c.plugin.SHA256, Path: h.c.path, State: "held", Reason: "awaiting_approval", Since: h.at, Why: h.why, Diff: &diff})
	}
	if s.rejected != "" {
		sr.Candidates = append(sr.Candidates, CandidateReport{SHA256: s.rejected, Path: s.rejectedPath, State: "refused", Since: s.rejectedAt, Why: s.rejectedReason})
	}
	return sr
}

// remember adds an event to the history. r.mu must be held.
func (r *Registry) remember(source, sha, event, why string) {
	r.history = append(r.history, Event{At: r.Now(), Source: source, SHA256: sha, Event: event, Why: why})
	if s := r.sources[source]; s != nil && (event == "activated" || event == "added") {
		s.counted().activations++
	}
	if len(r.history) > maxHistory {
		r.history = r.history[len(r.history)-maxHistory:]
	}
}
