package index

import (
	"slices"

	"github.com/rappel-ca/rappel"
)

// summary is what lookups list of a document, kept so that they decode no
// JSON.
type summary struct {
	recallID, recallType, titleEN, titleFR string
}

// addLookups records doc's summary and, when doc is the first (newest)
// document with its recall_id, makes it that recall_id's document.
func (s *Snapshot) addLookups(doc int32, r *rappel.Record) {
	sm := summary{recallID: r.RecallID, recallType: r.RecallType}
	if i := slices.Index(rappel.RecallTypes, r.RecallType); i >= 0 {
		sm.recallType = rappel.RecallTypes[i] // one copy of each type's bytes
	}
	if tr := r.Translations.EN; tr != nil {
		sm.titleEN = tr.Title
	}
	if tr := r.Translations.FR; tr != nil {
		sm.titleFR = tr.Title
	}
	s.summaries = append(s.summaries, sm)
	if _, ok := s.byRecallID[r.RecallID]; !ok {
		s.byRecallID[r.RecallID] = doc
	}
}

// Summaries returns the summaries of the records with ids, in document
// order (newest first), each once, skipping ids the snapshot lacks.
func (s *Snapshot) Summaries(ids []string) []rappel.RecordSummary {
	var buf [16]int32
	docs := buf[:0]
	for _, id := range ids {
		if d, ok := s.byID[id]; ok {
			docs = append(docs, d)
		}
	}
	slices.Sort(docs)
	docs = slices.Compact(docs)
	out := make([]rappel.RecordSummary, len(docs))
	for i, d := range docs {
		sm := &s.summaries[d]
		out[i] = rappel.RecordSummary{RecordID: s.ids[d], RecallID: sm.recallID, RecallType: sm.recallType, TitleEN: sm.titleEN, TitleFR: sm.titleFR}
	}
	return out
}

// NewestByRecallID returns a decoded copy of the newest record whose
// recall_id is recallID: the first in document order.
func (s *Snapshot) NewestByRecallID(recallID string) (*rappel.Record, bool) {
	doc, ok := s.byRecallID[recallID]
	if !ok {
		return nil, false
	}
	return s.Record(s.ids[doc])
}
