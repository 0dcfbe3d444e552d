// Package bundle is the data compiled into the rappel binary: a snapshot of
// every record, normalized from the upstream formats through the same Wasm
// plugins the live feeds use, and those default plugins themselves.
//
// `make bundle` writes data/ (see data/README.md); this package embeds it
// and reads it back. A node starting on an empty data dir loads the records
// from here, so it serves with no network at all.
package bundle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rappel-ca/rappel/internal/atomicfile"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/jsonx"
)

// File names inside data/.
const (
	recordsFile  = "records.ndjson.zst"
	manifestFile = "manifest.json"
	pluginsDir   = "plugins"
	// partialsDir holds <source>.ndjson.zst: the records each source's
	// plugin emitted, before merging, so that a node knows which records
	// each source gave and a source's first live refresh can replace them.
	partialsDir = "_partials"
	// rawDir holds <source>.ndjson.zst: the raw records (keys, hashes, the
	// record_ids they yield; not their bytes) the partial records were
	// normalized from, so that a node's first live refresh normalizes only
	// the upstream records that differ.
	rawDir = "_raw"
	// tablesDir holds the sstables a node with an empty store ingests:
	// the keys and values loading the bundle writes, prebuilt by
	// WriteTables and listed in the manifest's Tables.
	tablesDir = "sst"
	// indexFile is the read index of the bundle's records (WriteIndex).
	indexFile = "index.seg"
)

// Manifest describes a bundle.
type Manifest struct {
	// BuiltAt is when the bundle was normalized; records carry it as
	// fetched_at and it is the dataset time of a node serving the bundle.
	BuiltAt time.Time `json:"built_at"`
	// ReferenceDate is the generator's newest possible event date.
	ReferenceDate string `json:"reference_date,omitempty"`
	// Provenance says what the data is: generated (seed, reference day)
	// or fetched from the agencies (which addresses, when). A bundle
	// without it was generated.
	Provenance *rappel.Provenance `json:"provenance,omitempty"`
	Records    int                `json:"records"`
	// ByType counts records per recall_type.
	ByType map[string]int `json:"by_type"`
	// Problems counts reported problems per source; Examples keeps a few.
	Problems map[string]int   `json:"problems"`
	Examples []rappel.Problem `json:"problem_examples,omitempty"`
	// Plugins maps each source to the SHA-256 of the module that produced it.
	Plugins map[string]string `json:"plugins"`
	// Partials counts the partial records of each source (WritePartials).
	Partials map[string]int `json:"partials,omitempty"`
	// Raw counts the raw records of each source (WriteRaw).
	Raw map[string]int `json:"raw,omitempty"`
	// Tables lists the sstables in sst/ (WriteTables), in key order. A
	// bundle without them is loaded through a batch.
	Tables []Table `json:"tables,omitempty"`
	// Index is the read index of the bundle's records, a segment file
	// (WriteIndex), that a node serves from where it lies in the binary.
	Index *Index `json:"index,omitempty"`
}

// Index is the bundle's read index segment, as WriteIndex wrote it.
type Index struct {
	Table
	// Bundle is the version of the bundle whose records it indexes.
	Bundle string `json:"bundle"`
}

// Table is one sstable of a bundle, as WriteTables wrote it.
type Table struct {
	// Name is its path inside the bundle, as sst/000001.sst.
	// Size and SHA256 are those of the table itself, unpacked.
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Packed, when set, is the name of the zstd-compressed file the
	// bundle holds instead of Name (pack).
	Packed string `json:"packed,omitempty"`
}

// ErrEmpty is returned when the binary was built without a bundle.
var ErrEmpty = errors.New("the binary holds no data bundle; build it with `make build` (which runs `make bundle`)")

// Embedded returns the bundle compiled into the binary.
func Embedded() fs.FS {
	sub, _ := fs.Sub(data, "data")
	return embeddedFS{sub}
}

// embeddedFS is the embedded bundle, which IndexDir.Open tells from
// others to read its unpacked index in place.
type embeddedFS struct{ fs.FS }

