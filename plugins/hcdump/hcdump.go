// Package hcdump normalizes Health Canada's recalls open-data dump: a JSON
// array of notices in English (recalls-en.json) and its French twin
// (recalls-fr.json), joined on NID. testdata/FORMATS.md is the contract for
// both the format and its mapping to records.
//
// The dump has been published in two vocabularies (organizations' full
// names or short ones, Archived "No"/"Yes" or "0"/"1", category paths
// joined by ", " or leaves joined by " - "); rappel's dump vocabulary reads
// both, and a row in either becomes the same record. Transport Canada
// notices in the dump become tc-<recall number> records, the number read
// from their URL or title (rappel.TransportRecallNumber), so that they merge
// with the vehicle recall database's rows (package vrdb) into one record;
// all other notices become hc-<NID> records, which merge with the detail
// documents (package detail). Besides its fields, a row's Issue labels give
// the allergens and hazard type they name ("Egg - Soy - Milk"), or its
// title the allergens it calls undeclared; its Category the categories it
// joins; its URL, absolute or relative, an absolute address; and its advice
// gets back the paragraph breaks the dump lost.
package hcdump

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/rappel-ca/rappel"
)

// Source names this normalizer in problems.
const Source = "hcdump"

// The dump's file names under the plugin's /in.
const (
	fileEN = "recalls-en.json"
	fileFR = "recalls-fr.json"
)

// Normalize reads the dump from fsys, calls emit for every record and report
// for every record-level problem. It returns an error only when the input as
// a whole is unusable: recalls-en.json missing or not a JSON array, or an
// error from emit. Rows that cannot be read are reported and skipped; a file
// cut off part way still yields the rows before the break.
//
// Every English row becomes a record, with its French twin's text when there
// is one; a French row without an English twin becomes a French-only record.
func Normalize(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
	fr, err := readFrench(fsys, report)
	if err != nil {
		return err
	}
	seen := make(map[string]bool)
	err = readRows(fsys, langEN, report, func(en *notice) error {
		if seen[en.nid] {
			report(rappel.Problem{Source: Source, RecordID: rappel.HealthRecordID(en.nid), Reason: fmt.Sprintf("Row %d of %s repeats NID %s; it was skipped and the first row kept.", en.row, fileEN, en.nid)})
			return nil
		}
		seen[en.nid] = true
		return build(en, fr.take(en.nid), emit, report)
	})
	if err != nil {
		return err
	}
	for _, n := range fr.order {
		if row := fr.take(n); row != nil {
			if err := build(nil, row, emit, report); err != nil {
				return err
			}
		}
	}
	return nil
}

// french holds the French rows by NID until their English twins claim them;
// those left over become French-only records, in file order.
type french struct {
	rows  map[string]*notice
	order []string
}

// take returns the French row of nid, once.
func (f *french) take(nid string) *notice {
	n := f.rows[nid]
	delete(f.rows, nid)
	return n
}

// readFrench reads the optional French file. Unlike the English one, a French
// file that is not a JSON array only costs the French text, so it is a
// problem, not an error.
func readFrench(fsys fs.FS, report func(rappel.Problem)) (*french, error) {
	fr := &french{rows: make(map[string]*notice)}
	err := readRows(fsys, langFR, report, func(n *notice) error {
		if _, dup := fr.rows[n.nid]; dup {
			report(rappel.Problem{Source: Source, RecordID: rappel.HealthRecordID(n.nid), Reason: fmt.Sprintf("Row %d of %s repeats NID %s; it was skipped and the first row kept.", n.row, fileFR, n.nid)})
			return nil
		}
		fr.rows[n.nid] = n
		fr.order = append(fr.order, n.nid)
		return nil
	})
	var notArray *notArrayError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fr, nil
	case errors.As(err, &notArray):
		report(rappel.Problem{Source: Source, Reason: fmt.Sprintf("The French file was ignored, so every record is English only: %v.", err)})
		return fr, nil
	}
	return fr, err
}

// build makes the record of one notice from its English and French rows
// (either may be nil) and emits it, or reports why it cannot.
func build(en, fr *notice, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
	rec, problems, skip := newRecord(en, fr)
	if skip != "" {
		primary := en
		if primary == nil {
			primary = fr
		}
		report(rappel.Problem{Source: Source, RecordID: rappel.HealthRecordID(primary.nid), Reason: skip})
		return nil
	}
	for _, p := range problems {
		report(rappel.Problem{Source: Source, RecordID: rec.RecordID, Reason: p})
	}
	return emit(rec)
}
