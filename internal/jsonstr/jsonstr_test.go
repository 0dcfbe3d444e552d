package jsonstr

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppend(t *testing.T) {
	for _, s := range []string{"", "plain", `Dépôt "Nord" Ltée`, "a\\b", "tab\there\nnew\rline", "\x00\x1f\x7f", "\xff\xfeok", "line\u2028sep\u2029", "日本"} {
		got := Append(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q encodes as %s, not JSON: %v", s, got, err)
		}
		want, _ := json.Marshal(s)
		if string(got) != string(want) {
			t.Errorf("%q: %s, encoding/json writes %s", s, got, want)
		}
		if utf8.ValidString(s) && back != s {
			t.Errorf("%q reads back as %q", s, back)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", `"q"`, "\xff", "\u2028", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Append(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q encodes as %s, not JSON: %v", s, got, err)
		}
		if want := strings.ToValidUTF8(s, "\ufffd"); utf8.ValidString(s) && back != want {
			t.Fatalf("%q reads back as %q", s, back)
		}
	})
}
