package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel"
)

// MustOpenStore opens a Store on a new temporary directory on disk, closed
// when the test ends.
func MustOpenStore(tb testing.TB) *Store {
	tb.Helper()
	return MustOpenStoreAt(tb, filepath.Join(tb.TempDir(), "db"), nil)
}

// MustOpenStoreAt opens a Store at path on fs (nil for the disk), closed
// when the test ends.
func MustOpenStoreAt(tb testing.TB, path string, fs vfs.FS) *Store {
	tb.Helper()
	s := NewStore(path)
	s.FS = fs
	s.Logger = nil
	if err := s.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// MustReopen closes s and opens it again.
func MustReopen(tb testing.TB, s *Store) {
	tb.Helper()
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := s.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

// MustPut puts recs into s.
func MustPut(tb testing.TB, s *Store, recs ...*rappel.Record) {
	tb.Helper()
	if err := s.PutRecords(context.Background(), recs); err != nil {
		tb.Fatal(err)
	}
}

// fixture returns a new copy of testdata/record_full.json, a record with
// every field set.
func fixture(tb testing.TB) *rappel.Record {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "record_full.json"))
	if err != nil {
		tb.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	r := &rappel.Record{}
	if err := dec.Decode(r); err != nil {
		tb.Fatal(err)
	}
	return r
}

// allKeys returns every key of the store with the given prefix ("" for
// all).
func allKeys(tb testing.TB, s *Store, prefix string) [][]byte {
	tb.Helper()
	opts := &pebble.IterOptions{}
	if prefix != "" {
		opts = prefixOptions([]byte(prefix))
	}
	it, err := s.db.NewIter(opts)
	if err != nil {
		tb.Fatal(err)
	}
	var keys [][]byte
	for it.First(); it.Valid(); it.Next() {
		keys = append(keys, bytes.Clone(it.Key()))
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		tb.Fatal(err)
	}
	return keys
}

// checkIndex scans the whole index keyspace and fails unless it holds
// exactly the index keys of the stored records: no key is missing, none is
// an orphan of a deleted or replaced version, every one decodes.
func checkIndex(tb testing.TB, s *Store) {
	tb.Helper()
	var want [][]byte
	err := s.ForEachRecord(context.Background(), func(r *rappel.Record) error {
		want = append(want, indexKeys(r)...)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	slices.SortFunc(want, bytes.Compare)
	got := allKeys(tb, s, indexPrefix)
	for _, k := range got {
		rest, _ := bytes.CutPrefix(k, []byte(indexPrefix))
		field, _, _ := bytes.Cut(rest, []byte("/"))
		if _, _, id, err := decodeIndexKey(k, fieldArity(string(field))); err != nil {
			tb.Errorf("index key %q: %v", k, err)
		} else if _, err := s.Record(context.Background(), id); err != nil {
			tb.Errorf("orphan index key %q: %v", k, err)
		}
	}
	if !slices.EqualFunc(got, want, bytes.Equal) {
		tb.Errorf("index holds %d keys, want %d:\n got %q\nwant %q", len(got), len(want), got, want)
	}
}

func TestStore_Open(t *testing.T) {
	ctx := context.Background()
	t.Run("ReopenKeepsEverything", func(t *testing.T) {
		s := MustOpenStore(t)
		r := fixture(t)
		MustPut(t, s, r)
		info := rappel.DatasetInfo{UpdatedAt: time.Date(2024, 3, 14, 15, 4, 5, 0, time.UTC), Source: "bundle", Records: 1}
		if err := s.SetDatasetInfo(ctx, info); err != nil {
			t.Fatal(err)
		}
		MustReopen(t, s)
		got, err := s.Record(ctx, r.RecordID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := jsonDiff(t, got, r); diff != "" {
			t.Error(diff)
		}
		gotInfo, err := s.DatasetInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !gotInfo.UpdatedAt.Equal(info.UpdatedAt) || gotInfo.Source != info.Source || gotInfo.Records != info.Records {
			t.Errorf("DatasetInfo after reopen = %+v, want %+v", gotInfo, info)
		}
		ids, err := s.RecordIDsByGTIN(ctx, "00041798001459")
		if err != nil || !slices.Equal(ids, []string{r.RecordID}) {
			t.Errorf("RecordIDsByGTIN after reopen = %q, %v", ids, err)
		}
		checkIndex(t, s)
	})

	t.Run("MemFS", func(t *testing.T) {
		fs := vfs.NewMem()
		s := MustOpenStoreAt(t, "db", fs)
		MustPut(t, s, fixture(t))
		MustReopen(t, s)
		if empty, err := s.Empty(ctx); err != nil || empty {
			t.Errorf("Empty() after reopen = %v, %v; want false", empty, err)
		}
	})

	t.Run("CloseIsSafe", func(t *testing.T) {
		s := NewStore(filepath.Join(t.TempDir(), "db"))
		s.Logger = nil
		if err := s.Close(); err != nil {
			t.Errorf("Close before Open: %v", err)
		}
		if err := s.Open(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Open(ctx); err == nil {
			t.Error("second Open succeeded")
		}
		for range 2 {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}
		if _, err := s.Record(ctx, "x"); !errors.Is(err, errNotOpen) {
			t.Errorf("Record on closed store: %v, want errNotOpen", err)
		}
	})

	t.Run("ErrNoPath", func(t *testing.T) {
		s := NewStore("")
		if err := s.Open(ctx); err == nil {
			t.Fatal("Open with no path succeeded")
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close after failed Open: %v", err)
		}
	})

	t.Run("ErrNewerSchema", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "db")
		s := MustOpenStoreAt(t, path, nil)
		if err := s.db.Set(schemaKey, []byte{schemaVersion + 1}, pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Open(ctx); err == nil {
			t.Fatal("Open of a store with a newer schema succeeded")
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close after failed Open: %v", err)
		}
		// The failed Open left nothing open: the directory can be opened
		// (and its lock taken) again.
		db, err := pebble.Open(path, &pebble.Options{Logger: pebbleLogger{s.Logger}})
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	})

	t.Run("OlderSchemaRebuildsIndex", func(t *testing.T) {
		s := MustOpenStore(t)
		r := fixture(t)
		MustPut(t, s, r)
		b := s.db.NewBatch()
		orphan := indexKey(fieldRecallID, []string{"RA-1"}, "gone-1")
		b.Set(orphan, nil, nil)
		b.Delete(indexKey(fieldRecallID, []string{r.RecallID}, r.RecordID), nil)
		b.Delete(schemaKey, nil)
		if err := b.Commit(pebble.Sync); err != nil {
			t.Fatal(err)
		}
		MustReopen(t, s)
		checkIndex(t, s)
		if v, err := s.storedSchema(); err != nil || v != schemaVersion {
			t.Errorf("schema after rebuild = %d, %v; want %d", v, err, schemaVersion)
		}
	})
}

func TestStore_DatasetInfo(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStoreAt(t, "db", vfs.NewMem())
	t.Run("Unset", func(t *testing.T) {
		info, err := s.DatasetInfo(ctx)
		if err != nil || info != (rappel.DatasetInfo{}) {
			t.Errorf("DatasetInfo() = %+v, %v; want zero", info, err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		want := rappel.DatasetInfo{UpdatedAt: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC), Source: "feeds", Records: 41234}
		if err := s.SetDatasetInfo(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err := s.DatasetInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !got.UpdatedAt.Equal(want.UpdatedAt) || got.Source != want.Source || got.Records != want.Records {
			t.Errorf("DatasetInfo() = %+v, want %+v", got, want)
		}
	})
	t.Run("ErrUnknownVersion", func(t *testing.T) {
		if err := s.db.Set(datasetKey, []byte("\x07{}"), pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DatasetInfo(ctx); err == nil {
			t.Error("DatasetInfo() decoded an unknown value version")
		}
	})
}

func TestStore_Empty(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStoreAt(t, "db", vfs.NewMem())
	if err := s.SetDatasetInfo(ctx, rappel.DatasetInfo{Source: "bundle"}); err != nil {
		t.Fatal(err)
	}
	if empty, err := s.Empty(ctx); err != nil || !empty {
		t.Fatalf("Empty() of a new store = %v, %v", empty, err)
	}
	r := fixture(t)
	MustPut(t, s, r)
	if empty, err := s.Empty(ctx); err != nil || empty {
		t.Fatalf("Empty() after PutRecords = %v, %v", empty, err)
	}
	if err := s.DeleteRecords(ctx, []string{r.RecordID}); err != nil {
		t.Fatal(err)
	}
	if empty, err := s.Empty(ctx); err != nil || !empty {
		t.Fatalf("Empty() after DeleteRecords = %v, %v", empty, err)
	}
}

// jsonDiff compares two records by their JSON and describes the first
// difference, or returns "".
func jsonDiff(tb testing.TB, got, want *rappel.Record) string {
	tb.Helper()
	g, err := json.MarshalIndent(got, "", " ")
	if err != nil {
		tb.Fatal(err)
	}
	w, err := json.MarshalIndent(want, "", " ")
	if err != nil {
		tb.Fatal(err)
	}
	if bytes.Equal(g, w) {
		return ""
	}
	return "record differs:\n got " + string(g) + "\nwant " + string(w)
}

// TestStore_QuietWarmStart reopens a store that has a WAL to replay: at
// INFO the log holds none of Pebble's bookkeeping (its replay's "stopped
// reading at offset" alarms readers), at DEBUG it does.
func TestStore_QuietWarmStart(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		s := MustOpenStore(t)
		s.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))
		MustReopen(t, s)
		MustPut(t, s, fixture(t))
		MustReopen(t, s)
		got := strings.Contains(buf.String(), "component=pebble")
		if want := level == slog.LevelDebug; got != want {
			t.Errorf("at %v, Pebble's lines logged: %v, want %v:\n%s", level, got, want, buf.String())
		}
	}
}
