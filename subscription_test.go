package rappel

import (
	"strings"
	"testing"
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
		if _, err := s.Search(); err != nil {
			t.Fatalf("saved search %q does not parse: %v", s.Q, err)
		}
	})
}
