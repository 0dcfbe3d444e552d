package rappel

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/rappel-ca/rappel/idn"
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
		// Domains become their A-label, however typed; the local part
		// stays as sent.
		{"ana@bücher.example.ca", "ana@xn--bcher-kva.example.ca", true},
		{"Ana@BÜCHER.Example.CA", "Ana@xn--bcher-kva.example.ca", true},
		{"ana@XN--BCHER-KVA.example.ca", "ana@xn--bcher-kva.example.ca", true},
		{"ana@ｅｘａｍｐｌｅ.ca", "ana@example.ca", true},
		{"josé@exemple.ca", "josé@exemple.ca", true},
		{"ana@例え.テスト", "ana@xn--r8jz45g.xn--zckzah", true},
		{"ana@straße.de", "ana@xn--strae-oqa.de", true},
		// Not domain names: bad punycode, hyphens, underscore, a label
		// over 63 bytes, mixed right-to-left and left-to-right.
		{"ana@xn--zz.ca", "", false},
		{"ana@-bad-.ca", "", false},
		{"ana@ab--cd.ca", "", false},
		{"ana@a_b.ca", "", false},
		{"ana@" + strings.Repeat("a", 64) + ".ca", "", false},
		{"ana@\u05d0a.ca", "", false},
		// IP addresses, however written, are not domains.
		{"a@127.0.0.1", "", false},
		{"a@[127.0.0.1]", "", false},
		{"a@[IPv6:::1]", "", false},
		{"a@::1", "", false},
		{"a@127.1", "", false},
		{"a@0x7f.0.0.1", "", false},
		{"a@１２７．０．０．１", "", false},
		{"a@1.2.3.example", "a@1.2.3.example", true},
		{"a@123.ca", "a@123.ca", true},
	} {
		got, why := mailbox(tc.in, idn.Names{})
		if got != tc.want || (why == nil) != tc.ok {
			t.Errorf("mailbox(%q) = %q, %v; want %q, %v", tc.in, got, why, tc.want, tc.ok)
		}
		if got != "" && !isASCIIDomain(got) {
			t.Errorf("mailbox(%q) = %q: the domain is not ASCII", tc.in, got)
		}
	}
}

// TestMailbox_IPLiteral: an address at an IP address, bracketed or bare,
// IPv4 or IPv6, in any form a resolver reads, is refused with a sentence
// saying so and how to fix it.
func TestMailbox_IPLiteral(t *testing.T) {
	for _, in := range []string{"a@127.0.0.1", "a@[127.0.0.1]", "a@[IPv6:2001:db8::1]", "a@[::1]", "a@2001:db8::1",
		"a@10.1", "a@0177.0.0.1", "a@0X7F.0.0.1", "a@１２７．０．０．１"} {
		_, why := mailbox(in, idn.Names{})
		if why == nil || !strings.HasPrefix(why.Problem, "has an IP address as its domain") ||
			why.Fix != "send an address at a domain name, such as 'name@example.ca': alerts are not e-mailed to IP addresses" {
			t.Errorf("mailbox(%q): %+v", in, why)
		}
	}
}

