package detail

import (
	"regexp"
	"testing"
)

// keyValuePattern is the definition keyValue implements, kept to check it.
var keyValuePattern = regexp.MustCompile(`(?is)^\s*<(?:b|strong)(?:\s[^<>]*)?>(.*?)</(?:b|strong)\s*>(.*)$`)

var keyValueCases = []string{
	"", "<b>Key:</b> value", "  <B>Key</B>: value", "<strong>K:</strong>v", "<STRONG class=x>K</strong >v",
	"<b >K</b>v", "<b\tx='1'>K</b>v", "<br>K</b>v", "<bold>K</b>v", "<b>K</B>v</b>w", "<b>K", "<b>K</b",
	"<b>K</ b>v", "<b>K</strong>v", "<b>K</bx>v</b>y", "text <b>K</b>v", "<b>\nK\n</b>\nv\n",
	"<ſtrong>K</ſtrong>v", "<b>K</b\n>v", "<b<b>K</b>v", "<b x<y>K</b>v", "<b>K</b>v<b>L</b>w", "<",
	"<\u212a>K</b>v", "<b>\xffK</b>\xfev",
}

func TestKeyValue(t *testing.T) {
	for _, s := range keyValueCases {
		check(t, s)
	}
}

func FuzzKeyValue(f *testing.F) {
	for _, s := range keyValueCases {
		f.Add(s)
	}
	f.Fuzz(check)
}

func check(t *testing.T, s string) {
	k, v, ok := keyValue(s)
	m := keyValuePattern.FindStringSubmatch(s)
	if ok != (m != nil) || ok && (k != m[1] || v != m[2]) {
		t.Fatalf("keyValue(%q) = %q, %q, %v; the regular expression gives %q", s, k, v, ok, m)
	}
}
