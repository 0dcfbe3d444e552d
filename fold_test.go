package rappel

import "testing"

// TestIsDigits checks the one digit test the domain, the API, the read
// index and the detail plugin share: ASCII digits only, and not empty.
func TestIsDigits(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "2026432": true, "": false, " 1": false, "12a": false, "1.5": false,
		"-1": false, "١٢٣": false, "１２": false, "12\x00": false,
	} {
		if got := IsDigits(s); got != want {
			t.Errorf("IsDigits(%q) = %v, want %v", s, got, want)
		}
	}
}
