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

// synonymEntry is one entry of a group with its keys.
type synonymEntry struct {
	text string
	keys [2]string
}

// synonymTable maps each key of every entry (synonymKeys) to the entries
// of its group. Two groups sharing a key would join unrelated words;
// TestSynonymKeys_Distinct keeps the list free of that.
var synonymTable = sync.OnceValue(func() map[string][]synonymEntry {
	out := map[string][]synonymEntry{}
	for _, group := range SynonymGroups() {
		entries := make([]synonymEntry, len(group))
		for i, e := range group {
			entries[i] = synonymEntry{text: e, keys: synonymKeys(e)}
		}
		for _, e := range entries {
			for _, k := range e.keys {
				out[k] = entries
			}
		}
	}
	return out
})

// synonymKeys are the forms an entry and a query's words are compared in:
// tokens folded, lower-cased and stemmed, joined by one space, once with
// the English stemmer and once with the French. Comparing stems, as the
// index compares words, lets every inflection of an entry find its
// group: "arachides" finds what "arachide" and "peanut" find, and
// "peanuts" what "peanut" does.
func synonymKeys(s string) [2]string {
	var words [2][]string
	tokens(s, func(w string) {
		w = fold(strings.ToLower(w))
		for st := range 2 {
			words[st] = append(words[st], stem(st, w))
		}
	})
	return [2]string{strings.Join(words[0], " "), strings.Join(words[1], " ")}
}

// synonymsOf returns the other entries of text's synonym group: those
// whose keys differ from text's in both languages.
func synonymsOf(text string) []string {
	keys := synonymKeys(text)
	if keys[0] == "" {
		return nil
	}
	table := synonymTable()
	group := table[keys[0]]
	if group == nil {
		group = table[keys[1]]
	}
	var out []string
	for _, e := range group {
		if e.keys[0] != keys[0] && e.keys[1] != keys[1] {
			out = append(out, e.text)
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
