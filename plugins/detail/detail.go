// Package detail normalizes Health Canada's recall detail documents: one JSON
// document per notice and language, en/<NID>.json and fr/<NID>.json, as the
// recalls site's detail API (/recall-alert-rappel-avis/api/<NID>/<lang>)
// answers them, and in the older shape of the project's first corpus; and,
// through package page, the recall pages en/<NID>.html and fr/<NID>.html
// that replaced that API in November 2021. Each
// notice becomes one partial record, hc-<NID>, holding what only the detail
// gives (dates, products and UPCs, details such as the recalling firm,
// allergens, images); the dump (package hcdump) gives the rest when the
// records are merged. testdata/FORMATS.md is the contract for the formats
// and their mapping. A panel or key the normalizer does not know is reported,
// never dropped in silence.
package detail

import (
	"fmt"
	"io/fs"
	"net/url"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
	"github.com/rappel-ca/rappel/plugins/page"
)

// Source names this normalizer in problems.
const Source = "detail"

// DefaultSite is the address the site-relative paths of a document (its
// images' "/recall-alert-rappel-avis/…/assets/….jpg") are resolved against
// when the document's own url is no absolute web address: the detail API
// answers from this site.
const DefaultSite = "https://healthycanadians.gc.ca/"

// Normalize reads every en/<NID>.json and fr/<NID>.json in fsys, and every
// recall page en/<NID>.html and fr/<NID>.html (package page), calls emit
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
// A notice with recall pages (<NID>.html, package page) is read from them,
// and from its detail documents where it has both, which fill what the
// pages lack.
func normalize(fsys fs.FS, emit func(*rappel.Record) error, report func(rappel.Problem), site *url.URL) error {
	docs, err := guest.NoticeFiles(fsys, Source, report, ".json", page.Ext)
	if err != nil {
		return err
	}
	for _, nid := range guest.SortedNIDs(docs) {
		var rec *rappel.Record
		if pages := docs[nid][page.Ext]; pages != nil {
			rec = page.Read(fsys, nid, pages, report)
		}
		if files := docs[nid][".json"]; files != nil {
			n := &notice{nid: nid, report: report, site: site}
			for _, lang := range rappel.Langs {
				if name, ok := files[lang]; ok {
					n.read(fsys, lang, name)
				}
			}
			if old := n.record(); rec == nil {
				rec = old
			} else if old != nil {
				rappel.Merge(rec, old)
			}
		}
		if rec != nil {
			if err := emit(rec); err != nil {
				return err
			}
		}
	}
	return nil
}
