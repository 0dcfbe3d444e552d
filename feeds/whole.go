package feeds

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"github.com/rappel-ca/rappel"
)

// Formats of a document fetched whole (Doc.Format).
const (
	FormatJSON = "json"
	FormatCSV  = "csv"
	FormatXML  = "xml"
	FormatText = "text"
)

// Whole is a source a plugin's manifest describes: its documents are
// fetched whole and each is one raw record, keyed by its name, so that a
// refresh where none changed normalizes nothing and one where any changed
// runs the plugin over all of them (the host cannot know which records a
// document it has never seen yields). interval is the least time between
// two of its refreshes (0 for every refresh); enriches is set for a source
// whose records only add to records the others create.
func Whole(name string, docs []Doc, interval time.Duration, enriches bool) *Source {
	return &Source{Name: name, Docs: docs, Interval: interval, Enriches: enriches, format: wholeFormat{}}
}

// wholeFormat keeps each document as one raw record, its bytes as fetched.
type wholeFormat struct{}

func (wholeFormat) split(docs map[string][]byte) ([]rappel.RawRecord, error) {
	names := make([]string, 0, len(docs))
	for name := range docs {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]rappel.RawRecord, 0, len(docs))
	for _, name := range names {
		item := [][]byte{docs[name]}
		out = append(out, rawRecord(name, nil, [][][]byte{item}, [][][]byte{item}))
	}
	return out, nil
}

func (wholeFormat) join(recs []rappel.RawRecord) (map[string][]byte, error) {
	docs := make(map[string][]byte, len(recs))
	for _, r := range recs {
		lists, err := listsOf(r, 1)
		if err != nil {
			return nil, err
		}
		if len(lists[0]) != 1 {
			return nil, fmt.Errorf("reading raw record %q: %d documents, want 1", r.Key, len(lists[0]))
		}
		docs[r.Key] = lists[0][0]
	}
	return docs, nil
}

func (wholeFormat) canonical(item []byte) []byte { return item }

// checkFormat fails when body is plainly not in format: an HTML page, or
// an empty body, where data was expected. It looks at the first bytes
// only; the plugin judges the rest.
func checkFormat(d Doc, body []byte) error {
	t := bytes.TrimSpace(skipBOM(body))
	bad := false
	switch d.Format {
	case FormatJSON:
		bad = len(t) == 0 || t[0] != '{' && t[0] != '['
	case FormatCSV:
		bad = len(t) == 0 || t[0] == '<' || t[0] == '{' || t[0] == '['
	case FormatXML:
		bad = len(t) == 0 || t[0] != '<' || bytes.HasPrefix(bytes.ToLower(t[:min(len(t), 15)]), []byte("<!doctype html"))
	}
	if bad {
		return fmt.Errorf("fetching %s: the document %s is not %s: %s", d.URL, d.Name, d.Format, describe(t))
	}
	return nil
}
