package vindecode

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/rappel-ca/rappel"
)

// The targets of TestDecoder_RealSample, in percent of the sample's VINs
// whose check digit is right.
const (
	wantMake  = 99
	wantYear  = 99
	wantModel = 90
)

// sampleVIN is one row of the shared sample of real VINs: the make, model
// and model year as its source states them ("Honda", "Civic Sedan";
// model may be empty), and whether its check digit is right.
type sampleVIN struct {
	vin, make, model string
	year             int
	checkOK          bool
}

// repoRoot is the directory of the module's go.mod, found from the test's
// working directory upwards.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module github.com/rappel-ca/rappel\n")) {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			tb.Fatal("go.mod of github.com/rappel-ca/rappel not found above the working directory")
		}
		dir = up
	}
}

// readSample reads vins.tsv of the shared samples of real upstream data
// (see the README), which sit beside the repository's root and are not
// part of it: their VINs must not become part of the decoder. Without them
// the test is skipped, except under CI (RAPPEL_CI), where it fails.
func readSample(tb testing.TB) []sampleVIN {
	tb.Helper()
	name := filepath.Join(repoRoot(tb), "..", "shared", "real", "vins.tsv")
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		if os.Getenv("RAPPEL_CI") != "" {
			tb.Fatalf("%s is missing, and CI must measure the decoder on the real VINs: put the shared samples beside the repository", name)
		}
		tb.Skipf("%s is missing (the shared samples of real data sit beside the repository); skipping the measure on real VINs", name)
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var rows []sampleVIN
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		c := strings.Split(sc.Text(), "\t")
		if n == 1 {
			if len(c) < 5 || strings.Join(c[:5], " ") != "vin make model year check_digit_ok" {
				tb.Fatalf("%s: header %q, want vin, make, model, year, check_digit_ok first", name, c)
			}
			continue
		}
		if len(c) < 5 {
			tb.Fatalf("%s:%d: %d columns, want at least 5", name, n, len(c))
		}
		y, err := strconv.Atoi(c[3])
		if err != nil {
			tb.Fatalf("%s:%d: year: %v", name, n, err)
		}
		rows = append(rows, sampleVIN{vin: c[0], make: c[1], model: c[2], year: y, checkOK: c[4] == "yes"})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(rows) < 200 {
		tb.Fatalf("%s: %d rows, want at least 200", name, len(rows))
	}
	return rows
}

// TestDecoder_RealSample measures the decoder on the shared sample of real
// VINs whose check digit is right: the share whose make is the source's
// (upper case aside), whose year is, and, of those naming a model, whose
// model matches it loosely (sameModel). The sample's other VINs, assigned
// outside North America with no check digit, must parse and decode
// without a wrong make.
func TestDecoder_RealSample(t *testing.T) {
	var n, makes, years, named, models int
	for _, r := range readSample(t) {
		v, err := rappel.ParseVIN(r.vin)
		if err != nil {
			t.Errorf("%s: %v", r.vin, err)
			continue
		}
		d := Decoder{}.Decode(v, vinNow)
		if !r.checkOK {
			if v.CheckDigitValid() || v.CheckDigitRequired() {
				t.Errorf("%s: the sample says its check digit is wrong, yet it is valid or required", r.vin)
			}
			if d.Make != "" && !strings.EqualFold(d.Make, r.make) {
				t.Errorf("%s: make %s, want %s", r.vin, d.Make, r.make)
			}
			continue
		}
		n++
		if strings.EqualFold(d.Make, r.make) {
			makes++
		} else {
			t.Logf("%s: make %q, the source says %q", r.vin, d.Make, r.make)
		}
		if d.Year == r.year {
			years++
		} else {
			t.Logf("%s: year %d, the source says %d", r.vin, d.Year, r.year)
		}
		if r.model == "" {
			continue
		}
		named++
		if sameModel(r.make, d.Make, r.model, d.Model) {
			models++
		} else {
			t.Logf("%s: model %q, the source says %s %q", r.vin, d.Model, r.make, r.model)
		}
	}
	pct := func(a, b int) float64 { return float64(a) * 100 / float64(b) }
	t.Logf("%d real VINs with a right check digit: make %d (%.1f%%), year %d (%.1f%%); of the %d naming a model, model %d (%.1f%%)",
		n, makes, pct(makes, n), years, pct(years, n), named, models, pct(models, named))
	if pct(makes, n) < wantMake || pct(years, n) < wantYear || pct(models, named) < wantModel {
		t.Errorf("make %.1f%%, year %.1f%%, model %.1f%%; want at least %d%%, %d%% and %d%%",
			pct(makes, n), pct(years, n), pct(models, named), wantMake, wantYear, wantModel)
	}
}

