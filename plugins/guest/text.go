package guest

import (
	"bufio"
	"html"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

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
		s = stripTags(s)
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
// ASCII, nearly all of the feeds' text, is checked a byte at a time.
func isClean(s string) bool {
	space := true // a leading space is not clean
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == ' ':
				if space {
					return false
				}
				space = true
			case c == '<' || c == '&' || c < 0x20 || c == 0x7f:
				return false // a tag, an entity or a control character
			default:
				space = false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || isSpace(r) {
			return false
		}
		space = false
		i += n
	}
	return !space || s == ""
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

// Quoted shortens a value a problem quotes, which people read, to limit
// bytes at most, marking the cut; the cut never splits a character.
func Quoted(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	return strings.ToValidUTF8(s[:limit], "") + "…"
}
