package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
)

func testCorpus(n int) []*rappel.Record {
	words := []string{"cheese", "listeria", "salmonella", "peanut", "brakes", "airbag", "toy", "choking"}
	var out []*rappel.Record
	for i := 0; i < n; i++ {
		r := testRecord(fmt.Sprintf("hc-%d", i))
		r.EventDate = fmt.Sprintf("20%02d-0%d-1%d", 10+i%12, 1+i%9, i%10)
		r.RecallDate = r.EventDate
		r.Translations.EN.Title = words[i%len(words)] + " " + words[(i/3)%len(words)] + " recalled"
		r.Translations.FR.Title = "Produit rappelé " + fmt.Sprint(i)
		if i%3 == 0 {
			u := i * 10
			r.UnitsAffected = &u
		}
		if i%4 == 0 {
			r.Category = "Dairy"
		}
		out = append(out, r)
	}
	return out
}

func mustBuild(tb testing.TB, recs []*rappel.Record) *Snapshot {
	tb.Helper()
	s, err := Build(recs, rappel.DatasetInfo{})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// checked is q as the edge passes it on, checked; the test fails when
// Check refuses it.
func checked(tb testing.TB, q *rappel.Search) rappel.CheckedSearch {
	tb.Helper()
	c, err := q.Checked()
	if err != nil {
		tb.Fatalf("Check(%+v): %v", q, err)
	}
	return c
}

func search(tb testing.TB, s *Snapshot, q *rappel.Search) *rappel.Page {
	tb.Helper()
	p, err := s.View().Search(context.Background(), checked(tb, q))
	if err != nil {
		tb.Fatalf("Search(%+v): %v", q, err)
	}
	return p
}

func ids(tb testing.TB, p *rappel.Page) []string {
	var recs []rappel.Record
	if err := json.Unmarshal(p.Results, &recs); err != nil {
		tb.Fatalf("results are not a JSON array of records: %v", err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.RecordID)
	}
	return out
}

func TestEncoded_MatchesMarshal(t *testing.T) {
	recs := testCorpus(30)
	recs[3].Translations.FR = nil
	recs[4].Translations.EN = nil
	want := map[string][3][]byte{}
	for _, r := range recs {
		var v [3][]byte
		for i, l := range []string{"", "en", "fr"} {
			v[i], _ = json.Marshal(r.ForLang(l))
		}
		want[r.RecordID] = v
	}
	s := mustBuild(t, recs)
	for id, v := range want {
		for i, l := range []string{"", "en", "fr"} {
			got, _ := s.RecordJSON(id, l)
			if string(got) != string(v[i]) {
				t.Fatalf("%s lang %q:\n got %s\nwant %s", id, l, got, v[i])
			}
		}
	}
}

func TestSnapshot_Search_CursorWalk(t *testing.T) {
	s := mustBuild(t, testCorpus(200))
	for _, q := range []rappel.Search{
		{Limit: 7},
		{Limit: 7, SortBy: rappel.SortPublished, Ascending: true},
		{Limit: 7, SortBy: rappel.SortDate, Ascending: true, FilterValues: rappel.FilterValues{Category: "dairy"}},
		{Limit: 7, Query: mustQuery(t, "cheese OR brakes")},
		{Limit: 7, Query: mustQuery(t, "cheese"), SortBy: rappel.SortRelevance},
	} {
		all := search(t, s, &rappel.Search{Limit: 500, Query: q.Query, SortBy: q.SortBy, Ascending: q.Ascending, FilterValues: rappel.FilterValues{Category: q.Category}})
		want := ids(t, all)
		var got []string
		cur := q
		for {
			p := search(t, s, &cur)
			got = append(got, ids(t, p)...)
			if p.Count != all.Count {
				t.Fatalf("count %d on a page, %d in all", p.Count, all.Count)
			}
			if p.NextCursor == "" {
				break
			}
			cur.Cursor = p.NextCursor
		}
		if strings.Join(got, ",") != strings.Join(want, ",") || len(want) != all.Count {
			t.Fatalf("%+v: cursor walk\n%v\nwant\n%v", q, got, want)
		}
	}
}

func TestSnapshot_Search_CursorErrors(t *testing.T) {
	s := mustBuild(t, testCorpus(50))
	p := search(t, s, &rappel.Search{Limit: 5})
	for name, q := range map[string]rappel.Search{
		"Tampered":     {Limit: 5, Cursor: tamper(p.NextCursor)},
		"OtherQuery":   {Limit: 5, Cursor: p.NextCursor, FilterValues: rappel.FilterValues{RecallType: rappel.TypeFood}},
		"Garbage":      {Limit: 5, Cursor: "not a cursor!"},
		"WithValue":    {Limit: 5, Cursor: p.NextCursor, SortBy: rappel.SortValue},
		"WithOffset":   {Limit: 5, Cursor: p.NextCursor, Offset: 5},
		"Closing":      {SortBy: rappel.SortClosing},
		"RelevanceNoQ": {SortBy: rappel.SortRelevance},
		"DeepOffset":   {Offset: 9501},
	} {
		t.Run(name, func(t *testing.T) {
			// Check refuses what no searcher could serve; the searcher
			// what only it can tell, a cursor it did not issue.
			cq, err := q.Checked()
			if err == nil {
				_, err = s.View().Search(context.Background(), cq)
			}
			if rappel.ErrorCode(err) != rappel.EBADREQUEST {
				t.Fatalf("err = %v, want a 400", err)
			}
		})
	}
}

func TestSnapshot_Search_Value(t *testing.T) {
	s := mustBuild(t, testCorpus(40))
	for _, asc := range []bool{false, true} {
		p := search(t, s, &rappel.Search{Limit: 500, SortBy: rappel.SortValue, Ascending: asc})
		var recs []rappel.Record
		_ = json.Unmarshal(p.Results, &recs)
		seenMissing := false
		for i, r := range recs {
			if r.UnitsAffected == nil {
				seenMissing = true
				continue
			}
			if seenMissing {
				t.Fatalf("asc=%v: a record with units after one without", asc)
			}
			if i > 0 && recs[i-1].UnitsAffected != nil && (*recs[i-1].UnitsAffected < *r.UnitsAffected) != asc && *recs[i-1].UnitsAffected != *r.UnitsAffected {
				t.Fatalf("asc=%v: out of order at %d", asc, i)
			}
		}
		if p.NextCursor != "" {
			t.Fatal("a value-sorted page carries a cursor that would be refused")
		}
	}
}

func TestSnapshot_Search_Dates(t *testing.T) {
	s := mustBuild(t, testCorpus(120))
	p := search(t, s, &rappel.Search{Limit: 500, IssuedAfter: "2012-01-01", IssuedBefore: "2014-12-31"})
	var recs []rappel.Record
	_ = json.Unmarshal(p.Results, &recs)
	if len(recs) == 0 || len(recs) != p.Count {
		t.Fatalf("%d records, count %d", len(recs), p.Count)
	}
	for _, r := range recs {
		if r.EventDate < "2012-01-01" || r.EventDate > "2014-12-31" {
			t.Fatalf("%s outside the range", r.EventDate)
		}
	}
}

func TestSnapshot_Search_UnknownCategory(t *testing.T) {
	s := mustBuild(t, testCorpus(20))
	_, err := s.View().Search(context.Background(), checked(t, &rappel.Search{FilterValues: rappel.FilterValues{Category: "Dary"}}))
	// The index names the category and the nearest one, not where in a
	// request it came from: the edge places it.
	var ue *rappel.UnknownError
	if rappel.ErrorCode(err) != rappel.EINVALID || !errors.As(err, &ue) || ue.Field != "category" || ue.Value != "Dary" || ue.Nearest != "dairy" {
		t.Fatalf("err = %v (%T)", err, err)
	}
	if msg := rappel.ErrorMessage(err); msg != "Unknown category 'Dary'; did you mean 'dairy'?" {
		t.Errorf("message %q", msg)
	}
}

func mustQuery(tb testing.TB, q string) *rappel.Query {
	tb.Helper()
	pq, err := rappel.ParseQuery(q)
	if err != nil {
		tb.Fatal(err)
	}
	return pq
}

func FuzzDecodeCursor(f *testing.F) {
	s := mustBuild(f, testCorpus(20))
	p := search(f, s, &rappel.Search{Limit: 3})
	f.Add(p.NextCursor)
	f.Add("")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, raw string) {
		q := &rappel.Search{Limit: 3, Cursor: raw}
		_, err := s.View().Search(context.Background(), checked(t, q))
		if err != nil && rappel.ErrorCode(err) != rappel.EBADREQUEST {
			t.Fatalf("cursor %q: %v", raw, err)
		}
	})
}

