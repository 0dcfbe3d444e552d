package index

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv"
)

// MustStore opens a Pebble store holding records hc-1 and hc-2.
func MustStore(tb testing.TB) *kv.Store {
	tb.Helper()
	ctx := context.Background()
	s := kv.NewStore(filepath.Join(tb.TempDir(), "pebble"))
	s.Logger = slog.New(slog.DiscardHandler)
	if err := s.Open(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	if err := s.PutRecords(ctx, []*rappel.Record{testRecord("hc-1"), testRecord("hc-2")}); err != nil {
		tb.Fatal(err)
	}
	if err := s.SetDatasetInfo(ctx, rappel.DatasetInfo{UpdatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Source: "bundle", Records: 2}); err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestCatalog_Reload(t *testing.T) {
	ctx := context.Background()
	store := MustStore(t)
	key := bytes.Repeat([]byte{7}, 32)
	c := &Catalog{Options: Options{CursorKey: key}}
	if err := c.Reload(ctx, store); err != nil {
		t.Fatal(err)
	}
	snap := c.Current()
	if snap.Len() != 2 || snap.Info().Source != "bundle" || !bytes.Equal(snap.base.cursorKey, key) {
		t.Fatalf("after Reload: %d records, info %+v, cursor key %x", snap.Len(), snap.Info(), snap.base.cursorKey)
	}

	// The store changes as a refresh changes it: a record and the info.
	later := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	if err := store.PutRecords(ctx, []*rappel.Record{testRecord("hc-3")}); err != nil {
		t.Fatal(err)
	}
	if err := store.SetDatasetInfo(ctx, rappel.DatasetInfo{UpdatedAt: later, Source: "feeds", Records: 3}); err != nil {
		t.Fatal(err)
	}
	l := c.Listener(store)
	t.Run("InfoOnly", func(t *testing.T) {
		// Told that only the info moved, the catalog takes the new info
		// and builds nothing: hc-3 is not in it.
		if err := l.DataChanged(ctx, false); err != nil {
			t.Fatal(err)
		}
		snap := c.Current()
		if !snap.Info().UpdatedAt.Equal(later) || snap.Info().Source != "feeds" || snap.Len() != 2 || snap.Info().Records != 2 {
			t.Fatalf("after an info-only change: %d records, info %+v", snap.Len(), snap.Info())
		}
		if _, ok := snap.Record("hc-3"); ok {
			t.Fatal("an info-only change rebuilt the snapshot")
		}
	})
	t.Run("Records", func(t *testing.T) {
		if err := l.DataChanged(ctx, true); err != nil {
			t.Fatal(err)
		}
		snap := c.Current()
		if _, ok := snap.Record("hc-3"); !ok || snap.Len() != 3 || !bytes.Equal(snap.base.cursorKey, key) {
			t.Fatalf("after a records change: %d records, cursor key %x", snap.Len(), snap.base.cursorKey)
		}
	})
	t.Run("Closed", func(t *testing.T) {
		// A store that cannot be read leaves the catalog as it was.
		before := c.Current()
		store.Close()
		if err := c.Reload(ctx, store); err == nil {
			t.Fatal("Reload from a closed store succeeded")
		}
		if err := l.DataChanged(ctx, false); err == nil {
			t.Fatal("DataChanged on a closed store succeeded")
		}
		if c.Current() != before {
			t.Fatal("a failed reload swapped the snapshot")
		}
	})
}
