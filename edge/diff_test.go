package edge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv/index"
)

// shuffledCatalog builds a catalog of recs with info, handing index.Build
// the records in an order shuffled by seed. recs is left alone.
func shuffledCatalog(tb testing.TB, info rappel.DatasetInfo, recs []*rappel.Record, seed uint64) *index.Catalog {
	tb.Helper()
	recs = slices.Clone(recs)
	rand.New(rand.NewPCG(seed, seed)).Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	snap, err := index.Build(recs, info)
	if err != nil {
		tb.Fatal(err)
	}
	c := &index.Catalog{}
	c.Swap(snap)
	return c
}

// TestDiff_BundleRebuilt compares, over thousands of generated requests,
// the bundle's catalog with one built from the same records handed over in
// another order: index.Build orders them itself, so every answer must be
// the same to the byte.
func TestDiff_BundleRebuilt(t *testing.T) {
	want, _ := mustBundleCatalog(t)
	recs := bundleRecords(t)
	got := shuffledCatalog(t, want.Snapshot().Info(), recs, 1)
	diffCatalogs(t, want, got, mustStore(t, recs), 1, 3000)
}

// TestDiff_CatchesOneRecord checks that diffCatalogs fails when the two
// catalogs differ in one record of the bundle: its units_affected, which
// the generated statistics requests add up, or a space in its English
// title, which only a page or a lookup holding the record shows.
func TestDiff_CatchesOneRecord(t *testing.T) {
	want, _ := mustBundleCatalog(t)
	recs := bundleRecords(t)
	store := mustStore(t, recs)
	rng := rand.New(rand.NewPCG(11, 11))
	// changeOne returns a copy of recs in which the change made to a copy of
	// a random record that ok accepts replaces it.
	changeOne := func(ok func(*rappel.Record) bool, change func(*rappel.Record)) ([]*rappel.Record, string) {
		out := slices.Clone(recs)
		for {
			if i := rng.IntN(len(out)); ok(out[i]) {
				c := *out[i]
				change(&c)
				out[i] = &c
				return out, c.RecordID
			}
		}
	}
	for _, tc := range []struct {
		name   string
		ok     func(*rappel.Record) bool
		change func(*rappel.Record)
	}{
		{"UnitsAffected",
			func(r *rappel.Record) bool { return r.UnitsAffected != nil },
			func(c *rappel.Record) {
				u := *c.UnitsAffected + 1
				c.UnitsAffected = &u
			}},
		{"Title",
			func(r *rappel.Record) bool {
				return r.Translations.EN != nil && strings.Contains(r.Translations.EN.Title, " ")
			},
			func(c *rappel.Record) {
				en := *c.Translations.EN
				en.Title = strings.Replace(en.Title, " ", "  ", 1)
				c.Translations.EN = &en
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed, id := changeOne(tc.ok, tc.change)
			got := shuffledCatalog(t, want.Snapshot().Info(), changed, 2)
			f := runRecorded(t, func(tb testing.TB) { diffCatalogs(tb, want, got, store, 3, 300) })
			msgs := f.failures()
			if len(msgs) == 0 {
				t.Fatalf("%s of %s changed: diffCatalogs found no difference", tc.name, id)
			}
			if !strings.Contains(msgs[0], " differs: ") || !strings.Contains(msgs[0], " /recall") {
				t.Errorf("%s of %s changed: diffCatalogs failed without naming the request: %s", tc.name, id, msgs[0])
			}
			t.Logf("%s of %s changed: diffCatalogs says: %.1000s", tc.name, id, msgs[0])
		})
	}
}

// mustBundleSegment opens the bundle's read index segment embedded in the
// binary, as a node serves it, skipping when the bundle has none.
func mustBundleSegment(tb testing.TB) *index.Snapshot {
	tb.Helper()
	mustBundleCatalog(tb) // skips without a bundle
	b, _, err := bundle.IndexSegment()
	if err != nil {
		tb.Fatal(err)
	}
	if b == nil {
		tb.Fatal("the embedded bundle has no read index; rebuild it with `make bundle`")
	}
	s, err := index.OpenSegmentBytes("bundle", b, index.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestDiff_BundleSegment compares the catalog built in memory from the
// bundle's records with the bundle's segment read where it lies in the
// binary: the index a node serves must answer as the builder's does.
func TestDiff_BundleSegment(t *testing.T) {
	want, _ := mustBundleCatalog(t)
	got := &index.Catalog{}
	got.Swap(mustBundleSegment(t))
	diffCatalogs(t, want, got, mustStore(t, bundleRecords(t)), 2, 3000)
}

// TestDiff_BundleDelta compares a catalog built from the bundle's records
// after a refresh (some added, some changed, some removed) with the view
// of the bundle's segment and a delta of that change.
func TestDiff_BundleDelta(t *testing.T) {
	want, _ := mustBundleCatalog(t)
	base := mustBundleSegment(t)
	recs := bundleRecords(t)
	rng := rand.New(rand.NewPCG(5, 5))
	final := slices.Clone(recs)
	var put []*rappel.Record
	var removed []string
	for i := range 300 {
		j := rng.IntN(len(final))
		c := *final[j]
		switch i % 3 {
		case 0: // a new recall
			c.RecordID = fmt.Sprintf("hc-99%04d", i)
			c.RecallID = fmt.Sprintf("99%04d", i)
			final = append(final, &c)
		case 1: // a change
			c.Status = rappel.StatusArchived
			if en := c.Translations.EN; en != nil {
				e := *en
				e.Title = "Updated: " + e.Title
				c.Translations.EN = &e
			}
			final[j] = &c
		default: // a removal
			removed = append(removed, c.RecordID)
			final = slices.Delete(final, j, j+1)
			continue
		}
		put = append(put, &c)
	}
	// A record changed and then removed is removed.
	put = slices.DeleteFunc(put, func(r *rappel.Record) bool { return slices.Contains(removed, r.RecordID) })
	put = slices.DeleteFunc(put, func(r *rappel.Record) bool {
		return !slices.ContainsFunc(final, func(f *rappel.Record) bool { return f == r })
	})
	info := want.Snapshot().Info()
	rebuilt := shuffledCatalog(t, info, final, 3)
	view, err := index.WithChanges(base, put, removed, info, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := &index.Catalog{}
	got.SwapView(view)
	diffCatalogs(t, rebuilt, got, mustStore(t, final), 4, 3000)
}
