package hcdump

import "testing"

func TestHazardClass(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"Class 1", "class_1", true},
		{"Class 2", "class_2", true},
		{"Class III", "class_3", true},
		{"Type I", "class_1", true},
		{"Type II", "class_2", true},
		{"type iii", "class_3", true},
		{"Classe 2", "class_2", true},
		{"3", "class_3", true},
		{"Type I - Type II", "class_1", true},
		{"Type II – Type III", "class_2", true},
		{"Type III - Type II", "class_2", true},
		{"", "", true},
		{"--", "", true},
		{"—", "", true},
		{"Class IV", "", false},
		{"Class", "", false},
		{"High", "", false},
	} {
		got, ok := hazardClass(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("hazardClass(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRecallNumber(t *testing.T) {
	for in, want := range map[string]string{
		"https://wwwapps.tc.gc.ca/Saf-Sec-Sur/7/VRDB-BDRV/search-recherche/detail.aspx?lang=eng&rn=2018123": "2018123",
		"https://wwwapps.tc.gc.ca/Saf-Sec-Sur/7/VRDB-BDRV/search-recherche/detail.aspx?rn=2018123&lang=fra": "2018123",
		"https://wwwapps.tc.gc.ca/detail.aspx?lang=eng":                                                     "",
		"https://wwwapps.tc.gc.ca/detail.aspx?lang=eng&rn=ABC":                                              "",
		"https://wwwapps.tc.gc.ca/detail.aspx?lang=eng&rn=-1":                                               "",
		"":    "",
		"%zz": "",
	} {
		if got := recallNumber(in); got != want {
			t.Errorf("recallNumber(%q) = %q, want %q", in, got, want)
		}
	}
}
