package segment

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
)

// testRecords makes n records that use what a segment holds: both, one or
// no translation, French categories, several categories and allergens,
// units or none, barcodes and lot codes, accents and quotes.
func testRecords(n int) []*rappel.Record {
	words := []string{"cheese", "listeria", "salmonella", "peanut", "brakes", "airbag", "toy", "choking"}
	cats := []string{"Dairy", "Vehicles", "Toys", "Crème  Glacée"}
	var out []*rappel.Record
	for i := range n {
		r := &rappel.Record{
			RecordID: fmt.Sprintf("hc-%04d", (i*7919)%10000), RecallID: fmt.Sprint(i / 2),
			RecallType: rappel.RecallTypes[i%len(rappel.RecallTypes)], Agency: rappel.Agencies[i%len(rappel.Agencies)],
			Status:    rappel.Statuses[i%2],
			EventDate: fmt.Sprintf("20%02d-%02d-%02d", 10+i%15, 1+i%12, 1+i%28), RecallDate: fmt.Sprintf("20%02d-01-%02d", 10+i%15, 1+i%28),
			FetchedAt: "2026-01-01T00:00:00Z",
			Translations: rappel.Translations{
				EN: &rappel.Translation{Title: words[i%8] + " " + words[(i/3)%8] + ` "recalled"`, ProductDescription: "Sold at <b>stores</b>"},
				FR: &rappel.Translation{Title: fmt.Sprintf("Rappel de fromage n° %d", i), Category: "Produits laitiers"},
			},
			Category:    cats[i%len(cats)],
			HazardClass: rappel.HazardClasses[i%3],
			ProductList: []rappel.Product{{Name: "Brie " + words[i%8], UPC: "0 41798 00145 9", LotCodes: []string{fmt.Sprintf("L%d", i)}}},
		}
		switch i % 5 {
		case 1:
			r.Translations.FR = nil
		case 2:
			r.Translations.EN = nil
		case 3:
			r.Translations = rappel.Translations{}
		}
		if i%3 == 0 {
			u := i * 10
			r.UnitsAffected = &u
		}
		if i%4 == 0 {
			r.Categories = []string{"Food", cats[(i+1)%len(cats)]}
			r.Allergens = []string{"milk", "peanut"}
		}
		out = append(out, r)
	}
	return out
}

// mustSegment builds the snapshot of recs and opens its segment, encoded
// in memory.
func mustSegment(tb testing.TB, recs []*rappel.Record) (*index.Snapshot, *Segment, []byte) {
	tb.Helper()
	snap, err := index.Build(recs, rappel.DatasetInfo{UpdatedAt: time.Date(2026, 11, 25, 15, 37, 15, 0, time.UTC), Source: "bundle"})
	if err != nil {
		tb.Fatal(err)
	}
	b, err := Encode(snap)
	if err != nil {
		tb.Fatal(err)
	}
	seg, err := OpenBytes("test", b)
	if err != nil {
		tb.Fatal(err)
	}
	return snap, seg, b
}

