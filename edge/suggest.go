package edge

import (
	"context"
	"net/http"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/jsonx"
)

// suggestParams are the query parameters GET /recall/suggest accepts.
var suggestParams = []string{"q", "lang", "limit"}

// getSuggest answers GET /recall/suggest: completions of what is being
// typed in q (its last word), typo-tolerant, with their counts, and the
// records that match best, within the query budget.
func (s *Server) getSuggest(w http.ResponseWriter, r *http.Request) error {
	p := paramsOf(w)
	q, _ := p.str("q")
	if q != "" {
		if _, err := rappel.ParseQuery(q); err != nil {
			if qe, ok := err.(*rappel.QueryError); ok {
				p.invalid(qe.Item(rappel.QueryLoc("q"), q))
			}
		}
	}
	lang := p.enum("lang", rappel.Langs)
	limit := p.int("limit", 1, rappel.MaxSuggest, rappel.DefaultSuggest)
	if err := p.err(); err != nil {
		return err
	}
	// The budget runs from here, and the completions are admitted as the
	// search they run: its expansion (prefixes, typos) priced first.
	ctx, cancel := context.WithTimeout(r.Context(), s.QueryBudget)
	defer cancel()
	snap := s.Catalog.Snapshot()
	if pq, err := rappel.ParseQuery(q); err == nil && pq != nil {
		checked, err := (&rappel.Search{Query: pq, PrefixLast: true, NoRelax: true, Limit: limit}).Checked()
		if err != nil {
			return err
		}
		var release func()
		if ctx, release, err = s.admitSearch(ctx, w, snap, checked, paidHere); err != nil {
			return searchError(err)
		}
		defer release()
	}
	out, err := snap.Suggest(ctx, q, lang, limit)
	if err != nil {
		return searchError(err)
	}
	b, err := jsonx.Marshal(out)
	if err != nil {
		return err
	}
	writeJSON(w, r, http.StatusOK, b)
	return nil
}
