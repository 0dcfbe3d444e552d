// Package segment is the container of the read index's segment files:
// immutable files of named sections, laid out so that each is used where
// it lies, in a memory mapping of the file or in bytes embedded in the
// binary, and the Go heap holds nothing of their content.
//
// A file is a header (the dataset it was written from, a digest of its
// content, the version of what its sections mean), a directory of named
// sections, and the sections, each on an 8-byte boundary and checksummed.
// What the sections hold is their writer's business (package kv/index);
// this package checks every byte before anything is read (Open, OpenBytes),
// or, for a file checked so before, only its header and directory, leaving
// the rest to a later Verify (OpenChecked), and gives the sections out as bytes, fixed-width columns viewed in place
// (Column), tables of byte strings (Table) and roaring bitmaps in their
// portable format (Bitmap). A truncated or corrupt file is an *Error naming
// the file and the section.
package segment

import (
	"context"
	"fmt"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/mmap"
)

// Meta is what a segment's header says of it.
type Meta struct {
	// Info is the dataset the segment was written from; Info.Records is
	// its number of records.
	Info rappel.DatasetInfo
	// Digest identifies the content: the writer's hash of it.
	Digest [32]byte
	// Content is the version of what the sections mean, the writer's
	// own: a reader that expects another refuses the file.
	Content uint32
}

// File is an open segment file. Its methods are safe for concurrent use.
// The bytes it gives out lie in its memory and must not be used after
// Close.
type File struct {
	name  string
	data  []byte
	unmap func() error
	meta  Meta
	secs  map[string]section
	// prechecked: opened by OpenChecked.
	prechecked bool
}

// Open maps the segment file at path read-only and checks it. Close
// unmaps it.
func Open(path string) (*File, error) { return openMapped(path, OpenBytes) }

// openMapped maps the file at path and opens its bytes with open.
func openMapped(path string, open func(name string, data []byte) (*File, error)) (*File, error) {
	data, unmap, err := mmap.File(path)
	if err != nil {
		return nil, fmt.Errorf("opening segment: %w", err)
	}
	f, err := open(path, data)
	if err != nil {
		_ = unmap()
		return nil, err
	}
	f.unmap = unmap
	return f, nil
}

// OpenBytes checks the segment in data, named name in errors, and reads it
// in place: data must not change while the file is in use.
func OpenBytes(name string, data []byte) (*File, error) {
	f, err := openBytes(name, data)
	if err != nil {
		return nil, err
	}
	if err := f.Verify(context.Background()); err != nil {
		return nil, err
	}
	return f, nil
}

// OpenChecked maps the segment file at path read-only, like Open, but
// checks only its header and directory (their own checksum, the sections'
// bounds): the sections' bytes are left to Verify. It is for a file whose
// every byte was verified before and that is known unchanged since, so
// that a start need not read gigabytes before it serves; the caller runs
// Verify afterwards, in the background, to catch what the disk did since.
func OpenChecked(path string) (*File, error) { return openMapped(path, OpenBytesChecked) }

// OpenBytesChecked is OpenChecked for a segment in data.
func OpenBytesChecked(name string, data []byte) (*File, error) {
	f, err := openBytes(name, data)
	if err != nil {
		return nil, err
	}
	f.prechecked = true
	return f, nil
}

// Prechecked reports whether the file was opened on its caller's word that
// it was checked before (OpenChecked): its readers may then skip the
// checks of structure that the same bytes passed then (Reader.Bitmap).
func (f *File) Prechecked() bool { return f.prechecked }

// openBytes reads the header and directory of the segment in data.
func openBytes(name string, data []byte) (*File, error) {
	h, err := parseHeader(name, data)
	if err != nil {
		return nil, err
	}
	f := &File{name: name, data: data, meta: h.meta, secs: make(map[string]section, len(h.sections))}
	for _, s := range h.sections {
		f.secs[s.name] = s
	}
	return f, nil
}

// Verify checks every byte of the file: each section's checksum, and that
// the padding between sections is zero. Open and OpenBytes run it before
// they return; after OpenChecked it is the caller's to run. It reads the
// whole file, so it takes seconds for one of gigabytes; it gives its
// processor up every megabyte, and stops with ctx's error when ctx is done.
func (f *File) Verify(ctx context.Context) error {
	h, err := parseHeader(f.name, f.data)
	if err != nil {
		return err
	}
	return h.verify(ctx, f.name, f.data)
}