// sameModel reports whether the decoded model is the stated one, loosely:
// sources write a model with its trim and body ("Civic Sedan", "F150
// PICKUP", "320I XDRIVE US A", "CLS550C4", "Caravan/Grand Caravan") where
// Transport Canada writes the family ("CIVIC", "F-150", "3 SERIES",
// "CLS-CLASS", "GRAND CARAVAN"). Both are compared as families: upper
// case, letters and digits only, without a leading make (the source's or
// the decoded one: "Ram 1500", "SMART FORTWO") nor a trailing SERIES or
// CLASS. They match when one starts with the other, or, for a decoded
// family of two characters or more, when a later word of the stated model
// starts with it ("M-Class ML320", "V12 Vanquish"). A stated model listing
// alternatives with "/" matches when any of them does.
func sameModel(statedMake, decodedMake, stated, decoded string) bool {
	if decoded == "" {
		return false
	}
	d := family(decoded, statedMake, decodedMake)
	for _, alt := range strings.Split(stated, "/") {
		s := family(alt, statedMake, decodedMake)
		if s == "" {
			continue
		}
		if strings.HasPrefix(s, d) || strings.HasPrefix(d, s) {
			return true
		}
		if len(d) < 2 {
			continue
		}
		words := strings.FieldsFunc(alt, func(r rune) bool { return r == ' ' || r == '-' })
		for i := 1; i < len(words); i++ {
			if strings.HasPrefix(squeeze(strings.Join(words[i:], "")), d) {
				return true
			}
		}
	}
	return false
}

// family is model as a family: squeezed, without a leading make nor a
// trailing SERIES or CLASS, unless nothing would be left.
func family(model string, makes ...string) string {
	s := squeeze(model)
	for _, mk := range makes {
		if rest, ok := strings.CutPrefix(s, squeeze(mk)); ok && rest != "" && mk != "" {
			s = rest
			break
		}
	}
	for _, suffix := range []string{"SERIES", "CLASS"} {
		if rest, ok := strings.CutSuffix(s, suffix); ok && rest != "" {
			s = rest
		}
	}
	return s
}

// squeeze upper-cases s and keeps its letters and digits.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToUpper(r)
		}
		return -1
	}, s)
}

func TestSameModel(t *testing.T) {
	for _, tc := range []struct {
		statedMake, decodedMake, stated, decoded string
		want                                     bool
	}{
		{"Ford", "FORD", "F-150", "F-150", true},
		{"Ford", "FORD", "F150 PICKUP", "F-150", true},
		{"Honda", "HONDA", "Civic Sedan", "CIVIC", true},
		{"Mazda", "MAZDA", "CX9 TR 2A", "CX-9", true},
		{"BMW", "BMW", "320I XDRIVE US A", "3 SERIES", true},
		{"Mercedes-Benz", "MERCEDES-BENZ", "CLS550C4", "CLS-CLASS", true},
		{"Mercedes-Benz", "MERCEDES-BENZ", "M-Class ML320", "ML-CLASS", true},
		{"Dodge", "RAM", "Ram 1500", "1500", true},
		{"smart", "SMART", "SMART FORTWO", "FORTWO", true},
		{"Dodge", "DODGE", "Caravan/Grand Caravan LE/ES", "GRAND CARAVAN", true},
		{"Chevrolet", "CHEVROLET", "Silverado 2500 3/4 Ton", "SILVERADO 2500", true},
		{"Ford", "FORD", "F-250", "F-150", false},
		{"Ford", "FORD", "Escape", "", false},
		{"Jeep", "JEEP", "Cherokee LAREDO", "GRAND CHEROKEE", false},
		{"Mazda", "MAZDA", "M3S SGT A", "MAZDA3", false},
		{"BMW", "BMW", "428I XDRIVE A", "3 SERIES", false},
		{"Chevrolet", "CHEVROLET", "GMT-400 Conventional Cab", "C/K", false},
		{"Land Rover", "LAND ROVER", "RR SPORT 3.0 SC PET", "RANGE ROVER SPORT", false},
	} {
		if got := sameModel(tc.statedMake, tc.decodedMake, tc.stated, tc.decoded); got != tc.want {
			t.Errorf("sameModel(%q, %q) = %v, want %v", tc.stated, tc.decoded, got, tc.want)
		}
	}
}

// TestTables_NoSampleVINs checks that the decoder's code and tables hold
// no VIN of the shared sample, nor its first 11 characters (WMI, VDS,
// check digit, year and plant) nor its serial (positions 12-17): the
// decoder knows rules, not vehicles, and is measured on VINs it has never
// seen.
func TestTables_NoSampleVINs(t *testing.T) {
	rows := readSample(t)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	tsvs, err := filepath.Glob("tables/*.tsv")
	if err != nil || len(tsvs) == 0 {
		t.Fatalf("no tables: %v", err)
	}
	checked := 0
	for _, name := range append(files, tsvs...) {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ToUpper(string(b))
		checked++
		for _, r := range rows {
			for _, part := range []string{r.vin[:11], r.vin[11:]} {
				if strings.Contains(text, part) {
					t.Errorf("%s holds %q, part of the sample's VIN %s", name, part, r.vin)
				}
			}
		}
	}
	t.Logf("%d files hold none of the %d sample VINs, their first 11 characters or their serials", checked, len(rows))
}
