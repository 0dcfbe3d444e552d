package feeds

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/plugins/guest"
)

// TestCanonicalJSON: what a JSON writer may change without changing the
// content (key order, whitespace, escapes, the spelling of an HTML
// entity) gives the same canonical form; any change of content does not.
func TestCanonicalJSON(t *testing.T) {
	alike := [][]string{
		{`{"a":"x/y","b":"été","n":null}`, `{ "n" : null , "b" : "\u00e9t\u00e9" , "a" : "x\/y" }`, "{\r\n\t\"b\":\"\\u00e9t\\u00E9\",\"a\":\"x/y\",\"n\":null}\n"},
		{`{"t":"A &amp; B"}`, `{"t":"A &#38; B"}`, `{"t":"A &#x26; B"}`, `{"t":"A \u0026amp; B"}`},
		{`{"t":"caf&eacute;"}`, `{"t":"café"}`, `{"t":"caf&#233;"}`, `{"t":"caf&#xE9;"}`},
		{`{"t":"Acme&nbsp;pump"}`, "{\"t\":\"Acme\u00a0pump\"}", `{"t":"Acme&#160;pump"}`},
		{`{"t":"&lt;b&gt;"}`, `{"t":"&#60;b&#x3e;"}`},
		{`[1, 2.50, -3e4, true, false, null, [], {}]`, `[1,2.50,-3e4,true,false,null,[ ],{ }]`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`{"t":"line\nbreak \"quoted\" \\"}`, `{"t":"line\u000abreak \u0022quoted\u0022 \u005c"}`},
		{`"\ud83d\ude00"`, `"😀"`},
	}
	for _, set := range alike {
		want := canonicalJSON([]byte(set[0]))
		for _, other := range set[1:] {
			if got := canonicalJSON([]byte(other)); !bytes.Equal(got, want) {
				t.Errorf("canonicalJSON(%q) = %s, want %s (that of %q)", other, got, want, set[0])
			}
		}
	}
	differ := [][2]string{
		{`{"a":"x"}`, `{"a":"y"}`},
		{`{"t":"&lt;b&gt;"}`, `{"t":"<b>"}`}, // text that shows a tag, and a tag
		{`{"t":"a&#32;b"}`, `{"t":"<b&#32;x>"}`},
		{`{"n":1}`, `{"n":"1"}`},
		{`{"n":2.50}`, `{"n":2.5}`}, // numbers as written: a plugin may read them as text
		{`{"t":"a  b"}`, `{"t":"a b"}`},
		{`{"a":null}`, `{}`},
		{`[1,2]`, `[2,1]`},
		{`{"t":"AT&T"}`, `{"t":"AT&amp;T"}`}, // a bare "&" stays as it is
	}
	for _, d := range differ {
		if a, b := canonicalJSON([]byte(d[0])), canonicalJSON([]byte(d[1])); bytes.Equal(a, b) {
			t.Errorf("canonicalJSON(%q) = canonicalJSON(%q) = %s, want them to differ", d[0], d[1], a)
		}
	}
	for _, bad := range []string{``, `{"a":`, `{"a":1}x`, `[01]`, `"\x"`, "\"a\tb\"", `{a:1}`, `[1,]`, `nul`} {
		if got := canonicalJSON([]byte(bad)); string(got) != bad {
			t.Errorf("canonicalJSON(%q) = %q, want the bytes as they are: it is not JSON", bad, got)
		}
	}
}

// FuzzCanonicalJSON: the canonical form of valid JSON is valid JSON of the
// same content (HTML entities aside), is its own canonical form, and is
// what any other writer of that content gives; invalid JSON is left as it
// is.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"NID":"70001","Title":"A &amp; B\/C","Archived":"0"}`, `[1,2.5e3,{"a":[null,true]}]`, `"\ud800x"`, "\"\xff\"", `{"a":1,"a":{"b":"&#233;"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := canonicalJSON(b)
		if !json.Valid(b) {
			if !bytes.Equal(out, b) {
				t.Fatalf("canonicalJSON(%q) = %q: invalid JSON changed", b, out)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("canonicalJSON(%q) = %q: not JSON", b, out)
		}
		if again := canonicalJSON(out); !bytes.Equal(again, out) {
			t.Fatalf("canonicalJSON(%q) = %q, and again %q", b, out, again)
		}
		in, got := decodeCanonical(t, b), decodeCanonical(t, out)
		if !reflect.DeepEqual(got, in) {
			t.Fatalf("canonicalJSON(%q) = %q: content %#v, want %#v", b, out, got, in)
		}
		// Another writer (encoding/json: keys sorted, HTML escaped) of
		// the same content.
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		other, err := json.MarshalIndent(v, " ", "\t")
		if err != nil {
			t.Fatal(err)
		}
		if c := canonicalJSON(other); !bytes.Equal(c, out) {
			t.Fatalf("canonicalJSON(%q) = %q, but of the same content written %q: %q", b, out, other, c)
		}
	})
}

// decodeCanonical decodes JSON with its strings' entities made canonical.
func decodeCanonical(t *testing.T, b []byte) any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %q: %v", b, err)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			return canonicalText(v)
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		case map[string]any:
			for k := range v {
				v[k] = walk(v[k])
			}
		}
		return v
	}
	return walk(v)
}

// FuzzCanonicalText: text alike in canonical form reads alike to the
// shipped plugins (guest.CleanText strips tags, then decodes entities),
// and the canonical form is its own.
func FuzzCanonicalText(f *testing.F) {
	for _, s := range []string{"A &amp; B", "caf&eacute; &#233;", "<b&#32;x>", "&lt;b&gt;", "&&#97;mp;", "&notit;", "&amp&eacute;", "Acme&nbsp;InfuPump", "&#x26;lt;", "&nvlt;x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := canonicalText(s)
		if got, want := guest.CleanText(c), guest.CleanText(s); got != want {
			t.Fatalf("canonicalText(%q) = %q, which reads %q, not %q", s, c, got, want)
		}
		if again := canonicalText(c); again != c {
			t.Fatalf("canonicalText(%q) = %q, and again %q", s, c, again)
		}
	})
}

// TestCanonicalCSVRow: quoting and line endings do not count, fields do.
func TestCanonicalCSVRow(t *testing.T) {
	a := canonicalCSVRow([]byte("\"2018123\",\"Brakes, front\",\"\"\r\n"))
	for _, same := range []string{"2018123,\"Brakes, front\",\n", "2018123,\"Brakes, front\",", "\ufeff2018123,\"Brakes,\u0020front\",\"\"\n"} {
		if b := canonicalCSVRow([]byte(same)); !bytes.Equal(a, b) {
			t.Errorf("canonicalCSVRow(%q) differs from that of the same fields quoted otherwise", same)
		}
	}
	for _, other := range []string{"2018123,\"Brakes, front\"\n", "2018123,Brakes,front,\n", "2018124,\"Brakes, front\",\n"} {
		if b := canonicalCSVRow([]byte(other)); bytes.Equal(a, b) {
			t.Errorf("canonicalCSVRow(%q) is that of other fields", other)
		}
	}
	if got := canonicalCSVRow([]byte("a,\"b\nc")); string(got) != "a,\"b\nc" {
		t.Errorf("a row cut off is canonicalized as %q, want its bytes as they are", got)
	}
	if !strings.HasPrefix(contentHash(canonicalCSVRow, [][][]byte{{[]byte("a\n")}}), contentHashPrefix) {
		t.Error("a content hash without its prefix")
	}
}
