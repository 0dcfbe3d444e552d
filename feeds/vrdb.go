package feeds

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rappel-ca/rappel"
)

// vrdbFile is the vehicle recall database's document under the plugin's /in.
const vrdbFile = "vrdb.csv"

// vrdbKeyColumn names the column rows are grouped by.
const vrdbKeyColumn = "RECALL_NUMBER_NUM"

// vrdbHeaderKey is the raw record holding the CSV header.
const vrdbHeaderKey = structuralPrefix + "header"

var bom = []byte{0xEF, 0xBB, 0xBF}

// vrdbFormat cuts the CSV into one raw record per recall number, holding
// its rows (a recall's rows may be anywhere in the file) as written, and one
// structural record holding the header.
type vrdbFormat struct{}

func (vrdbFormat) split(docs map[string][]byte) ([]rappel.RawRecord, error) {
	doc, ok := docs[vrdbFile]
	if !ok {
		return nil, fmt.Errorf("splitting %s: the document is missing", vrdbFile)
	}
	body := skipBOM(doc)
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] == '<' || t[0] == '{' || t[0] == '[' {
		return nil, fmt.Errorf("splitting %s: the document is not CSV: %s", vrdbFile, describe(t))
	}
	cr := csv.NewReader(bytes.NewReader(body))
	cr.FieldsPerRecord = -1 // rows of the wrong width are the plugin's to report
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("splitting %s: reading the header: %w", vrdbFile, err)
	}
	col := -1
	for i, h := range header {
		if strings.TrimSpace(h) == vrdbKeyColumn {
			col = i
		}
	}
	// Without the key column (renamed upstream), every row is keyed by its
	// content: the plugin decides what the file means, and a plugin that
	// knows the new name is what fixes it (docs/feeds.md, "Live feeds"). The
	// bundled plugin fails on such a file with a sentence naming the
	// column, and the refresh keeps the last good data.
	headerEnd := cr.InputOffset()
	// Each row as written, and its canonical form (canonicalCSVRow), made
	// from the fields already read rather than by reading the row again.
	rows, canon := map[string][][]byte{}, map[string][][]byte{}
	var order []string
	for {
		start := cr.InputOffset()
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("splitting %s: %w; a malformed or truncated document is refused whole", vrdbFile, err)
		}
		raw := body[start:cr.InputOffset()]
		if !bytes.HasSuffix(raw, []byte("\n")) {
			if len(rec) != len(header) {
				return nil, fmt.Errorf("splitting %s: the document ends in the middle of a row (%d of %d fields); a truncated document is refused whole", vrdbFile, len(rec), len(header))
			}
			raw = append(bytes.Clone(raw), '\r', '\n')
		}
		c := canonicalFields(rec)
		key := ""
		if col >= 0 && col < len(rec) {
			key = strings.ToLower(strings.TrimSpace(rec[col]))
		}
		if key == "" || strings.HasPrefix(key, structuralPrefix) || strings.HasPrefix(key, anonymousPrefix) {
			key = anonymousPrefix + rappel.HashBytes(c)
		}
		if _, ok := rows[key]; !ok {
			order = append(order, key)
		}
		rows[key] = append(rows[key], raw)
		canon[key] = append(canon[key], c)
	}
	out := make([]rappel.RawRecord, 0, len(order)+1)
	out = append(out, rawRecord(vrdbHeaderKey, nil, [][][]byte{{body[:headerEnd]}}, [][][]byte{{canonicalFields(header)}}))
	for _, key := range order {
		var ids []string
		if !strings.HasPrefix(key, anonymousPrefix) && strings.Trim(key, "0123456789") == "" {
			ids = []string{"tc-" + key}
		}
		out = append(out, rawRecord(key, ids, [][][]byte{rows[key]}, [][][]byte{canon[key]}))
	}
	sortRaw(out)
	return out, nil
}

func (vrdbFormat) canonical(row []byte) []byte { return canonicalCSVRow(row) }

func (vrdbFormat) join(recs []rappel.RawRecord) (map[string][]byte, error) {
	var buf bytes.Buffer
	buf.Write(bom)
	var header []byte
	for _, r := range recs {
		lists, err := listsOf(r, 1)
		if err != nil {
			return nil, err
		}
		if r.Key == vrdbHeaderKey {
			if len(lists[0]) == 1 {
				header = lists[0][0]
			}
			continue
		}
		if header == nil {
			return nil, fmt.Errorf("joining %s: the header comes after rows or is missing", vrdbFile)
		}
		if buf.Len() == len(bom) {
			buf.Write(header)
		}
		for _, row := range lists[0] {
			buf.Write(row)
		}
	}
	if buf.Len() == len(bom) && header != nil {
		buf.Write(header)
	}
	return map[string][]byte{vrdbFile: buf.Bytes()}, nil
}
