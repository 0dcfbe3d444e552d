package guest

import (
	"bufio"
	"html"
	"io"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tagPattern matches an HTML comment or a start or end tag. It insists on a
// letter after "<" so that text such as "less than < 5 mg" keeps its "<".
var tagPattern = regexp.MustCompile(`(?s)<!--.*?-->|</?[a-zA-Z][a-zA-Z0-9]*(?:[\s/][^<>]*)?>`)

// blockTags end a line or a block when rendered; they become a space so that
// "<p>Lot 1</p><p>Lot 2</p>" does not read "Lot 1Lot 2". Inline tags such as
// <b> vanish without a trace, as they do on the page.
var blockTags = map[string]bool{
	"br": true, "p": true, "div": true, "li": true, "ul": true, "ol": true,
	"tr": true, "td": true, "th": true, "table": true, "h1": true, "h2": true,
	"h3": true, "h4": true, "h5": true, "h6": true, "hr": true, "dt": true, "dd": true,
}

// CleanText is the text clean-up every upstream value goes through (see
// testdata/FORMATS.md): tags removed, HTML entities decoded, zero-width and
// no-break spaces and control characters treated as spaces, runs of space
// collapsed, the ends trimmed. Invalid UTF-8 becomes U+FFFD, so the result is
// always valid UTF-8. An empty result means the value is absent.
func CleanText(s string) string {
	if isClean(s) {
		return s // most values: no copy, no allocation
	}
	return clean(s)
}

// clean is CleanText without its shortcut.
func clean(s string) string {
	if strings.IndexByte(s, '<') >= 0 {
		s = tagPattern.ReplaceAllStringFunc(s, func(tag string) string {
			if blockTags[tagName(tag)] {
				return " "
			}
			return ""
		})
	}
	// Entities are decoded after tags are removed, as a browser does: an
	// escaped "&lt;b&gt;" is text the author meant to show.
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if isSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r) // an invalid byte arrives as utf8.RuneError, written as U+FFFD
	}
	return b.String()
}

// isClean reports whether CleanText would return s unchanged: valid UTF-8
// with no tag or entity to resolve, no space but single ' ' between words.
func isClean(s string) bool {
	space := true // a leading space is not clean
	for _, r := range s {
		switch {
		case r == ' ':
			if space {
				return false
			}
			space = true
			continue
		case r == '<' || r == '&' || r == utf8.RuneError || isSpace(r):
			return false
		}
		space = false
	}
	return !space || s == ""
}

// tagName returns the lower-case element name of a tag, "" for a comment.
func tagName(tag string) string {
	t := strings.TrimPrefix(strings.TrimPrefix(tag, "<"), "/")
	end := strings.IndexFunc(t, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if end < 0 {
		return ""
	}
	return strings.ToLower(t[:end])
}

// isSpace reports whether r counts as white space for CleanText. Besides
// Unicode spaces it takes the zero-width characters and the byte-order mark,
// which the upstream feeds scatter through their text, and control
// characters, which have no business in a displayed value.
func isSpace(r rune) bool {
	switch r {
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff':
		return true
	}
	return unicode.IsSpace(r) || unicode.IsControl(r)
}

// SkipBOM returns a reader of r without its leading UTF-8 byte-order mark,
// if it has one. The Transport Canada CSV starts with one, and a JSON decoder
// refuses it, so every reader of upstream bytes goes through here.
func SkipBOM(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		_, _ = br.Discard(3)
	}
	return br
}
