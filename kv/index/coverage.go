package index

import (
	"sort"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
)

// The coverage (rappel.CoverageOf) is kept as three bitmaps of documents,
// one per part of a record's mark, and counted year by year when the
// snapshot is built or opened: a year of event_date is a range of
// documents, so each count is two ranks. A view adds up its parts' years
// and takes away its hidden documents' marks when it is made, so that
// /health and the metrics read a slice.

// The coverage's bitmaps, by part of rappel.CoverageMark.
const (
	coverNotice = iota
	coverProducts
	coverBarcode
	coverParts
)

// coverBits are the documents marked with each part.
type coverBits [coverParts]*roaring.Bitmap

func newCoverBits() coverBits {
	var c coverBits
	for i := range c {
		c[i] = roaring.New()
	}
	return c
}

// add marks doc as m says.
func (c coverBits) add(doc int32, m rappel.CoverageMark) {
	for i, set := range [coverParts]bool{m.Notice, m.Products, m.Barcode} {
		if set {
			c[i].Add(uint32(doc))
		}
	}
}

// mark returns doc's mark.
func (c coverBits) mark(doc int32) rappel.CoverageMark {
	return rappel.CoverageMark{Notice: c[coverNotice].Contains(uint32(doc)),
		Products: c[coverProducts].Contains(uint32(doc)), Barcode: c[coverBarcode].Contains(uint32(doc))}
}

// countCoverage counts the snapshot's coverage by year from its bitmaps
// and its ranges of years.
func (s *Snapshot) countCoverage() {
	t := rappel.CoverageTable{}
	years := s.stats[rappel.GroupYear]
	for i, v := range years.values {
		year, err := strconv.Atoi(v)
		if err != nil {
			continue // event_date is YYYY-MM-DD in every valid record
		}
		t.AddYear(rappel.YearCoverage{Year: year,
			Notices:      years.matchCount(i, s.cover[coverNotice]),
			WithProducts: years.matchCount(i, s.cover[coverProducts]),
			WithBarcode:  years.matchCount(i, s.cover[coverBarcode])})
	}
	s.coverage = t.Years()
}

// Coverage returns the snapshot's coverage, newest year first.
func (s *Snapshot) Coverage() []rappel.YearCoverage { return s.coverage }

// yearOf returns the year of event_date of document d.
func (s *Snapshot) yearOf(d int32) (int, bool) {
	years := s.stats[rappel.GroupYear]
	i := sort.Search(len(years.ranges), func(i int) bool { return years.ranges[i][1] > d })
	if i == len(years.ranges) || years.ranges[i][0] > d {
		return 0, false
	}
	y, err := strconv.Atoi(years.values[i])
	return y, err == nil
}

// viewCoverage is the coverage of the view's visible records: the base's
// years less its hidden documents' marks, plus the delta's years.
func (v *View) viewCoverage() []rappel.YearCoverage {
	if v.delta == nil {
		return v.base.coverage
	}
	t := rappel.CoverageTable{}
	for _, c := range v.base.coverage {
		t.AddYear(c)
	}
	v.deleted.Iterate(func(d uint32) bool {
		if y, ok := v.base.yearOf(int32(d)); ok {
			t.Add(y, v.base.cover.mark(int32(d)), -1)
		}
		return true
	})
	for _, c := range v.delta.coverage {
		t.AddYear(c)
	}
	return t.Years()
}

// Coverage returns the coverage of the visible records, newest year
// first, worked out when the view was made.
func (v *View) Coverage() []rappel.YearCoverage { return v.coverage }
