package guest

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
		{"Classe III", "class_3", true},
		{"3", "class_3", true},
		{"Type I - Type II", "class_1", true},
		{"Type II – Type III", "class_2", true},
		{"Type III - Type II", "class_2", true},
		{"Classe 2 à classe 3", "class_2", true},
		{"Class 1/2", "class_1", true},
		{"Recall class 2", "class_2", true},
		{"Type 1 (high risk)", "class_1", true},
		{"Class: 3", "class_3", true},
		{"", "", true},
		{"--", "", true},
		{"—", "", true},
		{"N/A", "", true},
		{"Sans objet", "", true},
		{"Class IV", "", false},
		{"Class", "", false},
		{"High", "", false},
		{"(", "", true},
	} {
		got, ok := HazardClass(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("HazardClass(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
