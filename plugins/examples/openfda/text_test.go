package openfda

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTitle(t *testing.T) {
	words := strings.Repeat("word ", 30) // 150 characters
	for _, tc := range []struct{ in, want string }{
		{"Pringles Potato Chips", "Pringles Potato Chips"},
		{strings.Repeat("x", 120), strings.Repeat("x", 120)},
		{words, strings.TrimSpace(strings.Repeat("word ", 24)) + "…"},                 // the 119th character ends a word
		{strings.Repeat("wörd ", 24) + "tail", strings.Repeat("wörd ", 23) + "wörd…"}, // a multi-byte cut
		{strings.Repeat("abcdefghij", 13), strings.Repeat("abcdefghij", 11) + "abcdefghi…"},
		{strings.Repeat("ab, ", 40), strings.TrimSuffix(strings.Repeat("ab, ", 30), ", ") + "…"},
	} {
		got := title(tc.in)
		if got != tc.want || utf8.RuneCountInString(got) > maxTitle {
			t.Errorf("title(%q) =\n %q, want\n %q", tc.in, got, tc.want)
		}
	}
}

func TestFirstUPC(t *testing.T) {
	for _, tc := range []struct {
		texts []string
		want  string
	}{
		{[]string{"Potato Chips, 168 g (UPC 064100852464) and 181 g (UPC 037000230090)"}, "064100852464"},
		{[]string{"Crackers, 200 g  UPC: 0 60383 70928 0"}, "060383709280"},
		{[]string{"Granola, 12  ounce pouch  UPC: 786516-76002 6"}, "786516760026"},
		{[]string{"Scallops, 454 g  UPC 0093 0390  24 units per case"}, "00930390"},
		{[]string{"Item, UPC Code # 64100852464"}, "064100852464"},       // 11 digits: the leading 0 back
		{[]string{"EAN 4 892742 010357"}, "4892742010357"},               // EAN-13 in groups
		{[]string{"no code here", "UPC 859613274229"}, "859613274229"},   // code_info after the description
		{[]string{"UPC 064100852465, UPC 037000230090"}, "037000230090"}, // a wrong check digit is no code
		{[]string{"SUPC #4351050, Item 0065064002SH11"}, ""},             // no cue
		{[]string{"NDC 0603-2110-32", "Lots 18024 18037 18043"}, ""},     // numbers, but no barcode cue
		{[]string{"UPC 22948600000 and 22942100000"}, ""},                // check digits wrong
		{[]string{"Cupcakes 064100852464"}, ""},                          // "upc" inside a word
		{[]string{"UPC"}, ""},
		{[]string{"İSTANBUL ÇİKOLATA, UPC 064100852464"}, "064100852464"}, // text whose lower case is longer
	} {
		if got := firstUPC(tc.texts...); got != tc.want {
			t.Errorf("firstUPC(%q) = %q, want %q", tc.texts, got, tc.want)
		}
	}
}

func TestAllergens(t *testing.T) {
	for _, tc := range []struct {
		reason string
		want   []string
	}{
		{`the label needed to stated "contains milk"`, []string{"milk"}},
		{"Product contains undeclared sesame seeds", []string{"sesame"}},
		{"fail to disclose the presence of milk and wheat allergens.", []string{"milk", "wheat"}},
		{"Product may contain undeclared allergen (Hazelnuts)", []string{"tree_nut"}},
		{"Undeclared tree nuts, pine nuts and soy", []string{"tree_nut", "soy"}},
		{"Tres Leches Cake label does not declare soy as part of the ingredients.", []string{"soy"}},
		{"Peanut butter may be contaminated with Salmonella.", nil}, // names an allergen, but not as one
		{"Failed tablet specifications", nil},
	} {
		if got := allergens(tc.reason); !slices.Equal(got, tc.want) {
			t.Errorf("allergens(%q) = %q, want %q", tc.reason, got, tc.want)
		}
	}
}
