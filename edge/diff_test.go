package edge

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
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
