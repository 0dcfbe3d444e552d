package rappel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// FeedStore is the durable side of the live feeds: besides the assembled
// records (RecordStore), it keeps per source the partial records that
// source's plugin emitted, the raw upstream records they were normalized
// from, and the source's state, and it applies one source's refresh in a
// single synced write. Methods honour ctx cancellation.
type FeedStore interface {
	RecordStore

	// SourceState returns what is remembered of source; the zero
	// SourceState, with Feed.Source set, when nothing is.
	SourceState(ctx context.Context, source string) (SourceState, error)
	// SourceStates returns the state of every source the store knows, in
	// source name order.
	SourceStates(ctx context.Context) ([]SourceState, error)

	// PartialHashes calls fn with the record_id and content hash (see
	// ContentHash) of every stored partial record of source, in record_id
	// order, and stops at fn's first error.
	PartialHashes(ctx context.Context, source string, fn func(id, hash string) error) error
	// Partials returns the stored partial records of source whose
	// record_ids are in ids, by record_id; ids without one are absent.
	Partials(ctx context.Context, source string, ids []string) (map[string]*Record, error)

	// RawIndex calls fn for every raw record of source, in key order,
	// without its Data; RawData does the same with Data.
	RawIndex(ctx context.Context, source string, fn func(RawRecord) error) error
	RawData(ctx context.Context, source string, fn func(RawRecord) error) error

	// ApplySource writes c in one batch committed durably: once it returns
	// nil all of c survives a crash, and a crash before leaves none of it.
	ApplySource(ctx context.Context, c *SourceChange) error

	// Replace makes the store hold the data given and nothing else of its
	// kind (records, every source's partial records, raw records and
	// state, the dataset info), in one durable write: a crash leaves the
	// old data or the new, never a mix. The change log starts a new
	// generation, so that a change feed cursor of the old data is gone.
	// Subscriptions, webhooks and their queues stay.
	Replace(ctx context.Context, recs []*Record, partials map[string][]*Record, raw map[string][]RawRecord, states []SourceState, info DatasetInfo) error

	// NewRecalls returns the batches of new recalls not yet acknowledged,
	// oldest first; AckNewRecalls deletes one, durably. Ids of batches that
	// do not exist are ignored.
	NewRecalls(ctx context.Context) ([]NewRecalls, error)
	AckNewRecalls(ctx context.Context, seq uint64) error
}

// SourceState is what a node remembers of one source between refreshes.
type SourceState struct {
	// Feed is the state shown in /health.
	Feed FeedState `json:"feed"`
	// Plugin is the SHA-256 of the plugin that made the stored partial
	// records: when the active plugin differs, every raw record is
	// normalized again.
	Plugin string `json:"plugin,omitempty"`
	// Files holds, per file the source fetches (by its name under the
	// plugin's /in), what the next conditional request sends.
	Files map[string]FileState `json:"files,omitempty"`
	// Rejected lists the problems of the raw records as they stand: a
	// problem stays until its record is normalized again.
	Rejected []Problem `json:"rejected,omitempty"`
	// Followed, for a source fetched per record of another, identifies
	// that source's documents when this one last caught up with them
	// (nothing left to fetch); empty while it has not.
	Followed string `json:"followed,omitempty"`
}

// FileState is what is remembered of one fetched upstream file.
type FileState struct {
	URL          string `json:"url"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	// SHA256 is the hex digest of the body last fetched, so that a 200
	// with an unchanged body costs no parsing either.
	SHA256 string `json:"sha256,omitempty"`
	// FetchedAt is when the file was last asked for, for a file fetched
	// less often than its source is refreshed (feeds.Doc's Every).
	FetchedAt time.Time `json:"fetched_at,omitzero"`
}

// RawRecord is one upstream record as fetched, keyed by its native key (a
// Health Canada NID, a Transport Canada recall number). Refreshes compare
// raw records by Hash and normalize only those that changed.
type RawRecord struct {
	Key string `json:"key"`
	// Hash is the content hash of Data (HashBytes).
	Hash string `json:"hash"`
	// IDs are the record_ids normalizing the raw record is expected to
	// yield, so that removing it removes them.
	IDs []string `json:"ids,omitempty"`
	// Version, for a source fetched per record of another source (detail
	// documents per notice of the dump), is the Hash of that record when
	// this one was fetched.
	Version string `json:"version,omitempty"`
	// Data is the raw bytes, in the source's framing; nil when only the
	// index was read.
	Data []byte `json:"-"`
}

// SourceChange is the outcome of one refresh of one source, written by
// FeedStore.ApplySource in one durable batch.
type SourceChange struct {
	// State replaces the source's state.
	State SourceState
	// The source's partial records: new or changed ones to write, and the
	// record_ids of those to delete.
	PutPartials    []*Record
	DeletePartials []string
	// Assembled records (with their index keys): to write, and to delete.
	PutRecords    []*Record
	DeleteRecords []string
	// The source's raw records: new or changed ones to write (their data
	// too when they carry it), and the keys of those to delete.
	PutRaw    []RawRecord
	DeleteRaw []string
	// NewRecalls, when not nil, is written as a new batch for alerts.
	NewRecalls *NewRecalls
	// Events, when not nil, is written as a new batch for webhooks.
	Events *RecordEvents
	// Info, when not nil, replaces the dataset info.
	Info *DatasetInfo
}

// NewRecalls is one refresh's batch of records that did not exist before,
// kept durably until the alerts acknowledge it.
type NewRecalls struct {
	// Seq orders batches; the store assigns it.
	Seq    uint64    `json:"seq"`
	At     time.Time `json:"at"`
	Source string    `json:"source"`
	// Initial is set on a source's first live snapshot when the source
	// held no records before it: its records are new to the node, not to
	// the world. Over the bundle's records, a first live snapshot's new
	// records are new since the bundle was built, and not Initial.
	Initial   bool     `json:"initial,omitempty"`
	RecordIDs []string `json:"record_ids"`
}

// ContentHash returns the hex SHA-256 of r's JSON encoding, truncated to
// 16 bytes: two records with equal hashes encode identically.
func ContentHash(r *Record) (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	return HashBytes(b), nil
}

// HashBytes is the content hash of already encoded bytes (see ContentHash).
func HashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}
