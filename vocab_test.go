package rappel

import (
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	params := []string{"q", "category", "recall_type", "recall_agency", "hazard_class", "lang", "limit", "offset"}
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"recal_type", "recall_type", true},
		{"lnag", "lang", true},
		{"RECALL_AGENCY", "recall_agency", true},
		{"hazard", "hazard_class", true},
		{"limt", "limit", true},
		{"zzzzzzzz", "", false},
		{strings.Repeat("é", 400), "", false},
	} {
		got, ok := Nearest(tc.in, params)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"lnag", "lang", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestOSADistance: the one edit distance, in letters, a swap of
// neighbours one edit.
func TestOSADistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"lang", "lang", 0}, {"lnag", "lang", 1}, {"listeria", "lysteria", 1},
		{"salmonela", "salmonella", 1}, {"ca", "abc", 3}, {"élevé", "eleve", 2}, {"", "abc", 3},
	} {
		if got := OSADistance([]rune(c.a), []rune(c.b)); got != c.want {
			t.Errorf("OSADistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
