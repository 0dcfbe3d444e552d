package guest

import "strings"

// blockTags end a line or a block when rendered; they become a space so that
// "<p>Lot 1</p><p>Lot 2</p>" does not read "Lot 1Lot 2". Inline tags such as
// <b> vanish without a trace, as they do on the page.
var blockTags = map[string]bool{
	"br": true, "p": true, "div": true, "li": true, "ul": true, "ol": true,
	"tr": true, "td": true, "th": true, "table": true, "h1": true, "h2": true,
	"h3": true, "h4": true, "h5": true, "h6": true, "hr": true, "dt": true, "dd": true,
}

// stripTags removes HTML comments and start and end tags from s, block tags
// leaving a space. It is a scanner rather than a regular expression because
// it runs on most values of every feed, and under Wasm the regexp engine was
// a quarter of a normalizer's time; it matches exactly what
//
//	(?s)<!--.*?-->|</?[a-zA-Z][a-zA-Z0-9]*(?:[\s/][^<>]*)?>
//
// matches (tag_test.go checks the two agree). A tag must have a letter after
// "<", so that text such as "less than < 5 mg" keeps its "<".
func stripTags(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		n, block := tagAt(s[i:])
		switch {
		case n == 0:
			b.WriteByte('<')
			n = 1
		case block:
			b.WriteByte(' ')
		}
		s = s[i+n:]
	}
}

// tagAt returns the length of the comment or tag that s, starting with "<",
// starts with (0 for none) and whether it is a block tag.
func tagAt(s string) (n int, block bool) {
	if strings.HasPrefix(s, "<!--") {
		if end := strings.Index(s[4:], "-->"); end >= 0 {
			return 4 + end + 3, false
		}
		return 0, false
	}
	i := 1
	if i < len(s) && s[i] == '/' {
		i++
	}
	start := i
	if i >= len(s) || !isASCIILetter(s[i]) {
		return 0, false
	}
	for i < len(s) && (isASCIILetter(s[i]) || '0' <= s[i] && s[i] <= '9') {
		i++
	}
	name := s[start:i]
	switch {
	case i < len(s) && s[i] == '>':
		i++
	case i < len(s) && (isRESpace(s[i]) || s[i] == '/'):
		j := i + 1
		for j < len(s) && s[j] != '<' && s[j] != '>' {
			j++
		}
		if j >= len(s) || s[j] != '>' {
			return 0, false
		}
		i = j + 1
	default:
		return 0, false
	}
	return i, blockTags[strings.ToLower(name)]
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isRESpace is the regexp \s: ASCII white space without the vertical tab.
func isRESpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}
