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

// TestSynonymsOf_EveryEntry checks the list entry by entry: each entry
// finds every other entry of its group (those its forms do not already
// match), and nothing of another group.
func TestSynonymsOf_EveryEntry(t *testing.T) {
	for _, group := range SynonymGroups() {
		for _, e := range group {
			got := synonymsOf(e)
			for _, other := range group {
				ke, ko := synonymKeys(e), synonymKeys(other)
				if other == e || ke[0] == ko[0] || ke[1] == ko[1] {
					continue
				}
				if !slices.Contains(got, other) {
					t.Errorf("%q does not find %q of its group %q (it finds %q)", e, other, group, got)
				}
			}
			for _, g := range got {
				if !slices.Contains(group, g) {
					t.Errorf("%q finds %q, of another group", e, g)
				}
			}
		}
	}
}

// TestAnalysis_ShortWordsAndFrenchPlurals: a word of three characters or
// fewer is its own term (an acronym is not stemmed into another word),
// and a French plural in -us or -ux meets its singular.
func TestAnalysis_ShortWordsAndFrenchPlurals(t *testing.T) {
	an := newAnalyzer()
	for _, w := range []string{"aed", "abs", "suv", "kid", "toy"} {
		if got := an.term(streamEN, w); got != w {
			t.Errorf("%q is indexed as %q in English", w, got)
		}
	}
	for _, p := range [][2]string{{"pneus", "pneu"}, {"feux", "feu"}, {"bijoux", "bijou"}, {"jouets", "jouet"}} {
		if a, b := an.forms(streamFR, p[0]), an.forms(streamFR, p[1]); a != b {
			t.Errorf("%q is %+v, %q %+v: the plural does not meet its singular", p[0], a, p[1], b)
		}
	}
	if a, b := an.term(streamEN, "aed"), an.term(streamEN, "a"); a == b {
		t.Errorf("aed and a are both %q", a)
	}
}
