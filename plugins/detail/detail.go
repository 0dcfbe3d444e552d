// Package detail normalizes Health Canada's recall detail documents: one JSON
// document per notice and language, en/<NID>.json and fr/<NID>.json, in the
// old recalls API's detail shape. Each notice becomes one partial record,
// hc-<NID>, holding what only the detail gives (dates, products and UPCs,
// details such as the recalling firm, allergens, images); the dump (package
// hcdump) gives the rest when the records are merged. testdata/FORMATS.md is
// the contract for the format and its mapping.
package detail

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// Source names this normalizer in problems.
const Source = "detail"

// Normalize reads every en/<NID>.json and fr/<NID>.json in fsys, calls emit
// with one record per NID and report for every problem with a document. It
// returns an error only when neither en/ nor fr/ exists or a directory cannot
// be listed, or emit fails. A document that is not a detail document is
// reported and skipped; its notice still loads from the other language.
// Records come out in NID order.
func Normalize(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
	docs, err := list(fsys, report)
	if err != nil {
		return err
	}
	nids := make([]string, 0, len(docs))
	for nid := range docs {
		nids = append(nids, nid)
	}
	// NIDs are digits: shorter is smaller, which sorts them as numbers.
	slices.SortFunc(nids, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b)) })
	for _, nid := range nids {
		n := &notice{nid: nid, report: report}
		for _, lang := range rappel.Langs {
			if name, ok := docs[nid][lang]; ok {
				n.read(fsys, lang, name)
			}
		}
		if rec := n.record(); rec != nil {
			if err := emit(rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// list returns the document file names by NID and language.
func list(fsys fs.FS, report func(rappel.Problem)) (map[string]map[string]string, error) {
	docs := make(map[string]map[string]string)
	found := 0
	for _, lang := range rappel.Langs {
		entries, err := fs.ReadDir(fsys, lang)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("reading %s/: %w", lang, err)
		}
		found++
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".json") {
				continue // not a document; nothing the contract puts here
			}
			nid := strings.TrimSuffix(name, ".json")
			file := path.Join(lang, name)
			if !guest.IsNumber(nid) {
				report(rappel.Problem{Source: Source, Reason: fmt.Sprintf("%s was skipped: a document is named after its notice's NID, a number.", file)})
				continue
			}
			if docs[nid] == nil {
				docs[nid] = make(map[string]string, 2)
			}
			docs[nid][lang] = file
		}
	}
	if found == 0 {
		return nil, fmt.Errorf("reading documents: neither en/ nor fr/ exists: %w", fs.ErrNotExist)
	}
	return docs, nil
}
