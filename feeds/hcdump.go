package feeds

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/rappel-ca/rappel"
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
	NID     json.RawMessage `json:"NID"`
	Org     json.RawMessage `json:"Organization"`
	URL     json.RawMessage `json:"URL"`
	Title   json.RawMessage `json:"Title"`
	TitleFR json.RawMessage `json:"Titre"`
}

type hcGroup struct {
	key    string
	en, fr [][]byte
	// canon holds the English and the French rows in canonical form.
	canon  [2][][]byte
	org    string
	urls   []string
	titles []string
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
			if g.org == "" {
				g.org = jsonString(row.Org)
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
// Transport Canada notice is tc-<recall number>, the number its URLs or
// titles name (as the normalizer reads it), any other hc-<NID>.
func (g *hcGroup) ids() []string {
	if strings.HasPrefix(g.key, anonymousPrefix) {
		return nil
	}
	if strings.EqualFold(strings.TrimSpace(g.org), "TC") {
		if rn := rappel.TransportRecallNumber(append(g.urls, g.titles...)...); rn != "" {
			return []string{"tc-" + rn}
		}
	}
	return []string{"hc-" + g.key}
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
// part way, trailing data) is an error.
func jsonArray(name string, doc []byte) ([][]byte, error) {
	body := bytes.TrimSpace(skipBOM(doc))
	if len(body) == 0 || body[0] != '[' {
		return nil, fmt.Errorf("splitting %s: the document is not a JSON array: %s", name, describe(body))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("splitting %s: %w", name, err)
	}
	var rows [][]byte
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("splitting %s: row %d is cut off or malformed (%v); a truncated document is refused whole", name, len(rows)+1, err)
		}
		rows = append(rows, raw)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		return nil, fmt.Errorf("splitting %s: the array is not closed after row %d; a truncated document is refused whole", name, len(rows))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("splitting %s: data follows the array", name)
	}
	return rows, nil
}

func (hcdumpFormat) canonical(row []byte) []byte { return canonicalJSON(row) }

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
