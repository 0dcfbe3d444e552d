package guest

import (
	"fmt"
	"strings"
)

// notApplicable are the recall classes that say there is none.
var notApplicable = map[string]bool{
	"n/a": true, "na": true, "none": true, "not applicable": true, "unclassified": true,
	"s/o": true, "so": true, "sans objet": true, "aucune": true, "aucun": true, "non applicable": true,
	"non classe": true, "non classee": true,
}

// HazardClass reads a recall class: "Class 2", "Type II", "Classe 1",
// "Recall class 3", "Type 1 (high risk)", or a range such as "Type I - Type
// II" or "Class 1/2", which takes the more severe (lower) class. A value of
// only dashes, or one saying there is none ("N/A", "Sans objet"), is
// absent. ok is false for anything else.
func HazardClass(s string) (class string, ok bool) {
	s = dropParentheses(s)
	if strings.Trim(s, "-–— ") == "" || notApplicable[FoldKey(strings.Trim(s, ". "))] {
		return "", true
	}
	best := 0
	words := strings.FieldsFunc(FoldKey(s), func(r rune) bool {
		return r == ' ' || r == '-' || r == '–' || r == '—' || r == '/' || r == ',' || r == ':' || r == '.'
	})
	for _, w := range words {
		c := 0
		switch w {
		case "class", "classe", "type", "recall", "rappel", "de", "to", "a", "and", "et", "or", "ou":
			continue
		case "i", "1":
			c = 1
		case "ii", "2":
			c = 2
		case "iii", "3":
			c = 3
		default:
			return "", false
		}
		if best == 0 || c < best {
			best = c
		}
	}
	if best == 0 {
		return "", false
	}
	return fmt.Sprintf("class_%d", best), true
}

// dropParentheses removes the parenthesized notes of s: "Type 1 (high
// risk)" is "Type 1 ".
func dropParentheses(s string) string {
	for {
		open := strings.IndexByte(s, '(')
		if open < 0 {
			return s
		}
		end := strings.IndexByte(s[open:], ')')
		if end < 0 {
			return s[:open]
		}
		s = s[:open] + " " + s[open+end+1:]
	}
}
