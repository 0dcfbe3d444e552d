package rappel

import (
	"context"
	"io/fs"
	"time"
)

// Normalizer turns one source's raw documents into records, with the
// plugin currently active for that source. Implementations honour ctx: a
// run past its deadline is stopped and returns an error.
type Normalizer interface {
	Normalize(ctx context.Context, source string, input fs.FS) (*Normalized, error)
}

// Normalized is the outcome of one normalizer run.
type Normalized struct {
	// Records are the source's records; a source may emit partial records
	// that only enrich others (see Assemble).
	Records []*Record
	// Problems are the input records the plugin or the host refused.
	Problems []Problem
	// Plugin is the SHA-256 (hex) of the module that ran.
	Plugin   string
	Duration time.Duration
}

// FeedState is what a node knows about one source's feed, shown in /health
// and kept across restarts.
type FeedState struct {
	Source string `json:"source"`
	// Live is false while the source's records are the bundle's.
	Live        bool      `json:"live"`
	LastAttempt time.Time `json:"last_attempt,omitzero"`
	LastSuccess time.Time `json:"last_success,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
	// Stale is set when the source has had no success for three intervals.
	Stale    bool `json:"stale"`
	Records  int  `json:"records"`
	Rejected int  `json:"rejected"`
	// Problems keeps a sample of the last run's rejected records.
	Problems []Problem `json:"problems,omitempty"`
	// Plugin is the SHA-256 of the active plugin; PluginRejected says why
	// the last candidate plugin was not activated, if it was not.
	Plugin         string `json:"plugin,omitempty"`
	PluginRejected string `json:"plugin_rejected,omitempty"`
	// PluginHeld says which candidate plugin waits, and for what: a
	// payload to be tried on, or an operator's approval.
	PluginHeld string `json:"plugin_held,omitempty"`
	// Removed, for a source a plugin's manifest added and an operator
	// removed, says when and why; its records were archived then.
	Removed string `json:"removed,omitempty"`
	// LastDuration is how long the last refresh took, successful or not,
	// and LastChanged how many records the last successful one wrote or
	// deleted. They are for /metrics, like a log line's figures: not in
	// /health, not kept across restarts.
	LastDuration time.Duration `json:"-"`
	LastChanged  int           `json:"-"`
	// Refreshes is what the source's refreshes did since the node started,
	// for /metrics too.
	Refreshes RefreshStats `json:"-"`
}
