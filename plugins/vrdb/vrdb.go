// Package vrdb normalizes Transport Canada's vehicle recall database, a CSV
// file with one row per recall, category, model and model year. Rows are
// grouped by recall number into one record each, tc-<recall number>, which
// merges with the same recall's notice in the Health Canada dump (package
// hcdump). testdata/FORMATS.md is the contract for the format and its
// mapping.
package vrdb

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// Source names this normalizer in problems.
const Source = "vrdb"

// file is the database's name under the plugin's /in.
const file = "vrdb.csv"

// The columns the normalizer reads, found by their header name wherever the
// file puts them. The first numRequired are those of every export, the
// monthly full file's set; the daily extract adds the last two.
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
	colLastUpdate
	colManufacturer
	numCols
)

// numRequired is the number of columns a header must name.
const numRequired = colLastUpdate

// The header names of the columns, as Transport Canada's export spells
// them. A plugin for a file whose columns are named otherwise maps its
// names to these with NormalizeWith.
const (
	ColumnRecallNumber       = "RECALL_NUMBER_NUM"
	ColumnYear               = "YEAR"
	ColumnManufacturerNumber = "MANUFACTURER_RECALL_NO_TXT"
	ColumnCategoryEN         = "CATEGORY_ETXT"
	ColumnCategoryFR         = "CATEGORY_FTXT"
	ColumnMake               = "MAKE_NAME_NM"
	ColumnModel              = "MODEL_NAME_NM"
	ColumnUnits              = "UNIT_AFFECTED_NBR"
	ColumnSystemEN           = "SYSTEM_TYPE_ETXT"
	ColumnSystemFR           = "SYSTEM_TYPE_FTXT"
	ColumnNotificationEN     = "NOTIFICATION_TYPE_ETXT"
	ColumnNotificationFR     = "NOTIFICATION_TYPE_FTXT"
	ColumnCommentEN          = "COMMENT_ETXT"
	ColumnCommentFR          = "COMMENT_FTXT"
	ColumnRecallDate         = "RECALL_DATE_DTE"
	ColumnLastUpdate         = "LAST_UPDATE_DATE"
	ColumnManufacturer       = "MANUFACTURER_NAME_NM"
)

var columnNames = [numCols]string{
	ColumnRecallNumber, ColumnYear, ColumnManufacturerNumber, ColumnCategoryEN, ColumnCategoryFR,
	ColumnMake, ColumnModel, ColumnUnits, ColumnSystemEN, ColumnSystemFR,
	ColumnNotificationEN, ColumnNotificationFR, ColumnCommentEN, ColumnCommentFR, ColumnRecallDate,
	ColumnLastUpdate, ColumnManufacturer,
}

// Aliases maps header names a file uses to the columns they stand for
// (the Column constants), for a file whose header renames columns:
// Aliases{"RECALL_NO": vrdb.ColumnRecallNumber}. Names are compared in
// upper case.
type Aliases map[string]string

// NormalizeWith returns Normalize reading a header whose columns may also
// be named by aliases. It is how a plugin wraps this normalizer for a file
// with renamed columns, in one line:
//
//	guest.Main(vrdb.NormalizeWith(vrdb.Aliases{"RECALL_NO": vrdb.ColumnRecallNumber}))
func NormalizeWith(aliases Aliases) guest.Normalizer {
	return func(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
		return normalize(fsys, aliases, emit, report)
	}
}

// Normalize reads vrdb.csv from fsys, calls emit for every recall and report
// for every row, or value of a row, it cannot use. It returns an error only
// when the file is missing or unreadable, or its header lacks a column, or
// emit fails. A row that cannot be used is skipped and its recall still
// loads from its other rows; a recall is dropped only when none of its rows
// can be used. Records come out in the order their recall first appears.
func Normalize(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
	return normalize(fsys, nil, emit, report)
}

