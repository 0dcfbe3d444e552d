package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"path"
	"time"

	"github.com/rappel-ca/rappel"
)

// Store is what Load keeps a bundle in: kv.Store implements it.
type Store interface {
	// Empty reports whether the store holds no records.
	Empty(ctx context.Context) (bool, error)
	// DatasetInfo says where the stored data came from: Source "bundle"
	// and the Bundle's Version, or the live feeds.
	DatasetInfo(ctx context.Context) (rappel.DatasetInfo, error)
	// Replace makes the store hold the given records, each source's
	// partial records, raw records and state, and the dataset info, and
	// none of the data it held before, in one durable write.
	Replace(ctx context.Context, recs []*rappel.Record, partials map[string][]*rappel.Record, raw map[string][]rappel.RawRecord, states []rappel.SourceState, info rappel.DatasetInfo) error
}

// Ingester is a Store that an empty one can be filled with a bundle's
// prebuilt sstables: kv.Store implements it.
type Ingester interface {
	// IngestFS fills the empty store with the sstables names in fsys, in
	// one atomic step, and refuses a store that holds records.
	IngestFS(ctx context.Context, fsys fs.FS, names []string) error
	// ReplaceFS makes the store hold the data of the sstables names in
	// fsys, as Replace does with the records they were written from.
	ReplaceFS(ctx context.Context, fsys fs.FS, names []string) error
}

// Load puts the bundle in src into store when the store should hold it,
// and logs what it did and why:
//
//   - an empty store is filled with the bundle;
//   - a store that holds this very bundle (its DatasetInfo.Bundle is the
//     bundle's Version) is left alone;
//   - a store loaded from an older bundle, and never refreshed live since
//     (its DatasetInfo.Source is still "bundle"), has all its data
//     replaced by this bundle's: a new binary brings its new bundle to a
//     data dir that only ever held a bundle;
//   - a store loaded from a newer bundle (an older binary started on the
//     data dir) keeps it;
//   - a store the live feeds have refreshed keeps its data, which came
//     from the agencies and which the feeds keep fresh, while a bundle's
//     records are provisional; the log says whether the bundle is older
//     or newer than that data.
//
// An empty store that is an Ingester is filled with the bundle's sstables
// when it has them, after checking each against the SHA-256 and size its
// manifest records: a damaged table is refused, with a sentence, rather
// than loaded otherwise, since the binary itself is then damaged. Any
// other store, or a bundle without tables, is loaded through a batch.
//
// A store loaded before bundles had a version records none: it holds this
// bundle when its dataset time is the bundle's build time. A binary built
// without a bundle (ErrEmpty) serves a store that holds data as it is.
func Load(ctx context.Context, src fs.FS, store Store, log *slog.Logger) error {
	empty, err := store.Empty(ctx)
	if err != nil {
		return err
	}
	info, err := store.DatasetInfo(ctx)
	if err != nil {
		return err
	}
	m, err := ReadManifest(src)
	if errors.Is(err, ErrEmpty) && !empty {
		log.Info("the binary holds no data bundle; serving the data dir's data", "source", info.Source, "updated_at", info.UpdatedAt)
		return nil
	} else if err != nil {
		return err
	}
	if !empty && info.Source != "bundle" {
		log.Info("keeping the data dir's "+sourceName(info)+" data; the binary's bundle is "+relative(m.BuiltAt, info.UpdatedAt)+" and is not loaded",
			"data_updated_at", info.UpdatedAt, "bundle_built_at", m.BuiltAt)
		return nil
	}
	// The version is the one the manifest records with the read index
	// (WriteIndex): the embedded bundle does not hold the partial and raw
	// records the version is a digest of (README, "The embedded bundle"),
	// and hashing the bundle's files would only slow the start. A store
	// that can ingest takes the bundle's tables, which carry it too.
	ing, canIngest := store.(Ingester)
	byIngest := canIngest && len(m.Tables) > 0
	version := m.recordedVersion()
	if version == "" {
		if version, err = Version(src); err != nil {
			return err
		}
	}
	if !empty {
		switch {
		case info.Bundle == version, info.Bundle == "" && info.UpdatedAt.Equal(m.BuiltAt):
			log.Info("the data dir holds the binary's bundle", "bundle", version, "records", info.Records)
			return nil
		case info.UpdatedAt.After(m.BuiltAt):
			log.Warn("the data dir holds a newer bundle than the binary's; keeping it", "data_dir_bundle", info.Bundle, "bundle", version)
			return nil
		}
	}
	start := time.Now()
	var n int
	how := "batch"
	if byIngest {
		how = "ingest"
		if n, err = ingest(ctx, src, m, ing, !empty); err == nil {
			var loaded rappel.DatasetInfo
			loaded, err = store.DatasetInfo(ctx)
			version = loaded.Bundle
		}
	} else {
		n, err = replace(ctx, src, m, version, store)
	}
	if err != nil {
		return err
	}
	took := time.Since(start).Round(time.Millisecond)
	if empty {
		log.Info("loaded bundle into empty store", "bundle", version, "records", n, "partials", m.Partials, "by", how, "took", took)
	} else {
		log.Info("replaced the data dir's older bundle with the binary's", "data_dir_bundle", info.Bundle, "bundle", version, "records", n, "took", took)
	}
	return nil
}

