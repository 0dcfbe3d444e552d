package rappel

import (
	"context"
	"errors"
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
	// LastErrorReason is which kind of failure LastError is, one word of
	// FeedFailures; empty when the last refresh succeeded.
	LastErrorReason FeedFailure `json:"last_error_reason,omitempty"`
	// Note, after a refresh that succeeded without doing what its
	// figures suggest (a detail source with nothing to fetch), says so.
	Note string `json:"note,omitempty"`
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

// FeedFailure is why a source's refresh failed, in one word of a fixed
// vocabulary: what /health's last_error_reason and rappel_feed_error's
// reason label say, and so which runbook entry an operator reads. The
// sentence (FeedState.LastError) says what exactly failed.
type FeedFailure string

// The reasons a refresh fails. A failure is classified where it arises,
// by wrapping its error in a *FeedError (Fail), not from its words.
const (
	// FailureFetch: the upstream could not be fetched: unreachable, an
	// HTTP error status, a timeout, a body past its cap, an address the
	// rules refuse; for the detail source, every notice it tried (three
	// or more) failing so.
	FailureFetch FeedFailure = "fetch"
	// FailureParse: a document was fetched but is not in its format and
	// nothing usable stands in for it: JSON that does not parse (and a
	// CSV fallback that does not either), a CSV that is not one, an HTML
	// page where data was expected; for the detail source, every notice
	// it tried (three or more) answering something unreadable.
	FailureParse FeedFailure = "parse"
	// FailurePlugin: the source's plugin failed on what was fetched: it
	// trapped, ran past its deadline, or its output was refused.
	FailurePlugin FeedFailure = "plugin"
	// FailureStorage: the node's store could not read or write the
	// refresh: a full or failing disk; in a fleet, the refresh could not
	// be published to the shared store.
	FailureStorage FeedFailure = "storage"
	// FailureSuspiciousRemoval: the refresh would have emptied the source,
	// or removed more of its records than one refresh may, and was refused.
	FailureSuspiciousRemoval FeedFailure = "suspicious_removal"
	// FailureWaiting: the source cannot refresh before another does: the
	// detail documents wait for the dump's first live refresh, whose own
	// reason says why it has not happened.
	FailureWaiting FeedFailure = "waiting"
)

// FeedFailures is the vocabulary, in the order the documentation lists it.
var FeedFailures = []FeedFailure{FailureFetch, FailureParse, FailurePlugin, FailureStorage, FailureSuspiciousRemoval, FailureWaiting}

// FeedError is a refresh's failure with its reason; its message is its
// cause's.
type FeedError struct {
	Reason FeedFailure
	Err    error
}

func (e *FeedError) Error() string { return e.Err.Error() }
func (e *FeedError) Unwrap() error { return e.Err }

// Fail returns err classified as reason, or err itself when it is nil or
// already carries a reason: a failure is classified where it arises, and
// what wraps it on the way up does not change that.
func Fail(reason FeedFailure, err error) error {
	if err == nil || FailureOf(err) != "" {
		return err
	}
	return &FeedError{Reason: reason, Err: err}
}

// FailureOf returns the reason of the first *FeedError in err's chain, ""
// when there is none.
func FailureOf(err error) FeedFailure {
	var fe *FeedError
	if errors.As(err, &fe) {
		return fe.Reason
	}
	return ""
}
