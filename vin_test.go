package rappel

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
)

// vinNow is the clock of the decoding tests: real.tsv has 2026 model years.
var vinNow = time.Date(2026, time.June, 1, 0, 0, 0, 0, time.UTC)

// vinRow is one row of testdata/vin/*.tsv.
type vinRow struct {
	vin, make, model string
	year             int
	source           string
}

// readVINTable reads a testdata/vin TSV file (header row first).
func readVINTable(tb testing.TB, name string) []vinRow {
	tb.Helper()
	f, err := os.Open("testdata/vin/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	var rows []vinRow
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if n == 1 {
			continue
		}
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) != 5 {
			tb.Fatalf("%s:%d: want 5 tab-separated columns, got %d", name, n, len(fs))
		}
		y, err := strconv.Atoi(fs[3])
		if err != nil {
			tb.Fatalf("%s:%d: year: %v", name, n, err)
		}
		rows = append(rows, vinRow{fs[0], fs[1], fs[2], y, fs[4]})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return rows
}

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

// TestVIN_DecodeReal decodes the real VINs of testdata/vin/real.tsv. Make
// and year must be right; a model, when decoded, must be the source's; and
// models must be decoded for most rows that name one.
func TestVIN_DecodeReal(t *testing.T) {
	rows := readVINTable(t, "real.tsv")
	if len(rows) < 40 {
		t.Fatalf("real.tsv has %d VINs, want at least 40", len(rows))
	}
	makes := map[string]bool{}
	named, decoded := 0, 0
	for _, r := range rows {
		v, err := ParseVIN(r.vin)
		if err != nil {
			t.Errorf("%s (%s): %v", r.vin, r.source, err)
			continue
		}
		d := v.DecodeAt(vinNow)
		if d.Make != r.make || d.Year != r.year {
			t.Errorf("%s: decoded %s %d, want %s %d (%s)", r.vin, d.Make, d.Year, r.make, r.year, r.source)
		}
		if d.Country == "" || d.Manufacturer == "" || len(d.WMI) < 3 {
			t.Errorf("%s: decoded %+v: country, manufacturer or WMI missing", r.vin, d)
		}
		makes[r.make] = true
		if r.model == "" {
			continue
		}
		named++
		switch d.Model {
		case "":
		case r.model:
			decoded++
		default:
			t.Errorf("%s: decoded model %q, want %q (%s)", r.vin, d.Model, r.model, r.source)
		}
	}
	t.Logf("%d VINs of %d makes; models decoded for %d of the %d that name one", len(rows), len(makes), decoded, named)
	if decoded*100 < named*75 {
		t.Errorf("models decoded for %d of %d VINs, want at least 75%%", decoded, named)
	}
}

// TestVIN_DecodePatterns decodes VINs that vPIC maps to a model.
func TestVIN_DecodePatterns(t *testing.T) {
	for _, r := range readVINTable(t, "patterns.tsv") {
		v, err := ParseVIN(r.vin)
		if err != nil {
			t.Errorf("%s: %v", r.vin, err)
			continue
		}
		if d := v.DecodeAt(vinNow); d.Make != r.make || d.Model != r.model || d.Year != r.year {
			t.Errorf("%s: decoded %s %q %d, want %s %q %d", r.vin, d.Make, d.Model, d.Year, r.make, r.model, r.year)
		}
	}
}

// withCheck returns vin with its check digit put right.
func withCheck(vin string) string {
	return vin[:8] + string(VINCheckDigit(vin)) + vin[9:]
}

