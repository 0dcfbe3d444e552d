// Package index holds the read side of the service: an immutable in-memory
// Snapshot of every record, built once from the store and swapped in whole
// by a Catalog when the data changes.
//
// Every record's JSON is encoded when the snapshot is built, in three
// variants (both languages, English only, French only), so that serving a
// record or a page of records copies bytes and encodes nothing.
package index

import (
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/rappel-ca/rappel"
)

// Snapshot is an immutable view of all records. It implements
// rappel.Snapshot.
type Snapshot struct {
	info    rappel.DatasetInfo
	records []*rappel.Record
	byID    map[string]int32
	// encoded[v][i] is record i's JSON in variant v (see variant).
	encoded [3][][]byte
}

// variant returns the encoded-bytes slot for a lang parameter.
func variant(lang string) int {
	switch lang {
	case rappel.LangEN:
		return 1
	case rappel.LangFR:
		return 2
	}
	return 0
}

// Build encodes recs and returns their snapshot. recs must not be changed
// afterwards. Records with the same record_id are an error.
func Build(recs []*rappel.Record, info rappel.DatasetInfo) (*Snapshot, error) {
	s := &Snapshot{info: info, records: recs, byID: make(map[string]int32, len(recs))}
	s.info.Records = len(recs)
	for v := range s.encoded {
		s.encoded[v] = make([][]byte, len(recs))
	}
	for i, r := range recs {
		if _, dup := s.byID[r.RecordID]; dup {
			return nil, fmt.Errorf("building snapshot: record_id %q appears twice", r.RecordID)
		}
		s.byID[r.RecordID] = int32(i)
		for v, lang := range []string{"", rappel.LangEN, rappel.LangFR} {
			b, err := json.Marshal(r.ForLang(lang))
			if err != nil {
				return nil, fmt.Errorf("encoding record %q: %w", r.RecordID, err)
			}
			s.encoded[v][i] = b
		}
	}
	return s, nil
}

// Len is the number of records.
func (s *Snapshot) Len() int { return len(s.records) }

// Info describes the dataset the snapshot was built from.
func (s *Snapshot) Info() rappel.DatasetInfo { return s.info }

// RecordJSON returns the pre-encoded JSON of the record with id.
func (s *Snapshot) RecordJSON(id, lang string) ([]byte, bool) {
	i, ok := s.byID[id]
	if !ok {
		return nil, false
	}
	return s.encoded[variant(lang)][i], true
}

// Record returns the decoded record with id; callers must not change it.
func (s *Snapshot) Record(id string) (*rappel.Record, bool) {
	i, ok := s.byID[id]
	if !ok {
		return nil, false
	}
	return s.records[i], true
}

// Catalog holds the current snapshot and swaps it atomically. It implements
// rappel.Catalog. The zero value holds an empty snapshot.
type Catalog struct {
	cur atomic.Pointer[Snapshot]
}

var empty = &Snapshot{byID: map[string]int32{}}

// Snapshot returns the current snapshot, never nil.
func (c *Catalog) Snapshot() rappel.Snapshot {
	if s := c.cur.Load(); s != nil {
		return s
	}
	return empty
}

// Current returns the current *Snapshot, never nil.
func (c *Catalog) Current() *Snapshot {
	if s := c.cur.Load(); s != nil {
		return s
	}
	return empty
}

// Swap makes s the current snapshot; readers holding the old one keep it.
func (c *Catalog) Swap(s *Snapshot) { c.cur.Store(s) }
