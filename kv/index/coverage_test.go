package index

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/rappel-ca/rappel"
)

// expectCoverage counts the coverage from the records themselves.
func expectCoverage(recs []*rappel.Record) []rappel.YearCoverage {
	t := rappel.CoverageTable{}
	for _, r := range recs {
		y, _ := strconv.Atoi(r.EventDate[:4])
		t.Add(y, rappel.CoverageOf(r), 1)
	}
	return t.Years()
}

// TestSnapshot_Coverage: the coverage of a built snapshot, of one read
// from its segment and of a view over a base and a delta is the one
// counted from the records, year by year.
func TestSnapshot_Coverage(t *testing.T) {
	final := mixedRecords()
	want := expectCoverage(final)
	if len(want) < 10 {
		t.Fatalf("the corpus has %d years of notices; the test wants many", len(want))
	}
	var products, barcodes, notices int
	for _, y := range want {
		notices, products, barcodes = notices+y.Notices, products+y.WithProducts, barcodes+y.WithBarcode
	}
	if products == 0 || products == notices || barcodes == 0 || barcodes >= products {
		t.Fatalf("the corpus has %d notices, %d with products, %d with a barcode: it tests nothing", notices, products, barcodes)
	}
	built := mustBuild(t, cloneAll(final))
	opened, err := OpenSegmentBytes("cov.seg", mustSegmentBytes(t, built), Options{})
	if err != nil {
		t.Fatal(err)
	}
	base, delta, deleted := splitChange(t, final, 30, 25, 20)
	bs, err := OpenSegmentBytes("base", mustSegmentBytes(t, base), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]rappel.CoverageSource{
		"Built": built, "Opened": opened, "BuiltView": built.View(),
		"View": NewView(base, delta, deleted, rappel.DatasetInfo{}), "OpenedView": NewView(bs, delta, deleted, rappel.DatasetInfo{}),
	} {
		if c := got.Coverage(); !reflect.DeepEqual(c, want) {
			t.Errorf("%s: coverage\n %+v\nwant %+v", name, c, want)
		}
	}
	if c := empty.Coverage(); c == nil || len(c) != 0 {
		t.Errorf("empty snapshot: coverage %#v, want an empty list", c)
	}
}
