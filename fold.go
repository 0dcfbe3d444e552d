package rappel

import "strings"

// foldFrench removes the accents of French letters and spells out its
// ligatures, so that "Œufs" and "oeufs" are one name.
var foldFrench = strings.NewReplacer(
	"à", "a", "â", "a", "ä", "a", "ç", "c", "é", "e", "è", "e", "ê", "e", "ë", "e",
	"î", "i", "ï", "i", "ô", "o", "ö", "o", "ù", "u", "û", "u", "ü", "u", "ÿ", "y",
	"œ", "oe", "æ", "ae",
)

// FoldKey is s in the form the agencies' vocabularies are compared in:
// lower case, French accents removed and ligatures spelled out, runs of
// space collapsed, so that "Œufs", "oeufs" and " OEUFS " are one name.
func FoldKey(s string) string {
	return strings.Join(strings.Fields(foldFrench.Replace(strings.ToLower(s))), " ")
}

// IsDigits reports whether s is ASCII digits only, and not empty: a recall
// number, a barcode or a number word as the agencies write them.
func IsDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
