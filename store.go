package rappel

import (
	"context"
	"time"
)

// RecordStore is the durable home of records and their secondary index keys.
// Implementations honour ctx cancellation between records.
type RecordStore interface {
	// PutRecords writes recs, replacing earlier versions with the same
	// record_id, together with all their index keys, in one synced batch:
	// once it returns nil the write survives a crash.
	PutRecords(ctx context.Context, recs []*Record) error

	// Record returns the record with id, or an *Error with code ENOTFOUND.
	Record(ctx context.Context, id string) (*Record, error)

	// ForEachRecord calls fn for every record in record_id order and stops
	// at the first error fn returns, returning it.
	ForEachRecord(ctx context.Context, fn func(*Record) error) error

	// DatasetInfo returns what the store knows of the dataset as a whole.
	DatasetInfo(ctx context.Context) (DatasetInfo, error)

	// SetDatasetInfo records info durably.
	SetDatasetInfo(ctx context.Context, info DatasetInfo) error
}

// DatasetInfo describes the dataset a node serves.
type DatasetInfo struct {
	// UpdatedAt is when the data last changed (the bundle's build time, or
	// the last refresh that changed something).
	UpdatedAt time.Time `json:"updated_at"`
	// Source says where the data came from: "bundle" or "feeds".
	Source string `json:"source"`
	// Kind says what the data is: DatasetSynthetic (generated, a demo)
	// or DatasetAgencies (fetched from the agencies); see Synthetic for
	// stores written before it was kept.
	Kind string `json:"kind,omitempty"`
	// Records is the number of records stored.
	Records int `json:"records"`
	// Bundle names the data bundle the store was loaded from (its build
	// time and a digest of its content), so that a node started with a
	// new binary knows whether its data dir still holds that binary's
	// bundle. Live refreshes keep it.
	Bundle string `json:"bundle,omitempty"`
	// Version, in a fleet sharing a store, is the number of the last
	// publication of the fleet's feeds the data includes (Publication);
	// 0 on a single node.
	Version int64 `json:"version,omitempty"`
}

// Snapshot is an immutable in-memory view of every record, as served. A
// refresh builds a new Snapshot and swaps it in; readers holding the old one
// keep a consistent view.
type Snapshot interface {
	// Len is the number of records.
	Len() int
	// Info describes the dataset the snapshot was built from.
	Info() DatasetInfo
	// RecordJSON returns the record's JSON, encoded once when the snapshot
	// was built, with translations limited to lang when lang is "en" or
	// "fr". ok is false when no record has that id.
	RecordJSON(id, lang string) (b []byte, ok bool)
	// AppendRecordJSON is RecordJSON appending to dst, so that a caller
	// serving many records can reuse one buffer instead of allocating the
	// record's size per request. digest is the 64-bit xxhash of the bytes
	// appended, worked out once per snapshot and record variant, so that a
	// record's ETag costs no hashing per request.
	AppendRecordJSON(dst []byte, id, lang string) (b []byte, digest uint64, ok bool)
	// Record returns a decoded copy of the record with id; ok is false
	// when no record has that id.
	Record(id string) (r *Record, ok bool)
	// NewestByRecallID returns a decoded copy of the newest record (first
	// in GET /recall's default order) whose recall_id is recallID; ok is
	// false when none has it.
	NewestByRecallID(recallID string) (r *Record, ok bool)
	// Searcher answers GET /recall from the snapshot.
	Searcher
	// StatsSource answers GET /recall/stats from the snapshot, with counts
	// equal to those of GET /recall for the same filter and issued_after.
	StatsSource
	// Summarizer lists the records lookups find.
	Summarizer
	// Suggester completes what is being typed.
	Suggester
	// CoverageSource gives the share of notices with products and
	// barcodes, year by year, for /health and the metrics.
	CoverageSource
}

// Catalog hands out the current Snapshot. Implementations are safe for
// concurrent use and never return nil.
type Catalog interface {
	Snapshot() Snapshot
}
