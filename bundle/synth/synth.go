// Package synth generates the bundled recall corpus: a deterministic,
// seeded, synthetic set of Canadian recalls written in the real upstream
// formats (testdata/FORMATS.md) — the Health Canada open-data dump in English
// and French, the Transport Canada vehicle recall CSV, and each Health
// Canada notice's detail: the old API's document, or its recall pages on the
// recalls site from NID 76772 on (page.go) — so that the very normalizers
// that read the live feeds turn it into records.
//
// The public feeds cannot be reached from the build machines, hence the
// synthesis. Brands and companies are invented; vehicle makes, models and
// model years are real, because VIN lookups must find them. The shares of
// optional upstream fields are set so that the merged records match the
// spec's field presence rates.
package synth

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Config sets what Generate makes. The zero value is valid.
type Config struct {
	// Seed selects the corpus; 0 means 1.
	Seed uint64
	// ReferenceDate is the newest date a recall may have; the zero value
	// means today (UTC). Only its date counts.
	ReferenceDate time.Time
	// Scale multiplies the number of records: 1 (or 0) makes about 41,000,
	// 5 about 200,000, 25 about a million.
	Scale float64
}

// Manifest describes a generated corpus; Generate writes it to
// manifest.json.
type Manifest struct {
	Seed          uint64 `json:"seed"`
	ReferenceDate string `json:"reference_date"`
	// Counts holds the number of records of each recall type (food,
	// vehicle, …), "records" in all, and the rows and documents written:
	// dump_rows_en, dump_rows_fr, dump_rows_tc, vrdb_rows, vrdb_recalls,
	// detail_docs_en, detail_docs_fr (documents and pages), detail_pages_en,
	// detail_pages_fr (pages), detail_pages_legacy (notices whose pages
	// are in the legacy layout), updated_notices.
	Counts map[string]int `json:"counts"`
}

// generator holds a run's settings.
type generator struct {
	seed  uint64
	ref   day
	scale float64
}

// The corpus's files, relative to its directory.
const (
	fileDumpEN   = "hc/recalls-en.json"
	fileDumpFR   = "hc/recalls-fr.json"
	fileVRDB     = "tc/vrdb.csv"
	dirDetailEN  = "detail/en"
	dirDetailFR  = "detail/fr"
	pageExt      = ".html" // a recall page's name ending, as plugins/page reads it (page.Ext; TestPageExt); the old API's documents end in .json
	fileManifest = "manifest.json"
)

// Generate writes the corpus cfg describes into dir, creating it if needed.
// The same Config always gives byte-identical files. When dir holds an
// earlier corpus (it has a manifest.json), that corpus is removed first —
// hc/, tc/, detail/ and manifest.json, nothing else — so no stale document
// survives; when it holds an hc/, tc/ or detail/ that is no corpus's,
// Generate refuses rather than delete someone's files.
func Generate(dir string, cfg Config) (Manifest, error) {
	g, err := newGenerator(cfg)
	if err != nil {
		return Manifest{}, err
	}
	if err := clearCorpus(dir); err != nil {
		return Manifest{}, err
	}
	for _, p := range []string{"hc", "tc", dirDetailEN, dirDetailFR} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			return Manifest{}, fmt.Errorf("creating corpus directory: %w", err)
		}
	}
	m := Manifest{Seed: g.seed, ReferenceDate: g.ref.String(), Counts: map[string]int{}}
	entries := g.plan()
	for _, e := range entries {
		m.Counts[recallTypeName(e.typ)]++
		if e.update {
			m.Counts["updated_notices"]++
		}
	}
	m.Counts["records"] = len(entries)
	if err := g.write(dir, entries, m.Counts); err != nil {
		return Manifest{}, err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, fmt.Errorf("encoding manifest: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, fileManifest), append(b, '\n'), 0o644); err != nil {
		return Manifest{}, fmt.Errorf("writing manifest: %w", err)
	}
	return m, nil
}

// clearCorpus removes an earlier corpus from dir.
func clearCorpus(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, fileManifest))
	var old Manifest
	if err == nil && json.Unmarshal(b, &old) == nil && old.Counts["records"] > 0 {
		for _, p := range []string{"hc", "tc", "detail", fileManifest} {
			if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
				return fmt.Errorf("removing the earlier corpus: %w", err)
			}
		}
		return nil
	}
	for _, p := range []string{"hc", "tc", "detail"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			return fmt.Errorf("%s already has a %s/ that is not a generated corpus's (no manifest.json); choose another directory", dir, p)
		}
	}
	return nil
}

