package archive

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// testArchive writes an archive of the files (path to content).
func testArchive(tb testing.TB, files map[string]string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	a := NewWriter(&buf, time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	for _, name := range []string{"cursor.key", "pebble/000005.sst", "index/base-1.seg"} {
		if body, ok := files[name]; ok {
			if err := a.Add(name, int64(len(body)), 0o600, strings.NewReader(body)); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := a.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzReadArchive feeds the backup reader arbitrary bytes, as a restore
// reads a file from outside: it never panics, every error it returns is
// an archive error, and an archive it accepts lists exactly the clean
// relative paths it gave out, with their sizes.
func FuzzReadArchive(f *testing.F) {
	good := testArchive(f, map[string]string{"cursor.key": strings.Repeat("k", 32), "pebble/000005.sst": "table", "index/base-1.seg": ""})
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:len(good)-1024])
	f.Add([]byte{})
	f.Add(testArchive(f, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		sizes := map[string]int64{}
		m, err := Read(bytes.NewReader(data), func(name string, _ int64) (io.WriteCloser, error) {
			if !ValidPath(name) {
				t.Fatalf("create was given %q", name)
			}
			sizes[name] = 0
			return &countingWriter{name: name, sizes: sizes}, nil
		})
		if err != nil {
			if !errors.Is(err, ErrArchive) {
				t.Fatalf("a bad archive gave %v, not an archive error", err)
			}
			return
		}
		if len(m.Files) != len(sizes) {
			t.Fatalf("the manifest lists %d files; %d were read", len(m.Files), len(sizes))
		}
		for _, file := range m.Files {
			if sizes[file.Path] != file.Size {
				t.Fatalf("%s: %d bytes read, the manifest says %d", file.Path, sizes[file.Path], file.Size)
			}
		}
	})
}

type countingWriter struct {
	name  string
	sizes map[string]int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.sizes[w.name] += int64(len(p))
	return len(p), nil
}

func (w *countingWriter) Close() error { return nil }

// TestReadArchive_Refuses checks the sentences of archives a restore
// refuses that a cut or a flipped byte does not make.
func TestReadArchive_Refuses(t *testing.T) {
	good := testArchive(t, map[string]string{"cursor.key": "key"})
	if _, err := Read(bytes.NewReader(good), Discard); err != nil {
		t.Fatalf("a good archive: %v", err)
	}
	for name, want := range map[string]string{
		"../etc/passwd": "not a clean relative path",
		"/etc/passwd":   "not a clean relative path",
		"a/./b":         "not a clean relative path",
	} {
		var buf bytes.Buffer
		a := NewWriter(&buf, time.Now())
		if err := a.Add(name, 1, 0o600, strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(&buf, Discard); !errors.Is(err, ErrArchive) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", name, err, want)
		}
	}
	if _, err := Read(strings.NewReader("not a tar at all, just some text that is long enough "+strings.Repeat("x", 600)), Discard); !errors.Is(err, ErrArchive) {
		t.Errorf("text: %v", err)
	}
}
