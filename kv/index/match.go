package index

import (
	"context"

	"github.com/rappel-ca/rappel"
)

var _ rappel.RecordMatcher = (*Snapshot)(nil)

// MatchIDs returns the record_ids of the documents matching q's text,
// filters and dates, as GET /recall counts them. Alerts build a snapshot of
// a refresh's new records and evaluate each saved search on it.
func (s *Snapshot) MatchIDs(ctx context.Context, q *rappel.Search) ([]string, error) {
	exp, err := expand(ctx, []part{{s: s}}, q)
	if err != nil {
		return nil, err
	}
	exp.joins = nil // each word on its own
	bm, err := s.match(ctx, q, true, exp)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, bm.GetCardinality())
	it := bm.Iterator()
	for it.HasNext() {
		out = append(out, s.ids.str(int(it.Next())))
	}
	return out, nil
}
