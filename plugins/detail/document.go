package detail

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// document is a detail document as published. The fields that upstream
// writes as a number in one place and a string in another are kept raw and
// read leniently.
type document struct {
	URL           string          `json:"url"`
	RecallID      json.RawMessage `json:"recallId"`
	Title         string          `json:"title"`
	StartDate     json.RawMessage `json:"start_date"`
	DatePublished json.RawMessage `json:"date_published"`
	Category      categoryList    `json:"category"`
	Panels        []panel         `json:"panels"`
}

// panel is one element of a document's panels. Text is HTML, and null in
// panels that only carry data (images).
type panel struct {
	Name  string          `json:"panelName"`
	Title string          `json:"title"`
	Text  string          `json:"text"`
	Data  json.RawMessage `json:"data"`

	kv     []pair // Text's key/value lines, once read
	kvRead bool
}

// pairs returns the panel's key/value lines. They are read once: the
// hazard, the categories and the details all look at the same panels, and
// reading lines is the normalizer's hottest loop.
func (p *panel) pairs() []pair {
	if !p.kvRead {
		p.kv, p.kvRead = pairs(p.Text), true
	}
	return p.kv
}

// notice gathers the documents of one NID.
type notice struct {
	nid    string
	report func(rappel.Problem)
	site   *url.URL             // what relative paths resolve against, when a document's url cannot be
	docs   map[string]*document // by language
	files  map[string]string    // file name by language, for problems
}

// problem reports a problem with the notice's record.
func (n *notice) problem(format string, args ...any) {
	n.report(rappel.Problem{Source: Source, RecordID: rappel.HealthRecordID(n.nid), Reason: fmt.Sprintf(format, args...)})
}

// read decodes the notice's document in lang, or reports why it cannot.
func (n *notice) read(fsys fs.FS, lang, file string) {
	b, err := fs.ReadFile(fsys, file)
	if err != nil {
		n.problem("%s was skipped: %v.", file, err)
		return
	}
	var d document
	if err := json.Unmarshal(bytes.TrimPrefix(b, []byte("\ufeff")), &d); err != nil {
		n.problem("%s was skipped: %s.", file, decodeReason(err))
		return
	}
	if n.docs == nil {
		n.docs = make(map[string]*document, 2)
		n.files = make(map[string]string, 2)
	}
	n.docs[lang], n.files[lang] = &d, file
	n.checkPanels(&d, file)
}

// decodeReason says in words why a document did not decode.
func decodeReason(err error) string {
	var typ *json.UnmarshalTypeError
	var syn *json.SyntaxError
	var shape *shapeError
	switch {
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Sprintf("it is a JSON %s, not an object", typ.Value)
	case errors.As(err, &typ):
		return fmt.Sprintf("its %s is a JSON %s, not %s", typ.Field, typ.Value, kindName(typ.Type))
	case errors.As(err, &syn):
		return fmt.Sprintf("it is not JSON (%v at byte %d)", syn, syn.Offset)
	case errors.As(err, &shape):
		return shape.reason
	}
	return fmt.Sprintf("it is not a detail document (%v)", err)
}

// kindName names a Go type as the JSON it decodes from.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}

// record makes the notice's record, or returns nil when no document could
// be read. Data fields come from the English document only, as the contract
// says: the French one carries French text and, at most, the same dates,
// and its products only when there is no English document.
func (n *notice) record() *rappel.Record {
	if len(n.docs) == 0 {
		return nil
	}
	en, fr := n.docs[rappel.LangEN], n.docs[rappel.LangFR]
	rec := &rappel.Record{RecordID: rappel.HealthRecordID(n.nid)}
	for _, lang := range rappel.Langs {
		d := n.docs[lang]
		if d == nil {
			continue
		}
		file := n.files[lang]
		if rec.RecallID == "" {
			rec.RecallID = n.recallID(d, file)
		}
		if rec.EventDate == "" {
			rec.EventDate = n.date(d.StartDate, file, "start_date", "event_date")
		}
		if rec.RecallDate == "" {
			rec.RecallDate = n.date(d.DatePublished, file, "date_published", "recall_date")
		}
	}
	if rec.RecallID == "" {
		rec.RecallID = n.nid // the document is the notice it is named after
	}
	rec.Translations.EN = translation(en)
	rec.Translations.FR = translation(fr)
	if en != nil {
		file := n.files[rappel.LangEN]
		rec.Categories, rec.RecallType = n.categories(en, file)
		n.keyValues(rec, en, file)
		var firms firms
		rec.ProductList, firms = n.products(en, file)
		firms.fill(rec)
		rec.Images, rec.ImageURL = n.images(en, file)
	} else if fr != nil {
		// A notice with only its French document: its product table,
		// under French headers (Produit, CUP), is the only one there is,
		// and the firms it names are the same in either language.
		var firms firms
		rec.ProductList, firms = n.products(fr, n.files[rappel.LangFR])
		firms.fill(rec)
	}
	return rec
}

// recallID reads recallId, a string or a number, or reports it and returns "".
func (n *notice) recallID(d *document, file string) string {
	raw := bytes.TrimSpace(d.RecallID)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return guest.CleanText(s)
	}
	var num json.Number
	if err := json.Unmarshal(raw, &num); err == nil {
		return num.String()
	}
	n.problem("The recallId of %s is neither a string nor a number; the NID was used as recall_id.", file)
	return ""
}

// maxUnix is 9999-12-31T23:59:59Z, the last second a YYYY-MM-DD date can
// hold.
const maxUnix = 253402300799

// date reads a Unix time in seconds, a JSON number or a string of one, as
// a UTC date, or reports it and returns "".
func (n *notice) date(raw json.RawMessage, file, name, field string) string {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return ""
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if json.Unmarshal(raw, &str) == nil {
			s = strings.TrimSpace(str)
			if s == "" {
				return ""
			}
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f <= 0 || f > maxUnix {
		n.problem("The %s of %s, %s, is not a Unix time in seconds; %s was left out.", name, file, truncate(s), field)
		return ""
	}
	return time.Unix(int64(f), 0).UTC().Format(time.DateOnly)
}

// truncate shortens a value quoted in a problem (guest.Quoted).
func truncate(s string) string { return guest.Quoted(s, 60) }

// translation is a document's text: title, hazard, what to do, the
// products affected.
func translation(d *document) *rappel.Translation {
	if d == nil {
		return nil
	}
	t := rappel.Translation{
		Title:              guest.CleanText(d.Title),
		HazardDescription:  d.hazard(),
		WhatToDo:           d.firstText(whatToDoPanels...),
		ProductDescription: d.firstText(affectedPanels...),
	}
	if t == (rappel.Translation{}) {
		return nil
	}
	return &t
}

// panel returns the document's first panel named name, or nil.
func (d *document) panel(name string) *panel {
	for i := range d.Panels {
		if panelName(d.Panels[i].Name) == name {
			return &d.Panels[i]
		}
	}
	return nil
}

// firstText returns the cleaned text of the first of names whose panel has
// text, or "".
func (d *document) firstText(names ...string) string {
	for _, name := range names {
		if p := d.panel(name); p != nil {
			if t := guest.CleanText(p.Text); t != "" {
				return t
			}
		}
	}
	return ""
}
