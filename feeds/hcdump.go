package feeds

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/hcvocab"
)

// The Health Canada dump's documents under the plugin's /in.
const (
	hcFileEN = "recalls-en.json"
	hcFileFR = "recalls-fr.json"
)

// hcdumpFormat cuts the dump into one raw record per NID, holding the NID's
// English and French rows as the upstream wrote them.
type hcdumpFormat struct{}

// hcRow is what splitting reads of a dump row.
type hcRow struct {
	NID        json.RawMessage `json:"NID"`
	Org        json.RawMessage `json:"Organization"`
	URL        json.RawMessage `json:"URL"`
	Title      json.RawMessage `json:"Title"`
	TitleFR    json.RawMessage `json:"Titre"`
	Archived   json.RawMessage `json:"Archived"`
	ArchivedFR json.RawMessage `json:"Archivé"`
	Category   json.RawMessage `json:"Category"`
	CategoryFR json.RawMessage `json:"Catégorie"`
}

type hcGroup struct {
	key    string
	en, fr [][]byte
	// canon holds the English and the French rows in canonical form.
	canon                   [2][][]byte
	org, archived, category string // the first row's, as the normalizer reads its notice
	urls                    []string
	titles                  []string
}

// hcRead is what splitting reads of one row: its key, the fields that give
// its record_id, and its canonical form.
type hcRead struct {
	key   string
	row   hcRow
	canon []byte
}

// readRows reads every row on every core: a row's key and canonical form
// are most of the work of splitting the dump.
func readRows(rows [][]byte) []hcRead {
	out := make([]hcRead, len(rows))
	inParallel(len(rows), func(i int) {
		c := canonicalJSON(rows[i])
		key, row := hcKey(rows[i], c)
		out[i] = hcRead{key, row, c}
	})
	return out
}

func (hcdumpFormat) split(docs map[string][]byte) ([]rappel.RawRecord, error) {
	en, ok := docs[hcFileEN]
	if !ok {
		return nil, fmt.Errorf("splitting the dump: %s is missing", hcFileEN)
	}
	groups := map[string]*hcGroup{}
	var order []string
	add := func(lang string, rows [][]byte) {
		for i, read := range readRows(rows) {
			raw, key, row := rows[i], read.key, read.row
			g := groups[key]
			if g == nil {
				g = &hcGroup{key: key}
				groups[key] = g
				order = append(order, key)
			}
			if lang == rappel.LangEN {
				g.en = append(g.en, raw)
				g.canon[0] = append(g.canon[0], read.canon)
			} else {
				g.fr = append(g.fr, raw)
				g.canon[1] = append(g.canon[1], read.canon)
			}
			if len(g.en)+len(g.fr) == 1 {
				g.org = jsonString(row.Org)
				g.archived = jsonString(row.Archived) + jsonString(row.ArchivedFR)
				g.category = jsonString(row.Category) + jsonString(row.CategoryFR)
			}
			g.urls = append(g.urls, jsonString(row.URL))
			g.titles = append(g.titles, jsonString(row.Title)+jsonString(row.TitleFR))
		}
	}
	rows, err := jsonArray(hcFileEN, en)
	if err != nil {
		return nil, err
	}
	add(rappel.LangEN, rows)
	if fr, ok := docs[hcFileFR]; ok {
		rows, err := jsonArray(hcFileFR, fr)
		if err != nil {
			return nil, err
		}
		add(rappel.LangFR, rows)
	}
	out := make([]rappel.RawRecord, 0, len(order))
	for _, key := range order {
		g := groups[key]
		out = append(out, rawRecord(key, g.ids(), [][][]byte{g.en, g.fr}, g.canon[:]))
	}
	sortRaw(out)
	return out, nil
}

// hcKey returns a row's raw record key, its NID, and what splitting reads
// of it. A row without a NID is keyed by its content, in canonical form
// (canon).
func hcKey(raw, canon []byte) (string, hcRow) {
	var row hcRow
	if err := json.Unmarshal(raw, &row); err == nil {
		if nid := strings.ToLower(strings.TrimSpace(jsonString(row.NID))); nid != "" && !strings.HasPrefix(nid, structuralPrefix) && !strings.HasPrefix(nid, anonymousPrefix) {
			return nid, row
		}
	}
	return anonymousPrefix + rappel.HashBytes(canon), row
}

