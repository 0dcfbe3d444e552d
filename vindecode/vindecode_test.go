package vindecode

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// vinNow is the clock of the decoding tests: real.tsv has 2026 model years.
var vinNow = time.Date(2026, time.June, 1, 0, 0, 0, 0, time.UTC)

// decode decodes s, which need not be a valid VIN, as of vinNow.
func decode(s string) rappel.DecodedVIN { return Decoder{}.Decode(rappel.VIN(s), vinNow) }

// vinRow is one row of testdata/vin/*.tsv.
type vinRow struct {
	vin, make, model string
	year             int
	source           string
}

// readVINTable reads a testdata/vin TSV file of the repository (header
// row first).
func readVINTable(tb testing.TB, name string) []vinRow {
	tb.Helper()
	f, err := os.Open("../testdata/vin/" + name)
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

// TestDecoder_Real decodes the real VINs of testdata/vin/real.tsv, labelled
// as Transport Canada writes makes and models. Make and year must be right;
// a model, when decoded, must be the source's; and models must be decoded
// for most rows that name one.
func TestDecoder_Real(t *testing.T) {
	rows := readVINTable(t, "real.tsv")
	if len(rows) < 40 {
		t.Fatalf("real.tsv has %d VINs, want at least 40", len(rows))
	}
	makes := map[string]bool{}
	named, decoded := 0, 0
	for _, r := range rows {
		v, err := rappel.ParseVIN(r.vin)
		if err != nil {
			t.Errorf("%s (%s): %v", r.vin, r.source, err)
			continue
		}
		d := Decoder{}.Decode(v, vinNow)
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

// TestDecoder_Patterns decodes VINs that vPIC maps to a model.
func TestDecoder_Patterns(t *testing.T) {
	for _, r := range readVINTable(t, "patterns.tsv") {
		if d := decode(r.vin); d.Make != r.make || d.Model != r.model || d.Year != r.year {
			t.Errorf("%s: decoded %s %q %d, want %s %q %d", r.vin, d.Make, d.Model, d.Year, r.make, r.model, r.year)
		}
	}
}

// withCheck returns vin with its check digit put right.
func withCheck(vin string) string {
	return vin[:8] + string(rappel.VINCheckDigit(vin)) + vin[9:]
}

func TestDecoder_ModelYear(t *testing.T) {
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
		v, err := rappel.ParseVIN(withCheck(tc.head + "0" + string(tc.code) + "A004352"))
		if err != nil {
			t.Fatalf("%s: %v", tc.head, err)
		}
		if got := (Decoder{}).Decode(v, tc.now).Year; got != tc.want {
			t.Errorf("%s at %d: year %d, want %d", v, tc.now.Year(), got, tc.want)
		}
	}
}

func TestDecoder_Odd(t *testing.T) {
	t.Run("NotAVIN", func(t *testing.T) {
		for _, s := range []string{"", "1HG", "1HGCM82633A0043521", "\xff\xfe\x00"} {
			if d := decode(s); d != (rappel.DecodedVIN{}) {
				t.Errorf("Decode(%q) = %+v, want zero", s, d)
			}
		}
	})
	t.Run("UnknownWMI", func(t *testing.T) {
		d := decode(withCheck("9BZAB1230H1234567"))
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
			if d := decode(withCheck(tc.head + "0P1234567")); d.Country != tc.want {
				t.Errorf("%s: country %q, want %q", tc.head, d.Country, tc.want)
			}
		}
	})
	t.Run("SmallManufacturer", func(t *testing.T) {
		d := decode(withCheck("1F9AB1230HAFT1456"))
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
			if d := decode(tc.vin); d.Make != tc.make || d.Model != tc.model {
				t.Errorf("%s: decoded %s %s, want %s %s", tc.vin, d.Make, d.Model, tc.make, tc.model)
			}
		}
	})
	t.Run("NoAllocs", func(t *testing.T) {
		v := rappel.VIN("1FTEW1EP5NKE29730")
		if n := testing.AllocsPerRun(100, func() { _ = Decoder{}.Decode(v, vinNow) }); n != 0 {
			t.Errorf("Decode allocates %v times", n)
		}
	})
}

// FuzzDecode: whatever the string converted to VIN, Decode neither panics
// nor decodes a year outside 1980-2040, and a VIN ParseVIN accepts, with
// or without a right check digit, decodes like the same VIN in canonical
// form.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"", "1hgcm82633a004352", "1M8GDM9AXKP042788", "IOQ", "ZZZZZZZZZZZZZZZZZ", "XTAGFL120JY000001"} {
		f.Add(s)
	}
	for _, r := range readVINTable(f, "real.tsv") {
		f.Add(r.vin)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkYear(t, decode(s))
		v, err := rappel.ParseVIN(s)
		if err != nil {
			return
		}
		d := Decoder{}.Decode(v, vinNow)
		checkYear(t, d)
		checkYear(t, Decoder{}.Decode(v, time.Date(1981, 1, 1, 0, 0, 0, 0, time.UTC)))
		if again := decode(strings.ToUpper(string(v))); again != d {
			t.Fatalf("%q decodes to %+v, its canonical form %q to %+v", s, d, v, again)
		}
	})
}

// checkYear fails t if d's year is out of range.
func checkYear(t *testing.T, d rappel.DecodedVIN) {
	t.Helper()
	if d.Year != 0 && (d.Year < 1980 || d.Year > 2040) {
		t.Fatalf("decoded year %d", d.Year)
	}
}

func BenchmarkDecode(b *testing.B) {
	rows := readVINTable(b, "real.tsv")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, err := rappel.ParseVIN(rows[i%len(rows)].vin)
		if err != nil {
			b.Fatal(err)
		}
		if d := (Decoder{}).Decode(v, vinNow); d.Make == "" {
			b.Fatal("no make")
		}
	}
}
