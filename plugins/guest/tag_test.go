package guest

import (
	"regexp"
	"strings"
	"testing"
)

// tagPattern is the definition stripTags implements, kept here to check it.
var tagPattern = regexp.MustCompile(`(?s)<!--.*?-->|</?[a-zA-Z][a-zA-Z0-9]*(?:[\s/][^<>]*)?>`)

// stripTagsRegexp is stripTags by the regular expression it replaces.
func stripTagsRegexp(s string) string {
	return tagPattern.ReplaceAllStringFunc(s, func(tag string) string {
		if strings.HasPrefix(tag, "<!--") {
			return ""
		}
		t := strings.TrimPrefix(strings.TrimPrefix(tag, "<"), "/")
		end := strings.IndexFunc(t, func(r rune) bool {
			return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
		})
		if blockTags[strings.ToLower(t[:end])] {
			return " "
		}
		return ""
	})
}

var tagCases = []string{
	"", "plain", "<", "<>", "< b>", "<b", "<b>", "</b>", "<B>x</B>", "<br/>", "<BR />", "<br\t>",
	"<p>a</p><p>b</p>", "a<b>c</b>d", "<a href='x'>y</a>", "<a href=x<b>>", "<a <b>c", "<1>",
	"<!---->", "<!-->", "<!-- a -- b -->c", "<!-- open", "<!--a--><!--b-->", "x<!-- <p> -->y",
	"<h1>T</h1>", "<H6 class=x>T</H6>", "<td\n>x", "<p\u00a0>x", "less < 5 and > 2", "<<b>>",
	"<a/>", "</ br>", "<a\v>", "<table><tr><td>1</td></tr></table>", "<x-y>", "<ab1>", "</>",
}

func TestStripTags(t *testing.T) {
	for _, s := range tagCases {
		if got, want := stripTags(s), stripTagsRegexp(s); got != want {
			t.Errorf("stripTags(%q) = %q, the regular expression gives %q", s, got, want)
		}
	}
}

func FuzzStripTags(f *testing.F) {
	for _, s := range tagCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := stripTags(s), stripTagsRegexp(s); got != want {
			t.Fatalf("stripTags(%q) = %q, the regular expression gives %q", s, got, want)
		}
	})
}

func BenchmarkCleanText(b *testing.B) {
	s := "<p>Recalled <b>products</b> &amp; lots:</p><br/>Lot 1234, best before 2026-01-01 " +
		"<!-- internal --> sold in Québec and Ontario.</p>"
	b.ReportAllocs()
	for b.Loop() {
		CleanText(s)
	}
}