// ids is the record the NID's rows become (testdata/FORMATS.md): a
// Transport Canada notice (by hcvocab.ClassifyDumpRow, as the normalizer
// reads it) is tc-<recall number>, the number its URLs or titles name, any
// other hc-<NID>.
func (g *hcGroup) ids() []string {
	if strings.HasPrefix(g.key, anonymousPrefix) {
		return nil
	}
	vehicle := hcvocab.ClassifyDumpRow(g.org, g.archived, g.category).RecallType == rappel.TypeVehicle
	return []string{rappel.DumpRecordID(g.key, vehicle, append(g.urls, g.titles...)...)}
}

// jsonString is the text of a JSON string or number, or "".
func jsonString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	if raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') {
		return string(raw)
	}
	return ""
}

// jsonArray returns the elements of a JSON array document, each as written.
// A document that is not one whole array (HTML, an object, an array cut off
// part way, bytes that are not JSON, trailing data) is an error, which says
// at which byte of the document it broke.
func jsonArray(name string, doc []byte) ([][]byte, error) {
	unBOMed := skipBOM(doc)
	body := bytes.TrimSpace(unBOMed)
	lead := len(doc) - len(unBOMed) + (len(unBOMed) - len(bytes.TrimLeft(unBOMed, " \t\r\n")))
	if len(body) == 0 || body[0] != '[' {
		return nil, &brokenDoc{name: name, reason: "the document is not a JSON array: " + describe(body)}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		return nil, brokenJSON(name, body, lead, 0, 1)
	}
	var rows [][]byte
	for dec.More() {
		start := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, brokenJSON(name, body, lead, start, len(rows)+1)
		}
		rows = append(rows, raw)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		return nil, brokenJSON(name, body, lead, dec.InputOffset(), len(rows)+1)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &brokenDoc{name: name, reason: fmt.Sprintf("data follows the array, at byte %d", lead+int(dec.InputOffset())), tail: "; a broken document is refused whole"}
	}
	return rows, nil
}

func (hcdumpFormat) canonical(row []byte) []byte { return canonicalJSON(row) }

// brokenJSON says where a dump document stops being JSON: the byte, counted
// from 1 in the document as fetched (lead bytes of byte-order mark and space
// were cut off body), at which a value from body[from:] fails to decode
// (the last one when the document ends early), and in which row.
func brokenJSON(name string, body []byte, lead int, from int64, row int) *brokenDoc {
	// The decoder's offsets count from where its value started: decode
	// the broken value again from its first byte to place the error.
	start := int(from) + len(body[from:]) - len(bytes.TrimLeft(body[from:], ", \t\r\n"))
	var raw json.RawMessage
	err := json.NewDecoder(bytes.NewReader(body[start:])).Decode(&raw)
	at := len(body)
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		at = start + int(syn.Offset)
	case err == nil:
		at, err = start+1, fmt.Errorf("%s where the array should close", describe(raw))
	}
	return &brokenDoc{name: name, reason: fmt.Sprintf("the document is not valid JSON at byte %d, in row %d (%v)", lead+at, row, err),
		tail: "; a broken document is refused whole, and the last good data keeps serving"}
}

// brokenDoc says a document is not in its format at all: where splitting
// fails, and what tells a refresh to read the document's fallback.
type brokenDoc struct {
	name, reason string
	tail         string // what follows for a refresh without a fallback
}

func (e *brokenDoc) Error() string { return "splitting " + e.name + ": " + e.reason + e.tail }

func (hcdumpFormat) fromFallback(name string, body []byte) ([]byte, []string, error) {
	return hcCSVToJSON(name, body)
}

func (hcdumpFormat) join(recs []rappel.RawRecord) (map[string][]byte, error) {
	var en, fr bytes.Buffer
	en.WriteByte('[')
	fr.WriteByte('[')
	for _, r := range recs {
		lists, err := listsOf(r, 2)
		if err != nil {
			return nil, err
		}
		for i, buf := range []*bytes.Buffer{&en, &fr} {
			for _, row := range lists[i] {
				if buf.Len() > 1 {
					buf.WriteString(",\n")
				}
				buf.Write(row)
			}
		}
	}
	en.WriteString("]\n")
	fr.WriteString("]\n")
	return map[string][]byte{hcFileEN: en.Bytes(), hcFileFR: fr.Bytes()}, nil
}
