package detail

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

func TestCutTables(t *testing.T) {
	for _, tc := range []struct {
		in, rest string
		tables   []table
	}{
		{"<b>A:</b> 1", "<b>A:</b> 1", nil},
		{
			"<b>Brand name:</b> X<BR/><TABLE class=\"t\"><THEAD><TR><TH>UPC</TH><th>Size</th></TR></THEAD><tbody><tr><td>1</td><td>2 g</td></tr></tbody></TABLE><b>B:</b> 2",
			"<b>Brand name:</b> X<BR/><br><b>B:</b> 2",
			[]table{{{"UPC</TH>", "Size</th></TR></THEAD><tbody>"}, {"1</td>", "2 g</td></tr></tbody>"}}},
		},
		// A table left open runs to the end; <thead> and <tbody> are no cells.
		{"<table><tr><td>a<td>b", "<br>", []table{{{"a", "b"}}}},
		{"<tablex><tr><td>a</td></tr></tablex>", "<tablex><tr><td>a</td></tr></tablex>", nil},
		{"a<table></table>b<table><tr><th>c</th></tr></table>", "a<br>b<br>", []table{nil, {{"c</th></tr>"}}}},
		{"<table", "<table", nil},
	} {
		rest, tables := cutTables(tc.in)
		if rest != tc.rest || !reflect.DeepEqual(tables, tc.tables) {
			t.Errorf("cutTables(%q) = %q, %q; want %q, %q", tc.in, rest, tables, tc.rest, tc.tables)
		}
	}
}

func TestTableRows(t *testing.T) {
	var problems []string
	n := &notice{nid: "1", report: func(p rappel.Problem) { problems = append(problems, p.Reason) }}
	pp := productPanel{n: 2, p: &panel{}, file: "en/1.json"}
	var base productValues
	base[fieldBrand] = "Maple Grove"

	var unknown unknownKeys
	rows := n.tableRows(table{{"Common name", "UPC", "Colour", ""}, {"Pear purée", "1", "Red", ""}, {"", "2", "", ""}}, base, pp, &unknown)
	if len(rows) != 2 || rows[0].name() != "Maple Grove Pear purée" || rows[0][fieldUPC] != "1" || rows[1].name() != "Maple Grove" || rows[1][fieldUPC] != "2" {
		t.Errorf("header table rows %q", rows)
	}
	unknown.report(n, pp.file)
	if len(problems) != 1 || problems[0] != `The column "Colour" of the table in product_2 of en/1.json is none this normalizer knows; its cells were left out.` {
		t.Errorf("problems %q, want one for Colour and none for the empty column", problems)
	}

	rows = n.tableRows(table{{"Common name:", "Plum purée"}, {"Code(s) on product", "BB 1"}}, base, pp, &unknown)
	if len(rows) != 1 || rows[0].name() != "Maple Grove Plum purée" || rows[0][fieldCodes] != "BB 1" {
		t.Errorf("key/value table rows %q", rows)
	}
}

// FuzzCutTables checks the table scanner on any text: it ends, leaves no
// table in the rest, and every cell is a piece of the text.
func FuzzCutTables(f *testing.F) {
	for _, s := range []string{
		"<b>Brand name:</b> X<BR/><table><tr><th>UPC</th></tr><tr><td>1</td></tr></table>",
		"<TABLE><TR><TD>a<TD>b", "<table><table></table></table>", "<th<td><tr>", "<table x='>'><tr><td>c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rest, tables := cutTables(s)
		if indexTag(asciiLower(rest), "table", 0) >= 0 {
			t.Fatalf("cutTables(%q) left a table in %q", s, rest)
		}
		for _, tb := range tables {
			for _, r := range tb {
				for _, c := range r {
					if !strings.Contains(s, c) {
						t.Fatalf("cutTables(%q) made the cell %q", s, c)
					}
				}
			}
		}
	})
}
