package guest

import (
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"   ", ""},
		{"plain", "plain"},
		{"  leading and trailing  ", "leading and trailing"},
		{"runs   of \t\n space", "runs of space"},
		{"\u200bzero-width\u200b ", "zero-width"},
		{"a\u200bb", "a b"},
		{"no-break\u00a0space and&nbsp;entity", "no-break space and entity"},
		{"Smith &amp; Sons", "Smith & Sons"},
		{"&eacute;t&eacute; &#233;t&#xe9;", "été été"},
		{"<p>Tags</p><p>removed</p>", "Tags removed"},
		{"in<b>line</b> tags", "inline tags"},
		{"line<br/>break<BR />again<br>", "line break again"},
		{"<!-- comment -->text", "text"},
		{"less than < 5 mg and > 2", "less than < 5 mg and > 2"},
		{"&lt;b&gt;shown, not removed&lt;/b&gt;", "<b>shown, not removed</b>"},
		{"&nbsp;", ""},
		{"bad \xff byte", "bad \ufffd byte"},
		{"ctrl\x00char", "ctrl char"},
		{"\ufeffBOM", "BOM"},
	} {
		if got := CleanText(tc.in); got != tc.want {
			t.Errorf("CleanText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzCleanText(f *testing.F) {
	for _, s := range []string{"", " a  b ", "<b>x</b>&amp;", "\u200b&nbsp;", "<a href='x'>y", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := CleanText(s)
		switch {
		case !utf8.ValidString(got):
			t.Fatalf("CleanText(%q) = %q is not valid UTF-8", s, got)
		case strings.TrimSpace(got) != got:
			t.Fatalf("CleanText(%q) = %q is not trimmed", s, got)
		case strings.Contains(got, "  "):
			t.Fatalf("CleanText(%q) = %q holds a run of spaces", s, got)
		case isClean(s) && clean(s) != s:
			t.Fatalf("isClean(%q) but clean gives %q", s, clean(s))
		}
	})
}

func TestSkipBOM(t *testing.T) {
	for in, want := range map[string]string{
		"\ufeff\"a\",\"b\"": `"a","b"`,
		"no bom":            "no bom",
		"\ufeff":            "",
		"":                  "",
		"\xef\xbb":          "\xef\xbb",
	} {
		b, err := io.ReadAll(SkipBOM(strings.NewReader(in)))
		if err != nil || string(b) != want {
			t.Errorf("SkipBOM(%q) = %q, %v; want %q", in, b, err, want)
		}
	}
}
