// Package page normalizes the recall pages of recalls-rappels.canada.ca:
// one HTML page per notice and language, en/<NID>.html and fr/<NID>.html,
// in the site's current layout (since November 2021) or the legacy layout
// of the notices migrated from before. Each notice becomes one partial
// record, hc-<NID>, holding what only the page gives (products from its
// affected-products table, with their barcodes, lot codes and sizes; the
// details such as the recall date, the firms, the recall class and the
// CFIA reference; the background; images); the dump (package hcdump) gives
// the rest when the records are merged. Every section, label, table column
// or field the reader does not know is a problem naming it, never dropped
// in silence. testdata/FORMATS.md is the contract.
package page

import (
	"bytes"
	"cmp"
	"fmt"
	"io/fs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// Source names the source in problems: the pages are the detail source's
// documents, beside the old detail API's.
const Source = "detail"

// Site is what the pages' site-relative addresses (images, links) resolve
// against when a page names no address of its own.
const Site = "https://recalls-rappels.canada.ca/"

// Ext is the name ending of a page document.
const Ext = ".html"

// Normalize reads every en/<NID>.html and fr/<NID>.html in fsys, calls emit
// with one record per NID and report for every problem. It returns an error
// only when neither en/ nor fr/ exists or a directory cannot be listed, or
// emit fails. Records come out in NID order.
func Normalize(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
	docs, err := guest.NoticeFiles(fsys, Source, report, Ext)
	if err != nil {
		return err
	}
	for _, nid := range guest.SortedNIDs(docs) {
		if rec := Read(fsys, nid, docs[nid][Ext], report); rec != nil {
			if err := emit(rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// Read reads the pages of notice nid, files by language, into its record,
// or returns nil when no page could be read. Data fields come from the
// English page; the French one gives its translation, and the products
// only to a notice without an English page.
func Read(fsys fs.FS, nid string, files map[string]string, report func(rappel.Problem)) *rappel.Record {
	n := &notice{nid: nid, report: report}
	pages := map[string]*rappel.Record{}
	for _, lang := range rappel.Langs {
		file, ok := files[lang]
		if !ok {
			continue
		}
		b, err := fs.ReadFile(fsys, file)
		if err != nil {
			n.problem("%s was skipped: %v.", file, err)
			continue
		}
		if rec := n.read(b, lang, file); rec != nil {
			pages[lang] = rec
		}
	}
	en, fr := pages[rappel.LangEN], pages[rappel.LangFR]
	var rec *rappel.Record
	switch {
	case en != nil:
		rec = en
		if fr != nil {
			rec.Translations.FR = fr.Translations.FR
			rec.URLFr = cmp.Or(rec.URLFr, fr.URLFr)
			rec.URLEn = cmp.Or(rec.URLEn, fr.URLEn)
		}
	case fr != nil:
		rec = fr
	default:
		return nil
	}
	rec.RecordID, rec.RecallID = rappel.HealthRecordID(nid), nid
	return rec
}

// notice is the notice whose pages are read, for problems.
type notice struct {
	nid    string
	report func(rappel.Problem)
}

// problem reports a problem with the notice's record.
func (n *notice) problem(format string, args ...any) {
	n.report(rappel.Problem{Source: Source, RecordID: rappel.HealthRecordID(n.nid), Reason: fmt.Sprintf(format, args...)})
}

// read parses one page into the record it gives, or reports why it gives
// none.
func (n *notice) read(b []byte, lang, file string) *rappel.Record {
	root, err := parse(bytes.TrimPrefix(b, []byte("\ufeff")))
	if err != nil {
		n.problem("%s was skipped: it is not HTML (%v).", file, err)
		return nil
	}
	p := &reader{n: n, file: file, lang: lang, rec: &rappel.Record{}}
	main := find(root, isTag("main"))
	if main == nil {
		main = find(root, isTag("body"))
	}
	switch {
	case main == nil:
		n.problem("%s was skipped: it has no <main> or <body>; it is no recall page.", file)
		return nil
	case find(main, hasClass("recall-alert-body")) != nil:
		p.legacy(root, main)
	case find(main, hasClass("ar-section")) != nil:
		p.current(root, main)
	default:
		n.problem("%s was skipped: it holds neither the current layout's sections (ar-section) nor the legacy layout's body (recall-alert-body); it is no recall page, or a layout this normalizer does not know.", file)
		return nil
	}
	p.finish()
	return p.rec
}

// truncate shortens a value quoted in a problem (guest.Quoted).
func truncate(s string) string { return guest.Quoted(s, 60) }
