package rappel

import "testing"

func TestUPCAWithoutLeadingZero(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"64420001412", "064420001412", true},   // CFIA's printing of 064420001412
		{"6 44200 01412", "064420001412", true}, // spaced as the UPC-A is, without its 0
		{"64420000224", "064420000224", true},
		{"41798001459", "041798001459", true},
		{"85886000170", "", false},  // 085886000170 fails: the check digit was dropped, not the 0
		{"64420001413", "", false},  // a wrong check digit
		{"064420001412", "", false}, // a whole UPC-A is ParseGTIN's
		{"4420001412", "", false},   // 10 digits
		{"6442000141X", "", false},  // a letter
		{"64420000224*", "", false}, // a correction mark is not a digit
		{"", "", false},
	} {
		got, ok := UPCAWithoutLeadingZero(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("UPCAWithoutLeadingZero(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if ok {
			if _, err := ParseGTIN(got); err != nil {
				t.Errorf("UPCAWithoutLeadingZero(%q) = %q, which ParseGTIN refuses: %v", tc.in, got, err)
			}
		}
	}
}