// recordedVersion is the bundle's version as its manifest records it,
// with its read index; "" when it has none.
func (m Manifest) recordedVersion() string {
	if m.Index == nil {
		return ""
	}
	return m.Index.Bundle
}

// sourceName names where a store's data came from, for the log.
func sourceName(info rappel.DatasetInfo) string {
	if info.Source == "" {
		return "stored"
	}
	return info.Source
}

// relative says whether a bundle built at built is older or newer than
// data updated at updated.
func relative(built, updated time.Time) string {
	switch {
	case built.Before(updated):
		return "older than it"
	case built.After(updated):
		return "newer than it"
	}
	return "as old as it"
}

// Contents is what a bundle puts into a store, as Store.Replace takes it.
type Contents struct {
	Records  []*rappel.Record
	Partials map[string][]*rappel.Record
	Raw      map[string][]rappel.RawRecord
	States   []rappel.SourceState
	Info     rappel.DatasetInfo
}

// readContents reads the bundle in src: the assembled records, each
// source's partial records, the raw records they came from (keys and
// hashes), a state per source that is not live (the bundled records are
// provisional: a source's first live refresh replaces them), and the
// dataset info naming the bundle's version.
func readContents(src fs.FS, m Manifest, version string) (Contents, error) {
	c := Contents{Records: make([]*rappel.Record, 0, m.Records), Partials: map[string][]*rappel.Record{}, Raw: map[string][]rappel.RawRecord{}}
	if err := ReadRecords(src, func(r *rappel.Record) error {
		c.Records = append(c.Records, r)
		return nil
	}); err != nil {
		return c, err
	}
	for _, source := range rappel.SourcePrecedence {
		if err := ReadPartials(src, source, func(r *rappel.Record) error {
			c.Partials[source] = append(c.Partials[source], r)
			return nil
		}); err != nil {
			return c, err
		}
		if err := ReadRaw(src, source, func(r rappel.RawRecord) error {
			c.Raw[source] = append(c.Raw[source], r)
			return nil
		}); err != nil {
			return c, err
		}
		st := rappel.SourceState{Feed: rappel.FeedState{Source: source, Records: len(c.Partials[source])}, Plugin: m.Plugins[source]}
		st.Feed.Plugin = st.Plugin
		c.States = append(c.States, st)
	}
	c.Info = rappel.DatasetInfo{UpdatedAt: m.BuiltAt, Source: "bundle", Kind: m.Kind(), Records: len(c.Records), Bundle: version}
	return c, nil
}