func TestVIN_ModelYear(t *testing.T) {
	at := func(y int) time.Time { return time.Date(y, time.March, 1, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		head string // positions 1-8
		code byte   // position 10
		now  time.Time
		want int
	}{
		{"1HGCM826", '3', vinNow, 2003},   // a digit in position 7: 1980-2009
		{"2HKRW2H2", 'N', vinNow, 2022},   // a letter in position 7: 2010-2039
		{"2HKRW2H2", 'A', vinNow, 2010},   // A with a letter in 7
		{"1HGCM826", 'A', vinNow, 1980},   // A with a digit in 7
		{"1HGCM826", 'Y', vinNow, 2000},   // Y with a digit in 7
		{"2HKRW2H2", 'Y', vinNow, 2000},   // 2030 is in the future: the other cycle
		{"2HKRW2H2", 'T', at(2025), 2026}, // a year ahead is fine
		{"2HKRW2H2", 'V', at(2025), 1997}, // two years ahead is not
		{"2HKRW2H2", 'V', at(2026), 2027},
		{"1FDKF37G", 'S', vinNow, 1995}, // Ford chassis cab: position 7 rule too
		{"1FDUF5HT", 'T', vinNow, 2026},
		{"1FUJGLDR", 'L', vinNow, 2020}, // heavy truck: the later cycle
		{"1FUJGLDR", 'Y', vinNow, 2000}, // heavy truck, 2030 in the future
		{"1HD1GP45", 'L', vinNow, 2020}, // motorcycle: the later cycle
		{"9BZRW2H2", 'L', vinNow, 2020}, // unknown WMI: the later cycle
		{"2HKRW2H2", 'U', vinNow, 0},    // U, Z and 0 are no year codes
		{"2HKRW2H2", 'Z', vinNow, 0},
		{"2HKRW2H2", '0', vinNow, 0},
	} {
		v, err := ParseVIN(withCheck(tc.head + "0" + string(tc.code) + "A004352"))
		if err != nil {
			t.Fatalf("%s: %v", tc.head, err)
		}
		if got := v.DecodeAt(tc.now).Year; got != tc.want {
			t.Errorf("%s at %d: year %d, want %d", v, tc.now.Year(), got, tc.want)
		}
	}
}

func TestVIN_DecodeOdd(t *testing.T) {
	t.Run("NotAVIN", func(t *testing.T) {
		for _, s := range []string{"", "1HG", "1HGCM82633A0043521", "\xff\xfe\x00"} {
			if d := VIN(s).Decode(); d != (Decoded{}) {
				t.Errorf("VIN(%q).Decode() = %+v, want zero", s, d)
			}
		}
	})
	t.Run("UnknownWMI", func(t *testing.T) {
		d := VIN(withCheck("9BZAB1230H1234567")).DecodeAt(vinNow)
		if d.Make != "" || d.Model != "" || d.WMI != "9BZ" || d.Country != "Brazil" || d.Year != 2017 {
			t.Errorf("decoded %+v, want only WMI 9BZ, country Brazil and year 2017", d)
		}
	})
	t.Run("Country", func(t *testing.T) {
		for _, tc := range []struct{ head, want string }{
			{"XP7YGCEK", "Germany"}, // Tesla Berlin, outside the XL-XR block
			{"2HGFE2F5", "Canada"},
			{"3VWC57BU", "Mexico"},
			{"7SAYGDEE", "United States"},
			{"JHMCM826", "Japan"},
			{"KNDPUCDF", "South Korea"},
			{"WBA3A5C5", "Germany"},
			{"SALYB2RV", "United Kingdom"},
			{"YV1902FH", "Sweden"},
			{"ZFF65LJA", "Italy"},
			{"VF1AB123", "France"},
			{"LRW3E7EB", "China"},
		} {
			if d := VIN(withCheck(tc.head + "0P1234567")).DecodeAt(vinNow); d.Country != tc.want {
				t.Errorf("%s: country %q, want %q", tc.head, d.Country, tc.want)
			}
		}
	})
	t.Run("SmallManufacturer", func(t *testing.T) {
		d := VIN(withCheck("1F9AB1230HAFT1456")).DecodeAt(vinNow)
		if d.Make != "SEAGRAVE" || d.WMI != "1F9FT1" {
			t.Errorf("decoded %+v, want SEAGRAVE with WMI 1F9FT1", d)
		}
	})
	t.Run("Shared", func(t *testing.T) {
		for _, tc := range []struct{ vin, make, model string }{
			{"1C4RJEAG2EC476429", "JEEP", "GRAND CHEROKEE"},
			{"2C3CDYAGXDH825982", "DODGE", "CHALLENGER"},
			{"2C3CCACG6CH275007", "CHRYSLER", "300"},
			{"5N1AL0MM8DC306971", "INFINITI", "JX35"},
			{"5XYZUDLB3DG001966", "HYUNDAI", "SANTA FE SPORT"},
			{"5XYKTCA62DG346197", "KIA", "SORENTO"},
		} {
			if d := VIN(tc.vin).DecodeAt(vinNow); d.Make != tc.make || d.Model != tc.model {
				t.Errorf("%s: decoded %s %s, want %s %s", tc.vin, d.Make, d.Model, tc.make, tc.model)
			}
		}
	})
	t.Run("NoAllocs", func(t *testing.T) {
		v := VIN("1FTEW1EP5NKE29730")
		if n := testing.AllocsPerRun(100, func() { _ = v.DecodeAt(vinNow) }); n != 0 {
			t.Errorf("DecodeAt allocates %v times", n)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = ParseVIN("1FTEW1EP5NKE29730") }); n != 0 {
			t.Errorf("ParseVIN of a canonical VIN allocates %v times", n)
		}
	})
}

