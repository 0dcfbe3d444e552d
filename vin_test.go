package rappel

import (
	"errors"
	"strings"
	"testing"
)

func TestParseVIN(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for _, tc := range []struct{ in, want string }{
			{"1HGCM82633A004352", "1HGCM82633A004352"},
			{"1hgcm82633a004352", "1HGCM82633A004352"},
			{" 1HGCM8 2633 A004352 ", "1HGCM82633A004352"},
			{"1HG-CM826-33-A004352", "1HGCM82633A004352"},
			{"1M8GDM9AXKP042788", "1M8GDM9AXKP042788"}, // check digit X
			{"1m8gdm9axkp042788", "1M8GDM9AXKP042788"},
		} {
			got, err := ParseVIN(tc.in)
			if err != nil || string(got) != tc.want {
				t.Errorf("ParseVIN(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		}
	})
	t.Run("Errors", func(t *testing.T) {
		for _, tc := range []struct {
			in   string
			want []string // phrases the message must hold
		}{
			{"", []string{"empty"}},
			{"   ", []string{"empty"}},
			{"1HGCM82633A00435", []string{"16 characters", "17"}},
			{"1HGCM82633A0043521", []string{"18 characters", "17"}},
			{"1HGCM82633AO04352", []string{"letter O at position 12", "digit 0"}},
			{"IHGCM82633A004352", []string{"letter I at position 1", "digit 1"}},
			{"1HGCM8Q633A004352", []string{"letter Q at position 7"}},
			{"1hgcm82633a0o4352", []string{"letter O at position 13"}},
			{"1HGCM82643A004352", []string{"position 9", "is 4 but should be 3"}},
			{"1M8GDM9A1KP042788", []string{"is 1 but should be X"}},
			{"2HGCM82643A004352", []string{"is 4 but should be"}}, // Canada
			{"3VWCM82643A004352", []string{"position 9"}},         // Mexico
			{"7SAYGDEE0NF000001", []string{"position 9"}},         // 7F-70: United States since 2019
			{"1HGCM82633A00435É", []string{`'É' at position 17`}},
			{"1HGCM82633A00435_", []string{`'_' at position 17`}},
			{"1HGCM82633A0\x0004352", []string{"position 13"}},
			{"\xff", []string{"position 1"}},
		} {
			got, err := ParseVIN(tc.in)
			var ve *VINError
			if !errors.As(err, &ve) {
				t.Errorf("ParseVIN(%q) = %q, %v; want a *VINError", tc.in, got, err)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(ve.Reason, w) {
					t.Errorf("ParseVIN(%q): %q does not say %q", tc.in, ve.Reason, w)
				}
			}
		}
	})
}

func TestVINCheckDigit(t *testing.T) {
	for _, tc := range []struct {
		vin  string
		want byte
	}{
		{"1M8GDM9A_KP042788", 'X'},
		{"1HGCM826_3A004352", '3'},
		{"short", 0},
	} {
		if got := VINCheckDigit(tc.vin); got != tc.want {
			t.Errorf("VINCheckDigit(%q) = %q, want %q", tc.vin, got, tc.want)
		}
	}
}

// TestParseVIN_CheckDigitOutsideNorthAmerica: ISO 3779 does not make
// position 9 a check digit, so a VIN assigned outside North America is
// accepted whatever position 9 holds, and says whether it adds up.
func TestParseVIN_CheckDigitOutsideNorthAmerica(t *testing.T) {
	for _, tc := range []struct {
		in       string
		valid    bool
		required bool
	}{
		{"1HGCM82633A004352", true, true},
		{"WVWZZZ1KZ6W000001", false, false}, // a European Volkswagen: Z in position 9
		{"XTAGFL120JY000001", false, false}, // AvtoVAZ, Russia
		{"9BWAB45U0ET000001", false, false}, // Brazil
		{"JHMCM8263" + "3A004352", false, false},
		{"7AT0H63A1HX000001", false, false},           // 7A-7E: still New Zealand
		{withCheck("WBA3A5C50DF000001"), true, false}, // a right check digit is valid anywhere
	} {
		v, err := ParseVIN(tc.in)
		if err != nil {
			t.Errorf("ParseVIN(%q): %v", tc.in, err)
			continue
		}
		if v.CheckDigitValid() != tc.valid || v.CheckDigitRequired() != tc.required {
			t.Errorf("%s: CheckDigitValid %v, CheckDigitRequired %v; want %v, %v", v, v.CheckDigitValid(), v.CheckDigitRequired(), tc.valid, tc.required)
		}
	}
	for _, s := range []string{"", "1HG", "1HGCM82633A0043521"} {
		if VIN(s).CheckDigitValid() || VIN(s).CheckDigitRequired() {
			t.Errorf("VIN(%q): a string that is not 17 characters has a check digit", s)
		}
	}
	for _, s := range []string{"WVWZZZ1KZ6W00000", "JHMCM82633A0O4352", "XTAGFL120JY00000É"} {
		if _, err := ParseVIN(s); err == nil {
			t.Errorf("ParseVIN(%q) accepted a VIN of the wrong length or characters", s)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = ParseVIN("1FTEW1EP5NKE29730") }); n != 0 {
		t.Errorf("ParseVIN of a canonical VIN allocates %v times", n)
	}
}

// FuzzParseVIN: whatever the string, ParseVIN returns a canonical VIN or a
// *VINError with a sentence; an accepted VIN has a right check digit unless
// it was assigned outside North America, and parses again to itself.
func FuzzParseVIN(f *testing.F) {
	for _, s := range []string{"", "1hgcm82633a004352", "1HG-CM826 33A004352", "1M8GDM9AXKP042788", "IOQ",
		"1HGCM82633A00435É", "ZZZZZZZZZZZZZZZZZ", "WVWZZZ1KZ6W000001", "xtagfl120jy000001", "7SAYGDEE0NF000001",
		"2HGCM82643A004352", "4T1BB3EK5AU118081"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVIN(s)
		if err != nil {
			var ve *VINError
			if !errors.As(err, &ve) || ve.Reason == "" {
				t.Fatalf("ParseVIN(%q): error %v is not a *VINError with a reason", s, err)
			}
			return
		}
		if len(v) != 17 {
			t.Fatalf("ParseVIN(%q) = %q, not 17 characters", s, v)
		}
		for i := 0; i < len(v); i++ {
			if !vinChar(v[i]) {
				t.Fatalf("ParseVIN(%q) = %q holds %q", s, v, v[i])
			}
		}
		valid := v[8] == VINCheckDigit(string(v))
		if valid != v.CheckDigitValid() {
			t.Fatalf("%s: CheckDigitValid %v, but the check digit is %c", v, v.CheckDigitValid(), VINCheckDigit(string(v)))
		}
		if v[0] >= '1' && v[0] <= '5' && !v.CheckDigitRequired() {
			t.Fatalf("%s: assigned in North America, yet the check digit is not required", v)
		}
		if v.CheckDigitRequired() && !valid {
			t.Fatalf("ParseVIN(%q) = %q accepted a wrong check digit where it is required", s, v)
		}
		if again, err := ParseVIN(string(v)); err != nil || again != v {
			t.Fatalf("ParseVIN(%q) = %q, %v; want it unchanged", v, again, err)
		}
		// The same VIN with its check digit put right is accepted
		// everywhere, and with it put wrong only outside North America.
		fixed := withCheck(string(v))
		if _, err := ParseVIN(fixed); err != nil {
			t.Fatalf("ParseVIN(%q): %v", fixed, err)
		}
		wrong := fixed[:8] + string("1X"[b2i(fixed[8] == '1')]) + fixed[9:]
		if _, err := ParseVIN(wrong); (err == nil) == v.CheckDigitRequired() {
			t.Fatalf("ParseVIN(%q) = %v, but the check digit required is %v", wrong, err, v.CheckDigitRequired())
		}
	})
}

// withCheck returns vin with its check digit put right.
func withCheck(vin string) string {
	return vin[:8] + string(VINCheckDigit(vin)) + vin[9:]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
