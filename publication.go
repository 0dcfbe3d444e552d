package rappel

import (
	"context"
	"errors"
	"time"
)

// A fleet of nodes sharing a store refreshes the feeds once: the node
// holding the feed lease (the leader) fetches the agencies, runs the
// plugins, and publishes what each refresh changed as one Publication in
// the shared store; every other node (a follower) applies the publications
// in order to its own store. The fleet's dataset version is the number of
// the last publication applied.

// Publication is one refresh's changes, published by the leader: the
// records it put, whole, and the record_ids it deleted, with the dataset
// info after it.
type Publication struct {
	// Version numbers the publications of a fleet, from 1, without gaps.
	Version int64 `json:"version"`
	// Node names the leader that published it, and Token its lease's
	// fencing token then.
	Node  string    `json:"node"`
	Token int64     `json:"token"`
	At    time.Time `json:"at"`
	// Info is the dataset info after the refresh; Info.Version is Version.
	Info   DatasetInfo `json:"info"`
	Put    []*Record   `json:"put,omitempty"`
	Delete []string    `json:"delete,omitempty"`
	// Gen and Changes are the leader's change log entries the refresh
	// wrote (without their records), which a follower writes into its own
	// log with the same numbers, so that a change feed cursor is good on
	// every node of the fleet.
	Gen     uint64            `json:"gen,omitempty"`
	Changes []PublishedChange `json:"changes,omitempty"`
	// Agencies are the agencies plugins' manifests registered on the
	// leader, which a follower registers too: it runs no plugin, and must
	// still accept their names in filters.
	Agencies []Agency `json:"agencies,omitempty"`
	// Replace marks a publication that holds the whole dataset: Put is
	// every record, and a follower replaces its store's data with it (a
	// leader whose store was replaced, as by the switch from synthetic
	// data to the agencies', publishes one). Its Changes are empty: the
	// change log starts a new generation, Gen, at the number Seq.
	Replace bool   `json:"replace,omitempty"`
	Seq     uint64 `json:"seq,omitempty"`
	// Source is, in a publication of one source's refresh, what the
	// refresh wrote of that source besides the assembled records: its
	// state, partial records and raw records. A follower writes them too,
	// so that its feed store is the leader's and, should it lead next, its
	// first refresh finds changed only what changed upstream.
	Source *PublishedSource `json:"source,omitempty"`
	// Partials, Raw and States are, in a publication that Replaces the
	// dataset, every source's partial records, raw records and state.
	Partials map[string][]*Record      `json:"partials,omitempty"`
	Raw      map[string][]PublishedRaw `json:"raw,omitempty"`
	States   []SourceState             `json:"states,omitempty"`
}

// PublishedSource is the part of a SourceChange that concerns its source
// alone, as published.
type PublishedSource struct {
	State          SourceState    `json:"state"`
	PutPartials    []*Record      `json:"put_partials,omitempty"`
	DeletePartials []string       `json:"delete_partials,omitempty"`
	PutRaw         []PublishedRaw `json:"put_raw,omitempty"`
	DeleteRaw      []string       `json:"delete_raw,omitempty"`
}

// PublishedRaw is a raw record with its data, which RawRecord's JSON
// leaves out; Data is nil where the leader wrote the index alone.
type PublishedRaw struct {
	RawRecord
	Data []byte `json:"data,omitempty"`
}

// PublishRaw returns raws as published.
func PublishRaw(raws []RawRecord) []PublishedRaw {
	if raws == nil {
		return nil
	}
	out := make([]PublishedRaw, len(raws))
	for i, r := range raws {
		out[i] = PublishedRaw{RawRecord: r, Data: r.Data}
	}
	return out
}

// Unpublished returns raws as a store writes them.
func Unpublished(raws []PublishedRaw) []RawRecord {
	if raws == nil {
		return nil
	}
	out := make([]RawRecord, len(raws))
	for i, r := range raws {
		out[i] = r.RawRecord
		out[i].Data = r.Data
	}
	return out
}

