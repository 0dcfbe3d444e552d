package synth_test

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"maps"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
	"github.com/rappel-ca/rappel/plugins/vrdb"
)

// TestGenerate_VRDBLikeReal sets the generated Transport Canada CSV beside
// the agency's own daily extract: the same header, the same quoting, the
// same vocabularies of categories, systems and notification types in both
// languages; and both load through the same normalizer with no problem.
func TestGenerate_VRDBLikeReal(t *testing.T) {
	real := guesttest.RealSample(t, "tc-vrdb-daily-sample.csv")
	c, _ := mustCorpus(t)
	line := func(b []byte) []byte { return b[:bytes.IndexByte(b, '\n')+1] }
	if !bytes.Equal(line(c.csvRaw), line(real)) {
		t.Errorf("header %q, the real one is %q", line(c.csvRaw), line(real))
	}
	if _, err := dailyRecords(real); err != nil {
		t.Fatalf("the real extract is not quoted as the generator's check expects: %v", err)
	}
	realRows, err := csv.NewReader(bytes.NewReader(real)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct {
		name   string
		en, fr int
	}{{"categories", 3, 4}, {"systems", 8, 9}, {"notification types", 10, 11}} {
		got, want := pairs(c.csvRows, v.en, v.fr), pairs(realRows[1:], v.en, v.fr)
		if !slices.Equal(got, want) {
			t.Errorf("%s: generated %q, Transport Canada writes %q", v.name, got, want)
		}
	}

	for name, data := range map[string][]byte{"generated": c.csvRaw, "real": real} {
		out := guesttest.Run(fstest.MapFS{"vrdb.csv": {Data: data}}, vrdb.Normalize)
		recalls := map[string]bool{}
		rows, _ := csv.NewReader(bytes.NewReader(data)).ReadAll()
		for _, r := range rows[1:] {
			recalls[r[0]] = true
		}
		t.Logf("%s: %d rows, %d recalls, %d records, %d problems", name, len(rows)-1, len(recalls), len(out.Records), len(out.Problems))
		if out.Err != "" || len(out.Problems) != 0 || len(out.Records) != len(recalls) {
			t.Errorf("%s: error %q, %d problems (%+v), %d records of %d recalls; want every recall and no problem",
				name, out.Err, len(out.Problems), out.Problems[:min(3, len(out.Problems))], len(out.Records), len(recalls))
		}
	}
}

// pairs returns the distinct English and French values of two columns,
// sorted.
func pairs(rows [][]string, en, fr int) [][2]string {
	set := map[[2]string]bool{}
	for _, r := range rows {
		set[[2]string{r[en], r[fr]}] = true
	}
	return slices.SortedFunc(maps.Keys(set), func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
}
