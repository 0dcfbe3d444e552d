package bundle_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/bundle"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/kvtest"
)

func record(id, title string) *rappel.Record {
	return &rappel.Record{RecordID: id, RecallID: id[3:], RecallType: rappel.TypeFood, Agency: rappel.AgencyCFIA,
		Status: rappel.StatusActive, EventDate: "2025-02-03", RecallDate: "2025-02-03", FetchedAt: "2025-02-04T00:00:00Z",
		Translations: rappel.Translations{EN: &rappel.Translation{Title: title}}}
}

// MustWriteBundle writes a bundle built at built of the records with ids
// (titled title), each the hcdump source's partial record too, with a raw
// record each, and returns it.
func MustWriteBundle(tb testing.TB, built time.Time, title string, ids ...string) fs.FS {
	tb.Helper()
	return os.DirFS(mustWriteBundleDir(tb, built, title, ids...))
}

// mustWriteBundleDir writes the bundle MustWriteBundle returns into a
// directory and returns the directory.
func mustWriteBundleDir(tb testing.TB, built time.Time, title string, ids ...string) string {
	tb.Helper()
	dir := tb.TempDir()
	var recs []*rappel.Record
	var raw []rappel.RawRecord
	for _, id := range ids {
		recs = append(recs, record(id, title+" "+id))
		raw = append(raw, rappel.RawRecord{Key: id[3:], Hash: rappel.HashBytes([]byte(title + id)), IDs: []string{id}})
	}
	slices.SortFunc(recs, func(a, b *rappel.Record) int { return strings.Compare(a.RecordID, b.RecordID) })
	m := bundle.Manifest{BuiltAt: built, Plugins: map[string]string{"hcdump": "plugin-" + title}}
	if err := bundle.WritePartials(dir, map[string][]*rappel.Record{"hcdump": recs}, &m); err != nil {
		tb.Fatal(err)
	}
	if err := bundle.WriteRaw(dir, map[string][]rappel.RawRecord{"hcdump": raw}, &m); err != nil {
		tb.Fatal(err)
	}
	if err := bundle.Write(dir, recs, m); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// held is what a store holds of a bundle's data.
type held struct {
	Records  []string // record_id and English title
	Partials map[string]string
	Raw      []string
	Plugin   string
	Info     rappel.DatasetInfo
}

func mustHeld(tb testing.TB, s *kv.Store) held {
	tb.Helper()
	ctx := context.Background()
	var h held
	if err := s.ForEachRecord(ctx, func(r *rappel.Record) error {
		h.Records = append(h.Records, r.RecordID+" "+r.Translations.EN.Title)
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	h.Partials = map[string]string{}
	if err := s.PartialHashes(ctx, "hcdump", func(id, hash string) error {
		h.Partials[id] = hash
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	if err := s.RawIndex(ctx, "hcdump", func(r rappel.RawRecord) error {
		h.Raw = append(h.Raw, r.Key+" "+r.Hash)
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	st, err := s.SourceState(ctx, "hcdump")
	if err != nil {
		tb.Fatal(err)
	}
	h.Plugin = st.Plugin
	if h.Info, err = s.DatasetInfo(ctx); err != nil {
		tb.Fatal(err)
	}
	return h
}

// loaded returns what a new store holds once src is loaded into it.
func loaded(tb testing.TB, src fs.FS) held {
	tb.Helper()
	s := kvtest.Open(tb)
	if err := bundle.Load(context.Background(), src, s, slog.New(slog.DiscardHandler)); err != nil {
		tb.Fatal(err)
	}
	return mustHeld(tb, s)
}

func TestLoad(t *testing.T) {
	ctx := context.Background()
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := MustWriteBundle(t, t1, "a", "hc-1", "hc-2", "hc-3")
	b := MustWriteBundle(t, t1.AddDate(0, 1, 0), "b", "hc-2", "hc-4")
	// c is built at a's time from other data.
	c := MustWriteBundle(t, t1, "c", "hc-1", "hc-5")
	heldA, heldB, heldC := loaded(t, a), loaded(t, b), loaded(t, c)
	version := func(src fs.FS) string {
		v, err := bundle.Version(src)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if va, vb, vc := version(a), version(b), version(c); va == vb || va == vc || !strings.HasPrefix(va, "2026-01-01T00:00:00Z sha256:") {
		t.Fatalf("versions a %q, b %q, c %q: want distinct, each starting with its build time", va, vb, vc)
	}

	s := kvtest.Open(t)
	// load loads src into s and returns what Load logged.
	load := func(src fs.FS) string {
		t.Helper()
		var log strings.Builder
		if err := bundle.Load(ctx, src, s, slog.New(slog.NewTextHandler(&log, nil))); err != nil {
			t.Fatal(err)
		}
		return log.String()
	}
	expect := func(want held, why string) {
		t.Helper()
		if got := mustHeld(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the store holds\n%+v\nwant\n%+v", why, got, want)
		}
	}

	t.Run("Empty", func(t *testing.T) {
		l := load(a)
		expect(heldA, "a loaded into an empty store")
		if heldA.Info.Source != "bundle" || heldA.Info.Bundle != version(a) || !heldA.Info.UpdatedAt.Equal(t1) || heldA.Plugin != "plugin-a" || len(heldA.Raw) != 3 {
			t.Errorf("a as loaded: %+v", heldA)
		}
		if !strings.Contains(l, "loaded bundle into empty store") {
			t.Errorf("log: %s", l)
		}
	})
	t.Run("Same", func(t *testing.T) {
		if l := load(a); !strings.Contains(l, "holds the binary's bundle") {
			t.Errorf("log: %s", l)
		}
		expect(heldA, "a loaded again")
	})
	t.Run("Older", func(t *testing.T) {
		// hc-1 and hc-3 are a's alone: they go, with their partial and
		// raw records; hc-2 is b's version.
		if l := load(b); !strings.Contains(l, "replaced the data dir's older bundle") {
			t.Errorf("log: %s", l)
		}
		expect(heldB, "b loaded over a")
	})
	t.Run("Newer", func(t *testing.T) {
		if l := load(a); !strings.Contains(l, "newer bundle than the binary's; keeping it") {
			t.Errorf("log: %s", l)
		}
		expect(heldB, "a loaded over b")
	})
	t.Run("SameTimeOtherData", func(t *testing.T) {
		s2 := kvtest.Open(t)
		for _, src := range []fs.FS{a, c} {
			if err := bundle.Load(ctx, src, s2, slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
		}
		if got := mustHeld(t, s2); !reflect.DeepEqual(got, heldC) {
			t.Fatalf("c loaded over a: %+v, want %+v", got, heldC)
		}
	})
	t.Run("Live", func(t *testing.T) {
		// A live refresh of hcdump: the store's data is the feeds' now.
		live := t1.AddDate(0, 0, 15) // between a and b
		info, _ := s.DatasetInfo(ctx)
		info.Source, info.UpdatedAt, info.Records = "feeds", live, info.Records+1
		if err := s.ApplySource(ctx, &rappel.SourceChange{
			State:      rappel.SourceState{Feed: rappel.FeedState{Source: "hcdump", Live: true}, Plugin: "plugin-b"},
			PutRecords: []*rappel.Record{record("hc-9", "live hc-9")},
			Info:       &info,
		}); err != nil {
			t.Fatal(err)
		}
		before := mustHeld(t, s)
		if l := load(a); !strings.Contains(l, "keeping the data dir's feeds data; the binary's bundle is older") {
			t.Errorf("log: %s", l)
		}
		if l := load(b); !strings.Contains(l, "keeping the data dir's feeds data; the binary's bundle is newer") {
			t.Errorf("log: %s", l)
		}
		expect(before, "bundles loaded over live data")
		if before.Info.Bundle != version(b) {
			t.Errorf("the live refresh lost which bundle the data dir started from: %+v", before.Info)
		}
	})
	t.Run("Unversioned", func(t *testing.T) {
		// A store loaded before bundles had versions: a's records, a's
		// build time, no version.
		s2 := kvtest.Open(t)
		if err := bundle.Load(ctx, a, s2, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
		info, _ := s2.DatasetInfo(ctx)
		info.Bundle = ""
		if err := s2.SetDatasetInfo(ctx, info); err != nil {
			t.Fatal(err)
		}
		if err := bundle.Load(ctx, a, s2, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
		if got := mustHeld(t, s2); got.Info.Bundle != "" || !reflect.DeepEqual(got.Records, heldA.Records) {
			t.Errorf("a over an unversioned a: %+v, want it kept", got)
		}
		if err := bundle.Load(ctx, b, s2, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
		if got := mustHeld(t, s2); !reflect.DeepEqual(got, heldB) {
			t.Errorf("b over an unversioned a: %+v, want %+v", got, heldB)
		}
	})
	t.Run("NoBundle", func(t *testing.T) {
		// A binary built without a bundle cannot fill an empty store, and
		// serves a filled one as it is.
		none := os.DirFS(t.TempDir())
		err := bundle.Load(ctx, none, kvtest.Open(t), slog.New(slog.DiscardHandler))
		if !errors.Is(err, bundle.ErrEmpty) {
			t.Fatalf("err = %v, want ErrEmpty", err)
		}
		before := mustHeld(t, s)
		if l := load(none); !strings.Contains(l, "holds no data bundle") {
			t.Errorf("log: %s", l)
		}
		expect(before, "no bundle loaded over a filled store")
	})
}