// ReadManifest reads the manifest of the bundle in fsys.
func ReadManifest(fsys fs.FS) (Manifest, error) {
	var m Manifest
	b, err := fs.ReadFile(fsys, manifestFile)
	if errors.Is(err, fs.ErrNotExist) {
		return m, ErrEmpty
	} else if err != nil {
		return m, fmt.Errorf("reading bundle manifest: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("decoding bundle manifest: %w", err)
	}
	return m, nil
}

// ReadRecords calls fn for every record in the bundle in fsys, in record_id
// order, and stops at fn's first error.
func ReadRecords(fsys fs.FS, fn func(*rappel.Record) error) error {
	return readNDJSON(fsys, recordsFile, "records", func(r *rappel.Record) error {
		restoreCodesText(r)
		return fn(r)
	})
}

// ReadPartials calls fn for every partial record of source in the bundle in
// fsys, in record_id order, and stops at fn's first error. A bundle written
// without partial records has none: fn is not called.
func ReadPartials(fsys fs.FS, source string, fn func(*rappel.Record) error) error {
	err := readNDJSON(fsys, path.Join(partialsDir, source+".ndjson.zst"), source+" partial records", fn)
	if errors.Is(err, ErrEmpty) {
		return nil
	}
	return err
}

// ReadRaw calls fn for every raw record of source in the bundle in fsys, in
// key order; none when the bundle has none.
func ReadRaw(fsys fs.FS, source string, fn func(rappel.RawRecord) error) error {
	err := readLines(fsys, path.Join(rawDir, source+".ndjson.zst"), source+" raw records", func(line []byte) error {
		var r rappel.RawRecord
		if err := jsonx.Unmarshal(line, &r); err != nil {
			return err
		}
		return fn(r)
	})
	if errors.Is(err, ErrEmpty) {
		return nil
	}
	return err
}

// readNDJSON calls fn for every record of a zstd-compressed NDJSON file.
// Lines are decoded as encoding/json does, by jsonx, which returns
// encoding/json's errors, so that readLines can tell a bad line.
func readNDJSON(fsys fs.FS, name, what string, fn func(*rappel.Record) error) error {
	return readLines(fsys, name, what, func(line []byte) error {
		var r rappel.Record
		if err := jsonx.Unmarshal(line, &r); err != nil {
			return err
		}
		return fn(&r)
	})
}

// readLines calls fn for every line of a zstd-compressed file.
func readLines(fsys fs.FS, name, what string, fn func([]byte) error) error {
	f, err := fsys.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return ErrEmpty
	} else if err != nil {
		return fmt.Errorf("opening bundle %s: %w", what, err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		return fmt.Errorf("opening bundle %s: %w", what, err)
	}
	defer zr.Close()
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if err := fn(sc.Bytes()); err != nil {
			var syn *json.SyntaxError
			var typ *json.UnmarshalTypeError
			if errors.As(err, &syn) || errors.As(err, &typ) {
				return fmt.Errorf("decoding bundle %s, line %d: %w", what, n, err)
			}
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading bundle %s: %w", what, err)
	}
	return nil
}

// Plugins returns the default plugin modules in the bundle in fsys, by
// source name: plugins/<source>.wasm, or packed as
// plugins/<source>.wasm.zst (WritePlugins).
func Plugins(fsys fs.FS) (map[string][]byte, error) {
	names, err := fs.Glob(fsys, pluginsDir+"/*.wasm")
	if err != nil {
		return nil, err
	}
	packed, err := fs.Glob(fsys, pluginsDir+"/*.wasm"+packedExt)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(names)+len(packed))
	for _, n := range append(names, packed...) {
		b, err := fs.ReadFile(fsys, n)
		if err == nil && strings.HasSuffix(n, packedExt) {
			b, err = unpackBytes(b)
		}
		if err != nil {
			return nil, fmt.Errorf("reading bundled plugin %s: %w", n, err)
		}
		base := strings.TrimSuffix(path.Base(n), packedExt)
		out[strings.TrimSuffix(base, ".wasm")] = b
	}
	return out, nil
}

