package archive

import (
	"bytes"
	"errors"
	"fmt"
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
	for _, names := range [][]string{{"a", "a/b"}, {"a/b/c", "a/b"}, {"."}} {
		var buf bytes.Buffer
		a := NewWriter(&buf, time.Now())
		for _, name := range names {
			if err := a.Add(name, 1, 0o600, strings.NewReader("x")); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		want := "cannot both be files"
		if len(names) == 1 {
			want = "not a clean relative path"
		}
		if _, err := Read(&buf, Discard); !errors.Is(err, ErrArchive) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "file exists") {
			t.Errorf("%q: %v; want %q", names, err, want)
		}
	}
	if _, err := Read(strings.NewReader("not a tar at all, just some text that is long enough "+strings.Repeat("x", 600)), Discard); !errors.Is(err, ErrArchive) {
		t.Errorf("text: %v", err)
	}
}

// rawBlock is a ustar header block for an entry of typ named name holding
// size bytes, written by hand: archive/tar's Writer writes no sparse
// entry, and an attacker's archive is not made with it.
func rawBlock(name string, typ byte, size int) []byte {
	b := make([]byte, 512)
	copy(b[0:], name)
	copy(b[100:], "0000600\x00")
	copy(b[108:], "0000000\x00")
	copy(b[116:], "0000000\x00")
	copy(b[124:], fmt.Sprintf("%011o\x00", size))
	copy(b[136:], "00000000000\x00")
	copy(b[148:], "        ")
	b[156] = typ
	copy(b[257:], "ustar\x0000")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// padded is b padded to a whole number of blocks.
func padded(b []byte) []byte {
	return append(b, make([]byte, (512-len(b)%512)%512)...)
}

// TestReadArchive_RefusesSparse: a PAX sparse entry a few KB long that
// declares 2 GiB of holes is refused before a byte of it is written.
func TestReadArchive_RefusesSparse(t *testing.T) {
	record := func(k, v string) string {
		line := " " + k + "=" + v + "\n"
		n := len(line)
		for len(fmt.Sprint(n+len(fmt.Sprint(n)))) != len(fmt.Sprint(n)) {
			n++
		}
		n += len(fmt.Sprint(n))
		return fmt.Sprint(n) + line
	}
	pax := record("GNU.sparse.major", "1") + record("GNU.sparse.minor", "0") +
		record("GNU.sparse.name", "store/000001.sst") + record("GNU.sparse.realsize", "2147483648")
	sparseMap := padded([]byte("1\n2147483647\n1\n"))
	data := append(sparseMap, 'x')
	var raw []byte
	raw = append(raw, rawBlock("PaxHeaders/000001.sst", 'x', len(pax))...)
	raw = append(raw, padded([]byte(pax))...)
	raw = append(raw, rawBlock("store/000001.sst", '0', len(data))...)
	raw = append(raw, padded(data)...)
	raw = append(raw, make([]byte, 1024)...)
	sizes := map[string]int64{}
	_, err := Read(bytes.NewReader(raw), func(name string, _ int64) (io.WriteCloser, error) {
		return &countingWriter{name: name, sizes: sizes}, nil
	})
	if !errors.Is(err, ErrArchive) || !strings.Contains(err.Error(), "sparse") || len(sizes) != 0 {
		t.Fatalf("a sparse entry of 2 GiB: %v, written %v", err, sizes)
	}
}
