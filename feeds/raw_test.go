package feeds

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
)

// readDocs reads testdata files into documents by name under /in.
func readDocs(tb testing.TB, dir string, names ...string) map[string][]byte {
	tb.Helper()
	docs := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("..", "testdata", dir, n))
		if err != nil {
			tb.Fatal(err)
		}
		docs[n] = b
	}
	return docs
}

func TestFrame(t *testing.T) {
	for _, lists := range [][][][]byte{
		{},
		{{}},
		{{[]byte("a"), []byte("")}, {}},
		{{bytes.Repeat([]byte("x"), 300)}, {[]byte("y")}},
	} {
		got, err := unframe(frame(lists...))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(lists) {
			t.Fatalf("unframe(frame(%q)) = %q", lists, got)
		}
		for i := range lists {
			if len(got[i]) != len(lists[i]) {
				t.Fatalf("list %d: %q, want %q", i, got[i], lists[i])
			}
			for j := range lists[i] {
				if !bytes.Equal(got[i][j], lists[i][j]) {
					t.Fatalf("item %d.%d: %q, want %q", i, j, got[i][j], lists[i][j])
				}
			}
		}
	}
	for _, bad := range [][]byte{nil, {5}, {1, 1, 9, 'a'}, append(frame([][]byte{[]byte("a")}), 0)} {
		if _, err := unframe(bad); err == nil {
			t.Errorf("unframe(%q) accepted", bad)
		}
	}
}

func FuzzUnframe(f *testing.F) {
	f.Add(frame([][]byte{[]byte("a")}, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		lists, err := unframe(b)
		if err != nil {
			return
		}
		// Uvarints may be padded ("\x80\x00" is 0), so the bytes need
		// not come back the same; what they hold must.
		again, err := unframe(frame(lists...))
		if err != nil || !reflect.DeepEqual(normalizeLists(again), normalizeLists(lists)) {
			t.Fatalf("unframe(frame(unframe(%q))) = %q, %v; want %q", b, again, err, lists)
		}
	})
}

// normalizeLists makes empty items and lists comparable with DeepEqual.
func normalizeLists(lists [][][]byte) [][]string {
	out := make([][]string, len(lists))
	for i, l := range lists {
		out[i] = make([]string, len(l))
		for j, item := range l {
			out[i][j] = string(item)
		}
	}
	return out
}

func TestHCDump_Split(t *testing.T) {
	docs := readDocs(t, "hc", hcFileEN, hcFileFR)
	recs, err := hcdumpFormat{}.split(docs)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string][]string{}
	for _, r := range recs {
		ids[r.Key] = r.IDs
	}
	// The expected record_ids are those of testdata/golden/assembled.json
	// that the dump gives: hc-<NID>, and tc-<rn> for Transport Canada.
	for key, want := range map[string]string{"70001": "hc-70001", "70008": "hc-70008", "70101": "tc-2018123", "70104": "tc-2021007"} {
		if got := ids[key]; len(got) != 1 || got[0] != want {
			t.Errorf("NID %s: ids %v, want %s", key, got, want)
		}
	}
	t.Run("RoundTrip", func(t *testing.T) {
		joined, err := hcdumpFormat{}.join(recs)
		if err != nil {
			t.Fatal(err)
		}
		again, err := hcdumpFormat{}.split(joined)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again, recs) {
			t.Fatal("split(join(split(dump))) differs from split(dump)")
		}
	})
	t.Run("Hashes", func(t *testing.T) {
		// Changing one row changes that NID's hash only.
		docs2 := map[string][]byte{hcFileEN: bytes.Replace(docs[hcFileEN], []byte(`"Archived": "0"}`), []byte(`"Archived": "1"}`), 1), hcFileFR: docs[hcFileFR]}
		recs2, err := hcdumpFormat{}.split(docs2)
		if err != nil {
			t.Fatal(err)
		}
		changed := 0
		for i := range recs {
			if recs[i].Hash != recs2[i].Hash {
				changed++
			}
		}
		if changed != 1 {
			t.Fatalf("%d raw records changed, want 1", changed)
		}
	})
}

func TestHCDump_Split_Refused(t *testing.T) {
	en := readDocs(t, "hc", hcFileEN)[hcFileEN]
	for name, doc := range map[string]string{
		"HTML":      "<!DOCTYPE html><html><body>Maintenance</body></html>",
		"Empty":     "",
		"Object":    `{"error": "rate limited"}`,
		"Truncated": string(en[:len(en)/2]),
		"Unclosed":  strings.TrimSuffix(strings.TrimSpace(string(en)), "]"),
		"Trailing":  string(en) + "[]",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := hcdumpFormat{}.split(map[string][]byte{hcFileEN: []byte(doc)})
			if err == nil {
				t.Fatal("accepted")
			}
			if name == "HTML" && !strings.Contains(err.Error(), "HTML") {
				t.Errorf("err = %v, want it to say the page is HTML", err)
			}
			t.Log(err)
		})
	}
	t.Run("NoEnglish", func(t *testing.T) {
		if _, err := (hcdumpFormat{}).split(map[string][]byte{hcFileFR: []byte("[]")}); err == nil {
			t.Fatal("accepted a dump without its English file")
		}
	})
}