// WritePlugins writes each source's plugin module into dir's plugins/,
// packed, replacing what was there.
func WritePlugins(dir string, mods map[string][]byte) error {
	pdir := filepath.Join(dir, pluginsDir)
	if err := os.RemoveAll(pdir); err != nil {
		return fmt.Errorf("writing bundled plugins: %w", err)
	}
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return fmt.Errorf("writing bundled plugins: %w", err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderCRC(true))
	if err != nil {
		return err
	}
	defer enc.Close()
	for source, b := range mods {
		if err := atomicfile.Write(filepath.Join(pdir, source+".wasm"+packedExt), enc.EncodeAll(b, nil), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// unpackBytes decompresses a packed file read whole.
func unpackBytes(b []byte) ([]byte, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	return dec.DecodeAll(b, nil)
}

// Write writes records and their manifest into dir as a bundle, replacing
// what was there. recs must be in record_id order.
func Write(dir string, recs []*rappel.Record, m Manifest) error {
	m.Records = len(recs)
	m.ByType = map[string]int{}
	for _, r := range recs {
		m.ByType[r.RecallType]++
	}
	if !sort.SliceIsSorted(recs, func(i, j int) bool { return recs[i].RecordID < recs[j].RecordID }) {
		return errors.New("writing bundle: records are not in record_id order")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating bundle dir: %w", err)
	}
	if err := writeNDJSON(filepath.Join(dir, recordsFile), recs); err != nil {
		return err
	}
	return writeManifest(dir, m)
}

// writeManifest writes m into dir, atomically.
func writeManifest(dir string, m Manifest) error {
	mb, err := encodeManifest(m)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, manifestFile), mb, 0o644)
}

// encodeManifest is the manifest file's content.
func encodeManifest(m Manifest) ([]byte, error) {
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(mb, '\n'), nil
}

// WriteTables writes into dir's sst/ the sstables that a node with an
// empty store ingests instead of loading the bundle in dir through a
// batch, and lists them, with their sizes and SHA-256, in its manifest.
// Call it after Write. write writes the tables into the directory it is
// given and returns their paths, in key order; kv.WriteTables does, from
// the contents read back from dir as a node reads them, so that the
// tables hold what loading those would write. The bundle's Version is
// the same before and after: it leaves the list of tables out.
func WriteTables(dir string, write func(dir string, c Contents) ([]string, error)) error {
	src := os.DirFS(dir)
	m, version, c, err := readBack(src)
	if err != nil {
		return err
	}
	tdir := filepath.Join(dir, tablesDir)
	if err := os.RemoveAll(tdir); err != nil {
		return fmt.Errorf("writing bundle tables: %w", err)
	}
	paths, err := write(tdir, c)
	if err != nil {
		return fmt.Errorf("writing bundle tables: %w", err)
	}
	m.Tables = make([]Table, len(paths))
	// Each table is hashed and packed on a core of its own: packing at
	// zstd's best compression is most of this step's time, and a table's
	// packed bytes do not depend on the others', so the bundle is the
	// same whatever the order.
	errs := make([]error, len(paths))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			m.Tables[i], errs[i] = packTable(src, dir, tdir, p)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("writing bundle tables: %w", err)
	}
	if err := writeManifest(dir, m); err != nil {
		return err
	}
	if v, err := Version(src); err != nil {
		return err
	} else if v != version {
		return fmt.Errorf("writing bundle tables: listing them changed the bundle's version from %q to %q, which the tables hold", version, v)
	}
	return nil
}

// packTable digests and packs the table file at p, in tdir under dir.
func packTable(src fs.FS, dir, tdir, p string) (Table, error) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || !strings.HasPrefix(filepath.ToSlash(rel), tablesDir+"/") {
		return Table{}, fmt.Errorf("table %s is not in %s", p, tdir)
	}
	t := Table{Name: filepath.ToSlash(rel)}
	if t.Size, t.SHA256, err = fileDigest(src, t.Name); err != nil {
		return Table{}, err
	}
	if t.Packed, err = pack(dir, t.Name); err != nil {
		return Table{}, err
	}
	return t, nil
}

// WritePartials writes each source's partial records (what its plugin
// emitted, before merging) into dir, replacing those there, and counts them
// in m. Call it before Write, which writes the manifest last.
func WritePartials(dir string, parts map[string][]*rappel.Record, m *Manifest) error {
	if err := os.MkdirAll(filepath.Join(dir, partialsDir), 0o755); err != nil {
		return fmt.Errorf("creating bundle dir: %w", err)
	}
	m.Partials = map[string]int{}
	for source, recs := range parts {
		recs = slices.Clone(recs)
		sort.SliceStable(recs, func(i, j int) bool { return recs[i].RecordID < recs[j].RecordID })
		if err := writeNDJSON(filepath.Join(dir, partialsDir, source+".ndjson.zst"), recs); err != nil {
			return err
		}
		m.Partials[source] = len(recs)
	}
	return nil
}

