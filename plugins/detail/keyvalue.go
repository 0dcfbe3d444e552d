package detail

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// keyValue splits a panel line "<b>Key:</b> value" into the bold key's HTML
// and the value's HTML. The panels are HTML lines "<b>Key:</b> value<BR/>";
// the bold may be <strong>, in any case, with attributes.
//
// It is a scanner rather than a regular expression because it runs on every
// line of every panel; it matches exactly what
//
//	(?is)^\s*<(?:b|strong)(?:\s[^<>]*)?>(.*?)</(?:b|strong)\s*>(.*)$
//
// matches, with the two groups as key and value (keyvalue_test.go checks
// the two agree).
func keyValue(line string) (key, value string, ok bool) {
	s := strings.TrimLeft(line, " \t\n\f\r")
	if !strings.HasPrefix(s, "<") {
		return "", "", false
	}
	n := boldName(s[1:])
	if n == 0 {
		return "", "", false
	}
	s = s[1+n:]
	switch {
	case s != "" && s[0] == '>':
		s = s[1:]
	case s != "" && isRESpace(s[0]):
		end := strings.IndexAny(s, "<>")
		if end < 0 || s[end] != '>' {
			return "", "", false
		}
		s = s[end+1:]
	default:
		return "", "", false
	}
	for i := 0; ; {
		j := strings.Index(s[i:], "</")
		if j < 0 {
			return "", "", false
		}
		i += j
		if n := closingBold(s[i:]); n > 0 {
			return s[:i], s[i+n:], true
		}
		i++
	}
}

// closingBold returns the length of the </b> or </strong> s starts with, 0
// for none.
func closingBold(s string) int {
	n := boldName(s[2:])
	if n == 0 {
		return 0
	}
	i := 2 + n
	for i < len(s) && isRESpace(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '>' {
		return i + 1
	}
	return 0
}

// boldName returns the length of "b" or "strong", in any case, at the start
// of s, 0 for neither.
func boldName(s string) int {
	if n := foldPrefix(s, "b"); n > 0 {
		return n
	}
	return foldPrefix(s, "strong")
}

// foldPrefix returns the length of s's prefix equal to word under Unicode
// simple case folding (as the regexp (?i) flag has it, so "ſ" is an "s"),
// 0 when there is none.
func foldPrefix(s, word string) int {
	n := 0
	for _, w := range word {
		if n >= len(s) {
			return 0
		}
		r, size := utf8.DecodeRuneInString(s[n:])
		if !equalFold(r, w) {
			return 0
		}
		n += size
	}
	return n
}

func equalFold(r, w rune) bool {
	if r == w {
		return true
	}
	for f := unicode.SimpleFold(w); f != w; f = unicode.SimpleFold(f) {
		if f == r {
			return true
		}
	}
	return false
}

// isRESpace is the regexp \s: ASCII white space without the vertical tab.
func isRESpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}
