package index

import (
	"context"
	"slices"

	"github.com/rappel-ca/rappel"
)

var _ rappel.RecordMatcher = (*Snapshot)(nil)

// Engine is GET /recall's engine as the alert matchers use it
// (alerts.Index): a batch of records indexed as the API indexes them, and
// categories compared in the API's form, so that a saved search matches
// what the same search on the API returns. cmd/rappel hands it to alerts,
// which does not import this package.
type Engine struct{}

// Build indexes a copy of recs: a build reorders the slice it is given,
// and the matchers keep recs in their order.
func (Engine) Build(recs []*rappel.Record) (rappel.RecordMatcher, error) {
	return Build(slices.Clone(recs), rappel.DatasetInfo{})
}

// CategoryKey is the package's CategoryKey.
func (Engine) CategoryKey(category string) string { return CategoryKey(category) }

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