// TestVINTables checks the WMI and VDS tables themselves.
func TestVINTables(t *testing.T) {
	seen := map[string]string{}
	for _, g := range wmiGroups {
		for _, code := range strings.Fields(g.wmis) {
			if len(code) != 3 && len(code) != 6 {
				t.Errorf("WMI %q is neither 3 nor 6 characters", code)
			}
			for i := 0; i < len(code); i++ {
				if !vinChar(code[i]) {
					t.Errorf("WMI %q has a character a VIN cannot hold", code)
				}
			}
			if len(code) == 6 && code[2] != '9' {
				t.Errorf("6-character WMI %q must have 9 in position 3", code)
			}
			if prev, dup := seen[code]; dup {
				t.Errorf("WMI %s listed twice (%s, %s)", code, prev, g.make)
			}
			seen[code] = g.make
		}
		if g.make != strings.ToUpper(g.make) {
			t.Errorf("make %q is not upper case", g.make)
		}
	}
	n := 0
	for _, table := range ruleTables {
		for _, r := range table {
			n++
			if _, ok := compileVDS(r.vds); !ok {
				t.Errorf("rule %+v: malformed pattern", r)
			}
			if r.model == "" && r.make == "" {
				t.Errorf("rule %+v names neither make nor model", r)
			}
			if r.model != strings.ToUpper(r.model) || r.make != strings.ToUpper(r.make) {
				t.Errorf("rule %+v: make and model must be upper case", r)
			}
			if r.to != 0 && r.from > r.to {
				t.Errorf("rule %+v: years run backwards", r)
			}
			for _, code := range strings.Fields(r.wmis) {
				if _, ok := seen[code]; !ok || len(code) != 3 {
					t.Errorf("rule %+v: WMI %s is not in the WMI table", r, code)
				}
			}
		}
	}
	t.Logf("%d WMIs, %d VDS rules", len(seen), n)
	for _, bad := range []string{"", "[", "[]", "[Z-A]", "ABCDEF", "I", "[IOQ]", "a"} {
		if _, ok := compileVDS(bad); ok && bad != "" {
			t.Errorf("compileVDS(%q) accepted a malformed pattern", bad)
		}
	}
}