// bundledOnce holds the embedded bundle's snapshot, built once per test
// binary: building it takes seconds, and no test changes it.
var bundledOnce struct {
	sync.Once
	snap *Snapshot
	err  error
}

// bundled returns a snapshot of the embedded bundle, or skips.
func bundled(tb testing.TB) *Snapshot {
	tb.Helper()
	bundledOnce.Do(func() {
		var recs []*rappel.Record
		bundledOnce.err = bundle.ReadRecords(bundle.Embedded(), func(r *rappel.Record) error { recs = append(recs, r); return nil })
		if bundledOnce.err == nil {
			bundledOnce.snap, bundledOnce.err = Build(recs, rappel.DatasetInfo{})
		}
	})
	if err := bundledOnce.err; err != nil {
		if os.Getenv("RAPPEL_TEST_BUNDLE") != "" {
			tb.Fatal(err)
		}
		tb.Skip("no bundle embedded: run `make bundle`")
	}
	return bundledOnce.snap
}

func BenchmarkSnapshot_Search(b *testing.B) {
	s := bundled(b)
	first := search(b, s, &rappel.Search{Limit: 100})
	for _, tc := range []struct {
		name string
		q    rappel.Search
	}{
		{"no_q", rappel.Search{}},
		{"one_filter", rappel.Search{FilterValues: rappel.FilterValues{RecallType: rappel.TypeFood}}},
		{"common_word", rappel.Search{Query: mustQuery(b, "recall")}},
		{"rare_word", rappel.Search{Query: mustQuery(b, "sulphites")}},
		{"two_word_and", rappel.Search{Query: mustQuery(b, "cheese listeria")}},
		{"or", rappel.Search{Query: mustQuery(b, "listeria OR salmonella")}},
		{"phrase", rappel.Search{Query: mustQuery(b, `"air bag"`)}},
		{"negation", rappel.Search{Query: mustQuery(b, "recall -food")}},
		{"q_filters_dates", rappel.Search{Query: mustQuery(b, "brakes"), FilterValues: rappel.FilterValues{RecallType: rappel.TypeVehicle}, IssuedAfter: "2015-01-01", IssuedBefore: "2024-12-31"}},
		{"cursor_page", rappel.Search{Cursor: first.NextCursor}},
		{"sort_published_asc", rappel.Search{SortBy: rappel.SortPublished, Ascending: true}},
		{"relevance", rappel.Search{Query: mustQuery(b, "peanut"), SortBy: rappel.SortRelevance}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			q := tc.q
			q.Limit = 100
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.View().Search(context.Background(), checked(b, &q)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkBuild(b *testing.B) {
	var recs []*rappel.Record
	if err := bundle.ReadRecords(bundle.Embedded(), func(r *rappel.Record) error { recs = append(recs, r); return nil }); err != nil {
		b.Skip("no bundle embedded")
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(recs, rappel.DatasetInfo{}); err != nil {
			b.Fatal(err)
		}
	}
}

// tamper returns cursor with its last two characters changed, so that its
// signature no longer matches whatever they were.
func tamper(cursor string) string {
	tail := "AA"
	if strings.HasSuffix(cursor, tail) {
		tail = "BB"
	}
	return cursor[:len(cursor)-2] + tail
}
