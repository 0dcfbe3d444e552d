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

// vrdbDailyFile is the name of the 60-day extract, which overlays vrdb.csv
// (VRDBDaily): the plugin never reads it, it reads the merged vrdb.csv.
const vrdbDailyFile = "vrdb-daily.csv"

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
	// The rows of each key as written: slices of body, which the raw
	// records copy. Their canonical forms are made key by key afterwards,
	// from the rows alone (canonicalCSVRow reads a row as the file's
	// reader did), so that no canonical copy of the whole file is ever
	// held: the agency's full file is 207 MB (RATIONALE.md, "Why is the
	// vehicle file split in two passes, and its rows kept packed?").
	rows := map[string][][]byte{}
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
		key := ""
		if col >= 0 && col < len(rec) {
			// Cloned: the reader's fields share one string, the row's.
			key = strings.Clone(strings.ToLower(strings.TrimSpace(rec[col])))
		}
		if key == "" || strings.HasPrefix(key, structuralPrefix) || strings.HasPrefix(key, anonymousPrefix) {
			key = anonymousPrefix + rappel.HashBytes(canonicalFields(rec))
		}
		if _, ok := rows[key]; !ok {
			order = append(order, key)
		}
		rows[key] = append(rows[key], raw)
	}
	out := make([]rappel.RawRecord, len(order)+1)
	out[0] = rawRecord(vrdbHeaderKey, nil, [][][]byte{{body[:headerEnd]}}, [][][]byte{{canonicalFields(header)}})
	inParallel(len(order), func(i int) {
		key := order[i]
		var ids []string
		if !strings.HasPrefix(key, anonymousPrefix) && strings.Trim(key, "0123456789") == "" {
			ids = []string{rappel.TransportRecordID(key)}
		}
		own := rows[key]
		canon := make([][]byte, len(own))
		for j, row := range own {
			canon[j] = canonicalCSVRow(row)
		}
		out[i+1] = rawRecord(key, ids, [][][]byte{own}, [][][]byte{canon})
	})
	sortRaw(out)
	return out, nil
}

func (vrdbFormat) canonical(row []byte) []byte { return canonicalCSVRow(row) }

func (vrdbFormat) join(recs []rappel.RawRecord) (map[string][]byte, error) {
	// The document is written into a buffer of its size, counted first:
	// one copy of the rows, not the garbage of a buffer doubling.
	var header []byte
	rows := make([][][]byte, len(recs))
	size := len(bom)
	for i, r := range recs {
		lists, err := listsOf(r, 1)
		if err != nil {
			return nil, err
		}
		if r.Key == vrdbHeaderKey {
			if len(lists[0]) == 1 {
				header = lists[0][0]
				size += len(header)
			}
			continue
		}
		if header == nil {
			return nil, fmt.Errorf("joining %s: the header comes after rows or is missing", vrdbFile)
		}
		rows[i] = lists[0]
		for _, row := range lists[0] {
			size += len(row)
		}
	}
	buf := make([]byte, 0, size)
	buf = append(append(buf, bom...), header...)
	for _, list := range rows {
		for _, row := range list {
			buf = append(buf, row...)
		}
	}
	return map[string][]byte{vrdbFile: buf}, nil
}