// TestVINTables_Spelling checks that decoded makes and models are spelled
// as the synthetic corpus spells them (bundle/synth/vehicle.go), since
// lookups match them against affected_models: a name that differs from a
// catalogue name only in punctuation or spacing is an error.
func TestVINTables_Spelling(t *testing.T) {
	src, err := os.ReadFile("bundle/synth/vehicle.go")
	if err != nil {
		t.Skip("no vehicle catalogue:", err)
	}
	models := map[string]map[string]string{} // make -> squeezed model -> model
	squeeze := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return unicode.ToUpper(r)
			}
			return -1
		}, s)
	}
	mk := ""
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "= "); ok {
			mk, _, _ = strings.Cut(rest, "|")
			models[mk] = map[string]string{}
			continue
		}
		if f := strings.SplitN(line, " ", 3); mk != "" && len(f) == 3 && len(f[0]) == 1 && f[1] != "" && f[1][0] >= '1' && f[1][0] <= '2' {
			models[mk][squeeze(f[2])] = f[2]
		}
	}
	if len(models) == 0 {
		t.Skip("vehicle catalogue not found in bundle/synth/vehicle.go")
	}
	makeOf := func(squeezed string) string {
		for m := range models {
			if squeeze(m) == squeezed {
				return m
			}
		}
		return ""
	}
	for _, g := range wmiGroups {
		if m := makeOf(squeeze(g.make)); g.make != "" && m != "" && m != g.make {
			t.Errorf("make %q is spelled %q in the catalogue", g.make, m)
		}
	}
	outside := map[string]bool{}
	for _, table := range ruleTables {
		for _, r := range table {
			if r.model == "" {
				continue
			}
			for _, code := range strings.Fields(r.wmis) {
				w := lookupWMI(code + "00000000000000")
				if w == nil {
					continue
				}
				brand := r.make
				if brand == "" {
					brand = w.make
				}
				c, ok := models[brand][squeeze(r.model)]
				switch {
				case ok && c != r.model:
					t.Errorf("model %s %q is spelled %q in the catalogue", brand, r.model, c)
				case !ok && models[brand] != nil:
					outside[brand+" "+r.model] = true
				}
			}
		}
	}
	t.Logf("%d catalogue makes; decodable models the catalogue lacks (real, but absent from the synthetic corpus): %d", len(models), len(outside))
}

func FuzzParseVIN(f *testing.F) {
	for _, s := range []string{"", "1hgcm82633a004352", "1HG-CM826 33A004352", "1M8GDM9AXKP042788", "IOQ", "1HGCM82633A00435É", "ZZZZZZZZZZZZZZZZZ"} {
		f.Add(s)
	}
	for _, r := range readVINTable(f, "real.tsv") {
		f.Add(r.vin)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Whatever the string, Decode copes with it.
		checkDecoded(t, VIN(s).DecodeAt(vinNow))
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
		if c := VINCheckDigit(string(v)); v[8] != c {
			t.Fatalf("ParseVIN(%q) = %q, check digit should be %c", s, v, c)
		}
		if again, err := ParseVIN(string(v)); err != nil || again != v {
			t.Fatalf("ParseVIN(%q) = %q, %v; want it unchanged", v, again, err)
		}
		checkDecoded(t, v.Decode())
		checkDecoded(t, v.DecodeAt(time.Date(1981, 1, 1, 0, 0, 0, 0, time.UTC)))
	})
}

// checkDecoded fails t if d's year is out of range.
func checkDecoded(t *testing.T, d Decoded) {
	t.Helper()
	if d.Year != 0 && (d.Year < 1980 || d.Year > 2040) {
		t.Fatalf("decoded year %d", d.Year)
	}
}

func BenchmarkParseVIN_Decode(b *testing.B) {
	rows := readVINTable(b, "real.tsv")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, err := ParseVIN(rows[i%len(rows)].vin)
		if err != nil {
			b.Fatal(err)
		}
		if d := v.DecodeAt(vinNow); d.Make == "" {
			b.Fatal("no make")
		}
	}
}
