package feeds

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/hcvocab"
	"github.com/rappel-ca/rappel/internal/jsonstr"
)

// Health Canada publishes the dump as CSV too (HCRSAMOpenData.csv,
// SCRSAMDonneesOuvertes.csv), with the JSON's keys as its header. When a
// JSON document does not parse (the English one did not, for months in
// early 2024), the CSV of the same day stands in for it: its rows are
// written as the JSON's would be, objects of strings under the same keys,
// so that splitting, the raw records and the plugin read them as any
// other day's (testdata/FORMATS.md, "The CSV form").

// fallbackFormat is a format whose documents may have a fallback in
// another form (Doc.Fallback).
type fallbackFormat interface {
	format
	// fromFallback writes the body of the fallback of the document name
	// as that document, with what reading it found, each a phrase.
	fromFallback(name string, body []byte) ([]byte, []string, error)
}

// hcCSVAliases are the header names of the dump's tables as their users
// re-wrote them (pandas, 2023 to 2024: recall_id, product_name, updated_at),
// folded, by the index of the column they hold in hcvocab.DumpColumnsEN.
var hcCSVAliases = map[string]int{"recall_id": 0, "product_name": 4, "updated_at": 9}

// maxCSVProblems is the most row problems one CSV reports one by one; the
// rest are counted in one more.
const maxCSVProblems = 50

// hcCSVColumns maps a CSV header to the keys of the JSON document name
// stands in for: a column named as in either language (the French file
// may use English names, or the other way round), in any case and
// spacing, or by an alias, takes the document's own key; any other
// column is kept under its own name. It fails when no column is the NID.
func hcCSVColumns(name string, header []string) (keys []string, problems []string, err error) {
	own, other := hcvocab.DumpColumnsEN, hcvocab.DumpColumnsFR
	if name == hcFileFR {
		own, other = other, own
	}
	index := map[string]int{}
	for i := range own {
		index[rappel.FoldKey(other[i])] = i
		index[rappel.FoldKey(own[i])] = i
	}
	for alias, i := range hcCSVAliases {
		index[alias] = i
	}
	var unknown, renamed, dup []string
	taken := map[string]bool{}
	for c, h := range header {
		h = strings.TrimSpace(h)
		key := h
		if i, ok := index[rappel.FoldKey(h)]; ok {
			key = own[i]
			if h != key {
				renamed = append(renamed, fmt.Sprintf("%q as %q", h, key))
			}
		} else {
			if key == "" {
				key = fmt.Sprintf("column %d", c+1)
			}
			unknown = append(unknown, fmt.Sprintf("%q", key))
		}
		if taken[key] {
			dup = append(dup, fmt.Sprintf("%q", key))
			key = "" // not written: the first column of the name is kept
		}
		taken[key] = key != ""
		keys = append(keys, key)
	}
	if !taken[own[0]] {
		return nil, nil, fmt.Errorf("its header %q has no %s column, which keys the rows", truncateText(strings.Join(header, ","), 200), own[0])
	}
	var missing []string
	for _, k := range own {
		if !taken[k] {
			missing = append(missing, fmt.Sprintf("%q", k))
		}
	}
	if len(unknown)+len(renamed)+len(dup)+len(missing) > 0 {
		var parts []string
		for _, p := range []struct {
			what string
			list []string
		}{{"columns the dump is not known to have, kept under their names", unknown},
			{"columns read by another name", renamed}, {"columns repeated, the first kept", dup}, {"columns missing", missing}} {
			if len(p.list) > 0 {
				parts = append(parts, p.what+": "+strings.Join(p.list, ", "))
			}
		}
		problems = append(problems, fmt.Sprintf("its header is not the dump's (%s); the rows were read by their columns' names", strings.Join(parts, "; ")))
	}
	return keys, problems, nil
}