// StagedChange is a leader's write made ready in its store and not yet
// committed: what it changes, as it is published. A leader commits it
// only once it is published (package fleet), so that its store never
// holds what the fleet does not.
type StagedChange struct {
	// Gen and Changes are the change log entries the write adds.
	Gen     uint64
	Changes []PublishedChange
	// Put are the assembled records it changes, whole; Delete the
	// record_ids it deletes.
	Put    []*Record
	Delete []string
}

// ErrUnpublished is wrapped by a fleet leader's writes that were not
// stored because they could not be published: the store is as it was,
// and the next refresh tries again.
var ErrUnpublished = errors.New("the refresh could not be published to the fleet, so it was not stored")

// PublishedChange is one change log entry of a publication.
type PublishedChange struct {
	Seq      uint64    `json:"seq"`
	RecordID string    `json:"record_id"`
	Kind     string    `json:"kind"`
	At       time.Time `json:"at,omitzero"`
}

// Lease is the feed lease as a node holds it: whoever holds it is the
// leader until Expires, and Token, which grows at every change of holder,
// fences what it publishes.
type Lease struct {
	Holder  string    `json:"holder"`
	Token   int64     `json:"token"`
	Expires time.Time `json:"expires"`
}

// ErrFenced is returned by PublicationLog.Publish when the lease the
// publication was made under is no longer held: another node leads now,
// and the publication is dropped whole.
var ErrFenced = errors.New("the feed lease is no longer held by this node")

// PublicationLog is the shared store's side of a fleet's feeds (package
// kv/postgres): the lease, and the log of publications.
type PublicationLog interface {
	// AcquireLease takes the lease for node for ttl when it is free or
	// expired, or renews it when node holds it; ok is false when another
	// node holds it (lease then says which, until when).
	AcquireLease(ctx context.Context, node string, ttl time.Duration) (lease Lease, ok bool, err error)
	// RenewLease extends the lease node holds under token by ttl; ok is
	// false when node no longer holds it under that token.
	RenewLease(ctx context.Context, node string, token int64, ttl time.Duration) (ok bool, err error)
	// ReleaseLease gives the lease up, if node still holds it under token,
	// so that another node can take it at once.
	ReleaseLease(ctx context.Context, node string, token int64) error
	// Publish appends p (its Version, Node and Token are set here) in one
	// transaction that first checks that p.Node holds the lease under
	// p.Token and that it has not expired; otherwise it writes nothing and
	// returns ErrFenced. It returns the version given.
	Publish(ctx context.Context, p *Publication) (int64, error)
	// Publications returns the publications after version, oldest first,
	// at most limit.
	Publications(ctx context.Context, after int64, limit int) ([]*Publication, error)
	// LatestVersion returns the version of the last publication; 0 when
	// none was made.
	LatestVersion(ctx context.Context) (int64, error)
}

// FleetPlugin is the plugin a fleet's leader activated for a source (a
// swap or a new source), kept in the shared store so that the leader's
// successor runs it too. Followers need none: they serve what the leader
// publishes. Signature is the plugin's minisign signature as the leader
// verified it (nil when it ran unsigned plugins): the successor verifies
// it again with its own trusted keys before running the plugin.
type FleetPlugin struct {
	Source    string
	SHA256    string
	Wasm      []byte
	Signature []byte
	Why       string
	At        time.Time
}

// FleetStats are a fleet node's figures, as /health's status, /readyz and
// the metrics read them (package fleet keeps them).
type FleetStats struct {
	// Leading is set on the lease holder.
	Leading bool
	// Version is the dataset version the node's store holds; Latest the
	// fleet's newest, as last seen.
	Version, Latest int64
	// Lag is how far behind the fleet the node may be, and SinceContact
	// how long ago it last reached the shared store.
	Lag, SinceContact time.Duration
	// Degraded: the shared store unreachable, or the node behind.
	Degraded bool
	// Ready: the node has caught up with the fleet once, at ReadyAt.
	Ready   bool
	ReadyAt int64
	// PublishFailures counts the writes the node could not publish.
	PublishFailures int64
}
