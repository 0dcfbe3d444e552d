package index

import "github.com/rappel-ca/rappel"

// Forms are the index terms, per stream (English, then French), that the
// positive words of a query match: a word of a record's text is a match
// when one of its own forms in the stream of that text is among them. What
// widens matching (corrected spellings, prefixes) widens Forms with it, so
// that highlights mark what the search matched.
type Forms [2]map[string]struct{}

// has reports whether a word whose forms in stream are f is matched.
func (fs Forms) has(stream int, f forms) bool {
	if _, ok := fs[stream][f.main]; ok {
		return true
	}
	_, ok := fs[stream][f.alt]
	return ok && f.alt != ""
}

// add adds the forms of another index, for a view of several.
func (fs Forms) add(other Forms) {
	for s := range fs {
		for t := range other[s] {
			fs[s][t] = struct{}{}
		}
	}
}

// matchForms returns the forms the words of q's positive terms are looked
// up by (termDocs): each word's main and alternative form in each stream.
// A phrase contributes its words one by one. Excluded terms match nothing.
func (ix *textIndex) matchForms(q *rappel.Query) Forms {
	fs := Forms{{}, {}}
	if q == nil {
		return fs
	}
	for _, c := range q.Clauses {
		if c.Exclude {
			continue
		}
		for _, t := range c.Terms {
			tokens(t.Text, func(w string) {
				for s := range fs {
					f := ix.an.forms(s, w)
					fs[s][f.main] = struct{}{}
					if f.alt != "" {
						fs[s][f.alt] = struct{}{}
					}
				}
			})
		}
	}
	return fs
}

// MatchForms returns the forms q's positive words match in the snapshot.
func (s *Snapshot) MatchForms(q *rappel.Query) Forms { return s.text.matchForms(q) }

// MatchForms returns the forms q's positive words match in any part of the
// view.
func (v *View) MatchForms(q *rappel.Query) Forms {
	fs := v.base.MatchForms(q)
	if v.delta != nil {
		fs.add(v.delta.MatchForms(q))
	}
	return fs
}

// addExpansion adds what the search matched beyond its words' own forms:
// corrected spellings and prefix completions (index terms), and the words
// of splits, joins and synonyms.
func (fs Forms) addExpansion(an *analyzer, exp *expansion) {
	if exp == nil {
		return
	}
	addWords := func(text string) {
		tokens(text, func(w string) {
			for s := range fs {
				f := an.forms(s, w)
				fs[s][f.main] = struct{}{}
				if f.alt != "" {
					fs[s][f.alt] = struct{}{}
				}
			}
		})
	}
	for _, te := range exp.terms {
		for s, words := range te.words {
			for _, e := range words {
				fs[s][e.term] = struct{}{}
			}
		}
		for _, alt := range te.alts {
			addWords(alt.Text)
		}
	}
	for _, j := range exp.joins {
		for _, alt := range j.alts {
			addWords(alt.Text)
		}
	}
}
