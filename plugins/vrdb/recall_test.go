package vrdb

import (
	"strings"
	"testing"
)

func TestWhole(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"2018", 2018, true},
		{"2018.0", 2018, true},
		{"2018.00", 2018, true},
		{"0", 0, true},
		{"11.00", 11, true},
		{"40,915.00", 40915, true},
		{"362,062.00", 362062, true},
		{"1,234,567", 1234567, true},
		{"40,915.50", 0, false},
		{"2018.5", 0, false},
		{"2018.", 0, false},
		{".0", 0, false},
		{"4,0915", 0, false},
		{"40,91", 0, false},
		{",915", 0, false},
		{"1234,567", 0, false},
		{"40 915", 0, false},
		{"-5", 0, false},
		{"+5", 0, false},
		{"1e3", 0, false},
		{"99999999999999999999999", 0, false},
		{"99,999,999,999,999,999,999.00", 0, false},
		{"", 0, false},
	} {
		got, ok := whole(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("whole(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"FORD F-150 2018":          "ford-f-150-2018",
		"MERCEDES-BENZ C 300 2019": "mercedes-benz-c-300-2019",
		"RAM 1500 / 2500 2020":     "ram-1500-2500-2020",
		"CITROËN C4":               "citro-n-c4",
		"  ":                       "",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestYearRanges(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{[]int{2018}, "2018"},
		{[]int{2018, 2019}, "2018–2019"},
		{[]int{2012, 2013, 2014, 2017}, "2012–2014, 2017"},
		{[]int{2010, 2012, 2014}, "2010, 2012, 2014"},
	} {
		if got := yearRanges(tc.in); got != tc.want {
			t.Errorf("yearRanges(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseRow(t *testing.T) {
	var col [numCols]string
	col[colNumber], col[colYear], col[colUnits], col[colDate], col[colLastUpdate] = "2018123", "2018", "40,915.00", "2018-03-14", "2023-01-09"
	r, skip, unused := parseRow(col)
	if skip != "" || len(unused) != 0 || r.year != 2018 || r.units != 40915 || r.date != "2018-03-14" || r.lastUpdate != "2023-01-09" {
		t.Errorf("parseRow = %+v, %q, %q", r, skip, unused)
	}
	col[colUnits], col[colLastUpdate] = "40,915.50", "2023-01-32"
	r, skip, unused = parseRow(col)
	if skip != "" || r.units != -1 || r.lastUpdate != "" || len(unused) != 2 ||
		unused[0] != `its UNIT_AFFECTED_NBR "40,915.50" is not a whole number of units` || !strings.HasPrefix(unused[1], `its LAST_UPDATE_DATE "2023-01-32" is not a date`) {
		t.Errorf("a fraction of a unit and a bad last update: %+v, %q, %q", r, skip, unused)
	}
	col[colYear] = "1850"
	if _, skip, _ := parseRow(col); skip != `its YEAR "1850" is not a model year` {
		t.Errorf("a year of 1850 gave %q", skip)
	}
	col[colYear], col[colDate] = "2018", ""
	if _, skip, _ := parseRow(col); skip != "it has no RECALL_DATE_DTE" {
		t.Errorf("a row without a date gave %q", skip)
	}
}
