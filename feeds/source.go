package feeds

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Source is one upstream feed and the plugin that normalizes it, by name.
type Source struct {
	// Name is the source's name: its plugin's, and the prefix of its keys
	// in the store (hcdump, vrdb, detail).
	Name string
	// Docs are the documents fetched whole at every refresh, each by its
	// name under the plugin's /in.
	Docs []Doc
	// Template, for a source fetched per record of another source, is the
	// URL of one document with {id} and {lang} in it; Follows names the
	// source whose records say which documents there are.
	Template string
	Follows  string
	// Page, for the detail source, is the URL template of a notice's
	// recall page, with {id} and {lang}; PageFrom is the first NID whose
	// page is tried before the documents at Template (pages.go). An empty
	// Page reads no pages.
	Page     string
	PageFrom int
	// Enriches is set for a source whose records only add to records the
	// others create: a record left with partials of such sources only is
	// removed.
	Enriches bool
	// Interval, when set, is the least time between two refreshes of the
	// source: a refresh sooner after its last success leaves it alone
	// (unless its plugin changed).
	Interval time.Duration
	// Budget, when set, caps the bytes one refresh of the source fetches,
	// its documents' after decompression added up: a refresh past it
	// fails, and the source keeps its last good data. Each document's own
	// cap (Doc.MaxBytes) still holds.
	Budget int64

	format format
}

// Doc is one upstream document of a source.
type Doc struct {
	// Name is the document's name under the plugin's /in.
	Name string
	URL  string
	// Format, when set (FormatJSON...), fails a fetch whose body is plainly
	// not in it, such as an HTML error page, before the plugin runs.
	Format string
	// MaxBytes, when set, caps the document's size after decompression
	// instead of the Fetcher's MaxBody.
	MaxBytes int64
	// FromManifest marks a document a plugin's manifest names, not the
	// operator: it is fetched under the address and redirect rules of
	// Fetcher.GetManifest.
	FromManifest bool
	// Unconditional fetches the document without the last fetch's
	// validators (ETag, Last-Modified), for an upstream whose validators
	// cannot be trusted; an unchanged body still costs no parsing.
	Unconditional bool
	// Fallback, when set, is the same document in another form (the
	// dump's CSV beside its JSON), read in its place when it does not
	// parse. It is fetched only then, and again, conditionally, at the
	// refreshes after one that read it, until the document parses again.
	Fallback *Doc
	// Every, when set on the base of a source with an overlay, is the
	// least time between two fetches of the document: a refresh sooner
	// after the last one takes it as not modified, and the source's stored
	// raw records stand in for it.
	Every time.Duration
	// Overlay marks the document that overlays the source's other one
	// (its base), in the same format: its raw records replace the base's
	// of the same key, and the base's others stay. One that cannot be
	// fetched or read is a problem of the refresh, not its failure: the
	// source then keeps its stored raw records where the base has none
	// (overlay.go; RATIONALE.md, "Why are the vehicle recalls the monthly
	// file overlaid by the daily extract?").
	Overlay bool
}

// Default upstream URLs. Health Canada publishes the recalls and safety
// alerts database as open data, updated daily, in an English and a French
// file (HCRSAMOpenData.json is the published English JSON; the French
// JSON's name follows its published CSV twin, SCRSAMDonneesOuvertes.csv,
// and could not be checked from the build machines); Transport Canada
// publishes the vehicle recall database as a CSV; the recalls API serves
// one detail document per notice and language, in the shape
// testdata/FORMATS.md describes.
const (
	DefaultHCDumpEN = "https://recalls-rappels.canada.ca/sites/default/files/opendata-donneesouvertes/HCRSAMOpenData.json"
	DefaultHCDumpFR = "https://recalls-rappels.canada.ca/sites/default/files/opendata-donneesouvertes/SCRSAMDonneesOuvertes.json"
	// The dump's CSV forms, read when its JSON does not parse: beside
	// the JSON (CSVBeside), same columns.
	DefaultHCDumpENCSV = "https://recalls-rappels.canada.ca/sites/default/files/opendata-donneesouvertes/HCRSAMOpenData.csv"
	DefaultHCDumpFRCSV = "https://recalls-rappels.canada.ca/sites/default/files/opendata-donneesouvertes/SCRSAMDonneesOuvertes.csv"
	DefaultVRDB        = "https://opendatatc.tc.canada.ca/vrdb_full_monthly.csv"
	DefaultVRDBDaily   = "https://opendatatc.tc.canada.ca/vrdb_60days_daily.csv"
	DefaultDetail      = "https://healthycanadians.gc.ca/recall-alert-rappel-avis/api/{id}/{lang}"
)

// HCDump is Health Canada's recalls dump, in English and French, each
// JSON with the CSV beside it (CSVBeside) as its fallback.
func HCDump(en, fr string) *Source {
	return HCDumpWithCSV(en, fr, CSVBeside(en), CSVBeside(fr))
}

