package index

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// wordRecords are a brand's notices of several products over a year, and
// another brand's notice of one of them.
func wordRecords() []*rappel.Record {
	names := []string{"Lentil Soup", "Tomato Soup", "Lentil Salad", "Bread", "Lentil Soup", "Crackers",
		"Bread", "Tomato Soup", "Crackers", "Lentil Salad", "Bread", "Crackers"}
	var recs []*rappel.Record
	for i, n := range names {
		date := fmt.Sprintf("2026-%02d-01", i+1)
		recs = append(recs, &rappel.Record{
			RecordID: fmt.Sprintf("hc-%d", 100+i), RecallID: fmt.Sprint(100 + i), RecallType: rappel.TypeFood, Agency: rappel.AgencyCFIA,
			Status: rappel.StatusActive, EventDate: date, RecallDate: date, FetchedAt: "2026-12-01T00:00:00Z",
			ProductList:  []rappel.Product{{Name: "Acme " + n}},
			Translations: rappel.Translations{EN: &rappel.Translation{Title: "Acme brand " + n + " recalled"}},
		})
	}
	recs = append(recs, &rappel.Record{
		RecordID: "hc-200", RecallID: "200", RecallType: rappel.TypeFood, Agency: rappel.AgencyCFIA,
		Status: rappel.StatusActive, EventDate: "2026-12-01", RecallDate: "2026-12-01", FetchedAt: "2026-12-01T00:00:00Z",
		ProductList:  []rappel.Product{{Name: "Zenith Lentil Soup"}},
		Translations: rappel.Translations{EN: &rappel.Translation{Title: "Zenith brand Lentil Soup recalled"}},
	})
	return recs
}

// TestRecordIDsWithWords checks the word lookup of screening: every
// required word held, the records holding most optional words first when
// more than the limit qualify, newest first otherwise and among equals.
func TestRecordIDsWithWords(t *testing.T) {
	v := mustBuild(t, wordRecords()).View()
	for _, c := range []struct {
		name               string
		required, optional []string
		limit              int
		want               []string
	}{
		{"newest of the brand", []string{"Acme"}, nil, 3, []string{"hc-111", "hc-110", "hc-109"}},
		{"ranked by the name", []string{"acme"}, []string{"lentil", "soups"}, 4, []string{"hc-104", "hc-100", "hc-109", "hc-107"}},
		{"every word required", []string{"Acme", "Lentil"}, nil, 10, []string{"hc-109", "hc-104", "hc-102", "hc-100"}},
		{"all fit: newest first", []string{"acme", "lentil"}, []string{"soup"}, 10, []string{"hc-109", "hc-104", "hc-102", "hc-100"}},
		{"another brand", []string{"zenith"}, []string{"lentil"}, 5, []string{"hc-200"}},
		{"nothing holds it", []string{"acme", "zenith"}, nil, 5, nil},
		{"no required word", []string{"--"}, []string{"acme"}, 5, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := v.RecordIDsWithWords(c.required, c.optional, c.limit)
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
	if n := v.WordPostings([]string{"acme", "lentil"}); n < 12+5 {
		t.Errorf("WordPostings(acme lentil) = %d, want the postings of both words, 17 documents or more", n)
	}
	if n := v.WordPostings([]string{"zzqxv"}); n != 0 {
		t.Errorf("WordPostings(zzqxv) = %d, want 0", n)
	}
}

// TestRecordIDsWithWords_View checks that a view of a base, a delta and
// hidden documents, built or read from segments, looks words up as one
// snapshot of the same records does.
func TestRecordIDsWithWords_View(t *testing.T) {
	final := append(mixedRecords(), wordRecords()...)
	info := rappel.DatasetInfo{UpdatedAt: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC), Source: "feeds"}
	want, err := Build(cloneAll(final), info)
	if err != nil {
		t.Fatal(err)
	}
	base, delta, deleted := splitChange(t, final, 30, 25, 20)
	bs, err := OpenSegmentBytes("base", mustSegmentBytes(t, base), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := OpenSegmentBytes("delta", mustSegmentBytes(t, delta), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []*View{NewView(base, delta, deleted, info), NewView(bs, ds, deleted, info)} {
		for _, l := range []struct{ required, optional []string }{
			{[]string{"cheddar"}, nil}, {[]string{"aged"}, []string{"cheddar", "ham"}}, {[]string{"acme"}, []string{"lentil", "soup"}},
			{[]string{"deli"}, []string{"cuts"}}, {[]string{"sliced", "ham"}, nil},
		} {
			for _, limit := range []int{1, 7, 1000} {
				w, err1 := want.View().RecordIDsWithWords(l.required, l.optional, limit)
				got, err2 := v.RecordIDsWithWords(l.required, l.optional, limit)
				if err1 != nil || err2 != nil || !slices.Equal(got, w) {
					t.Errorf("%v %v limit %d: view %v (%v), snapshot %v (%v)", l.required, l.optional, limit, got, err2, w, err1)
				}
			}
		}
	}
}
