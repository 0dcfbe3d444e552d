package index

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
)

// Suggest completes q as it is being typed: its last word is a prefix
// (corrected when nothing begins with it), the words before it must match.
// The terms are words of the best matching records' titles that the last
// word begins or was corrected to, with how many records hold each; the
// recalls are the best matching records.
func (v *View) Suggest(ctx context.Context, q, lang string, limit int) (*rappel.Suggestions, error) {
	out := &rappel.Suggestions{Terms: []rappel.SuggestedTerm{}, Recalls: []rappel.SuggestedRecall{}}
	pq, err := rappel.ParseQuery(q)
	if err != nil || pq == nil || strings.HasSuffix(q, " ") {
		// A q ending in a space has no word being typed: nothing to
		// complete. Errors were reported by the caller's validation.
		return out, nil
	}
	if limit <= 0 {
		limit = rappel.DefaultSuggest
	}
	// The recalls are the newest that match: ranking every match of a
	// short prefix by relevance would cost what a keystroke cannot.
	s := &rappel.Search{Query: pq, PrefixLast: true, NoRelax: true, Limit: limit}
	parts := v.parts()
	exp, err := parts[0].s.expansion(ctx, parts, s)
	if err != nil {
		return nil, err
	}
	ms, _, err := v.matches(ctx, parts, s, exp)
	if err != nil {
		return nil, err
	}
	hits, err := pageInOrder(ctx, docOrder, ms, nil, 0, limit)
	if err != nil {
		return nil, err
	}
	hits = hits[:min(len(hits), limit)]
	for _, h := range hits {
		sm := h.s.summary(h.doc)
		title := sm.TitleEN
		if lang == rappel.LangFR && sm.TitleFR != "" || title == "" {
			title = sm.TitleFR
		}
		out.Recalls = append(out.Recalls, rappel.SuggestedRecall{RecordID: sm.RecordID, Title: title})
	}
	out.Terms = v.suggestTerms(ctx, s, exp, hits, lang, limit)
	return out, nil
}

// suggestTerms returns the words of the hits' titles that the last word of
// s matched, the most frequent first, with their counts.
func (v *View) suggestTerms(ctx context.Context, s *rappel.Search, exp *expansion, hits []hit, lang string, limit int) []rappel.SuggestedTerm {
	cs := clauses(s)
	last := cs[len(cs)-1].Terms[len(cs[len(cs)-1].Terms)-1]
	te := exp.terms[last]
	if te == nil {
		return []rappel.SuggestedTerm{}
	}
	an := v.base.text.an
	want := [2]map[string]bool{{}, {}}
	for st, words := range te.words {
		for _, e := range words {
			want[st][e.term] = true
		}
	}
	seen := map[string]bool{}
	var words []string
	for _, h := range hits {
		sm := h.s.summary(h.doc)
		for i, title := range []string{sm.TitleEN, sm.TitleFR} {
			if lang == rappel.LangEN && i == 1 || lang == rappel.LangFR && i == 0 {
				continue
			}
			tokens(title, func(w string) {
				lw := strings.ToLower(w)
				if seen[lw] {
					return
				}
				for st := range 2 {
					f := an.forms(st, w)
					if want[st][f.main] || (f.alt != "" && want[st][f.alt]) {
						seen[lw] = true
						words = append(words, lw)
						return
					}
				}
			})
		}
	}
	out := make([]rappel.SuggestedTerm, 0, len(words))
	for _, w := range words {
		n := 0
		q := &rappel.Search{Query: &rappel.Query{Clauses: []rappel.Clause{{Terms: []rappel.Term{{Text: w}}}}}, NoTypos: true}
		for _, p := range v.parts() {
			m, err := p.s.match(ctx, q, false, nil)
			if err != nil {
				continue
			}
			n += int(m.GetCardinality())
			if p.hidden != nil {
				n -= int(m.AndCardinality(p.hidden))
			}
		}
		out = append(out, rappel.SuggestedTerm{Term: w, Count: n})
	}
	slices.SortFunc(out, func(a, b rappel.SuggestedTerm) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Term, b.Term))
	})
	return out[:min(len(out), limit)]
}

// Suggest completes q from the snapshot alone.
func (s *Snapshot) Suggest(ctx context.Context, q, lang string, limit int) (*rappel.Suggestions, error) {
	return NewView(s, nil, nil, s.info).Suggest(ctx, q, lang, limit)
}
