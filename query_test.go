package rappel

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseQuery(t *testing.T) {
	w := func(s string) Term { return Term{Text: s} }
	p := func(s string) Term { return Term{Text: s, Phrase: true} }
	for _, tc := range []struct {
		in   string
		want *Query
	}{
		{"", nil},
		{"   ", nil},
		{"listeria", &Query{[]Clause{{Terms: []Term{w("listeria")}}}}},
		{"cheese listeria", &Query{[]Clause{{Terms: []Term{w("cheese")}}, {Terms: []Term{w("listeria")}}}}},
		{"listeria OR salmonella", &Query{[]Clause{{Terms: []Term{w("listeria"), w("salmonella")}}}}},
		{"cheese listeria OR salmonella", &Query{[]Clause{{Terms: []Term{w("cheese")}}, {Terms: []Term{w("listeria"), w("salmonella")}}}}},
		{`"soft cheese" -goat`, &Query{[]Clause{{Terms: []Term{p("soft cheese")}}, {Terms: []Term{w("goat")}, Exclude: true}}}},
		{`-"air bag"`, &Query{[]Clause{{Terms: []Term{p("air bag")}, Exclude: true}}}},
		{"F-150 - brakes", &Query{[]Clause{{Terms: []Term{w("F-150")}}, {Terms: []Term{w("brakes")}}}}},
		{"cats or dogs", &Query{[]Clause{{Terms: []Term{w("cats")}}, {Terms: []Term{w("or")}}, {Terms: []Term{w("dogs")}}}}},
		{`""`, nil},
		{"rappelé\tœufs", &Query{[]Clause{{Terms: []Term{w("rappelé")}}, {Terms: []Term{w("œufs")}}}}},
	} {
		got, err := ParseQuery(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseQuery(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseQuery_Errors(t *testing.T) {
	for in, want := range map[string]string{
		`"unclosed phrase`:          "unclosed double quote",
		"OR listeria":               "starts a clause with OR",
		"listeria OR":               "ends with OR",
		"a OR OR b":                 "ends with OR or repeats it",
		"-a OR b":                   "excluded term with OR",
		"a OR -b":                   "excluded term with OR",
		"bell\x07":                  "control character",
		strings.Repeat("word ", 33): "terms",
		strings.Repeat("x", 513):    "bytes long",
		"\xff\xfe":                  "UTF-8",
	} {
		_, err := ParseQuery(in)
		qe, ok := err.(*QueryError)
		if !ok || !strings.Contains(qe.Error(), want) {
			t.Errorf("ParseQuery(%q) = %v; want a QueryError mentioning %q", in, err, want)
		}
	}
	long := strings.Repeat("x", 600)
	_, err := ParseQuery(long)
	it := err.(*QueryError).Item(QueryLoc("q"), long)
	if it.Type != ItemTooLong || it.Ctx["max_length"] != MaxQueryBytes || it.Input != Clip(long) ||
		it.Msg != "Query parameter 'q' is 600 bytes long; keep it to 512 bytes or fewer." {
		t.Errorf("item = %+v", it)
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"listeria", `"soft cheese" -goat`, "a OR b OR c", `-"x`, "OR", "F-150 rappelé", "lister* OR sal*", "-re*", "*", "a*b*", `"x*"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuery(s)
		if err != nil {
			if _, ok := err.(*QueryError); !ok || err.Error() == "" {
				t.Fatalf("error %v is not a QueryError with a message", err)
			}
			return
		}
		// The normalized form parses back to the same query.
		again, err := ParseQuery(q.String())
		if err != nil || !reflect.DeepEqual(q, again) {
			t.Fatalf("%q -> %q -> %+v, %v; want %+v", s, q.String(), again, err, q)
		}
	})
}
