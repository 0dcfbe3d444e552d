package rappel

import (
	"strings"
	"testing"
)

func TestParseIdempotencyKey(t *testing.T) {
	for _, c := range []struct {
		values []string
		key    string
		ok     bool
		bad    string // a part of the 400's message; "" for none
	}{
		{nil, "", false, ""},
		{[]string{"8e03978e-40d5-43e8-bc93-6894a57f9324"}, "8e03978e-40d5-43e8-bc93-6894a57f9324", true, ""},
		{[]string{`"8e03978e-40d5-43e8-bc93-6894a57f9324"`}, "8e03978e-40d5-43e8-bc93-6894a57f9324", true, ""},
		{[]string{` "a\"b\\c" `}, `a"b\c`, true, ""},
		{[]string{strings.Repeat("k", MaxIdempotencyKey)}, strings.Repeat("k", MaxIdempotencyKey), true, ""},
		{[]string{""}, "", false, "is empty"},
		{[]string{`""`}, "", false, "is empty"},
		{[]string{strings.Repeat("k", MaxIdempotencyKey+1)}, "", false, "256 characters long, over the 255"},
		{[]string{"a b"}, "", false, "not visible ASCII at byte 2"},
		{[]string{"clé"}, "", false, "not visible ASCII at byte 3"},
		{[]string{`"abc`}, "", false, "does not close"},
		{[]string{`"a"b`}, "", false, "after its closing quote"},
		{[]string{`"a\b"`}, "", false, "backslash"},
		{[]string{`"a b"`}, "", false, "holds a space"},
		{[]string{"a", "b"}, "", false, "sent 2 times; send it once"},
	} {
		key, ok, err := ParseIdempotencyKey(c.values)
		if key != c.key || ok != c.ok || (err == nil) != (c.bad == "") {
			t.Errorf("ParseIdempotencyKey(%q) = %q, %v, %v; want %q, %v, an error saying %q", c.values, key, ok, err, c.key, c.ok, c.bad)
			continue
		}
		if err != nil && (ErrorCode(err) != EBADREQUEST || !strings.Contains(ErrorMessage(err), c.bad) || !strings.HasPrefix(ErrorMessage(err), "The Idempotency-Key header ")) {
			t.Errorf("ParseIdempotencyKey(%q): %q (%s); want a 400 saying %q", c.values, ErrorMessage(err), ErrorCode(err), c.bad)
		}
	}
}

// FuzzParseIdempotencyKey: whatever the header holds, the parser answers
// a key of 1 to MaxIdempotencyKey visible ASCII characters or a 400, and
// a key it accepts reads the same quoted as a Structured Field string.
func FuzzParseIdempotencyKey(f *testing.F) {
	for _, s := range []string{"8e03978e-40d5-43e8-bc93-6894a57f9324", `"abc"`, `"a\"b"`, `""`, "", " x ", "é", `"\`, strings.Repeat("z", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		key, ok, err := ParseIdempotencyKey([]string{v})
		if ok == (err != nil) {
			t.Fatalf("%q: ok %v with error %v", v, ok, err)
		}
		if err != nil {
			if ErrorCode(err) != EBADREQUEST || key != "" {
				t.Fatalf("%q: %q, %v; want a 400 and no key", v, key, err)
			}
			return
		}
		if key == "" || len(key) > MaxIdempotencyKey {
			t.Fatalf("%q: key %q of %d bytes", v, key, len(key))
		}
		for i := 0; i < len(key); i++ {
			if key[i] <= ' ' || key[i] >= 0x7f {
				t.Fatalf("%q: key %q holds %q", v, key, key[i])
			}
		}
		quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(key) + `"`
		if again, ok, err := ParseIdempotencyKey([]string{quoted}); !ok || again != key {
			t.Fatalf("%q: key %q quoted as %q reads %q, %v", v, key, quoted, again, err)
		}
	})
}

func TestKeepsIdempotent(t *testing.T) {
	for status, want := range map[int]bool{200: true, 201: true, 202: true, 400: true, 404: true, 422: true,
		408: false, 409: false, 429: false, 500: false, 503: false, 504: false, 304: false} {
		if got := KeepsIdempotent(status); got != want {
			t.Errorf("KeepsIdempotent(%d) = %v, want %v", status, got, want)
		}
	}
}