func TestVRDB_Split(t *testing.T) {
	docs := readDocs(t, "tc", vrdbFile)
	recs, err := vrdbFormat{}.split(docs)
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Key != vrdbHeaderKey {
		t.Fatalf("first raw record %q, want the header", recs[0].Key)
	}
	keys := []string{}
	for _, r := range recs[1:] {
		keys = append(keys, r.Key)
		if len(r.IDs) != 1 || r.IDs[0] != "tc-"+r.Key {
			t.Errorf("recall %s: ids %v", r.Key, r.IDs)
		}
	}
	if want := []string{"2017500", "2018123", "2019045", "2020311", "2021007"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("recalls %v, want %v", keys, want)
	}
	joined, err := vrdbFormat{}.join(recs)
	if err != nil {
		t.Fatal(err)
	}
	again, err := vrdbFormat{}.split(joined)
	if err != nil || !reflect.DeepEqual(again, recs) {
		t.Fatalf("split(join(split(csv))) differs: %v", err)
	}
	// A subset keeps the header.
	sub, err := vrdbFormat{}.join([]rappel.RawRecord{recs[0], recs[2]})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(skipBOM(sub[vrdbFile]))).ReadAll()
	if err != nil || rows[0][0] != vrdbKeyColumn || len(rows) != 1+4 {
		t.Fatalf("subset = %q (%v), want the header and the four rows of 2018123", rows, err)
	}
	for _, row := range rows[1:] {
		if row[0] != "2018123" {
			t.Errorf("subset row %q is not of 2018123", row)
		}
	}
}

// A file whose key column was renamed is split by content, every row its
// own raw record, and joined back whole: the plugin, not the host's split,
// decides what it means, so that a plugin knowing the new name can fix it.
func TestVRDB_Split_RenamedKey(t *testing.T) {
	doc := readDocs(t, "tc", vrdbFile)[vrdbFile]
	renamed := bytes.Replace(doc, []byte(`"RECALL_NUMBER_NUM"`), []byte(`"RECALL_NO"`), 1)
	recs, err := vrdbFormat{}.split(map[string][]byte{vrdbFile: renamed})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		if !strings.HasPrefix(r.Key, anonymousPrefix) || len(r.IDs) != 0 {
			t.Fatalf("raw record %q (ids %v) of a file without its key column", r.Key, r.IDs)
		}
	}
	docs, err := vrdbFormat{}.join(recs)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(skipBOM(docs[vrdbFile]))).ReadAll()
	want, _ := csv.NewReader(bytes.NewReader(skipBOM(renamed))).ReadAll()
	if err != nil || len(rows) != len(want) || rows[0][0] != "RECALL_NO" {
		t.Fatalf("joined back: %d rows (%v), want %d under the renamed header", len(rows), err, len(want))
	}
}

func TestVRDB_Split_Refused(t *testing.T) {
	csv := readDocs(t, "tc", vrdbFile)[vrdbFile]
	for name, doc := range map[string][]byte{
		"HTML":      []byte("<html><body>Service unavailable</body></html>"),
		"Truncated": csv[:bytes.LastIndex(csv, []byte(`","`))],
		"Empty":     nil,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := vrdbFormat{}.split(map[string][]byte{vrdbFile: doc})
			if err == nil {
				t.Fatal("accepted")
			}
			t.Log(err)
		})
	}
}

func TestDetail_SplitJoin(t *testing.T) {
	docs := map[string][]byte{}
	for _, lang := range rappel.Langs {
		entries, err := os.ReadDir(filepath.Join("..", "testdata", "detail", lang))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join("..", "testdata", "detail", lang, e.Name()))
			docs[lang+"/"+e.Name()] = b
		}
	}
	recs, err := detailFormat{}.split(docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 6 || recs[0].Key != "70001" || recs[0].IDs[0] != "hc-70001" {
		t.Fatalf("raw records %+v", recs)
	}
	back, err := detailFormat{}.join(recs)
	if err != nil || !reflect.DeepEqual(back, docs) {
		t.Fatalf("join(split(docs)) differs: %v", err)
	}
	none := detailRaw("5", nil, nil)
	if none.IDs != nil {
		t.Fatalf("a notice without documents expects %v", none.IDs)
	}
	if d, _ := (detailFormat{}).join([]rappel.RawRecord{none}); len(d) != 0 {
		t.Fatalf("a notice without documents joins to %v", d)
	}
}

// TestHCDump_Split_InvalidJSON: a dump that is not valid JSON, as the file
// Health Canada published in early 2024 (an unterminated string), is
// refused whole with a sentence naming the byte where it breaks and the
// row.
func TestHCDump_Split_InvalidJSON(t *testing.T) {
	en := readDocs(t, "hc", hcFileEN)[hcFileEN]
	// The first row's Archived value loses its closing quote: the string
	// runs on to the line break after the row, which no JSON string holds.
	i := bytes.Index(en, []byte(`"Archived": "0"}`)) + len(`"Archived": "0`)
	broken := append(append([]byte{}, en[:i]...), en[i+1:]...)
	at := bytes.IndexByte(broken[i:], '\n') + i + 1 // counted from 1
	for name, doc := range map[string][]byte{
		"Unterminated":        broken,
		"UnterminatedWithBOM": append([]byte("\ufeff\n "), broken...),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := hcdumpFormat{}.split(map[string][]byte{hcFileEN: doc})
			want := fmt.Sprintf("splitting recalls-en.json: the document is not valid JSON at byte %d, in row 1 (", at+len(doc)-len(broken))
			if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "the last good data keeps serving") {
				t.Fatalf("err = %v, want it to start %q", err, want)
			}
			t.Log(err)
		})
	}
	t.Run("CutInAString", func(t *testing.T) {
		cut := en[:i]
		_, err := hcdumpFormat{}.split(map[string][]byte{hcFileEN: cut})
		if want := fmt.Sprintf("not valid JSON at byte %d, in row 1 (unexpected EOF)", len(cut)); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want %q", err, want)
		}
	})
}
