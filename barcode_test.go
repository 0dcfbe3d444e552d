package rappel

import "testing"

func TestParseGTIN(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		check    int // expected WantCheck on error, -2 for success
	}{
		{"0 41798 00145 9", "00041798001459", -2},
		{"041798001459", "00041798001459", -2},
		{"0041798001459", "00041798001459", -2},
		{"00041798001459", "00041798001459", -2},
		{"0-41798-00145-9", "00041798001459", -2},
		{"96385074", "00000096385074", -2}, // EAN-8
		{"04252614", "00042100005264", -2}, // UPC-E → 042100005264
		{"425261", "00042100005264", -2},   // UPC-E without system and check
		{"041798001458", "", 9},
		{"04252615", "", 4},                // neither UPC-E (4) nor EAN-8 (0): the UPC-E digit is named
		{"96385075", "", 4},                // EAN-8 starting with 9
		{"04252610", "00000004252610", -2}, // EAN-8 whose UPC-E reading fails
		{"", "", -1},
		{"04179800145X", "", -1},
		{"12345", "", -1},
	} {
		got, err := ParseGTIN(tc.in)
		if tc.check == -2 {
			if err != nil || string(got) != tc.want {
				t.Errorf("ParseGTIN(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			continue
		}
		be, ok := err.(*BarcodeError)
		if !ok || be.WantCheck != tc.check {
			t.Errorf("ParseGTIN(%q) = %q, %v; want error with check %d", tc.in, got, err, tc.check)
		}
	}
}

func FuzzParseGTIN(f *testing.F) {
	for _, s := range []string{"0 41798 00145 9", "425261", "96385074", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGTIN(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty reason")
			}
			return
		}
		if len(g) != 14 {
			t.Fatalf("GTIN %q is not 14 digits", g)
		}
		again, err := ParseGTIN(string(g))
		if err != nil || again != g {
			t.Fatalf("GTIN %q does not parse back to itself: %q %v", g, again, err)
		}
	})
}
