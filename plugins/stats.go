package plugins

import (
	"errors"
	"maps"
	"sort"

	"github.com/rappel-ca/rappel"
)

// RunBuckets are the bounds, in seconds, of the plugin-run histogram: a run
// on a few changed records takes milliseconds, one on a whole source
// seconds, and the host stops it at its Timeout (a minute by default).
var RunBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// counters are what a source's plugins did, for Stats. r.mu guards them.
type counters struct {
	runs, failures, outputBytes uint64
	runSeconds                  rappel.Histogram
	activations                 uint64
	refusals                    map[string]uint64
}

// refusal is why a candidate was refused, with its class (one of
// rappel.RefusalClasses), so that /metrics counts refusals by a word rather
// than by a sentence.
type refusal struct {
	class string
	err   error
}

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// refusalClass is err's class; an error no check classed is the manifest's
// (its agency, or the documents it lists, which the feeds refused).
func refusalClass(err error) string {
	if r, ok := errors.AsType[refusal](err); ok {
		return r.class
	}
	return rappel.RefusedManifest
}

// countRun counts a run of one of source's plugins. It takes r.mu.
func (r *Registry) countRun(source string, res *Result, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sources[source]
	if s == nil {
		return
	}
	c := s.counted()
	c.runs++
	if err != nil {
		c.failures++
	}
	if res != nil {
		c.runSeconds.ObserveDuration(res.Duration)
		c.outputBytes += uint64(max(res.OutputBytes, 0))
	}
}

// counted returns s's counters, made on first use. r.mu must be held.
func (s *source) counted() *counters {
	if s.counters.refusals == nil {
		s.counters.refusals = make(map[string]uint64, len(rappel.RefusalClasses))
		s.counters.runSeconds = rappel.NewHistogram(RunBuckets)
	}
	return &s.counters
}

// Stats returns what every source's plugins did since the registry opened,
// every figure present from the start: every refusal class at 0, and the
// run histogram empty.
func (r *Registry) Stats() []rappel.PluginStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]rappel.PluginStats, 0, len(r.sources))
	for _, s := range r.sources {
		c := s.counted()
		st := rappel.PluginStats{
			Source: s.name, Runs: c.runs, Failures: c.failures, RunSeconds: c.runSeconds.Clone(), OutputBytes: c.outputBytes,
			Activations: c.activations, Refusals: maps.Clone(c.refusals), Held: s.held != nil,
		}
		for _, class := range rappel.RefusalClasses {
			st.Refusals[class] += 0
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	return out
}