// HCDumpWithCSV is Health Canada's recalls dump, in English and French,
// with the CSV forms read when the JSON does not parse at enCSV and frCSV
// ("" for none).
func HCDumpWithCSV(en, fr, enCSV, frCSV string) *Source {
	doc := func(name, u, fallback string) Doc {
		d := Doc{Name: name, URL: u}
		if fallback != "" {
			d.Fallback = &Doc{Name: strings.TrimSuffix(name, ".json") + ".csv", URL: fallback, Format: FormatCSV}
		}
		return d
	}
	return &Source{Name: "hcdump", Docs: []Doc{doc(hcFileEN, en, enCSV), doc(hcFileFR, fr, frCSV)}, format: hcdumpFormat{}}
}

// CSVBeside returns the address of the CSV published beside the JSON at
// u: the same, its path's .json made .csv (HCRSAMOpenData.json,
// HCRSAMOpenData.csv); "" when u's path does not end in .json.
func CSVBeside(u string) string {
	p, err := url.Parse(u)
	if err != nil || !strings.HasSuffix(strings.ToLower(p.Path), ".json") {
		return ""
	}
	p.Path = p.Path[:len(p.Path)-len(".json")] + ".csv"
	p.RawPath = ""
	return p.String()
}

// VRDB is Transport Canada's vehicle recall database.
func VRDB(u string) *Source {
	return &Source{Name: "vrdb", Docs: []Doc{{Name: vrdbFile, URL: u}}, format: vrdbFormat{}}
}

// DefaultVRDBFullEvery is how often VRDBDaily fetches the full file by
// default: the agency publishes it monthly, and the daily extract brings
// what is new in between.
const DefaultVRDBFullEvery = 24 * time.Hour

// VRDBDaily is Transport Canada's vehicle recall database from its full
// file (full, fetched at most every fullEvery) overlaid by its 60-day
// extract (daily, fetched at every refresh), merged by recall number: a
// recall the daily extract has is served from its rows. Without daily it
// is VRDB(full).
func VRDBDaily(full, daily string, fullEvery time.Duration) *Source {
	src := VRDB(full)
	if daily != "" {
		src.Docs[0].Every = fullEvery
		src.Docs = append(src.Docs, Doc{Name: vrdbDailyFile, URL: daily, Overlay: true})
	}
	return src
}

// Detail is the recall detail documents of the notices in the dump (every
// notice but Transport Canada's), fetched from template with {id} the
// notice's NID and {lang} en or fr. It reads no recall pages: DetailPages
// does.
func Detail(template string) *Source {
	return &Source{Name: "detail", Template: template, Follows: "hcdump", Enriches: true, format: detailFormat{}}
}

// DetailPages is Detail reading the notices' recall pages too: at the
// dump's URL when that is on page's site, else at page (a template with
// {id} and {lang}, such as PageTemplate's), first for the notices from NID
// from on, and for the older ones whose documents at template are not
// there (pages.go).
func DetailPages(template, page string, from int) *Source {
	s := Detail(template)
	s.Page, s.PageFrom = page, from
	return s
}

// Validate reports the first setting of s that cannot work.
func (s *Source) Validate() error {
	switch {
	case s.Name == "" || strings.ContainsAny(s.Name, "/\x00"):
		return fmt.Errorf("source name %q is empty or holds a slash", s.Name)
	case s.format == nil:
		return fmt.Errorf("source %s: no format; make sources with HCDump, VRDB, Detail or Whole", s.Name)
	case s.Template != "":
		if !strings.Contains(s.Template, "{id}") || !strings.Contains(s.Template, "{lang}") {
			return fmt.Errorf("source %s: the URL template %q must hold {id} and {lang}", s.Name, s.Template)
		}
		if err := checkURL(s.Name, strings.NewReplacer("{id}", "1", "{lang}", "en").Replace(s.Template)); err != nil {
			return err
		}
		if s.Page == "" {
			return nil
		}
		if !strings.Contains(s.Page, "{id}") || !strings.Contains(s.Page, "{lang}") {
			return fmt.Errorf("source %s: the page URL template %q must hold {id} and {lang}", s.Name, s.Page)
		}
		return checkURL(s.Name, strings.NewReplacer("{id}", "1", "{lang}", "en").Replace(s.Page))
	case len(s.Docs) == 0:
		return fmt.Errorf("source %s: no documents to fetch", s.Name)
	}
	overlays := 0
	for _, d := range s.Docs {
		if err := checkURL(s.Name, d.URL); err != nil {
			return err
		}
		if d.Fallback != nil {
			if _, ok := s.format.(fallbackFormat); !ok {
				return fmt.Errorf("source %s: the document %s has a fallback, which its format cannot read", s.Name, d.Name)
			}
			if err := checkURL(s.Name, d.Fallback.URL); err != nil {
				return err
			}
		}
		if d.Overlay {
			overlays++
		}
	}
	if overlays > 0 && (overlays != 1 || len(s.Docs) != 2) {
		return fmt.Errorf("source %s: an overlay document overlays one base document; there are %d documents, %d of them overlays", s.Name, len(s.Docs), overlays)
	}
	return nil
}

func checkURL(source, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("source %s: URL %q: %w", source, raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("source %s: URL %q is not an http or https URL", source, raw)
	}
	return nil
}
