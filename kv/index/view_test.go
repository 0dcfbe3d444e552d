package index

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/rappel-ca/rappel"
)

// splitChange returns what a base, a delta and its hidden documents would
// be for final: the base lacks some records, holds older versions of
// others (other titles, dates, units, categories) and records since
// removed; the delta holds the new and changed records.
func splitChange(t *testing.T, final []*rappel.Record, added, changed, removed int) (base, delta *Snapshot, deleted *roaring.Bitmap) {
	t.Helper()
	var baseRecs, deltaRecs []*rappel.Record
	var gone []string
	for i, r := range final {
		switch {
		case i < added:
			deltaRecs = append(deltaRecs, r)
		case i < added+changed:
			deltaRecs = append(deltaRecs, r)
			old := *r
			old.EventDate = fmt.Sprintf("19%02d-01-01", 50+i%40)
			old.Category = "Old category"
			old.UnitsAffected = nil
			old.ProductList, old.UPC = nil, ""
			if tr := r.Translations.EN; tr != nil {
				o := *tr
				o.Title = "an older title, since corrected"
				old.Translations.EN = &o
			}
			baseRecs = append(baseRecs, &old)
			gone = append(gone, r.RecordID)
		default:
			baseRecs = append(baseRecs, r)
		}
	}
	for i := range removed {
		r := *final[len(final)-1-i]
		r.RecordID = fmt.Sprintf("removed-%d", i)
		r.RecallID = fmt.Sprintf("removed-recall-%d", i)
		baseRecs = append(baseRecs, &r)
		gone = append(gone, r.RecordID)
	}
	base = mustBuild(t, cloneAll(baseRecs))
	delta = mustBuild(t, cloneAll(deltaRecs))
	deleted = roaring.New()
	for _, id := range gone {
		d, ok := base.doc(id)
		if !ok {
			t.Fatalf("%s is not in the base", id)
		}
		deleted.Add(uint32(d))
	}
	return base, delta, deleted
}

func cloneAll(recs []*rappel.Record) []*rappel.Record {
	out := make([]*rappel.Record, len(recs))
	for i, r := range recs {
		c := *r
		out[i] = &c
	}
	return out
}

// TestView_SameAnswers checks that a view of base, delta and hidden
// documents answers as a snapshot built from the final records does.
func TestView_SameAnswers(t *testing.T) {
	final := mixedRecords()
	for _, c := range []struct {
		name                    string
		added, changed, removed int
	}{
		{"Added", 40, 0, 0}, {"Changed", 0, 35, 0}, {"Removed", 0, 0, 25}, {"All", 30, 25, 20}, {"None", 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			info := rappel.DatasetInfo{UpdatedAt: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC), Source: "feeds"}
			want, err := Build(cloneAll(final), info)
			if err != nil {
				t.Fatal(err)
			}
			base, delta, deleted := splitChange(t, final, c.added, c.changed, c.removed)
			v := NewView(base, delta, deleted, info)
			sameAnswers(t, want.View(), v, final, 3, 800)
			// And with the parts read from their segments.
			bs, err := OpenSegmentBytes("base", mustSegmentBytes(t, base), Options{})
			if err != nil {
				t.Fatal(err)
			}
			ds, err := OpenSegmentBytes("delta", mustSegmentBytes(t, delta), Options{})
			if err != nil {
				t.Fatal(err)
			}
			sameAnswers(t, want.View(), NewView(bs, ds, deleted, info), final, 4, 300)
		})
	}
}

func TestView_Bundle(t *testing.T) {
	all := bundled(t)
	var final []*rappel.Record
	for d := range all.n {
		r, _ := all.Record(all.ids.str(d))
		final = append(final, r)
	}
	// Spread the change over the whole corpus, not its newest records.
	rng := slices.Clone(final)
	for i := range rng {
		j := (i * 7919) % len(rng)
		rng[i], rng[j] = rng[j], rng[i]
	}
	base, delta, deleted := splitChange(t, rng, 120, 100, 50)
	sameAnswers(t, all.View(), NewView(base, delta, deleted, all.Info()), final, 5, 200)
}

// TestView_OneSearchPath checks that every search goes through View: a
// snapshot answers no search of its own (it is served as a view with no
// delta), and the catalog has no way to change but the one production
// uses (Swap, SwapView, from Segments).
func TestView_OneSearchPath(t *testing.T) {
	for _, c := range []struct {
		typ     reflect.Type
		methods []string
	}{
		{reflect.TypeFor[*Snapshot](), []string{"Search", "SearchCost"}},
		{reflect.TypeFor[*Catalog](), []string{"Reload", "Listener"}},
	} {
		for _, m := range c.methods {
			if _, ok := c.typ.MethodByName(m); ok {
				t.Errorf("%v has a method %s: a second path beside View and Segments", c.typ, m)
			}
		}
	}
	s := mustBuild(t, testCorpus(30))
	var _ rappel.Snapshot = s.View()
	if got, want := search(t, s, &rappel.Search{Limit: 5}).Count, 30; got != want {
		t.Errorf("the snapshot served as a view finds %d records, want %d", got, want)
	}
}
