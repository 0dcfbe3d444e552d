package index

import (
	"slices"
	"sort"

	"github.com/rappel-ca/rappel"
)

// Parts of a document's summary, what lookups list of it, kept so that
// they decode no JSON: four strings per document in s.summaries.
const (
	sumRecallID = iota
	sumRecallType
	sumTitleEN
	sumTitleFR
	sumParts
)

// addLookups records the next document's summary.
func (s *Snapshot) addLookups(r *rappel.Record) {
	var en, fr string
	if tr := r.Translations.EN; tr != nil {
		en = tr.Title
	}
	if tr := r.Translations.FR; tr != nil {
		fr = tr.Title
	}
	for _, v := range [sumParts]string{r.RecallID, r.RecallType, en, fr} {
		s.summaries.add(v)
	}
}

// Summaries returns the summaries of the records with ids, in document
// order (newest first), each once, skipping ids the snapshot lacks.
func (s *Snapshot) Summaries(ids []string) []rappel.RecordSummary {
	var buf [16]int32
	docs := buf[:0]
	for _, id := range ids {
		if d, ok := s.doc(id); ok {
			docs = append(docs, d)
		}
	}
	slices.Sort(docs)
	docs = slices.Compact(docs)
	out := make([]rappel.RecordSummary, len(docs))
	for i, d := range docs {
		out[i] = s.summary(d)
	}
	return out
}

// summary returns document d's summary, copied out of the snapshot.
func (s *Snapshot) summary(d int32) rappel.RecordSummary {
	p := sumParts * int(d)
	sm := rappel.RecordSummary{RecordID: s.ids.str(int(d)), RecallID: s.summaries.str(p + sumRecallID),
		TitleEN: s.summaries.str(p + sumTitleEN), TitleFR: s.summaries.str(p + sumTitleFR)}
	t := s.summaries.view(p + sumRecallType)
	if i := slices.Index(rappel.RecallTypes, t); i >= 0 {
		sm.RecallType = rappel.RecallTypes[i] // one copy of each type's bytes
	} else {
		sm.RecallType = s.summaries.str(p + sumRecallType)
	}
	return sm
}

// newestOfRecall returns the first (newest) document whose recall_id is
// recallID.
func (s *Snapshot) newestOfRecall(recallID string) (int32, bool) {
	rid := func(i int) string { return s.summaries.view(sumParts*int(s.byRecall[i]) + sumRecallID) }
	i := sort.Search(len(s.byRecall), func(i int) bool { return rid(i) >= recallID })
	if i == len(s.byRecall) || rid(i) != recallID {
		return 0, false
	}
	return s.byRecall[i], true
}

// NewestByRecallID returns a decoded copy of the newest record whose
// recall_id is recallID: the first in document order.
func (s *Snapshot) NewestByRecallID(recallID string) (*rappel.Record, bool) {
	doc, ok := s.newestOfRecall(recallID)
	if !ok {
		return nil, false
	}
	return s.Record(s.ids.view(int(doc)))
}
