// Package detail normalizes Health Canada's recall detail documents: one JSON
// document per notice and language, en/<NID>.json and fr/<NID>.json, as the
// recalls site's detail API (/recall-alert-rappel-avis/api/<NID>/<lang>)
// answers them, and in the older shape of the project's first corpus. Each
// notice becomes one partial record, hc-<NID>, holding what only the detail
// gives (dates, products and UPCs, details such as the recalling firm,
// allergens, images); the dump (package hcdump) gives the rest when the
// records are merged. testdata/FORMATS.md is the contract for the formats
// and their mapping. A panel or key the normalizer does not know is reported,
// never dropped in silence.
package detail

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// Source names this normalizer in problems.
const Source = "detail"

// DefaultSite is the address the site-relative paths of a document (its
// images' "/recall-alert-rappel-avis/…/assets/….jpg") are resolved against
// when the document's own url is no absolute web address: the detail API
// answers from this site.
const DefaultSite = "https://healthycanadians.gc.ca/"

// Normalize reads every en/<NID>.json and fr/<NID>.json in fsys, calls emit
// with one record per NID and report for every problem with a document. It
// returns an error only when neither en/ nor fr/ exists or a directory cannot
// be listed, or emit fails. A document that is not a detail document is
// reported and skipped; its notice still loads from the other language.
// Records come out in NID order. Relative paths resolve against each
// document's url, else DefaultSite.
func Normalize(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
	return normalize(fsys, emit, report, defaultSite)
}

// NormalizeSite is Normalize resolving relative paths against site, an
// absolute http or https address, where a document's url is not one: for
// documents fetched from another host than DefaultSite.
func NormalizeSite(site string) (guest.Normalizer, error) {
	u, err := url.Parse(site)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("the site %q is no absolute http or https address, such as %s", site, DefaultSite)
	}
	return func(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem)) error {
		return normalize(fsys, emit, report, u)
	}, nil
}

// defaultSite is DefaultSite, parsed.
var defaultSite, _ = url.Parse(DefaultSite)

// normalize is Normalize with the site to resolve relative paths against.
func normalize(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem), site *url.URL) error {
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
		n := &notice{nid: nid, report: report, site: site}
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