// replace reads the bundle in src and makes it the store's data in one
// write. It returns the number of records.
func replace(ctx context.Context, src fs.FS, m Manifest, version string, store Store) (int, error) {
	c, err := readContents(src, m, version)
	if err != nil {
		return 0, err
	}
	if err := store.Replace(ctx, c.Records, c.Partials, c.Raw, c.States, c.Info); err != nil {
		return 0, fmt.Errorf("loading bundle into store: %w", err)
	}
	return len(c.Records), nil
}

// ingest fills the empty store with the bundle's sstables, or replaces
// the data of a store that holds an older bundle with them (replace),
// unpacked and checked against its manifest as the store copies them in:
// a damaged table fails the copy before anything is ingested. It returns
// the number of records.
func ingest(ctx context.Context, src fs.FS, m Manifest, store Ingester, replace bool) (int, error) {
	names := make([]string, len(m.Tables))
	for i, t := range m.Tables {
		names[i] = t.Name
	}
	fill := store.IngestFS
	if replace {
		fill = store.ReplaceFS
	}
	if err := fill(ctx, newTablesFS(src, m.Tables), names); err != nil {
		return 0, fmt.Errorf("loading bundle into store: %w", err)
	}
	return m.Records, nil
}

// fileDigest returns the size and hex SHA-256 of name in fsys.
func fileDigest(fsys fs.FS, name string) (int64, string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// Version names the bundle in fsys: its build time and a digest of its
// manifest and data files (records, partial records, raw records), as
// "2026-11-25T15:37:15Z sha256:<32 hex digits>". Two bundles built at the
// same time from different data have different versions; the plugins are
// named in the manifest by their SHA-256, so they count too. The
// manifest's list of sstables is left out, and the sstables with it: they
// are written from the rest, the version among it (WriteTables).
func Version(fsys fs.FS) (string, error) {
	m, err := ReadManifest(fsys)
	if err != nil {
		return "", err
	}
	mb, err := versionManifest(fsys, m)
	if err != nil {
		return "", fmt.Errorf("naming the bundle's version: %w", err)
	}
	names := []string{recordsFile}
	for _, dir := range []string{partialsDir, rawDir} {
		more, err := fs.Glob(fsys, path.Join(dir, "*.ndjson.zst"))
		if err != nil {
			return "", fmt.Errorf("naming the bundle's version: %w", err)
		}
		names = append(names, more...)
	}
	h := sha256.New()
	hashBytes(h, manifestFile, mb)
	for _, name := range names {
		if err := hashFile(h, fsys, name); err != nil {
			return "", fmt.Errorf("naming the bundle's version: %w", err)
		}
	}
	return m.BuiltAt.UTC().Format(time.RFC3339) + " sha256:" + hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// versionManifest is the manifest as Version hashes it: its bytes, or,
// when it lists sstables, the bytes Write wrote before WriteTables listed
// them.
func versionManifest(fsys fs.FS, m Manifest) ([]byte, error) {
	if len(m.Tables) == 0 && m.Index == nil {
		return fs.ReadFile(fsys, manifestFile)
	}
	m.Tables, m.Index = nil, nil
	return encodeManifest(m)
}

// hashBytes writes name, the length of b and b into h, as hashFile does.
func hashBytes(h hash.Hash, name string, b []byte) {
	_, _ = io.WriteString(h, name+"\x00")
	_ = binary.Write(h, binary.BigEndian, int64(len(b)))
	_, _ = h.Write(b)
}

// hashFile writes name, its length and its bytes into h, so that no two
// sets of files hash alike by moving bytes from one file to the next. A
// missing file is hashed as a name alone.
func hashFile(h hash.Hash, fsys fs.FS, name string) error {
	f, err := fsys.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		_, _ = io.WriteString(h, name+"\x00-\x00")
		return nil
	} else if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	_, _ = io.WriteString(h, name+"\x00")
	_ = binary.Write(h, binary.BigEndian, fi.Size())
	_, err = io.Copy(h, f)
	return err
}
