package rappel

import (
	"html"
	"slices"
	"strings"
	"unicode"
)

// TransportRecallNumber returns the Transport Canada recall number that one
// of texts names, trying them in order, or "" when none does. A text names
// it by the rn= parameter of a vehicle recall database address
// ("detail.aspx?lang=eng&rn=2026432"), or by the number after "Transport
// Canada Recall" ("Rappel de Transports Canada") in a notice's title
// ("Transport Canada Recall - 2026432 - FORD") or in a recalls-site address
// made from such a title (".../transport-canada-recall-2026432-ford").
//
// Health Canada's dump lists Transport Canada's notices under NIDs of its
// own; this number is what makes such a notice and the vehicle database's
// rows for the same recall one record, tc-<number>. Both the normalizer and
// the feeds, which must know the record a raw row becomes before it is
// normalized, read the number here, so they cannot disagree.
func TransportRecallNumber(texts ...string) string {
	for _, t := range texts {
		t = html.UnescapeString(t)
		if n := rnParameter(t); n != "" {
			return n
		}
		if n := afterRecallWords(t); n != "" {
			return n
		}
	}
	return ""
}

// maxRecallDigits bounds a recall number, so that tc-<number> stays a valid
// record_id; real ones have seven digits.
const maxRecallDigits = 20

// rnParameter returns the digits of a URL's rn= query parameter, the name
// in any case.
func rnParameter(s string) string {
	for i := 1; i+3 <= len(s); i++ {
		if s[i-1] != '?' && s[i-1] != '&' && s[i-1] != ';' || s[i]|0x20 != 'r' || s[i+1]|0x20 != 'n' || s[i+2] != '=' {
			continue
		}
		end := i + 3
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
		digits := s[i+3 : end]
		if len(digits) > 0 && len(digits) <= maxRecallDigits && (end == len(s) || strings.IndexByte("&#; ", s[end]) >= 0) {
			return digits
		}
	}
	return ""
}

// recallWords are the words, lower case, that precede a recall number in
// the dump's titles of Transport Canada notices, in English and French.
var recallWords = [][]string{
	{"transport", "canada", "recall"},
	{"rappel", "de", "transports", "canada"},
	{"rappel", "transports", "canada"},
}

// afterRecallWords returns the number that follows one of recallWords in s,
// words being runs of letters and digits (so that any punctuation, dash,
// zero-width space or slug hyphen separates them). "No" or "number" may sit
// between the words and the number.
func afterRecallWords(s string) string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i := range words {
		for _, seq := range recallWords {
			if i+len(seq) > len(words) || !slices.Equal(words[i:i+len(seq)], seq) {
				continue
			}
			rest := words[i+len(seq):]
			for len(rest) > 0 && (rest[0] == "no" || rest[0] == "number" || rest[0] == "numéro" || rest[0] == "n" || rest[0] == "o") {
				rest = rest[1:]
			}
			if len(rest) > 0 && IsDigits(rest[0]) && len(rest[0]) <= maxRecallDigits {
				return rest[0]
			}
		}
	}
	return ""
}
