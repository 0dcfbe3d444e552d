package index

import (
	_ "embed"
	"strings"
	"sync"
)

// synonymsTSV is the synonym list: one group of words or phrases a line,
// separated by tabs, each of which also matches the others. Lines starting
// with # are comments. See docs/api.md, "Searching", for what it holds and why.
//
//go:embed synonyms.tsv
var synonymsTSV string

// maxSynonymWords is the most words of a list entry typed as words of q
// rather than as a phrase.
const maxSynonymWords = 4

// synonymTable maps each entry, normalized (synonymKey), to its group.
var synonymTable = sync.OnceValue(func() map[string][]string {
	out := map[string][]string{}
	for line := range strings.Lines(synonymsTSV) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		group := strings.Split(line, "\t")
		for _, e := range group {
			out[synonymKey(e)] = group
		}
	}
	return out
})

// synonymKey is the form an entry and a query's words are compared in:
// tokens, folded and lower-cased, joined by one space.
func synonymKey(s string) string {
	var words []string
	tokens(s, func(w string) { words = append(words, fold(strings.ToLower(w))) })
	return strings.Join(words, " ")
}

// synonymsOf returns the other entries of text's synonym group.
func synonymsOf(text string) []string {
	k := synonymKey(text)
	if k == "" {
		return nil
	}
	var out []string
	for _, e := range synonymTable()[k] {
		if synonymKey(e) != k {
			out = append(out, e)
		}
	}
	return out
}

// SynonymGroups returns the synonym list's groups, for tests and docs.
func SynonymGroups() [][]string {
	var out [][]string
	for line := range strings.Lines(synonymsTSV) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, strings.Split(line, "\t"))
		}
	}
	return out
}
