package segment

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile_Open(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.seg")
	var steps []string
	if err := WriteFile(path, func(w *Writer) (Meta, error) {
		fill(w, 100)
		m := Meta{Content: 3}
		m.Info.Records = 100
		return m, nil
	}, func(s string) { steps = append(steps, s) }); err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 || steps[0] != StepWritten || steps[2] != StepRenamed {
		t.Fatalf("steps %v", steps)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("the directory holds %d files, want the segment alone", len(entries))
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Meta().Content != 3 || f.Meta().Info.Records != 100 {
		t.Fatalf("meta %+v", f.Meta())
	}
	r := f.Reader()
	col := ReadColumn[int64](r, "col", 100)
	words := r.Table("words", "words.offs", 100)
	bms := r.Bitmaps("bms", "bms.offs", 100)
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	for i := range 100 {
		bm, err := Bitmap(bms.At(i), 201)
		if err != nil {
			t.Fatal(err)
		}
		if col[i] != int64(i*i) || len(words.At(i)) != i%7 || !bm.Contains(uint32(2*i+1)) || bm.GetCardinality() != 2 {
			t.Fatalf("value %d read back wrong", i)
		}
	}
	if _, err := Bitmap(bms.At(99), 150); err == nil {
		t.Fatal("a bitmap holding 199 passed as below 150")
	}
	r.Bytes("missing", 1, -1)
	if r.Err() == nil {
		t.Fatal("a missing section read")
	}
}

func TestWriteFile_Failed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.seg")
	err := WriteFile(path, func(w *Writer) (Meta, error) {
		w.Section("a-name-longer-than-the-directory-holds", nil)
		return Meta{}, nil
	}, nil)
	if err == nil {
		t.Fatal("a section name too long was written")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a failed write left %d files", len(entries))
	}
}
