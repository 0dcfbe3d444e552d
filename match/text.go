package match

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rappel-ca/rappel"
)

// Words are compared folded (rappel.FoldKey: lower case, French accents
// removed), cut at anything that is not a letter or a digit, a plural's
// final s dropped, so that "Oysters" meets "oyster" and "Érabeille"
// "erabeille". Words that say nothing of a product (articles, company
// suffixes, units, bare numbers, single letters) are left out: a name
// matches on what names it.

// words returns the content words of s, each once, in order.
func words(s string) []string {
	var out []string
	for _, w := range allWords(s) {
		if !stopWord(w) && !contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// allWords returns every word of s, folded, plurals dropped.
func allWords(s string) []string {
	var out []string
	var buf []byte
	flush := func() {
		if len(buf) > 0 {
			out = append(out, singular(string(buf)))
			buf = buf[:0]
		}
	}
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && ('a' <= r && r <= 'z' || '0' <= r && r <= '9'):
			buf = append(buf, byte(r))
		case r < utf8.RuneSelf && 'A' <= r && r <= 'Z':
			buf = append(buf, byte(r+'a'-'A'))
		case r < utf8.RuneSelf:
			flush()
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			buf = appendFolded(buf, unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return out
}

// appendFolded appends the lower-case letter r without its French accent,
// or its ligature spelled out, as rappel.FoldKey folds it.
func appendFolded(buf []byte, r rune) []byte {
	switch r {
	case 'à', 'â', 'ä':
		return append(buf, 'a')
	case 'ç':
		return append(buf, 'c')
	case 'é', 'è', 'ê', 'ë':
		return append(buf, 'e')
	case 'î', 'ï':
		return append(buf, 'i')
	case 'ô', 'ö':
		return append(buf, 'o')
	case 'ù', 'û', 'ü':
		return append(buf, 'u')
	case 'ÿ':
		return append(buf, 'y')
	case 'œ':
		return append(buf, 'o', 'e')
	case 'æ':
		return append(buf, 'a', 'e')
	}
	return utf8.AppendRune(buf, r)
}

// singular drops the final s of a word of four letters or more ("oysters",
// "spices"), but not of one ending in ss ("glass").
func singular(w string) string {
	if len(w) >= 4 && w[len(w)-1] == 's' && w[len(w)-2] != 's' && !rappel.IsDigits(w[:len(w)-1]) {
		return w[:len(w)-1]
	}
	return w
}

// stopWord reports whether w says nothing of which product it is.
func stopWord(w string) bool {
	if len(w) < 2 || rappel.IsDigits(w) {
		return true
	}
	_, ok := stopWords[w]
	return ok
}

var stopWords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`
		a an the and or of for with in on by to from at brand brands marque
		de la le les du des et en au aux un une pour avec sans
		inc ltd ltee co corp corporation company compagnie llc ulc gmbh sarl sa limited
		g kg mg ml l cl lb lbs oz fl pk pack count ct x unit units piece pieces
		certain various recalled recall rappel due`) {
		m[w] = struct{}{}
	}
	return m
}()

// contains reports whether list holds w.
func contains(list []string, w string) bool {
	for _, v := range list {
		if v == w {
			return true
		}
	}
	return false
}

// wordSet is a set of folded words.
type wordSet map[string]struct{}

// add adds the words of each text.
func (ws wordSet) add(texts ...string) {
	for _, t := range texts {
		for _, w := range allWords(t) {
			ws[w] = struct{}{}
		}
	}
}

// hasAll reports whether ws holds every word of list (true for none).
func (ws wordSet) hasAll(list []string) bool {
	for _, w := range list {
		if _, ok := ws[w]; !ok {
			return false
		}
	}
	return true
}

// count returns how many words of list ws holds, and them.
func (ws wordSet) count(list []string) (n int, found []string) {
	for _, w := range list {
		if _, ok := ws[w]; ok {
			n++
			found = append(found, w)
		}
	}
	return n, found
}

// code is a model, part or lot number as compared: upper case, letters
// and digits only, so that "KHK 190026-001" is "KHK190026001" and "GT-R"
// "GTR".
func code(s string) string {
	buf := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && ('A' <= r && r <= 'Z' || '0' <= r && r <= '9'):
			buf = append(buf, byte(r))
		case r < utf8.RuneSelf && 'a' <= r && r <= 'z':
			buf = append(buf, byte(r-'a'+'A'))
		case r < utf8.RuneSelf:
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			buf = append(buf, strings.ToUpper(string(appendFolded(nil, unicode.ToLower(r))))...)
		}
	}
	return string(buf)
}

// maxCodeLetters is the longest part of letters only a code may start
// with ("KHK 190026-001"); a longer one is a word.
const maxCodeLetters = 4

// isModelCode reports whether c, a code, can name a product's model: three
// characters or more, with a digit, so that a word ("Solo") is not taken
// for one.
func isModelCode(c string) bool {
	if len(c) < 3 {
		return false
	}
	for i := 0; i < len(c); i++ {
		if c[i] >= '0' && c[i] <= '9' {
			return true
		}
	}
	return false
}

// codes returns the codes a text prints: each run of up to four of its
// parts (cut at spaces, brackets, commas, semicolons, colons, slashes and
// number signs) holding digits, after at most one short part of letters,
// so that "Lot # 26025260", "model #CS0003" and "KHK 190026-001" give
// "26025260", "CS0003" and "KHK190026001" among others.
func codes(s string) []string {
	parts := strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("()[],;:/#", r)
	})
	var out []string
	seen := map[string]bool{}
	for i := range parts {
		c := ""
		for j := i; j < len(parts) && j < i+4; j++ {
			p := code(parts[j])
			if hasDigit := strings.ContainsAny(p, "0123456789"); !hasDigit && (j > i || len(p) > maxCodeLetters) {
				break // a code is parts with digits, after at most a short prefix of letters
			}
			c += p
			if isModelCode(c) && !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}
