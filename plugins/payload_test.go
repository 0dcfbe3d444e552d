package plugins

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func TestPayload_FS(t *testing.T) {
	p, err := NewPayload(map[string][]byte{
		"recalls-en.json": []byte("[]"),
		"en/10002.json":   []byte("{}"),
		"en/10003.json":   []byte(`{"a":1}`),
		"fr/deep/x.json":  nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(p, "recalls-en.json", "en/10002.json", "en/10003.json", "fr/deep/x.json"); err != nil {
		t.Fatal(err)
	}
	if p.Len() != 4 || p.Size() != 2+2+7 {
		t.Fatalf("Len, Size = %d, %d", p.Len(), p.Size())
	}
}

func TestNewPayload_BadName(t *testing.T) {
	for _, name := range []string{"../etc/passwd", "/abs", ".", "a//b"} {
		if _, err := NewPayload(map[string][]byte{name: nil}); err == nil {
			t.Errorf("NewPayload accepted %q", name)
		}
	}
}

func TestCopyPayload(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"a.json": "A", "sub/b.json": "BB"} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := CopyPayload(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	// A copy: removing the originals changes nothing.
	os.RemoveAll(dir)
	b, err := fs.ReadFile(p, "sub/b.json")
	if err != nil || string(b) != "BB" {
		t.Fatalf("sub/b.json = %q, %v", b, err)
	}
	if q, _ := CopyPayload(p); q != p {
		t.Error("copying a payload copied it again")
	}
}

func TestPayload_Tar(t *testing.T) {
	p, _ := NewPayload(map[string][]byte{"x/1.json": []byte("one"), "2.json": []byte("two")})
	var buf bytes.Buffer
	if err := p.writeTar(&buf); err != nil {
		t.Fatal(err)
	}
	q, err := readTarPayload(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.files, q.files) || !reflect.DeepEqual(p.dirs, q.dirs) {
		t.Fatalf("round trip: %v, want %v", q.files, p.files)
	}
	if _, err := readTarPayload(strings.NewReader("not a tar archive, long enough to have a header block ...")); err == nil {
		t.Error("read garbage as an archive")
	}
}
