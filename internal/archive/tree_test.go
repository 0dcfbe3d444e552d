package archive

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestWriter_AddTree archives a directory with nested files, a skipped
// top-level name and dot-names, and reads back the files it should hold,
// with their content.
func TestWriter_AddTree(t *testing.T) {
	root := t.TempDir()
	for name, body := range map[string]string{
		"cursor.key":           "c",
		"index/base-1.seg":     "segment",
		"index/deep/x.seg":     "deeper",
		"pebble/000005.sst":    "skipped",
		".backup-1/MANIFEST":   "in progress",
		"index/.tmp-seg":       "being written",
		"certmagic/acme/a.crt": "cert",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	a := NewWriter(&buf, time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	if err := a.AddTree(context.Background(), root, func(name string) bool { return name == "pebble" }); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	m, err := Read(&buf, func(name string, _ int64) (io.WriteCloser, error) {
		return &entry{name: name, into: got}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range m.Files {
		names = append(names, f.Path)
	}
	slices.Sort(names)
	if want := []string{"certmagic/acme/a.crt", "cursor.key", "index/base-1.seg", "index/deep/x.seg"}; !slices.Equal(names, want) {
		t.Errorf("archived %q, want %q", names, want)
	}
	if got["index/deep/x.seg"] != "deeper" {
		t.Errorf("index/deep/x.seg holds %q", got["index/deep/x.seg"])
	}

	t.Run("Canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := NewWriter(io.Discard, time.Now()).AddTree(ctx, root, func(string) bool { return false })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("AddTree with a canceled context = %v, want context.Canceled", err)
		}
	})
}

// entry keeps a read file's content in a map when closed.
type entry struct {
	name string
	into map[string]string
	strings.Builder
}

func (e *entry) Close() error { e.into[e.name] = e.String(); return nil }