func normalize(fsys fs.FS, aliases Aliases, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
	canon, err := aliases.canonical()
	if err != nil {
		return err
	}
	f, err := fsys.Open(file)
	if err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	defer f.Close()
	cr := csv.NewReader(guest.SkipBOM(f))
	cr.FieldsPerRecord = -1 // a row with the wrong count is one problem, not the end of the file
	h, err := readHeader(cr, canon)
	if err != nil {
		return err
	}
	if len(h.unknown) > 0 {
		report(rappel.Problem{Source: Source, Reason: fmt.Sprintf("The header of %s names %s, which this normalizer does not know; %s ignored.",
			file, plural(len(h.unknown), "column", "columns")+" "+strings.Join(h.unknown, ", "), plural(len(h.unknown), "its values were", "their values were"))})
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
		if len(fields) != h.width {
			id := ""
			if i := h.idx[colNumber]; i < len(fields) {
				id = idOf(guest.CleanText(fields[i]))
			}
			report(rappel.Problem{Source: Source, RecordID: id, Reason: fmt.Sprintf("Line %d of %s was skipped: it has %d fields where the header has %d.", line, file, len(fields), h.width)})
			continue
		}
		var col [numCols]string
		for c, i := range h.idx {
			if i >= 0 {
				col[c] = guest.CleanText(fields[i])
			}
		}
		r, skip, unused := parseRow(col)
		if skip != "" {
			report(rappel.Problem{Source: Source, RecordID: idOf(col[colNumber]), Reason: fmt.Sprintf("Line %d of %s was skipped: %s.", line, file, skip)})
			continue
		}
		for _, u := range unused {
			report(rappel.Problem{Source: Source, RecordID: idOf(r.number), Reason: fmt.Sprintf("Line %d of %s: %s; the row was used without it.", line, file, u)})
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
		rec := recalls[n].record()
		if rec.Translations.EN == nil && rec.Translations.FR == nil {
			report(rappel.Problem{Source: Source, RecordID: rec.RecordID, Reason: fmt.Sprintf("Recall %s was dropped: none of its rows gives a make, category, system, notification type or comment to describe it.", n)})
			continue
		}
		if err := emit(rec); err != nil {
			return err
		}
	}
	return nil
}

// header is what the header row says: each column's position in the file
// (-1 for an optional column it lacks), the number of fields every row must
// have, and the names it gives that no column of columnNames has.
type header struct {
	idx     [numCols]int
	width   int
	unknown []string
}

// canonical is the aliases in upper case, checked: each must name a
// column.
func (a Aliases) canonical() (map[string]string, error) {
	canon := make(map[string]string, len(a))
	for alias, col := range a {
		col = strings.ToUpper(col)
		if !slices.Contains(columnNames[:], col) {
			return nil, fmt.Errorf("the alias %s names column %s, which %s does not have; give one of %s", alias, col, file, strings.Join(columnNames[:], ", "))
		}
		canon[strings.ToUpper(alias)] = col
	}
	return canon, nil
}

// headerName is the column a header cell names, through aliases.
func headerName(cell string, aliases map[string]string) string {
	name := strings.ToUpper(guest.CleanText(cell))
	if col, ok := aliases[name]; ok {
		return col
	}
	return name
}

// readHeader reads and checks the header row, whose cells may name
// columns through aliases.
func readHeader(cr *csv.Reader, aliases map[string]string) (header, error) {
	var h header
	row, err := cr.Read()
	switch {
	case err == io.EOF:
		return h, fmt.Errorf("reading %s: the file is empty; it should start with the header row %s", file, strings.Join(columnNames[:numRequired], ","))
	case err != nil:
		return h, fmt.Errorf("reading %s header: %w", file, err)
	}
	pos := make(map[string]int, len(row))
	for i, cell := range row {
		name := headerName(cell, aliases)
		if _, dup := pos[name]; dup {
			return h, fmt.Errorf("reading %s: the header names column %s twice", file, name)
		}
		pos[name] = i
	}
	var missing []string
	for c, name := range columnNames {
		i, ok := pos[name]
		switch {
		case ok:
			delete(pos, name)
		case c < numRequired:
			missing = append(missing, name)
		default:
			i = -1
		}
		h.idx[c] = i
	}
	if len(missing) > 0 {
		return h, fmt.Errorf("reading %s: the header lacks %s; it should name %s, and may name %s", file, strings.Join(missing, ", "),
			strings.Join(columnNames[:numRequired], ","), strings.Join(columnNames[numRequired:], " and "))
	}
	for i, cell := range row { // the names left in pos are unknown
		name := headerName(cell, aliases)
		if _, left := pos[name]; !left {
			continue
		}
		if name == "" {
			name = fmt.Sprintf("an unnamed column at position %d", i+1)
		}
		h.unknown = append(h.unknown, name)
	}
	h.width = len(row)
	return h, nil
}

// plural returns one when n is 1, otherwise many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// idOf names the record a bad row belongs to, when its recall number is good.
func idOf(number string) string {
	if !guest.IsNumber(number) {
		return ""
	}
	return rappel.TransportRecordID(number)
}
