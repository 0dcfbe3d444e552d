package detail

import (
	"reflect"
	"testing"
)

func TestPairs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []pair
	}{
		{"<b>Key:</b> value<BR/>", []pair{{"key", "value", " value", "Key"}}},
		{"<b>A:</b> 1<br><b>B:</b> 2<br/><b>C:</b> 3<BR /><b>D:</b> 4", []pair{{"a", "1", " 1", "A"}, {"b", "2", " 2", "B"}, {"c", "3", " 3", "C"}, {"d", "4", " 4", "D"}}},
		{"<b>Colon outside</b>: v", []pair{{"colon outside", "v", ": v", "Colon outside"}}},
		{"<strong>Strong:</strong> s &amp; t", []pair{{"strong", "s & t", " s &amp; t", "Strong"}}},
		{"no key here<br><b></b> empty key<br><b>Empty value:</b>", []pair{{"empty value", "", "", "Empty value"}}},
		{"<b>Code(s) sur le  produit :</b> A1", []pair{{"code(s) sur le produit", "A1", " A1", "Code(s) sur le produit"}}},
		{"", nil},
	} {
		if got := pairs(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("pairs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSplitBreaks(t *testing.T) {
	for in, want := range map[string][]string{
		"a<br>b<br/>c<BR />d<Br\t/\n>e": {"a", "b", "c", "d", "e"},
		"a<br>":                         {"a", ""},
		"<br":                           {"<br"},
		"a<b>b</b><brx>c<br /x>":        {"a<b>b</b><brx>c<br /x>"},
		"":                              {""},
	} {
		if got := splitBreaks(in); !reflect.DeepEqual(got, want) {
			t.Errorf("splitBreaks(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLotCodes(t *testing.T) {
	for in, want := range map[string][]string{
		"2023 DE 15, 2024 JA 10": {"2023 DE 15", "2024 JA 10"},
		"A1234; A1235":           {"A1234", "A1235"},
		"Lot 1; Lot 2, Lot 3":    {"Lot 1", "Lot 2", "Lot 3"},
		"All codes":              {"All codes"},
		" , ;":                   nil,
	} {
		if got := lotCodes(in); !reflect.DeepEqual(got, want) {
			t.Errorf("lotCodes(%q) = %q, want %q", in, got, want)
		}
	}
}
