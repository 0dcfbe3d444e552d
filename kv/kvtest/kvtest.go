// Package kvtest opens Pebble stores (package kv) for the tests of the
// packages that run on one: a store on a temporary directory or in memory,
// logging nowhere, closed when the test ends. It is imported by tests
// only (internal/importrules holds it to that); kv's own tests, inside the
// package, keep their helpers beside them.
package kvtest

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel/kv"
)

// New returns a store on a new temporary directory, logging nowhere and
// not yet open, for a test that sets it up further (its file system, its
// probe interval) before MustOpen.
func New(tb testing.TB) *kv.Store {
	tb.Helper()
	st := kv.NewStore(filepath.Join(tb.TempDir(), "pebble"))
	st.Logger = slog.New(slog.DiscardHandler)
	return st
}

// MustOpen opens st, failing the test when it cannot, closes it when the
// test ends (Close is safe after a test's own), and returns it.
func MustOpen(tb testing.TB, st *kv.Store) *kv.Store {
	tb.Helper()
	if err := st.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// Open opens a new, empty store on a temporary directory, logging nowhere,
// closed when the test ends.
func Open(tb testing.TB) *kv.Store {
	tb.Helper()
	return MustOpen(tb, New(tb))
}

// OpenAt opens (creating) the store at path, logging nowhere, closed when
// the test ends: for a test that reopens a store it wrote, or that writes
// the store of a data dir a node serves afterwards (closing it first).
func OpenAt(tb testing.TB, path string) *kv.Store {
	tb.Helper()
	st := kv.NewStore(path)
	st.Logger = slog.New(slog.DiscardHandler)
	return MustOpen(tb, st)
}

// OpenMem opens a new, empty store on an in-memory file system, logging
// nowhere, closed when the test ends: nothing touches the disk.
func OpenMem(tb testing.TB) *kv.Store {
	tb.Helper()
	st := kv.NewStore("pebble")
	st.FS = vfs.NewMem()
	st.Logger = slog.New(slog.DiscardHandler)
	return MustOpen(tb, st)
}
