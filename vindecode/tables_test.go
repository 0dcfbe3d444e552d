package vindecode

import (
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// TestTables requires every row of every embedded table to parse, and
// counts what they hold.
func TestTables(t *testing.T) {
	tb := loadTables()
	for _, err := range tb.errs {
		t.Error(err)
	}
	names, err := fs.Glob(tableFS, "tables/*.tsv")
	if err != nil || len(names) < 3 {
		t.Fatalf("tables %v: %v", names, err)
	}
	if len(tb.wmi3) < 300 || len(tb.countries) < 70 || tb.rules < 400 {
		t.Errorf("%d WMIs, %d country blocks, %d VDS rules: a table was not read", len(tb.wmi3), len(tb.countries), tb.rules)
	}
	for code, e := range tb.wmi3 {
		if e.make == "" && len(e.brands) == 0 {
			t.Errorf("WMI %s has no make and no brand rules", code)
		}
	}
	t.Logf("%d tables: %d WMIs (%d of small makers), %d country blocks, %d VDS rules",
		len(names), len(tb.wmi3), len(tb.wmi6), len(tb.countries), tb.rules)
}

// TestTables_Errors feeds the table reader tables with every kind of bad
// row: each is reported with its file and line, and left out.
func TestTables_Errors(t *testing.T) {
	fsys := fstest.MapFS{
		"tables/countries.tsv": {Data: []byte("# blocks\nfrom\tto\tcountry\n1A\t10\tUnited States\n3W\t3A\tBackwards\nJA\tK0\tTwo letters\nWA\tW0\t\n")},
		"tables/wmi.tsv": {Data: []byte("wmi\tmake\tmanufacturer\tkind\tcountry\n" +
			"1FA 1FT\tFORD\tFord\tlight\n" + // good
			"1FA\tFORD\tFord\tlight\n" + // listed twice
			"1GI\tCHEVROLET\tGM\tlight\n" + // I is no VIN character
			"1G8ABC\tSATURN\tGM\tlight\n" + // 6 characters without 9
			"2FA\tFord\tFord\tlight\n" + // lower case
			"3FA\tFORD\t\tlight\n" + // no manufacturer
			"4FA\tFORD\tFord\tlorry\n" + // unknown kind
			"5FA\tFORD\tFord\tlight\t\textra\n" + // too many fields
			"\tFORD\tFord\tlight\n")}, // no WMI
		"tables/vds-a.tsv": {Data: []byte("wmi\tvds\tyears\tmake\tmodel\n" +
			"1FA\t.P4\t1981-2004\t\tMUSTANG\n" + // good
			"1FA\t.P[\t\t\tFOCUS\n" + // malformed pattern
			"1FA\t.P3\t2018-2000\t\tFOCUS\n" + // years backwards
			"1FA\t.P3\t85\t\tFOCUS\n" + // not a year
			"1FA\t.P3\t\t\t\n" + // neither make nor model
			"1FA\t.P3\t\t\tFocus\n" + // lower case
			"9ZZ\t.P3\t\t\tFOCUS\n")}, // unknown WMI
		"tables/vds-b.tsv": {Data: []byte("wmi\tpattern\tyears\tmake\tmodel\n1FA\t.P3\t\t\tFOCUS\n")}, // wrong header
	}
	tb := readTables(fsys)
	want := []string{
		"countries.tsv:4", "countries.tsv:5", "countries.tsv:6",
		"wmi.tsv:3", "wmi.tsv:4", "wmi.tsv:5", "wmi.tsv:6", "wmi.tsv:7", "wmi.tsv:8", "wmi.tsv:9", "wmi.tsv:10",
		"vds-a.tsv:3", "vds-a.tsv:4", "vds-a.tsv:5", "vds-a.tsv:6", "vds-a.tsv:7", "vds-a.tsv:8",
		"vds-b.tsv:1",
	}
	var got []string
	for _, err := range tb.errs {
		at, _, _ := strings.Cut(err.Error(), ": ")
		got = append(got, at)
		if !strings.Contains(err.Error(), ": ") || len(err.Error()) < len(at)+10 {
			t.Errorf("error %q does not say what is wrong", err)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("errors at %v\nwant %v\n%v", got, want, tb.errs)
	}
	if len(tb.countries) != 1 || len(tb.wmi3) != 2 || tb.rules != 1 || len(tb.wmi3["1FA"].models) != 1 {
		t.Errorf("%d countries, %d WMIs, %d rules: the good rows were not all kept", len(tb.countries), len(tb.wmi3), tb.rules)
	}
	if tb := readTables(fstest.MapFS{}); len(tb.errs) != 2 {
		t.Errorf("no tables at all: %v, want two errors (countries, WMIs)", tb.errs)
	}
	for _, bad := range []string{"[", "[]", "[Z-A]", "ABCDEF", "I", "[IOQ]", "a"} {
		if _, ok := compileVDS(bad); ok {
			t.Errorf("compileVDS(%q) accepted a malformed pattern", bad)
		}
	}
}

// TestTables_Spelling checks that decoded makes and models are spelled as
// the synthetic corpus spells them (bundle/synth/vehicle.go), since lookups
// match them against affected_models: a name that differs from a
// catalogue name only in punctuation or spacing is an error.
func TestTables_Spelling(t *testing.T) {
	src, err := os.ReadFile("../bundle/synth/vehicle.go")
	if err != nil {
		t.Skip("no vehicle catalogue:", err)
	}
	models := map[string]map[string]string{} // make -> squeezed model -> model
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
	tb := loadTables()
	outside := map[string]bool{}
	for _, e := range tb.wmi3 {
		if m := makeOf(squeeze(e.make)); e.make != "" && m != "" && m != e.make {
			t.Errorf("make %q is spelled %q in the catalogue", e.make, m)
		}
		for _, r := range append(e.brands, e.models...) {
			brand := r.make
			if brand == "" {
				brand = e.make
			}
			if m := makeOf(squeeze(brand)); m != "" && m != brand {
				t.Errorf("make %q is spelled %q in the catalogue", brand, m)
			}
			if r.model == "" {
				continue
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
	t.Logf("%d catalogue makes; decodable models the catalogue lacks (real, but absent from the synthetic corpus): %d", len(models), len(outside))
}
