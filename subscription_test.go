package rappel

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestMailbox(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"ana@example.ca", "ana@example.ca", true},
		{"Ana.B+alerts@Example.CA", "Ana.B+alerts@example.ca", true},
		{"ana@localhost", "", false},
		{"Ana <ana@example.ca>", "", false},
		{"ana@example.ca, bob@example.ca", "", false},
		{"ana@@example.ca", "", false},
		{"ana@example..ca", "", false},
		{"@example.ca", "", false},
		{"ana@.example.ca", "", false},
		{"", "", false},
	} {
		got, ok := mailbox(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("mailbox(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzSubscribeRequest_Validate checks that whatever comes in, an accepted
// request holds no character that could break a mail header, and that the
// saved search parses.
func FuzzSubscribeRequest_Validate(f *testing.F) {
	f.Add("ana@example.ca", "listeria OR salmonella", "CFIA", "en")
	f.Add("a@example.ca\r\nBcc: x@example.com", "", "", "")
	f.Add("a@b.c", "\"unclosed", "CFIAA", "fr\n")
	f.Add("ana\u202e@example.ca", "", "", "")
	f.Add("\ufeffana@example.ca", "", "", "")
	f.Add("ana\xff@example.ca", "", "", "")
	f.Add("ana\ufffd@example.ca", "", "", "")
	f.Fuzz(func(t *testing.T, email, q, agency, lang string) {
		req := &SubscribeRequest{Email: &email, Q: &q, Agency: &agency, Lang: &lang}
		addr, l, s, err := req.Validate()
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Fatalf("error code %s", ErrorCode(err))
			}
			return
		}
		for _, v := range []string{addr, l, s.Q, s.Agency} {
			if strings.ContainsAny(v, "\r\n\x00") {
				t.Fatalf("accepted %q", v)
			}
		}
		// An address is plain visible text: valid UTF-8, without
		// format characters or the replacement character.
		if !utf8.ValidString(addr) || strings.ContainsRune(addr, utf8.RuneError) {
			t.Fatalf("accepted address %q", addr)
		}
		for _, r := range addr {
			if unicode.Is(unicode.Cf, r) {
				t.Fatalf("accepted address %q with U+%04X", addr, r)
			}
		}
		if _, err := s.Search(); err != nil {
			t.Fatalf("saved search %q does not parse: %v", s.Q, err)
		}
	})
}

// TestSubscribeRequest_EmailChars: an address holding a character that
// does not show, or that is not text, is refused with a sentence naming
// the character and its byte.
func TestSubscribeRequest_EmailChars(t *testing.T) {
	for _, tc := range []struct{ email, want string }{
		{"ana\u202e@example.ca", "holds U+202E (right-to-left override, an invisible format character) at byte 3; remove it"},
		{"a\u200bna@example.ca", "U+200B (zero-width space"},
		{"ana\u200c@example.ca", "U+200C (zero-width non-joiner"},
		{"ana@exa\u200dmple.ca", "U+200D (zero-width joiner"},
		{"ana\u2060@example.ca", "U+2060 (word joiner"},
		{"\ufeffana@example.ca", "U+FEFF (zero-width no-break space, or byte order mark, an invisible format character) at byte 0"},
		{"ana\u2066@example.ca", "U+2066 (left-to-right isolate"},
		{"ana\u00ad@example.ca", "U+00AD (soft hyphen"},
		{"ana\U000e0001@example.ca", "U+E0001 (an invisible format character) at byte 3"},
		{"ana\ufffd@example.ca", "U+FFFD, the replacement character, at byte 3: the text sent had a lone surrogate"},
		{"ana\xff@example.ca", "holds the byte 0xFF at byte 3, which is not UTF-8 text; send the text encoded as UTF-8"},
		{"ana\xed\xa0\x80@example.ca", "holds the byte 0xED at byte 3"},
		{"ana\x7f@example.ca", "holds a control character (U+007F) at byte 3"},
		{"ana@example.ca\u0085", "holds a control character (U+0085) at byte 14"},
		{"ana@example.ca\u2028", "control character (U+2028)"},
	} {
		req := &SubscribeRequest{Email: &tc.email}
		_, _, _, err := req.Validate()
		var e *Error
		if !errors.As(err, &e) || e.Code != EINVALID || len(e.Items) != 1 || e.Items[0].Type != ItemValue ||
			!strings.HasPrefix(e.Items[0].Msg, "Body field 'email' ") || !strings.Contains(e.Items[0].Msg, tc.want) {
			t.Errorf("%q: %v, want an item saying %q", tc.email, err, tc.want)
		}
	}
	// Format characters are refused in addresses only: a search may hold
	// a soft hyphen pasted from a recall's title.
	email, q := "ana@example.ca", "choco\u00adlate"
	if _, _, s, err := (&SubscribeRequest{Email: &email, Q: &q}).Validate(); err != nil || s.Q != q {
		t.Fatalf("q with a soft hyphen: %v", err)
	}
	// A non-ASCII address (RFC 6532) is still accepted.
	email = "josé@exemple.ca"
	if addr, _, _, err := (&SubscribeRequest{Email: &email}).Validate(); err != nil || addr != email {
		t.Fatalf("%q: %q, %v", email, addr, err)
	}
}
