package realjudged

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// MatchRow is one row of the judged matching set,
// testdata/judged-match/items.tsv: a catalog item written by hand from a
// real notice (or from none), and what screening it should answer.
type MatchRow struct {
	ID, GTIN, Brand, Name, Model, Lot, Date string
	Year                                    int
	// Expect is the status judged right: recalled, check_lot, possible,
	// no_match, or invalid for an item the request should refuse.
	Expect string
	// Records are the notices the item is judged to be a product of (any
	// of them is right), none for an item no notice names.
	Records []string
	// Kind says what the row tests (barcode, barcode_form, lot_in,
	// lot_out, lookalike, vehicle…); Note says it in words.
	Kind, Note string
}

// matchColumns are the set's columns, in order.
var matchColumns = []string{"id", "gtin", "brand", "name", "model", "lot", "date", "year", "expect", "records", "kind", "note"}

// MatchSet returns the judged matching set. Its records are those of
// Products.
func MatchSet(t testing.TB) []MatchRow {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(here), "..", "..", "testdata", "judged-match", "items.tsv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var rows []MatchRow
	for n := 1; sc.Scan(); n++ {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != len(matchColumns) {
			t.Fatalf("%s:%d: %d columns, want %d (%s)", path, n, len(cols), len(matchColumns), strings.Join(matchColumns, ", "))
		}
		if n == 1 {
			if !slices.Equal(cols, matchColumns) {
				t.Fatalf("%s: header %q, want %q", path, cols, matchColumns)
			}
			continue
		}
		r := MatchRow{ID: cols[0], GTIN: cols[1], Brand: cols[2], Name: cols[3], Model: cols[4], Lot: cols[5], Date: cols[6],
			Expect: cols[8], Kind: cols[10], Note: cols[11]}
		if cols[7] != "" {
			if r.Year, err = strconv.Atoi(cols[7]); err != nil {
				t.Fatalf("%s:%d: year %q: %v", path, n, cols[7], err)
			}
		}
		if cols[9] != "-" && cols[9] != "" {
			r.Records = strings.Split(cols[9], ",")
		}
		if !slices.Contains([]string{"recalled", "check_lot", "possible", "no_match", "invalid"}, r.Expect) {
			t.Fatalf("%s:%d: expect %q is no status", path, n, r.Expect)
		}
		if len(r.Records) == 0 && r.Expect != "no_match" && r.Expect != "invalid" {
			t.Fatalf("%s:%d: %s names no record", path, n, r.Expect)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}
