package feeds

import (
	"maps"
	"testing"

	"github.com/rappel-ca/rappel"
)

// FuzzOverlay overlays arbitrary bytes, as the daily extract, on a full
// file's raw records: it never panics, and an overlay refused (not CSV,
// truncated, another header) changes nothing.
func FuzzOverlay(f *testing.F) {
	const full = "RECALL_NUMBER_NUM,YEAR,COMMENT_ETXT\n\"2023001\",2023,\"a\nb\"\n\"2023002\",2022,\"c\"\n"
	f.Add([]byte(full))
	f.Add([]byte("\xEF\xBB\xBF\"RECALL_NUMBER_NUM\",\"YEAR\",\"COMMENT_ETXT\"\r\n\"2023003\",2023,\"x\r\ny\nz\"\r\n"))
	f.Add([]byte("RECALL_NUMBER_NUM,COMMENT_ETXT,YEAR\n2023001,a,2023\n"))
	f.Add([]byte("RECALL_NUMBER_NUM,YEAR,COMMENT_ETXT\n\"2023001\",2023,\"unterminated"))
	f.Add([]byte("<html>"))
	f.Fuzz(func(t *testing.T, daily []byte) {
		recs, err := vrdbFormat{}.split(map[string][]byte{vrdbFile: []byte(full)})
		if err != nil {
			t.Fatal(err)
		}
		p := &plan{src: VRDB("https://example.ca/full.csv"), cur: map[string]rappel.RawRecord{}}
		for _, r := range recs {
			p.cur[r.Key] = r
		}
		before := maps.Clone(p.cur)
		if err := p.overlay(vrdbFile, daily); err != nil {
			if !maps.EqualFunc(before, p.cur, func(a, b rappel.RawRecord) bool { return a.Hash == b.Hash }) || len(before) != len(p.cur) {
				t.Fatalf("a refused overlay (%v) changed the records", err)
			}
			return
		}
		if _, err := (vrdbFormat{}).join(sortedValues(p.cur)); err != nil {
			t.Fatalf("the merged records do not join: %v", err)
		}
	})
}

func sortedValues(m map[string]rappel.RawRecord) []rappel.RawRecord {
	out := make([]rappel.RawRecord, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, m[k])
	}
	return out
}