// WriteRaw writes each source's raw records, without their data, into dir,
// replacing those there, and counts them in m. Call it before Write.
func WriteRaw(dir string, raw map[string][]rappel.RawRecord, m *Manifest) error {
	if err := os.MkdirAll(filepath.Join(dir, rawDir), 0o755); err != nil {
		return fmt.Errorf("creating bundle dir: %w", err)
	}
	m.Raw = map[string]int{}
	for source, recs := range raw {
		if err := writeLines(filepath.Join(dir, rawDir, source+".ndjson.zst"), len(recs), func(i int) any {
			r := recs[i]
			r.Data = nil
			return r
		}); err != nil {
			return err
		}
		m.Raw[source] = len(recs)
	}
	return nil
}

// writeNDJSON writes recs as zstd-compressed NDJSON to path, atomically.
// Each product's codes_text that only repeats its lot_codes is left out
// (leanRecord), and ReadRecords puts it back: every servable record has
// it (rappel.Assemble). A partial record keeps the applicability its
// source gave, without a codes_text, as the sources give it.
func writeNDJSON(path string, recs []*rappel.Record) error {
	return writeLines(path, len(recs), func(i int) any { return leanRecord(recs[i]) })
}

// leanRecord returns r, or a copy of it sharing all but its product list
// when one of its products' applicability has a codes_text that is its
// lot_codes joined by "; " (codesText), as nearly every one's is: the
// bundle's records file then carries the codes once. r is not changed.
func leanRecord(r *rappel.Record) *rappel.Record {
	lean := func(p rappel.Product) bool {
		return p.Applicability != nil && p.Applicability.Text != "" && p.Applicability.Text == codesText(p)
	}
	if !slices.ContainsFunc(r.ProductList, lean) {
		return r
	}
	c := *r
	c.ProductList = slices.Clone(r.ProductList)
	for i, p := range c.ProductList {
		if lean(p) {
			a := *p.Applicability
			a.Text = ""
			c.ProductList[i].Applicability = &a
		}
	}
	return &c
}

// restoreCodesText gives back each product of r the codes_text leanRecord
// left out: an applicability without one, of a product printing codes.
// Assemble gives every applicability its text, so none had it empty.
func restoreCodesText(r *rappel.Record) {
	for i := range r.ProductList {
		if p := &r.ProductList[i]; p.Applicability != nil && p.Applicability.Text == "" && len(p.LotCodes) > 0 {
			p.Applicability.Text = codesText(*p)
		}
	}
}

// codesText is the text a product's applicability is read from: its lot
// codes joined by "; " (rappel.ParseLabelledCodes).
func codesText(p rappel.Product) string { return strings.Join(p.LotCodes, "; ") }

// writeLines writes n values, item(0) to item(n-1), as zstd-compressed
// JSON lines to path, atomically. They are compressed as the sstables
// are packed (pack), at the encoder's best: the records file is embedded
// in the binary, where 6% of it is worth the seconds a build spends.
func writeLines(path string, n int, item func(int) any) error {
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(zw)
	for i := range n {
		if err := enc.Encode(item(i)); err != nil {
			return fmt.Errorf("encoding line %d of %s: %w", i+1, path, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("compressing bundle: %w", err)
	}
	return atomicfile.Write(path, buf.Bytes(), 0o644)
}

// AddProblems counts problems per source and keeps the first few as examples.
func (m *Manifest) AddProblems(ps []rappel.Problem) {
	if m.Problems == nil {
		m.Problems = map[string]int{}
	}
	for _, p := range ps {
		m.Problems[p.Source]++
		if len(m.Examples) < 25 {
			m.Examples = append(m.Examples, p)
		}
	}
}

// Kind is the kind of the bundle's data (rappel.DatasetSynthetic or
// rappel.DatasetAgencies): a bundle that does not say was generated.
func (m Manifest) Kind() string {
	if m.Provenance != nil && m.Provenance.Kind == rappel.DatasetAgencies {
		return rappel.DatasetAgencies
	}
	return rappel.DatasetSynthetic
}
