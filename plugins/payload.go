package plugins

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"testing/fstest"
	"time"
)

// Payload is a source's raw documents held in memory: a read-only fs.FS
// that a plugin run sees under /in. The registry keeps each source's last
// good payload to try candidate plugins on, so it owns a copy rather than
// a reference to a caller's file system that may change or disappear.
type Payload struct {
	files map[string][]byte
	dirs  map[string][]string // directory → sorted child names
	size  int64
}

// CopyPayload reads every regular file of fsys into memory. Only names and
// contents are kept: a plugin cannot tell a copy from the original.
func CopyPayload(fsys fs.FS) (*Payload, error) {
	if p, ok := fsys.(*Payload); ok {
		return p, nil
	}
	p := newPayload()
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		p.add(name, b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading plugin input: %w", err)
	}
	p.seal()
	return p, nil
}

// viewPayload is CopyPayload without the copy where fsys is documents
// held in memory (an fstest.MapFS, what a refresh hands a plugin): the
// payload shares their bytes. It is for a run that keeps nothing of its
// input: a copy of the vehicle file's 207 MB would only double what the
// run holds.
func viewPayload(fsys fs.FS) (*Payload, error) {
	m, ok := fsys.(fstest.MapFS)
	if !ok {
		return CopyPayload(fsys)
	}
	files := make(map[string][]byte, len(m))
	for name, f := range m {
		if f.Mode.IsRegular() {
			files[name] = f.Data
		}
	}
	return NewPayload(files)
}

// NewPayload returns a payload holding files, by slash-separated name
// relative to /in (for example "en/10002.json"). It keeps the map's byte
// slices; the caller must not change them.
func NewPayload(files map[string][]byte) (*Payload, error) {
	p := newPayload()
	for name, b := range files {
		if !fs.ValidPath(name) || name == "." {
			return nil, fmt.Errorf("%q is not a file name inside the input", name)
		}
		p.add(name, b)
	}
	p.seal()
	return p, nil
}

func newPayload() *Payload {
	return &Payload{files: map[string][]byte{}, dirs: map[string][]string{".": nil}}
}

// add records a file and every directory above it; seal sorts directories.
func (p *Payload) add(name string, b []byte) {
	p.files[name] = b
	p.size += int64(len(b))
	for child := name; child != "."; {
		dir := path.Dir(child)
		_, known := p.dirs[dir]
		p.dirs[dir] = append(p.dirs[dir], path.Base(child))
		if known {
			break
		}
		child = dir
	}
}

func (p *Payload) seal() {
	for d, names := range p.dirs {
		sort.Strings(names)
		p.dirs[d] = names
	}
}

// Size returns the total bytes of the payload's files.
func (p *Payload) Size() int64 { return p.size }

// Len returns the number of files in the payload.
func (p *Payload) Len() int { return len(p.files) }

// Open implements fs.FS.
func (p *Payload) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if b, ok := p.files[name]; ok {
		return &memFile{Reader: bytes.NewReader(b), info: memInfo{name: path.Base(name), size: int64(len(b))}}, nil
	}
	if names, ok := p.dirs[name]; ok {
		return &memDir{p: p, dir: name, names: names, info: memInfo{name: path.Base(name), dir: true}}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// writeTar writes the payload as a tar stream, files in name order.
func (p *Payload) writeTar(w io.Writer) error {
	names := make([]string, 0, len(p.files))
	for n := range p.files {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tar.NewWriter(w)
	for _, n := range names {
		b := p.files[n]
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Size: int64(len(b)), Mode: 0o444}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	return tw.Close()
}

// readTarPayload reads a payload written by writeTar, refusing names that
// would leave the payload's root.
func readTarPayload(r io.Reader) (*Payload, error) {
	p := newPayload()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading input archive: %w", err)
		}
		if h.Typeflag != tar.TypeReg || !fs.ValidPath(h.Name) || h.Name == "." {
			return nil, fmt.Errorf("reading input archive: %q is not a regular file inside the input", h.Name)
		}
		if _, dup := p.files[h.Name]; dup {
			return nil, fmt.Errorf("reading input archive: %q appears twice", h.Name)
		}
		b := make([]byte, h.Size)
		if _, err := io.ReadFull(tr, b); err != nil {
			return nil, fmt.Errorf("reading input archive %s: %w", h.Name, err)
		}
		p.add(h.Name, b)
	}
	p.seal()
	return p, nil
}

type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i memInfo) ModTime() time.Time         { return time.Time{} }
func (i memInfo) IsDir() bool                { return i.dir }
func (i memInfo) Sys() any                   { return nil }
func (i memInfo) Type() fs.FileMode          { return i.Mode().Type() }
func (i memInfo) Info() (fs.FileInfo, error) { return i, nil }

// memFile is an open file: a bytes.Reader also gives ReadAt and Seek, which
// wazero uses for pread and lseek.
type memFile struct {
	*bytes.Reader
	info memInfo
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Close() error               { return nil }

// memDir is an open directory, read with ReadDir.
type memDir struct {
	p     *Payload
	dir   string
	names []string
	off   int
	info  memInfo
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Close() error               { return nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.dir, Err: errors.New("is a directory")}
}

// ReadDir implements fs.ReadDirFile.
func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.names[d.off:]
	if n > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if n > 0 && n < len(rest) {
		rest = rest[:n]
	}
	d.off += len(rest)
	out := make([]fs.DirEntry, len(rest))
	for i, name := range rest {
		full := path.Join(d.dir, name)
		if b, ok := d.p.files[full]; ok {
			out[i] = memInfo{name: name, size: int64(len(b))}
		} else {
			out[i] = memInfo{name: name, dir: true}
		}
	}
	return out, nil
}

// String describes the payload for logs.
func (p *Payload) String() string {
	return fmt.Sprintf("%d files, %d bytes", len(p.files), p.size)
}

// Digest returns the SHA-256 of the payload's names and contents, in name
// order, so that two payloads with the same files have the same digest.
func (p *Payload) Digest() string {
	names := make([]string, 0, len(p.files))
	for name := range p.files {
		names = append(names, name)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, name := range names {
		fmt.Fprintf(h, "%d:%s%d:", len(name), name, len(p.files[name]))
		h.Write(p.files[name])
	}
	return hex.EncodeToString(h.Sum(nil))
}
