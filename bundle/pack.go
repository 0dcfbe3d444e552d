package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/zstd"
)

// packedExt ends the name of a file the bundle carries zstd-compressed:
// the sstables and the read index are written whole by the build, then
// packed, and a node unpacks them into its data dir at its first start
// (README, "The embedded bundle"). Compressed once as a whole, the
// sstables' uncompressed blocks and the index's records take a tenth of
// the room they take unpacked.
const packedExt = ".zst"

// pack compresses the file name in dir into name+packedExt beside it,
// removes name, and returns the name of the packed file. The encoder's
// settings are fixed, so that the same file always packs to the same
// bytes.
func pack(dir, name string) (string, error) {
	packed := name + packedExt
	src, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return "", fmt.Errorf("packing %s: %w", name, err)
	}
	defer src.Close()
	tmp := filepath.Join(dir, filepath.FromSlash(packed)) + ".tmp"
	dst, err := os.Create(tmp)
	if err != nil {
		return "", fmt.Errorf("packing %s: %w", name, err)
	}
	defer os.Remove(tmp)
	zw, err := zstd.NewWriter(dst, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderCRC(true))
	if err != nil {
		return "", errors.Join(err, dst.Close())
	}
	if _, err := io.Copy(zw, src); err != nil {
		return "", errors.Join(fmt.Errorf("packing %s: %w", name, err), zw.Close(), dst.Close())
	}
	if err := errors.Join(zw.Close(), dst.Close()); err != nil {
		return "", fmt.Errorf("packing %s: %w", name, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, filepath.FromSlash(packed))); err != nil {
		return "", fmt.Errorf("packing %s: %w", name, err)
	}
	return packed, os.Remove(filepath.Join(dir, filepath.FromSlash(name)))
}

// openTable opens t in fsys for reading what the manifest describes: the
// table itself, or its packed file decompressed. Either way the reader
// checks what it reads and, at its end, returns a *DamagedError rather
// than io.EOF when it is not the table, so that nothing copies a damaged
// table without hearing of it. A table is checked against its size and
// SHA-256; a packed one against its size and the checksum of its
// content that zstd keeps in each frame, which the decoder checks: hashing
// the unpacked bytes with SHA-256 as well would take a third of the CPU
// of a first start for no more certainty against damage (RATIONALE.md,
// the embedded bundle).
func openTable(fsys fs.FS, t Table) (io.ReadCloser, error) {
	name := t.Name
	if t.Packed != "" {
		name = t.Packed
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	v := &verifier{t: t, closer: f, r: f}
	if t.Packed == "" {
		v.h = sha256.New()
		return v, nil
	}
	// One goroutine per stream: the tables are unpacked side by side.
	zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	v.r = zr
	v.closer = closers{zr.IOReadCloser(), f}
	return v, nil
}

// DamagedError says that a file of the bundle does not hold what its
// manifest says: the binary (or the bundle dir) is damaged.
type DamagedError struct {
	// Table is the file as the manifest describes it; Size and SHA256
	// are what was read, or Undecodable why its packed file would not
	// decompress.
	Table       Table
	Size        int64
	SHA256      string
	Undecodable error
}

func (e *DamagedError) Error() string {
	const fix = "rebuild the binary (make build) or start it on a data dir that holds data"
	if e.Undecodable != nil {
		return fmt.Sprintf("the binary's bundle is damaged: table %s does not decompress from %s (%v); %s", e.Table.Name, e.Table.Packed, e.Undecodable, fix)
	}
	return fmt.Sprintf("the binary's bundle is damaged: table %s has %d bytes and SHA-256 %s, its manifest says %d bytes and %s; %s", e.Table.Name, e.Size, e.SHA256, e.Table.Size, e.Table.SHA256, fix)
}

// verifier reads r, counting (and, with h, hashing) what it reads, and
// checks it at the end.
type verifier struct {
	t      Table
	r      io.Reader
	h      hash.Hash
	n      int64
	closer io.Closer
}

func (v *verifier) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	if v.h != nil {
		v.h.Write(p[:n])
	}
	v.n += int64(n)
	switch {
	case err == io.EOF:
		sum := v.t.SHA256
		if v.h != nil {
			sum = hex.EncodeToString(v.h.Sum(nil))
		}
		if v.n != v.t.Size || sum != v.t.SHA256 {
			return n, &DamagedError{Table: v.t, Size: v.n, SHA256: sum}
		}
	case err != nil && v.t.Packed != "" && !errors.Is(err, fs.ErrClosed):
		return n, &DamagedError{Table: v.t, Undecodable: err}
	}
	return n, err
}

func (v *verifier) Close() error { return v.closer.Close() }

// closers closes each in turn.
type closers []io.Closer

func (cs closers) Close() error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// tablesFS serves the bundle's tables under the names the manifest gives
// them, unpacked and checked as they are read (openTable); it is what a
// store ingests from.
type tablesFS struct {
	src    fs.FS
	tables map[string]Table
}

func newTablesFS(src fs.FS, tables []Table) tablesFS {
	t := tablesFS{src: src, tables: make(map[string]Table, len(tables))}
	for _, tb := range tables {
		t.tables[tb.Name] = tb
	}
	return t
}

func (t tablesFS) Open(name string) (fs.File, error) {
	tb, ok := t.tables[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	r, err := openTable(t.src, tb)
	if err != nil {
		return nil, err
	}
	return tableFile{r, tb}, nil
}

// tableFile is a table being read, as an fs.File.
type tableFile struct {
	io.ReadCloser
	t Table
}

func (f tableFile) Stat() (fs.FileInfo, error) { return tableInfo{f.t}, nil }

// tableInfo describes a table unpacked.
type tableInfo struct{ t Table }

func (i tableInfo) Name() string       { return path.Base(i.t.Name) }
func (i tableInfo) Size() int64        { return i.t.Size }
func (i tableInfo) Mode() fs.FileMode  { return 0o444 }
func (i tableInfo) ModTime() time.Time { return time.Time{} }
func (i tableInfo) IsDir() bool        { return false }
func (i tableInfo) Sys() any           { return nil }
