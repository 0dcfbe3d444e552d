package index

import (
	"slices"
	"testing"
)

// TestSynonymKeys_Distinct fails when two groups of the synonym list share
// a key, which would make each find the other's words.
func TestSynonymKeys_Distinct(t *testing.T) {
	owner := map[string]int{}
	for g, group := range SynonymGroups() {
		for _, e := range group {
			for _, k := range synonymKeys(e) {
				if o, ok := owner[k]; ok && o != g {
					t.Errorf("%q (key %q) joins the groups %q and %q", e, k, SynonymGroups()[o], group)
				}
				owner[k] = g
			}
		}
	}
}

// TestSynonymsOf_Inflected checks that an inflected form of an entry
// finds the rest of its group, in either language, and not itself.
func TestSynonymsOf_Inflected(t *testing.T) {
	for _, c := range []struct {
		typed string
		want  []string
	}{
		{"arachide", []string{"peanut"}},
		{"arachides", []string{"peanut"}},
		{"Arachides", []string{"peanut"}},
		{"peanuts", []string{"arachide"}},
		{"œufs", []string{"egg"}},
		{"eggs", []string{"œuf"}},
		{"airbags", []string{"air bag", "coussin gonflable", "sac gonflable"}},
		{"coussins gonflables", []string{"airbag", "air bag", "sac gonflable"}},
		{"moutardes", []string{"mustard"}},
	} {
		if got := synonymsOf(c.typed); !slices.Equal(got, c.want) {
			t.Errorf("synonymsOf(%q) = %q, want %q", c.typed, got, c.want)
		}
	}
	if got := synonymsOf("chocolate"); got != nil {
		t.Errorf("a word of no group has synonyms %q", got)
	}
}
