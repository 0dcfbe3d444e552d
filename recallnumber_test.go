package rappel

import (
	"slices"
	"strings"
	"testing"
)

func TestRecallNumbers(t *testing.T) {
	for in, want := range map[string][]string{
		"":                         nil,
		"18S05":                    {"18S05"},
		"N222383790 / N222383791":  {"N222383790", "N222383791"},
		"CR5267 / CR5268 / CR5269": {"CR5267", "CR5268", "CR5269"},
		"CR5350/5351":              {"CR5350", "CR5351"},
		"Z-22-04 & Z-22-08":        {"Z-22-04", "Z-22-08"},
		"R0181 (GWMS:11D160)":      {"R0181", "GWMS:11D160"},
		"61 91 22RC / 61 92 22RC":  {"61 91 22RC", "61 92 22RC"},
		"TY517 / 109L":             {"TY517", "109L"},
		"1234/5":                   {"1234", "5"},
		"AB12/345":                 {"AB12", "345"},
		"A1 / A1 / ":               {"A1"},
		" ( ) / ":                  nil,
	} {
		if got := RecallNumbers(in); !slices.Equal(got, want) {
			t.Errorf("RecallNumbers(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzRecallNumbers(f *testing.F) {
	for _, s := range []string{"CR5350/5351", "R0181 (GWMS:11D160)", "Z-22-04 & Z-22-08", "9/99", "\xff/1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		field := strings.Join(strings.Fields(s), " ")
		seen := map[string]bool{}
		for _, n := range RecallNumbers(s) {
			if n == "" || n != strings.TrimSpace(n) || strings.ContainsAny(n, "/&,;()") || seen[n] {
				t.Fatalf("RecallNumbers(%q) holds %q", s, n)
			}
			seen[n] = true
			// A number the field does not spell is an abbreviated one
			// written out: some of its last digits are in the field.
			if !strings.Contains(field, n) && !endsInPart(n, field) {
				t.Fatalf("RecallNumbers(%q) holds %q, which the field does not spell", s, n)
			}
		}
	})
}

// endsInPart reports whether some of n's last digits are in field.
func endsInPart(n, field string) bool {
	for k := 1; k <= len(n) && IsDigits(n[len(n)-k:]); k++ {
		if strings.Contains(field, n[len(n)-k:]) {
			return true
		}
	}
	return false
}
