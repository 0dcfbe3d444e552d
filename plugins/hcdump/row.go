package hcdump

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/hcvocab"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// lang names one file of the dump and its keys, which are translated.
type lang struct {
	file                                           string
	nid, title, url, org, product, issue, whatToDo string
	category, class, updated, archived             string
}

var (
	langEN = newLang(fileEN, hcvocab.DumpColumnsEN)
	langFR = newLang(fileFR, hcvocab.DumpColumnsFR)
)

// newLang names the keys of file, given in the dump's column order.
func newLang(file string, k []string) *lang {
	return &lang{file: file, nid: k[0], title: k[1], url: k[2], org: k[3], product: k[4], issue: k[5],
		whatToDo: k[6], category: k[7], class: k[8], updated: k[9], archived: k[10]}
}

// notice is one row of one file, its text cleaned and its date checked.
type notice struct {
	lang *lang
	row  int // position in the file's array, from 1
	nid  string

	title, url, org, product, issue, whatToDo, category, class, archived string
	updated                                                              string // YYYY-MM-DD, or ""
}

// notArrayError says a file is not a JSON array at all.
type notArrayError struct{ file, why string }

func (e *notArrayError) Error() string {
	return fmt.Sprintf("reading %s: the file is not a JSON array (%s)", e.file, e.why)
}

// readRows streams the rows of one file to fn, reporting and skipping those
// that cannot be read. Streaming is what lets a file that is cut off part way
// still give the rows before the break. It returns an error when the file
// cannot be opened or read, or does not start a JSON array, or when fn fails.
func readRows(fsys fs.FS, l *lang, report func(rappel.Problem), fn func(*notice) error) error {
	f, err := fsys.Open(l.file)
	if err != nil {
		return fmt.Errorf("reading %s: %w", l.file, err)
	}
	defer f.Close()
	dec := json.NewDecoder(guest.SkipBOM(f))
	dec.UseNumber() // a number is only ever reported, never read, so never let it fail to parse
	tok, err := dec.Token()
	switch {
	case err == io.EOF:
		return &notArrayError{l.file, "it is empty"}
	case isSyntax(err):
		return &notArrayError{l.file, err.Error()}
	case err != nil:
		return fmt.Errorf("reading %s: %w", l.file, err)
	case tok != json.Delim('['):
		return &notArrayError{l.file, fmt.Sprintf("it starts with %v", tok)}
	}
	n := 0
	for dec.More() {
		n++
		start := dec.InputOffset()
		var v any
		if err := dec.Decode(&v); err != nil {
			if !isSyntax(err) {
				return fmt.Errorf("reading %s: %w", l.file, err)
			}
			report(rappel.Problem{Source: Source, Reason: fmt.Sprintf("%s breaks off in row %d, after byte %d (%v); the %d rows before it were read.", l.file, n, start, err, n-1)})
			return nil
		}
		row, reason := parseRow(l, n, v)
		if reason != "" {
			report(rappel.Problem{Source: Source, RecordID: idOf(row), Reason: reason})
			continue
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		if !isSyntax(err) {
			return fmt.Errorf("reading %s: %w", l.file, err)
		}
		report(rappel.Problem{Source: Source, Reason: fmt.Sprintf("%s breaks off after row %d (%v); the rows before it were read.", l.file, n, err)})
	}
	return nil
}

// isSyntax reports whether err means the bytes are not (complete) JSON, as
// opposed to the file failing to read.
func isSyntax(err error) bool {
	var syn *json.SyntaxError
	return errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// idOf names the record a bad row would have made, when its NID is known.
func idOf(n *notice) string {
	if n == nil || n.nid == "" {
		return ""
	}
	return rappel.HealthRecordID(n.nid)
}

// parseRow checks one decoded array element and cleans its values. On a
// problem it returns the reason, and the notice as far as it got.
func parseRow(l *lang, row int, v any) (*notice, string) {
	// Built only for a problem: most rows have none, and formatting every
	// row's name costs real time under Wasm.
	skipped := func() string { return fmt.Sprintf("Row %d of %s was skipped", row, l.file) }
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Sprintf("%s: it is %s, not an object.", skipped(), describe(v))
	}
	get := func(key string) string {
		s, _ := obj[key].(string)
		return guest.CleanText(s)
	}
	n := &notice{lang: l, row: row, nid: get(l.nid)}
	if !guest.IsNumber(n.nid) {
		n.nid = "" // not an id to name the record by
	}
	if k := firstNonString(obj); k != "" {
		return n, fmt.Sprintf("%s: its %q is %s, not a string.", skipped(), k, describe(obj[k]))
	}
	switch raw := get(l.nid); {
	case raw == "":
		return n, fmt.Sprintf("%s: it has no %s.", skipped(), l.nid)
	case n.nid == "":
		return n, fmt.Sprintf("%s: its %s %q is not a number of at most 20 digits.", skipped(), l.nid, raw)
	}
	if d := get(l.updated); d != "" {
		date, err := guest.ParseDate(d)
		if err != nil {
			return n, fmt.Sprintf("%s (NID %s): its %s %v.", skipped(), n.nid, l.updated, err)
		}
		n.updated = date
	}
	// Texts lose the literal quotes some rows wrap them in.
	text := func(key string) string { return unquote(get(key)) }
	n.title, n.url, n.org = text(l.title), get(l.url), get(l.org)
	n.product, n.issue, n.whatToDo = text(l.product), text(l.issue), text(l.whatToDo)
	n.category, n.class, n.archived = get(l.category), get(l.class), get(l.archived)
	return n, ""
}

// firstNonString returns the first key, in sorted order so that the key
// reported does not depend on map order, whose value is neither a string
// nor null; "" when there is none.
func firstNonString(obj map[string]any) string {
	bad := ""
	for k, v := range obj {
		switch v.(type) {
		case string, nil:
		default:
			if bad == "" || k < bad {
				bad = k
			}
		}
	}
	return bad
}

// describe names a JSON value's kind for a problem sentence.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
