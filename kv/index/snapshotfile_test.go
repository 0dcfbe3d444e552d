package index

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/segment"
)

// mixedRecords are records that use all a segment holds: statistics
// fields, units or none, categories, allergens, one or two languages,
// products with barcodes, without, or with a prefix only.
func mixedRecords() []*rappel.Record {
	recs := append(statsCorpus(300), testCorpus(300)...)
	for i, r := range recs {
		r.RecordID = r.RecordID + "-" + string(rune('a'+i%26))
		switch i % 5 {
		case 0:
			r.ProductList = []rappel.Product{{Name: "Aged cheddar", UPC: "0 62639 31285 5"}}
		case 1:
			r.ProductList = []rappel.Product{{Name: "Sliced ham"}}
		case 2:
			r.ProductList = []rappel.Product{{Name: "Deli cuts", UPCPrefix: "0235278"}}
		case 3:
			if i%2 == 1 {
				r.UPC = "062639312855"
			}
		}
	}
	return recs
}

func mustSegmentBytes(tb testing.TB, s *Snapshot) []byte {
	tb.Helper()
	b, err := s.EncodeSegment()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestSegment_SameAnswers(t *testing.T) {
	recs := mixedRecords()
	info := rappel.DatasetInfo{UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Source: "feeds"}
	built, err := Build(slices.Clone(recs), info)
	if err != nil {
		t.Fatal(err)
	}
	b := mustSegmentBytes(t, built)
	opened, err := OpenSegmentBytes("small.seg", b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if opened.Digest() != built.Digest() {
		t.Fatal("the segment's digest differs from the snapshot's")
	}
	sameAnswers(t, built.View(), opened.View(), recs, 1, 1500)
}

func TestSegment_Bundle(t *testing.T) {
	built := bundled(t)
	path := filepath.Join(t.TempDir(), "base.seg")
	if err := built.WriteSegment(path); err != nil {
		t.Fatal(err)
	}
	opened, err := OpenSegment(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	var recs []*rappel.Record
	for d := range built.n {
		r, _ := built.Record(built.ids.str(d))
		recs = append(recs, r)
	}
	sameAnswers(t, built.View(), opened.View(), recs, 2, 300)
	// Every record, in every language.
	for d := range built.n {
		id := built.ids.str(d)
		for _, lang := range []string{"", rappel.LangEN, rappel.LangFR} {
			a, _ := built.RecordJSON(id, lang)
			b, ok := opened.RecordJSON(id, lang)
			if !ok || string(a) != string(b) {
				t.Fatalf("record %s in %q differs", id, lang)
			}
			checkAppendRecordJSON(t, opened.View(), id, lang, a)
		}
	}
	st, _ := os.Stat(path)
	t.Logf("segment of %d records: %d bytes", built.n, st.Size())
}

// TestSegment_Refused checks what opening refuses: another content
// version, and content whose checksums hold but whose structure is wrong
// (what a faulty writer would make).
func TestSegment_Refused(t *testing.T) {
	built := mustBuild(t, mixedRecords())
	good := mustSegmentBytes(t, built)
	f, err := segment.OpenBytes("x", good)
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range f.Sections() {
		t.Run(sec, func(t *testing.T) {
			b := slices.Clone(good)
			off, n := segment.SectionSpan(b, sec)
			if n == 0 {
				t.Skip("empty section")
			}
			// Garble the section's middle and its first bytes.
			for i := off; i < off+min(n, 16); i++ {
				b[i] ^= 0xa5
			}
			b[off+n/2] ^= 0x5a
			segment.Reseal(b)
			s, err := OpenSegmentBytes("bad.seg", b, Options{})
			if err != nil {
				var e *segment.Error
				if !errors.As(err, &e) || e.File != "bad.seg" {
					t.Fatalf("err = %v (%T), want a *segment.Error naming the file", err, err)
				}
				return
			}
			// Opened: the garbled bytes passed every check (record JSON,
			// say, is served as it lies); using it must not panic.
			useAll(t, s)
		})
	}
}

// useAll asks s everything once, failing on a panic.
func useAll(t *testing.T, s *Snapshot) {
	t.Helper()
	recs := []*rappel.Record{{RecordID: "x", RecallID: "1", EventDate: "2020-01-01", Category: "Dairy"}}
	for d := range min(s.n, 50) {
		if r, ok := s.Record(s.ids.str(d)); ok {
			recs = append(recs, r)
		}
	}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	for _, q := range []*rappel.Search{{Limit: 10}, {Limit: 5, Query: mustQuery(t, "cheese OR listeria")}, {Limit: 5, Query: mustQuery(t, `"cheese recalled"`), SortBy: rappel.SortRelevance}} {
		_, _ = s.View().Search(t.Context(), checked(t, q))
	}
	for _, f := range rappel.StatsGroupFields {
		_, _ = s.Stats(t.Context(), &rappel.StatsQuery{GroupBy: f, SumField: "units_affected"})
	}
}