// checkSame fails unless seg holds what snap serves: the dataset, every
// record's JSON in every language variant byte for byte, its document
// number and values, every filter bitmap and every term's documents.
func checkSame(t *testing.T, snap *index.Snapshot, seg *Segment) {
	t.Helper()
	info, got := snap.Info(), seg.Info()
	if seg.Len() != snap.Len() || got.Records != info.Records || got.Source != info.Source || !got.UpdatedAt.Equal(info.UpdatedAt) {
		t.Fatalf("dataset %+v (%d records), want %+v (%d)", got, seg.Len(), info, snap.Len())
	}
	sum := sha256.New()
	for d := range int32(snap.Len()) {
		id := snap.DocID(d)
		if seg.RecordID(d) != id {
			t.Fatalf("document %d is %q, want %q", d, seg.RecordID(d), id)
		}
		if doc, ok := seg.Doc(id); !ok || doc != d {
			t.Fatalf("Doc(%q) = %d, %v; want %d", id, doc, ok, d)
		}
		for _, lang := range []string{"", rappel.LangEN, rappel.LangFR} {
			want, _ := snap.RecordJSON(id, lang)
			b, ok := seg.RecordJSON(id, lang)
			if !ok || !bytes.Equal(b, want) {
				t.Fatalf("%s lang %q:\n got %s\nwant %s", id, lang, b, want)
			}
			if lang == "" {
				sum.Write(append(b, '\n'))
			}
		}
		e, r, u := snap.DocValues(d)
		if seg.EventDays()[d] != e || seg.RecallDays()[d] != r || seg.Units()[d] != u {
			t.Fatalf("document %d values %d %d %d, want %d %d %d", d, seg.EventDays()[d], seg.RecallDays()[d], seg.Units()[d], e, r, u)
		}
	}
	if d := seg.Digest(); !bytes.Equal(d[:], sum.Sum(nil)) {
		t.Fatalf("digest %x, want %x", d, sum.Sum(nil))
	}
	if len(seg.EventDays()) != snap.Len() || len(seg.RecallDays()) != snap.Len() || len(seg.Units()) != snap.Len() {
		t.Fatal("a column's length is not the number of records")
	}
	checkFilters(t, snap, seg)
	checkPostings(t, snap, seg)
	if _, ok := seg.Doc("zz-absent"); ok {
		t.Fatal("found a record that does not exist")
	}
	if _, ok := seg.RecordJSON("", ""); ok {
		t.Fatal("found the empty record_id")
	}
}

func checkFilters(t *testing.T, snap *index.Snapshot, seg *Segment) {
	t.Helper()
	values := map[string][]string{}
	snap.Filters(func(field, value string, want *roaring.Bitmap) {
		values[field] = append(values[field], value)
		got, ok := seg.Filter(field, value)
		if !ok || !got.Equals(want) {
			t.Fatalf("filter %s=%q: %v, want %v", field, value, got, want)
		}
	})
	for field, want := range values {
		if got := seg.FilterValues(field); !slices.Equal(got, want) {
			t.Fatalf("FilterValues(%s) = %q, want %q", field, got, want)
		}
		if _, ok := seg.Filter(field, "\xffabsent"); ok {
			t.Fatalf("filter %s has a value no record holds", field)
		}
	}
	// The index's own search path agrees: its matches are the bitmap's.
	for _, f := range []struct {
		field string
		q     func(v string) rappel.Search
	}{
		{"recall_type", func(v string) rappel.Search { return rappel.Search{RecallType: v} }},
		{"agency", func(v string) rappel.Search { return rappel.Search{Agency: v} }},
		{"hazard_class", func(v string) rappel.Search { return rappel.Search{HazardClass: v} }},
		{"allergen", func(v string) rappel.Search { return rappel.Search{Allergen: v} }},
		{"category", func(v string) rappel.Search { return rappel.Search{Category: v} }},
	} {
		if len(values[f.field]) == 0 {
			t.Fatalf("no values for %s", f.field)
		}
		for _, v := range values[f.field] {
			q := f.q(v)
			ids, err := snap.MatchIDs(context.Background(), &q)
			if err != nil {
				t.Fatal(err)
			}
			bm, _ := seg.Filter(f.field, v)
			var got []string
			for _, d := range bm.ToArray() {
				got = append(got, seg.RecordID(int32(d)))
			}
			if !slices.Equal(got, ids) {
				t.Fatalf("%s=%q: the segment has %q, the index matches %q", f.field, v, got, ids)
			}
		}
	}
}

