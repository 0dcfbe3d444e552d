package bundle

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"
)

// WriteIndex writes the read index of the bundle in dir as the segment
// file index.seg and names it, its size, SHA-256 and the bundle's version
// in the manifest. Call it after Write (and WriteTables). write writes the
// segment of the contents read back from dir, as a node reads them, to
// path; the bundle's Version is the same before and after.
func WriteIndex(dir string, write func(path string, c Contents) error) error {
	src := os.DirFS(dir)
	m, version, c, err := readBack(src)
	if err != nil {
		return err
	}
	if err := write(filepath.Join(dir, indexFile), c); err != nil {
		return fmt.Errorf("writing the bundle's index: %w", err)
	}
	ix := &Index{Table: Table{Name: indexFile}, Bundle: version}
	if ix.Size, ix.SHA256, err = fileDigest(src, indexFile); err != nil {
		return fmt.Errorf("writing the bundle's index: %w", err)
	}
	if ix.Packed, err = pack(dir, indexFile); err != nil {
		return fmt.Errorf("writing the bundle's index: %w", err)
	}
	m.Index = ix
	return writeManifest(dir, m)
}

// IndexSegment returns the bytes of the embedded bundle's read index and
// the version of the bundle it indexes, or nil when the binary holds no
// index. An index the binary holds unpacked is given in place, read-only
// and not copied; a packed one is unpacked into memory, for tests and
// tools: a node unpacks it into its data dir instead (IndexDir).
func IndexSegment() ([]byte, string, error) {
	m, err := ReadManifest(Embedded())
	if err != nil || m.Index == nil {
		return nil, "", nil
	}
	if m.Index.Packed != "" {
		return ReadIndex(Embedded())
	}
	b, err := embeddedBytes(&data, "data/"+indexFile)
	if err != nil {
		return nil, "", fmt.Errorf("reading the embedded index: %w", err)
	}
	if int64(len(b)) != m.Index.Size {
		return nil, "", fmt.Errorf("the embedded index has %d bytes; the manifest says %d", len(b), m.Index.Size)
	}
	return b, m.Index.Bundle, nil
}

// embedFS mirrors embed.FS: a pointer to its sorted list of files, each
// a name, its content and a hash. The standard library gives a file's
// content only as a copy (ReadFile), which for the index would put a
// hundred megabytes in the heap at every start; its layout is read here
// instead, and checked against what the public API says of the file
// before it is trusted (embeddedBytes falls back to a copy otherwise).
type embedFS struct{ files *[]embedFile }

type embedFile struct {
	name string
	data string
	hash [16]byte
}

// embeddedBytes returns the content of name in fsys without copying it,
// or a copy when the layout is not the one expected.
func embeddedBytes(fsys *embed.FS, name string) ([]byte, error) {
	info, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	head := make([]byte, min(info.Size(), 4096))
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	_, err = f.Read(head)
	f.Close()
	if err != nil && info.Size() > 0 {
		return nil, err
	}
	if efs := (*embedFS)(unsafe.Pointer(fsys)); efs.files != nil {
		for _, ef := range *efs.files {
			if ef.name == name && int64(len(ef.data)) == info.Size() && ef.data[:len(head)] == string(head) {
				return unsafe.Slice(unsafe.StringData(ef.data), len(ef.data)), nil
			}
		}
	}
	return fs.ReadFile(fsys, name)
}

// ReadIndex reads the read index of the bundle in fsys into memory,
// unpacked and checked against its manifest, and the version of the
// bundle it indexes, or nil when the bundle has none.
func ReadIndex(fsys fs.FS) ([]byte, string, error) {
	m, err := ReadManifest(fsys)
	if err != nil || m.Index == nil {
		return nil, "", nil
	}
	r, err := openTable(fsys, m.Index.Table)
	if err != nil {
		return nil, "", fmt.Errorf("reading the bundle's index: %w", err)
	}
	defer r.Close()
	b := make([]byte, 0, m.Index.Size)
	if b, err = readFull(r, b); err != nil {
		return nil, "", fmt.Errorf("reading the bundle's index: %w", err)
	}
	return b, m.Index.Bundle, nil
}

// readFull appends all of r to b.
func readFull(r io.Reader, b []byte) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

// readBack reads the bundle in src as a node reads it: its manifest, its
// version and its contents, for what is derived from them after Write.
func readBack(src fs.FS) (Manifest, string, Contents, error) {
	m, err := ReadManifest(src)
	if err != nil {
		return m, "", Contents{}, err
	}
	version, err := Version(src)
	if err != nil {
		return m, "", Contents{}, err
	}
	c, err := readContents(src, m, version)
	return m, version, c, err
}
