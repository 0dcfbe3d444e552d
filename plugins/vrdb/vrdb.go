// Package vrdb normalizes Transport Canada's vehicle recall database, a CSV
// file with one row per recall, model and model year. Rows are grouped by
// recall number into one record each, tc-<recall number>, which merges with
// the same recall's notice in the Health Canada dump (package hcdump).
// testdata/FORMATS.md is the contract for the format and its mapping.
package vrdb

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// Source names this normalizer in problems.
const Source = "vrdb"

// file is the database's name under the plugin's /in.
const file = "vrdb.csv"

// The columns the header must name, in the contract's order; the file may
// order them otherwise, since they are looked up by name.
const (
	colNumber = iota
	colYear
	colManufacturerNo
	colCategoryEN
	colCategoryFR
	colMake
	colModel
	colUnits
	colSystemEN
	colSystemFR
	colNotificationEN
	colNotificationFR
	colCommentEN
	colCommentFR
	colDate
	numCols
)

var columnNames = [numCols]string{
	"RECALL_NUMBER_NUM", "YEAR", "MANUFACTURER_RECALL_NO_TXT", "CATEGORY_ETXT", "CATEGORY_FTXT",
	"MAKE_NAME_NM", "MODEL_NAME_NM", "UNIT_AFFECTED_NBR", "SYSTEM_TYPE_ETXT", "SYSTEM_TYPE_FTXT",
	"NOTIFICATION_TYPE_ETXT", "NOTIFICATION_TYPE_FTXT", "COMMENT_ETXT", "COMMENT_FTXT", "RECALL_DATE_DTE",
}

// Normalize reads vrdb.csv from fsys, calls emit for every recall and report
// for every row it cannot read. It returns an error only when the file is
// missing or unreadable, or its header lacks a column, or emit fails. A bad
// row is skipped; its recall still loads from its other rows. Records come
// out in the order their recall first appears.
func Normalize(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
	f, err := fsys.Open(file)
	if err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	defer f.Close()
	cr := csv.NewReader(guest.SkipBOM(f))
	cr.FieldsPerRecord = -1 // a row with the wrong count is one problem, not the end of the file
	idx, width, err := readHeader(cr)
	if err != nil {
		return err
	}
	recalls := make(map[string]*recall)
	var order []string
	for {
		fields, err := cr.Read()
		if err == io.EOF {
			break
		}
		var perr *csv.ParseError
		if errors.As(err, &perr) {
			report(rappel.Problem{Source: Source, Reason: fmt.Sprintf("Line %d of %s was skipped: %v.", perr.StartLine, file, perr.Err)})
			continue
		} else if err != nil {
			return fmt.Errorf("reading %s: %w", file, err)
		}
		line, _ := cr.FieldPos(0)
		if len(fields) != width {
			id := ""
			if i := idx[colNumber]; i < len(fields) {
				id = idOf(guest.CleanText(fields[i]))
			}
			report(rappel.Problem{Source: Source, RecordID: id, Reason: fmt.Sprintf("Line %d of %s was skipped: it has %d fields where the header has %d.", line, file, len(fields), width)})
			continue
		}
		var row [numCols]string
		for c, i := range idx {
			row[c] = guest.CleanText(fields[i])
		}
		r, reason := parseRow(row)
		if reason != "" {
			report(rappel.Problem{Source: Source, RecordID: idOf(row[colNumber]), Reason: fmt.Sprintf("Line %d of %s was skipped: %s.", line, file, reason)})
			continue
		}
		g := recalls[r.number]
		if g == nil {
			g = &recall{number: r.number}
			recalls[r.number] = g
			order = append(order, r.number)
		}
		g.add(r)
	}
	for _, n := range order {
		if err := emit(recalls[n].record()); err != nil {
			return err
		}
	}
	return nil
}

// readHeader checks the header row and returns, for each column, its
// position in the file, and the number of fields every row must have.
func readHeader(cr *csv.Reader) (idx [numCols]int, width int, err error) {
	header, err := cr.Read()
	switch {
	case err == io.EOF:
		return idx, 0, fmt.Errorf("reading %s: the file is empty; it should start with the header row %s", file, strings.Join(columnNames[:], ","))
	case err != nil:
		return idx, 0, fmt.Errorf("reading %s header: %w", file, err)
	}
	pos := make(map[string]int, len(header))
	for i, h := range header {
		h = strings.ToUpper(guest.CleanText(h))
		if _, dup := pos[h]; dup {
			return idx, 0, fmt.Errorf("reading %s: the header names column %s twice", file, h)
		}
		pos[h] = i
	}
	var missing []string
	for c, name := range columnNames {
		i, ok := pos[name]
		if !ok {
			missing = append(missing, name)
		}
		idx[c] = i
	}
	if len(missing) > 0 {
		return idx, 0, fmt.Errorf("reading %s: the header lacks %s; it should be %s", file, strings.Join(missing, ", "), strings.Join(columnNames[:], ","))
	}
	return idx, len(header), nil
}

// idOf names the record a bad row belongs to, when its recall number is good.
func idOf(number string) string {
	if !guest.IsNumber(number) {
		return ""
	}
	return "tc-" + number
}
