package rappel

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

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
		// CFIA prints most UPC-As without their leading 0, and marks a
		// corrected code with an asterisk.
		{"64420001412", "00064420001412", -2},
		{"64420000224*", "00064420000224", -2},
		{"64420000224 *", "00064420000224", -2},
		{"6 44200 01412", "00064420001412", -2},
		{"64420001413", "", 2},
		// 11 digits that lost their check digit, not their 0: 085886000170
		// fails, and nothing is guessed.
		{"85886000170", "", 7},
		{"*", "", -1},
		{"Unknown", "", -1},
		{"+8613568623674", "", -1}, // a phone number
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
	for _, s := range []string{"0 41798 00145 9", "425261", "96385074", "64420001412", "64420000224*", "", "x"} {
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

func TestUPCPrefixGTINs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"0235278", []string{"00235278"}},              // EAN-13 frame: "0" + UPC-A number system 2
		{"235278", []string{"0235278", "00235278"}},    // EAN-13 in-store range 23, or UPC-A number system 2
		{"2352781", []string{"02352781", "002352781"}}, // both readings keep the check digit free
		{"023527", []string{"0023527"}},                // MinUPCPrefix digits
		{"02352", nil},                                 // too short to name an item
		{"023527812345", []string{"0023527812345"}},    // 12 digits: all but the check digit
		{"235278123456", []string{"0235278123456"}},    // a UPC-A reading would hold its check digit
		{"0235278123456", nil},                         // a whole EAN-13 is no prefix
		{"02352x8", nil},
		{"", nil},
	} {
		if got := UPCPrefixGTINs(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("UPCPrefixGTINs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestUPCPrefixGTINs_Forms checks that the code of an item sold by weight,
// scanned as a UPC-A or as an EAN-13, has a GTIN-14 starting with what its
// notice's prefix stands for, whether the notice printed the prefix with
// the EAN-13's leading 0 or without it, and that the code of the next item
// does not.
func TestUPCPrefixGTINs_Forms(t *testing.T) {
	upcA := "23527812345" + strconv.Itoa(CheckDigit("23527812345"))  // item 35278, price 123.45
	other := "23527912345" + strconv.Itoa(CheckDigit("23527912345")) // item 35279
	for _, prefix := range []string{"0235278", "235278", "0 235278"} {
		gs := UPCPrefixGTINs(StripBarcode(prefix))
		starts := func(code string) bool {
			g, err := ParseGTIN(code)
			if err != nil {
				t.Fatal(err)
			}
			return slices.ContainsFunc(gs, func(p string) bool { return strings.HasPrefix(string(g), p) })
		}
		for _, code := range []string{upcA, "0" + upcA, "00" + upcA, "0 " + upcA[:1] + " " + upcA[1:6] + " " + upcA[6:11] + " " + upcA[11:]} {
			if !starts(code) {
				t.Errorf("prefix %q (%q) does not cover %q", prefix, gs, code)
			}
		}
		for _, code := range []string{other, "0" + other} {
			if starts(code) {
				t.Errorf("prefix %q (%q) covers %q, the next item", prefix, gs, code)
			}
		}
	}
}
