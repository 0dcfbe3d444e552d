package synth

import (
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// appendCSVField appends s double-quoted, as the Transport Canada export
// quotes every field whatever it holds.
func appendCSVField(b []byte, s string) []byte {
	b = append(b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, '"')
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, '"')
}

// htmlEscape escapes text for the detail documents' HTML panels.
var htmlEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace

// titleCase turns an upper-case model name into the mixed case of a notice
// title: "GRAND CHEROKEE" → "Grand Cherokee", "E-SERIES" → "E-Series".
// Short words and words with digits ("MDX", "CX-5", "F-150") are acronyms or
// codes and stay as they are.
func titleCase(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		parts := strings.Split(w, "-")
		for j, p := range parts {
			if p == "FE" || p == "DE" {
				parts[j] = p[:1] + strings.ToLower(p[1:])
				continue
			}
			if utf8.RuneCountInString(p) < 4 || strings.IndexFunc(p, func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 {
				continue
			}
			parts[j] = p[:1] + strings.ToLower(p[1:])
		}
		words[i] = strings.Join(parts, "-")
	}
	return strings.Join(words, " ")
}

// foldAccents maps the accented letters of French to their base letters, for
// URL slugs.
var foldAccents = strings.NewReplacer(
	"à", "a", "â", "a", "ä", "a", "ç", "c", "é", "e", "è", "e", "ê", "e", "ë", "e",
	"î", "i", "ï", "i", "ô", "o", "ö", "o", "ù", "u", "û", "u", "ü", "u", "ÿ", "y",
	"œ", "oe", "æ", "ae", "À", "a", "Â", "a", "Ç", "c", "É", "e", "È", "e", "Ê", "e",
	"Î", "i", "Ô", "o", "Û", "u", "Œ", "oe",
)

// slug makes the URL path segment the recalls site derives from a title.
func slug(s string) string {
	s = strings.ToLower(foldAccents.Replace(s))
	var b strings.Builder
	b.Grow(len(s))
	dash := false
	for _, r := range s {
		if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	out := b.String()
	if len(out) > 120 {
		out = strings.TrimRight(out[:120], "-")
	}
	return out
}

// gender is the grammatical gender of a French noun phrase.
type gender uint8

const (
	masc gender = iota
	fem
)

// noun is a product name in both languages, with what French needs to make
// a participle agree with it.
type noun struct {
	en, fr string
	g      gender
	plural bool
}

// agree returns the French past participle stem+ending agreeing with n:
// agree("rappelé", …) gives rappelé, rappelée, rappelés or rappelées.
func (n noun) agree(participle string) string {
	if n.g == fem {
		participle += "e"
	}
	if n.plural {
		participle += "s"
	}
	return participle
}

// joinList joins items as English or French prose: "a, b and c".
func joinList(items []string, and string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + and + " " + items[len(items)-1]
}

// quirkTitle adds the stray white space upstream titles carry: leading or
// trailing spaces and zero-width spaces, or a doubled space, on about one
// title in twenty-five; and, as quirkText, an "&" written &amp;.
func quirkTitle(r *rand.Rand, s string) string {
	if strings.Contains(s, "&") && chance(r, 0.4) {
		s = strings.ReplaceAll(s, "&", "&amp;")
	}
	if !chance(r, 0.04) {
		return s
	}
	switch r.IntN(5) {
	case 0:
		return " " + s
	case 1:
		return s + " "
	case 2:
		return "\u200b" + s
	case 3:
		return s + "\u200b "
	}
	if i := strings.IndexByte(s, ' '); i > 0 {
		return s[:i] + "  " + s[i+1:]
	}
	return s
}

// quirkText writes some of a dump text's characters as the HTML entities the
// upstream export leaves in: "&" as &amp; and a space as &nbsp;.
func quirkText(r *rand.Rand, s string) string {
	if strings.Contains(s, "&") && chance(r, 0.4) {
		s = strings.ReplaceAll(s, "&", "&amp;")
	}
	if chance(r, 0.04) {
		if i := strings.Index(s, ". "); i > 0 {
			s = s[:i] + ".&nbsp;" + s[i+2:]
		} else if i := strings.LastIndexByte(s, ' '); i > 0 {
			s = s[:i] + "&nbsp;" + s[i+1:]
		}
	}
	return s
}
