package rappel

import (
	"slices"
	"strings"
)

// RecallNumbers returns the numbers a manufacturer_recall_number holds.
// Transport Canada writes several in one field ("N222383790 / N222383791",
// "Z-22-04 & Z-22-08", "R0181 (11D160)"), and a record keeps the field as
// published; this is what makes each number findable on its own. The field
// is cut at "/", "&", ",", ";" and parentheses; each part is trimmed and
// kept once, in order. A part of digits only that follows a number ending
// in at least as many digits after a non-digit prefix is that number with
// its last digits replaced, as in "CR5350/5351": it is written out
// (CR5351), since no one searches for "5351".
func RecallNumbers(s string) []string {
	parts := strings.FieldsFunc(s, func(r rune) bool {
		switch r {
		case '/', '&', ',', ';', '(', ')':
			return true
		}
		return false
	})
	var out []string
	prev := ""
	for _, p := range parts {
		p = strings.Join(strings.Fields(p), " ")
		if p == "" {
			continue
		}
		if IsDigits(p) && prev != "" {
			digits := len(prev) - len(strings.TrimRight(prev, "0123456789"))
			if digits >= len(p) && digits < len(prev) {
				p = prev[:len(prev)-len(p)] + p
			}
		}
		prev = p
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// isDigits reports whether s is ASCII digits only (and not empty).