// hcCSVToJSON reads the dump's CSV form, standing in for the document
// name, into a JSON array of its rows as the JSON document writes them.
// What it cannot read as the dump writes it (another encoding or
// delimiter, an unknown header, a row of the wrong length, a broken
// quote) is a problem, each a sentence; a row that cannot be placed is
// skipped. It fails only when the document is not a CSV of the dump at
// all: empty, or without a NID column.
func hcCSVToJSON(name string, body []byte) (doc []byte, problems []string, err error) {
	body = skipBOM(body)
	if !utf8.Valid(body) {
		if dec, derr := charmap.Windows1252.NewDecoder().Bytes(body); derr == nil {
			body = dec
			problems = append(problems, "it is not UTF-8; it was read as Windows-1252")
		}
	}
	r := csv.NewReader(bytes.NewReader(body))
	r.FieldsPerRecord = -1
	if d := sniffDelimiter(body); d != ',' {
		r.Comma = d
		problems = append(problems, fmt.Sprintf("its fields are separated by %q, not commas", d))
	}
	header, err := r.Read()
	switch {
	case err == io.EOF:
		return nil, nil, errors.New("it is empty")
	case err != nil:
		return nil, nil, fmt.Errorf("its header cannot be read: %v", err)
	}
	keys, hp, err := hcCSVColumns(name, header)
	if err != nil {
		return nil, nil, err
	}
	problems = append(problems, hp...)
	var out bytes.Buffer
	out.WriteByte('[')
	rows, rowProblems := 0, 0
	report := func(s string) {
		rowProblems++
		if rowProblems <= maxCSVProblems {
			problems = append(problems, s)
		}
	}
	for n := 1; ; n++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		var perr *csv.ParseError
		switch {
		case err != nil && !errors.As(err, &perr):
			return nil, nil, err
		case err != nil && !errors.Is(err, csv.ErrFieldCount):
			report(fmt.Sprintf("record %d cannot be read (%v); it was skipped, and the lines it took with it", n, err))
			continue
		case len(rec) != len(keys):
			line := 0
			if len(rec) > 0 {
				line, _ = r.FieldPos(0) // only for a record read whole: FieldPos panics otherwise
			}
			report(fmt.Sprintf("record %d (line %d%s) has %d fields, the header %d; it was skipped", n, line, nidOf(keys, rec), len(rec), len(keys)))
			continue
		}
		if rows > 0 {
			out.WriteString(",\n")
		}
		writeCSVRow(&out, keys, rec)
		rows++
	}
	out.WriteString("]\n")
	if rowProblems > maxCSVProblems {
		problems = append(problems, fmt.Sprintf("and %d more records were skipped", rowProblems-maxCSVProblems))
	}
	return out.Bytes(), problems, nil
}

// nidOf names a record's NID, when its first-named column has one, for a
// problem.
func nidOf(keys, rec []string) string {
	for i, k := range keys {
		if k == hcvocab.DumpColumnsEN[0] && i < len(rec) && strings.TrimSpace(rec[i]) != "" {
			return ", NID " + truncateText(strings.TrimSpace(rec[i]), 20)
		}
	}
	return ""
}

// writeCSVRow writes one record as a JSON object of strings, its keys in
// the header's order.
func writeCSVRow(out *bytes.Buffer, keys, rec []string) {
	out.WriteByte('{')
	first := true
	for i, k := range keys {
		if k == "" {
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		out.Write(jsonstr.Append(out.AvailableBuffer(), k))
		out.WriteByte(':')
		out.Write(jsonstr.Append(out.AvailableBuffer(), rec[i]))
	}
	out.WriteByte('}')
}

// sniffDelimiter returns the delimiter of a CSV's header line: the comma,
// unless the line, outside quotes, holds none and holds semicolons or
// tabs (a spreadsheet's export).
func sniffDelimiter(body []byte) rune {
	counts := map[rune]int{}
	quoted := false
	for _, c := range string(body[:min(len(body), 4096)]) {
		if c == '"' {
			quoted = !quoted
		}
		if c == '\n' && !quoted {
			break
		}
		if !quoted {
			counts[c]++
		}
	}
	switch {
	case counts[','] > 0:
		return ','
	case counts[';'] > 0 && counts[';'] >= counts['\t']:
		return ';'
	case counts['\t'] > 0:
		return '\t'
	}
	return ','
}

// truncateText cuts s to n bytes at most, on a rune boundary, marking the
// cut.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