// newGenerator checks cfg and fills in its defaults.
func newGenerator(cfg Config) (*generator, error) {
	g := &generator{seed: cfg.Seed, scale: cfg.Scale}
	if g.seed == 0 {
		g.seed = 1
	}
	if g.scale == 0 {
		g.scale = 1
	}
	if g.scale < 0 || math.IsNaN(g.scale) || math.IsInf(g.scale, 0) || g.scale > 1000 {
		return nil, fmt.Errorf("scale %v is not a number between 0 and 1000", cfg.Scale)
	}
	ref := cfg.ReferenceDate
	if ref.IsZero() {
		ref = time.Now()
	}
	g.ref = dayOf(ref)
	if g.ref < firstDay+365 {
		return nil, fmt.Errorf("reference date %s is before 1992: the corpus starts in 1991", g.ref)
	}
	return g, nil
}

// corpusFiles are the open shared files of a run.
type corpusFiles struct {
	files                   [3]*os.File
	dumpEN, dumpFR, vrdbCSV *bufio.Writer
}

// batchSize is how many entries are built in parallel before their rows are
// appended, in order, to the shared files.
const batchSize = 2048

// write builds every entry and writes the corpus files, counting rows and
// documents into counts.
func (g *generator) write(dir string, entries []entry, counts map[string]int) (err error) {
	var cf corpusFiles
	for i, name := range []string{fileDumpEN, fileDumpFR, fileVRDB} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("creating corpus file: %w", err)
		}
		cf.files[i] = f
	}
	defer func() {
		for _, f := range cf.files {
			if cerr := f.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("closing corpus file: %w", cerr)
			}
		}
	}()
	cf.dumpEN = bufio.NewWriterSize(cf.files[0], 1<<20)
	cf.dumpFR = bufio.NewWriterSize(cf.files[1], 1<<20)
	cf.vrdbCSV = bufio.NewWriterSize(cf.files[2], 1<<20)
	cf.dumpEN.WriteString("[\n")
	cf.dumpFR.WriteString("[\n")
	cf.vrdbCSV.WriteString(vrdbHeader)

	outs := make([]output, batchSize)
	for start := 0; start < len(entries); start += batchSize {
		batch := entries[start:min(start+batchSize, len(entries))]
		if err := g.build(dir, batch, outs); err != nil {
			return err
		}
		for i := range batch {
			cf.append(&outs[i], counts)
			outs[i] = output{}
		}
	}
	cf.dumpEN.WriteString("\n]\n")
	cf.dumpFR.WriteString("\n]\n")
	for _, w := range []*bufio.Writer{cf.dumpEN, cf.dumpFR, cf.vrdbCSV} {
		if err := w.Flush(); err != nil {
			return fmt.Errorf("writing corpus file: %w", err)
		}
	}
	return nil
}

// append adds one entry's rows to the shared files. Write errors stick in
// the bufio.Writers and surface at Flush.
func (cf *corpusFiles) append(o *output, counts map[string]int) {
	if o.dumpEN != nil {
		if counts["dump_rows_en"] > 0 {
			cf.dumpEN.WriteString(",\n")
		}
		cf.dumpEN.Write(o.dumpEN)
		counts["dump_rows_en"]++
		if o.csv != nil {
			counts["dump_rows_tc"]++
		}
	}
	if o.dumpFR != nil {
		if counts["dump_rows_fr"] > 0 {
			cf.dumpFR.WriteString(",\n")
		}
		cf.dumpFR.Write(o.dumpFR)
		counts["dump_rows_fr"]++
	}
	if o.csv != nil {
		cf.vrdbCSV.Write(o.csv)
		counts["vrdb_rows"] += o.csvRows
		counts["vrdb_recalls"]++
	}
	if o.docEN != nil {
		counts["detail_docs_en"]++
	}
	if o.docFR != nil {
		counts["detail_docs_fr"]++
	}
	if o.ext == pageExt {
		if o.docEN != nil {
			counts["detail_pages_en"]++
		}
		if o.docFR != nil {
			counts["detail_pages_fr"]++
		}
		if o.layout == layoutLegacy {
			counts["detail_pages_legacy"]++
		}
	}
}

// build fills outs with the entries of batch, in parallel, and writes their
// detail documents.
func (g *generator) build(dir string, batch []entry, outs []output) error {
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(batch) {
					return
				}
				e := &batch[i]
				if e.typ == typeVehicle {
					outs[i] = g.vehicle(e)
				} else {
					outs[i] = g.notice(e)
				}
				if err := writeDocs(dir, &outs[i]); err != nil {
					errOnce.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// writeDocs writes an entry's detail documents, if it has any.
func writeDocs(dir string, o *output) error {
	for _, d := range []struct {
		sub string
		doc []byte
	}{{dirDetailEN, o.docEN}, {dirDetailFR, o.docFR}} {
		if d.doc == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, d.sub, o.nid+o.ext), d.doc, 0o644); err != nil {
			return fmt.Errorf("writing detail document: %w", err)
		}
	}
	return nil
}
