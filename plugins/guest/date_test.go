package guest

import "testing"

func TestParseDate(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2018-03-14", "2018-03-14"},
		{"2018-03-14 00:00:00", "2018-03-14"},
		{"2018-03-14 23:59:59", "2018-03-14"},
		{"2018/03/14", "2018-03-14"},
		{"2024-02-29", "2024-02-29"},
		{"2023-02-29", ""},
		{"2018-3-14", ""},
		{"14/03/2018", ""},
		{"2018-03-14T00:00:00Z", ""},
		{"", ""},
		{"yesterday", ""},
	} {
		got, err := ParseDate(tc.in)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("ParseDate(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestIsNumber(t *testing.T) {
	for in, want := range map[string]bool{
		"70001": true, "2018123": true, "0": true, "12345678901234567890": true,
		"": false, "123456789012345678901": false, "12a": false, "-1": false, "1.0": false, " 1": false, "١٢": false,
	} {
		if got := IsNumber(in); got != want {
			t.Errorf("IsNumber(%q) = %v, want %v", in, got, want)
		}
	}
}
