package edge

import (
	"github.com/rappel-ca/rappel"
)

// found is one result of GET /recall/upc and GET /recall/vin. title_en is
// always the English title (the French one when the record has none); title
// is the title in the lang asked for, present only when lang is given.
// match says how the recall matched: its barcode or prefix, or a vehicle's
// make, model and year.
type found struct {
	RecallID   string  `json:"recall_id"`
	RecordID   string  `json:"record_id"`
	RecallType string  `json:"recall_type"`
	TitleEN    string  `json:"title_en"`
	Title      *string `json:"title,omitempty"`
	Match      string  `json:"match,omitempty"`
}

// foundOf turns summaries into results, in their order, never nil so that
// an empty list encodes as [].
func foundOf(sums []rappel.RecordSummary, lang, match string) []found {
	out := make([]found, len(sums))
	for i := range sums {
		sm := &sums[i]
		out[i] = found{RecallID: sm.RecallID, RecordID: sm.RecordID, RecallType: sm.RecallType,
			TitleEN: sm.Title(rappel.LangEN), Match: match}
		if lang != "" {
			t := sm.Title(lang)
			out[i].Title = &t
		}
	}
	return out
}

// lookup returns the Server's Lookup, or the 503 of a node wired without
// one.
func (s *Server) lookup() (rappel.Lookup, error) {
	if s.Lookup == nil {
		return nil, rappel.Errorf(rappel.EUNAVAILABLE,
			"Barcode and VIN lookups are not available on this node; retry shortly or use another node.")
	}
	return s.Lookup, nil
}
