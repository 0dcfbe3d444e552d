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
		{"2018.5", 0, false},
		{"2018.", 0, false},
		{".0", 0, false},
		{"-5", 0, false},
		{"+5", 0, false},
		{"1e3", 0, false},
		{"99999999999999999999999", 0, false},
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
	col[colNumber], col[colYear], col[colUnits], col[colDate] = "2018123", "2018.0", "1200.0", "2018/03/14"
	r, reason := parseRow(col)
	if reason != "" || r.year != 2018 || r.units != 1200 || r.date != "2018-03-14" {
		t.Errorf("parseRow = %+v, %q", r, reason)
	}
	col[colYear] = "1850"
	if _, reason := parseRow(col); !strings.Contains(reason, "is not a model year") {
		t.Errorf("a year of 1850 gave %q", reason)
	}
}