func checkPostings(t *testing.T, snap *index.Snapshot, seg *Segment) {
	t.Helper()
	terms := 0
	for _, stream := range []int{index.StreamEN, index.StreamFR} {
		snap.Postings(stream, func(term string, want *roaring.Bitmap) {
			terms++
			got, err := seg.Postings(stream, term)
			if err != nil || got == nil || !got.Equals(want) {
				t.Fatalf("stream %d term %q: %v (%v), want %v", stream, term, got, err, want)
			}
		})
	}
	if terms == 0 || seg.Terms() != terms {
		t.Fatalf("%d terms, want %d", seg.Terms(), terms)
	}
	for _, stream := range []int{index.StreamEN, index.StreamFR, 7} {
		if bm, err := seg.Postings(stream, "\xffabsent"); bm != nil || err != nil {
			t.Fatalf("an absent term: %v, %v", bm, err)
		}
	}
}

func TestEncode_OpenBytes(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		snap, seg, _ := mustSegment(t, testRecords(300))
		checkSame(t, snap, seg)
		if len(seg.FilterValues("category")) < 4 {
			t.Fatalf("categories %q", seg.FilterValues("category"))
		}
	})
	t.Run("Empty", func(t *testing.T) {
		snap, seg, _ := mustSegment(t, nil)
		if seg.Len() != 0 || seg.Terms() != 0 || seg.FilterValues("category") != nil {
			t.Fatalf("empty segment: %d records, %d terms", seg.Len(), seg.Terms())
		}
		if _, ok := seg.RecordJSON("hc-1", ""); ok {
			t.Fatal("an empty segment found a record")
		}
		if snap.Len() != 0 {
			t.Fatal("empty snapshot is not empty")
		}
	})
	t.Run("Misaligned", func(t *testing.T) {
		// Bytes that do not start on an 8-byte boundary are read through
		// decoded copies of the columns, and answer the same.
		snap, _, b := mustSegment(t, testRecords(50))
		buf := make([]byte, len(b)+1)
		copy(buf[1:], b)
		seg, err := OpenBytes("misaligned", buf[1:])
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, snap, seg)
	})
	t.Run("Deterministic", func(t *testing.T) {
		_, _, a := mustSegment(t, testRecords(60))
		recs := testRecords(60)
		slices.Reverse(recs)
		_, _, b := mustSegment(t, recs)
		if !bytes.Equal(a, b) {
			t.Fatal("the same records in another order gave another segment")
		}
	})
	t.Run("ErrLongSource", func(t *testing.T) {
		snap, err := index.Build(testRecords(2), rappel.DatasetInfo{Source: string(make([]byte, 40))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Encode(snap); err == nil {
			t.Fatal("a 40-byte source was written")
		}
	})
}

func TestWriteFile_Open(t *testing.T) {
	snap, err := index.Build(testRecords(80), rappel.DatasetInfo{Source: "feeds"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "base.seg")
	t.Run("OK", func(t *testing.T) {
		if err := os.WriteFile(path, []byte("an older file"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(path, snap); err != nil {
			t.Fatal(err)
		}
		checkDirHolds(t, dir, "base.seg")
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o644 {
			t.Fatalf("stat: %v, %v", fi, err)
		}
		seg, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, snap, seg)
		if err := seg.Close(); err != nil {
			t.Fatal(err)
		}
		if err := seg.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})
	t.Run("ErrNoDir", func(t *testing.T) {
		if err := WriteFile(filepath.Join(dir, "absent", "x.seg"), snap); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v, want not-exist", err)
		}
		checkDirHolds(t, dir, "base.seg")
	})
	t.Run("ErrNotExist", func(t *testing.T) {
		if _, err := Open(filepath.Join(dir, "absent.seg")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v, want not-exist", err)
		}
	})
	t.Run("ErrEmptyFile", func(t *testing.T) {
		empty := filepath.Join(t.TempDir(), "empty.seg")
		if err := os.WriteFile(empty, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(empty)
		checkError(t, err, empty, "header", "truncated")
	})
}

// checkDirHolds fails unless dir holds exactly names: no temporary file
// is left behind.
func checkDirHolds(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, names) {
		t.Fatalf("%s holds %q, want %q", dir, got, names)
	}
}