// Close releases the file's memory mapping, if it has one. Nothing read
// from it in place may be used afterwards.
func (f *File) Close() error {
	unmap := f.unmap
	f.unmap, f.data, f.secs = nil, nil, nil
	if unmap == nil {
		return nil
	}
	if err := unmap(); err != nil {
		return fmt.Errorf("closing segment %s: %w", f.name, err)
	}
	return nil
}

// Name is the file's path, or the name given to OpenBytes.
func (f *File) Name() string { return f.name }

// Meta is what the header says.
func (f *File) Meta() Meta { return f.meta }

// Size is the file's length in bytes.
func (f *File) Size() int { return len(f.data) }

// Sections lists the sections' names, in file order.
func (f *File) Sections() []string {
	h, err := parseHeader(f.name, f.data)
	if err != nil {
		return nil
	}
	out := make([]string, len(h.sections))
	for i, s := range h.sections {
		out[i] = s.name
	}
	return out
}

// Fail returns the *Error of what is wrong in section sec.
func (f *File) Fail(sec, format string, args ...any) error {
	return &Error{File: f.name, Section: sec, Msg: fmt.Sprintf(format, args...)}
}

// Reader reads sections with a sticky error: after the first failure
// every call returns zero values, and Err reports it.
func (f *File) Reader() *Reader { return &Reader{f: f} }

// Reader reads the sections of a File; see File.Reader.
type Reader struct {
	f   *File
	err error
}

// Err is the first failure.
func (r *Reader) Err() error { return r.err }

// Fail records a failure in section sec, unless one is recorded.
func (r *Reader) Fail(sec, format string, args ...any) {
	if r.err == nil {
		r.err = r.f.Fail(sec, format, args...)
	}
}

// Bytes returns section name, which must hold want units of size bytes
// (any whole number of units when want < 0).
func (r *Reader) Bytes(name string, size, want int) []byte {
	if r.err != nil {
		return nil
	}
	sec, ok := r.f.secs[name]
	switch {
	case !ok:
		r.Fail(name, "missing: a segment of content version %d has it", r.f.meta.Content)
	case want >= 0 && sec.len != uint64(size)*uint64(want):
		r.Fail(name, "corrupt: %d bytes, want %d (%d × %d bytes)", sec.len, size*want, want, size)
	case sec.len%uint64(size) != 0:
		r.Fail(name, "corrupt: %d bytes, not a whole number of %d-byte values", sec.len, size)
	default:
		return r.f.data[sec.off:sec.end():sec.end()]
	}
	return nil
}

// ReadColumn returns section name as want values of T (any number when
// want < 0), in place where the host allows it (see Column).
func ReadColumn[T Word](r *Reader, name string, want int) []T {
	var zero T
	return Column[T](r.Bytes(name, sizeOf(zero), want))
}

// Table returns the table of the blob and offsets sections, which must
// hold want strings (any number when want < 0).
func (r *Reader) Table(blob, offs string, want int) Table {
	b := r.Bytes(blob, 1, -1)
	if want >= 0 {
		want++ // the end of the last string
	}
	o := ReadColumn[uint32](r, offs, want)
	if r.err != nil {
		return Table{}
	}
	t, err := NewTable(b, o)
	if err != nil {
		r.Fail(offs, "corrupt: %v", err)
	}
	return t
}

// Bitmaps returns the table of bitmaps of the blob and offsets sections
// (written by Writer.Bitmaps), which must hold want bitmaps, checking that
// each starts on an 8-byte boundary as a bitmap used in place must.
func (r *Reader) Bitmaps(blob, offs string, want int) Table {
	t := r.Table(blob, offs, want)
	if r.err != nil {
		return t
	}
	for _, o := range t.Offs {
		if o%align != 0 {
			r.Fail(offs, "corrupt: a bitmap does not start on an %d-byte boundary", align)
			break
		}
	}
	return t
}

// SectionSpan returns where section name lies in the segment bytes b, or
// 0, 0: for tests and tools that look at a file's layout.
func SectionSpan(b []byte, name string) (off, n int) {
	h, err := parseHeader("", b)
	if err != nil {
		return 0, 0
	}
	for _, s := range h.sections {
		if s.name == name {
			return int(s.off), int(s.len)
		}
	}
	return 0, 0
}
