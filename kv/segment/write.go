package segment

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/RoaringBitmap/roaring/v2"
)

// Fill writes a segment's sections to w and returns its Meta.
type Fill func(w *Writer) (Meta, error)

// WriteFile writes the segment fill makes to path: under a temporary name
// in the same directory, synced, renamed over path, and the directory
// synced, so that after a crash path holds either its old content or the
// whole segment. onStep, when not nil, is told of each step (StepWritten,
// StepSynced, StepRenamed): crash tests stop the process there. It is a
// parameter rather than a package variable so that no test can leave it
// set for another, and production passes nil.
func WriteFile(path string, fill Fill, onStep func(step string)) (err error) {
	step := func(name string) {
		if onStep != nil {
			onStep(name)
		}
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing segment %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
			err = fmt.Errorf("writing segment %s: %w", path, err)
		}
	}()
	if err = write(f, fill); err != nil {
		return err
	}
	step(StepWritten)
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	step(StepSynced)
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	step(StepRenamed)
	return SyncDir(dir)
}

// SyncDir syncs the directory dir, so that a rename or removal in it
// survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Steps of WriteFile, for its onStep.
const (
	StepWritten = "segment-written" // the temporary file holds the segment, not synced
	StepSynced  = "segment-synced"  // ... synced and closed, not renamed
	StepRenamed = "segment-renamed" // renamed, the directory not synced
)

// Encode returns the segment fill makes, in memory.
func Encode(fill Fill) ([]byte, error) {
	var m memSink
	if err := write(&m, fill); err != nil {
		return nil, fmt.Errorf("encoding segment: %w", err)
	}
	return m.b, nil
}

// sink is where a segment is written: its sections one after another,
// then its header, at the start, once the sections' places and checksums
// are known.
type sink interface {
	io.Writer
	io.WriterAt
}

type memSink struct{ b []byte }

func (m *memSink) Write(p []byte) (int, error) {
	m.b = append(m.b, p...)
	return len(p), nil
}

func (m *memSink) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(m.b)) || int64(len(p)) > int64(len(m.b))-off {
		return 0, fmt.Errorf("writing %d bytes at %d of %d", len(p), off, len(m.b))
	}
	return copy(m.b[off:], p), nil
}

// roomFor is how many sections the directory has room for: it is written
// before the sections are known, and its unused entries are padding.
const roomFor = 96

// writeBufs holds the 1 MiB buffers of finished writes: a refresh writes
// a small segment every few seconds, and a fresh buffer each time is a
// megabyte of garbage whose collection searches running meanwhile pay for.
var writeBufs = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 1<<20) }}

// write writes the segment fill makes to dst.
func write(dst sink, fill Fill) error {
	bw := writeBufs.Get().(*bufio.Writer)
	bw.Reset(dst)
	defer func() {
		bw.Reset(nil) // drop dst, and what an error left unwritten
		writeBufs.Put(bw)
	}()
	w := &Writer{bw: bw}
	w.padTo(uint64(headerSize + roomFor*entrySize))
	meta, err := fill(w)
	if err != nil {
		return err
	}
	if w.err != nil {
		return w.err
	}
	if w.open {
		return fmt.Errorf("section %q was not ended", w.secs[len(w.secs)-1].name)
	}
	if len(meta.Info.Source) > maxSource {
		return fmt.Errorf("the dataset source %q is longer than the %d bytes a header holds", meta.Info.Source, maxSource)
	}
	if len(w.secs) > roomFor {
		return fmt.Errorf("%d sections, more than the %d the directory has room for", len(w.secs), roomFor)
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	h := &header{version: Version, meta: meta, fileLen: w.off, sections: w.secs}
	_, err = dst.WriteAt(h.encode(), 0)
	return err
}

// Writer writes sections one after another, each on an 8-byte boundary,
// computing each one's checksum. Its first error sticks and is returned
// by the write.
type Writer struct {
	bw   *bufio.Writer
	off  uint64
	crc  uint32
	secs []section
	open bool
	err  error
}

// Write adds p to the open section.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.bw.Write(p)
	w.off += uint64(n)
	w.crc = crc32.Update(w.crc, castagnoli, p[:n])
	w.err = err
	return n, err
}

// Err is the first error of the writer.
func (w *Writer) Err() error { return w.err }

// padTo writes zeros, outside any section, up to offset off.
func (w *Writer) padTo(off uint64) {
	for ; w.off < off && w.err == nil; w.off++ {
		w.err = w.bw.WriteByte(0)
	}
}

// Begin opens section name; what is written up to End is its content.
func (w *Writer) Begin(name string) {
	if len(name) > nameSize || name == "" {
		w.err = fmt.Errorf("section name %q is empty or longer than %d bytes", name, nameSize)
	}
	w.padTo((w.off + align - 1) / align * align)
	w.secs = append(w.secs, section{name: name, off: w.off})
	w.crc = 0
	w.open = true
}

// End closes the open section.
func (w *Writer) End() {
	s := &w.secs[len(w.secs)-1]
	s.len, s.crc = w.off-s.off, w.crc
	w.open = false
}

// Rel returns the offset in the open section, which must fit 32 bits.
func (w *Writer) Rel() uint32 {
	s := w.secs[len(w.secs)-1]
	o := w.off - s.off
	if o > math.MaxUint32 && w.err == nil {
		w.err = fmt.Errorf("section %q is over 4 GiB, past what its 32-bit offsets address", s.name)
	}
	return uint32(o)
}

// Align pads the open section with zeros to an 8-byte boundary.
func (w *Writer) Align() {
	var z [align]byte
	_, _ = w.Write(z[:-int(w.off-w.secs[len(w.secs)-1].off)&(align-1)])
}

// Section writes b as section name.
func (w *Writer) Section(name string, b []byte) {
	w.Begin(name)
	_, _ = w.Write(b)
	w.End()
}

// WriteColumn writes vals as section name, little-endian.
func WriteColumn[T Word](w *Writer, name string, vals []T) {
	w.Begin(name)
	// The buffer holds the column or 64 KiB of it: a small segment's
	// columns take no more than they need.
	buf := make([]byte, 0, min(64<<10, int(unsafe.Sizeof(*new(T)))*len(vals)+8))
	for _, v := range vals {
		if unsafe.Sizeof(v) == 8 {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
		} else {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(v))
		}
		if len(buf) >= 64<<10-8 {
			_, _ = w.Write(buf)
			buf = buf[:0]
		}
	}
	_, _ = w.Write(buf)
	w.End()
}

// Strings writes the n strings at(i) as the section blob, and where each
// starts (and the last ends) as the section offs: a Table.
func (w *Writer) Strings(blob, offs string, n int, at func(i int) []byte) {
	o := make([]uint32, 0, n+1)
	w.Begin(blob)
	for i := range n {
		o = append(o, w.Rel())
		_, _ = w.Write(at(i))
	}
	o = append(o, w.Rel())
	w.End()
	WriteColumn(w, offs, o)
}

// Bitmaps writes bms in roaring's portable format as the section blob,
// each on an 8-byte boundary (the zeros between them are part of the
// section), and where each starts as the section offs: a Table that
// Reader.Bitmaps reads.
func (w *Writer) Bitmaps(blob, offs string, n int, at func(i int) *roaring.Bitmap) {
	o := make([]uint32, 0, n+1)
	w.Begin(blob)
	for i := range n {
		o = append(o, w.Rel())
		if _, err := at(i).WriteTo(w); err != nil && w.err == nil {
			w.err = err
		}
		w.Align()
	}
	o = append(o, w.Rel())
	w.End()
	WriteColumn(w, offs, o)
}
