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
	"embed"
	"encoding/json"
	"errors"
	"fmt"

	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/rappel-ca/rappel"
)

//go:embed all:data
var data embed.FS

// File names inside data/.
const (
	recordsFile  = "records.ndjson.zst"
	manifestFile = "manifest.json"
	pluginsDir   = "plugins"
)

// Manifest describes a bundle.
type Manifest struct {
	// BuiltAt is when the bundle was normalized; records carry it as
	// fetched_at and it is the dataset time of a node serving the bundle.
	BuiltAt time.Time `json:"built_at"`
	// ReferenceDate is the generator's newest possible event date.
	ReferenceDate string `json:"reference_date,omitempty"`
	Records       int    `json:"records"`
	// ByType counts records per recall_type.
	ByType map[string]int `json:"by_type"`
	// Problems counts reported problems per source; Examples keeps a few.
	Problems map[string]int   `json:"problems"`
	Examples []rappel.Problem `json:"problem_examples,omitempty"`
	// Plugins maps each source to the SHA-256 of the module that produced it.
	Plugins map[string]string `json:"plugins"`
}

// ErrEmpty is returned when the binary was built without a bundle.
var ErrEmpty = errors.New("the binary holds no data bundle; build it with `make build` (which runs `make bundle`)")

// Embedded returns the bundle compiled into the binary.
func Embedded() fs.FS {
	sub, _ := fs.Sub(data, "data")
	return sub
}

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
	f, err := fsys.Open(recordsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return ErrEmpty
	} else if err != nil {
		return fmt.Errorf("opening bundle records: %w", err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		return fmt.Errorf("opening bundle records: %w", err)
	}
	defer zr.Close()
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var r rappel.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("decoding bundle record %d: %w", n, err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading bundle records: %w", err)
	}
	return nil
}

// Plugins returns the default plugin modules in the bundle in fsys, by
// source name.
func Plugins(fsys fs.FS) (map[string][]byte, error) {
	names, err := fs.Glob(fsys, pluginsDir+"/*.wasm")
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(names))
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("reading bundled plugin %s: %w", n, err)
		}
		base := filepath.Base(n)
		out[base[:len(base)-len(".wasm")]] = b
	}
	return out, nil
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
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedBetterCompression))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(zw)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("encoding record %s: %w", r.RecordID, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("compressing bundle: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, recordsFile), buf.Bytes()); err != nil {
		return err
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, manifestFile), append(mb, '\n'))
}

func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
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