func isASCIIDomain(addr string) bool {
	for _, r := range addr[strings.LastIndexByte(addr, '@')+1:] {
		if r >= 0x80 {
			return false
		}
	}
	return true
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
	f.Add("ana@bücher.example.ca", "", "", "")
	f.Add("ana@XN--BCHER-KVA.example.ca", "", "", "")
	f.Add("ana@xn--zz.ca", "", "", "")
	f.Add("ana@例え.テスト", "", "", "")
	f.Add("ana@\u05d0a.ca", "", "", "")
	f.Add("ana@ab\u200d.ca", "", "", "")
	f.Add("ana@ｅｘａｍｐｌｅ.ca", "", "", "")
	f.Add("josé@straße.de", "", "", "")
	f.Add("a@127.0.0.1", "", "", "")
	f.Add("a@[IPv6:::1]", "", "", "")
	f.Add("a@0x7f.1", "", "", "")
	f.Add("a@１２７．０．０．１", "", "", "")
	f.Fuzz(func(t *testing.T, email, q, agency, lang string) {
		req := &SubscribeRequest{Email: &email, Q: &q, Filters: FilterValues{Agency: agency}, Lang: &lang}
		addr, l, s, err := req.Validate(idn.Names{})
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
		// The domain reaches SMTP as its A-label: ASCII, lower case,
		// and the same address again when validated again.
		if !isASCIIDomain(addr) || strings.ToLower(addr[strings.LastIndexByte(addr, '@'):]) != addr[strings.LastIndexByte(addr, '@'):] {
			t.Fatalf("accepted address %q whose domain is not a lower-case A-label", addr)
		}
		// Nor is it an IP address.
		if ipDomain(addr[strings.LastIndexByte(addr, '@')+1:]) {
			t.Fatalf("accepted address %q at an IP address", addr)
		}
		if again, _, _, err := (&SubscribeRequest{Email: &addr}).Validate(idn.Names{}); err != nil || again != addr {
			t.Fatalf("%q validated again: %q, %v", addr, again, err)
		}
		if _, err := s.Search(); err != nil {
			t.Fatalf("saved search %q does not parse: %v", s.Q, err)
		}
	})
}

// TestSubscribeRequest_EmailChars: an address holding a character that
// does not show, or that is not text, is refused with a sentence naming
// the character and its byte; one whose domain is not a valid
// internationalized domain name, with a sentence naming the domain.
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
		// A domain that is not an internationalized domain name.
		{"ana@xn--zz.ca", "has the domain 'xn--zz.ca', which is not a valid internationalized domain name (invalid label"},
		{"ana@ab--cd.ca", "which is not a valid internationalized domain name (invalid label \"ab--cd\"); check the part after '@'"},
		{"ana@a_b.ca", "(disallowed rune U+005F); check the part after '@': a domain in another script is sent as typed ('bücher.example') or as its A-label"},
	} {
		req := &SubscribeRequest{Email: &tc.email}
		_, _, _, err := req.Validate(idn.Names{})
		var e *Error
		if !errors.As(err, &e) || e.Code != EINVALID || len(e.Items) != 1 || e.Items[0].Type != ItemValue ||
			!strings.HasPrefix(e.Items[0].Msg, "Body field 'email' ") || !strings.Contains(e.Items[0].Msg, tc.want) {
			t.Errorf("%q: %v, want an item saying %q", tc.email, err, tc.want)
		}
	}
	// Format characters are refused in addresses only: a search may hold
	// a soft hyphen pasted from a recall's title.
	email, q := "ana@example.ca", "choco\u00adlate"
	if _, _, s, err := (&SubscribeRequest{Email: &email, Q: &q}).Validate(idn.Names{}); err != nil || s.Q != q {
		t.Fatalf("q with a soft hyphen: %v", err)
	}
	// A non-ASCII address (RFC 6532) is still accepted.
	email = "josé@exemple.ca"
	if addr, _, _, err := (&SubscribeRequest{Email: &email}).Validate(idn.Names{}); err != nil || addr != email {
		t.Fatalf("%q: %q, %v", email, addr, err)
	}
}

// TestTrimClaim: a claim's limit never splits one e-mail's rows, unless
// that e-mail is all there is.
func TestTrimClaim(t *testing.T) {
	type row struct {
		sub string
		seq uint64
	}
	group := func(r row) (string, uint64) { return r.sub, r.seq }
	rows := []row{{"a", 1}, {"a", 1}, {"b", 1}, {"b", 1}, {"b", 1}, {"b", 2}}
	for _, c := range []struct{ limit, want int }{{10, 6}, {6, 6}, {5, 5}, {4, 2}, {3, 2}, {2, 2}, {1, 1}} {
		if got := TrimClaim(rows, c.limit, group); len(got) != c.want {
			t.Errorf("limit %d: %d rows, want %d", c.limit, len(got), c.want)
		}
	}
	one := []row{{"a", 1}, {"a", 1}, {"a", 1}}
	if got := TrimClaim(one, 2, group); len(got) != 2 {
		t.Errorf("one e-mail over the limit: %d rows, want the limit, 2", len(got))
	}
}
