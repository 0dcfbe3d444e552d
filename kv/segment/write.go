package segment

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/vellum"

	"github.com/rappel-ca/rappel/kv/index"
)

// WriteFile writes the segment of snap to path: under a temporary name in
// the same directory, synced, renamed over path, and the directory synced,
// so that after a crash path holds either its old content or the whole
// segment.
func WriteFile(path string, snap *index.Snapshot) (err error) {
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
	if err = write(f, snap); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Encode returns the segment of snap, in memory.
func Encode(snap *index.Snapshot) ([]byte, error) {
	var m memSink
	if err := write(&m, snap); err != nil {
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

// write writes the segment of snap to dst.
func write(dst sink, snap *index.Snapshot) error {
	n := snap.Len()
	h := &header{version: Version, info: snap.Info(), sections: make([]section, 0, len(sectionOrder))}
	h.info.Records = n
	if len(h.info.Source) > maxSource {
		return fmt.Errorf("the dataset source %q is longer than the %d bytes a header holds", h.info.Source, maxSource)
	}
	h.digest = digest(snap)
	w := &writer{bw: bufio.NewWriterSize(dst, 1<<20), room: headerSize + len(sectionOrder)*entrySize}
	w.padTo(uint64(w.room))

	w.strings(secIDs, secIDOffs, n, func(i int) string { return snap.DocID(int32(i)) })
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return strings.Compare(snap.DocID(int32(a)), snap.DocID(int32(b))) })
	writeColumn(w, secIDOrder, order)

	w.json(snap)

	event, recall, units := make([]int32, n), make([]int32, n), make([]int64, n)
	for d := range n {
		event[d], recall[d], units[d] = snap.DocValues(int32(d))
	}
	writeColumn(w, secEventDay, event)
	writeColumn(w, secRecallDay, recall)
	writeColumn(w, secUnits, units)

	keys, bms := filterBitmaps(snap)
	w.strings(secFilterKeys, secFilterKeyOff, len(keys), func(i int) string { return keys[i] })
	w.bitmaps(secFilters, secFilterOffs, bms)

	if err := w.terms(snap); err != nil {
		return err
	}
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	h.fileLen, h.sections = w.off, w.secs
	if len(h.sections) != len(sectionOrder) {
		return fmt.Errorf("wrote %d sections, not the %d of format version %d", len(h.sections), len(sectionOrder), Version)
	}
	_, err := dst.WriteAt(h.encode(), 0)
	return err
}

// digest is the SHA-256 of every record's JSON, each followed by a
// newline, in document order.
func digest(snap *index.Snapshot) [32]byte {
	sum := sha256.New()
	var buf []byte
	for d := range snap.Len() {
		b, cuts := snap.DocJSON(int32(d))
		buf = append(index.AppendJSON(buf[:0], b, cuts, ""), '\n')
		sum.Write(buf)
	}
	var out [32]byte
	sum.Sum(out[:0])
	return out
}

// filterBitmaps returns the keys of the snapshot's filter bitmaps
// ("field\x00value"), ascending, and the bitmaps in the same order.
func filterBitmaps(snap *index.Snapshot) ([]string, []*roaring.Bitmap) {
	type kv struct {
		key string
		bm  *roaring.Bitmap
	}
	var all []kv
	snap.Filters(func(field, value string, bm *roaring.Bitmap) {
		all = append(all, kv{field + "\x00" + value, bm})
	})
	slices.SortFunc(all, func(a, b kv) int { return strings.Compare(a.key, b.key) })
	keys, bms := make([]string, len(all)), make([]*roaring.Bitmap, len(all))
	for i, e := range all {
		keys[i], bms[i] = e.key, e.bm
	}
	return keys, bms
}

// writer writes sections one after another, each on an 8-byte boundary,
// computing each one's checksum. Its first error sticks.
type writer struct {
	bw   *bufio.Writer
	off  uint64
	room int // the header's bytes, written last
	crc  uint32
	secs []section
	err  error
}

// Write adds p to the open section.
func (w *writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.bw.Write(p)
	w.off += uint64(n)
	w.crc = crc32.Update(w.crc, castagnoli, p[:n])
	w.err = err
	return n, err
}

// padTo writes zeros, outside any section, up to offset off.
func (w *writer) padTo(off uint64) {
	for ; w.off < off && w.err == nil; w.off++ {
		w.err = w.bw.WriteByte(0)
	}
}

func (w *writer) begin(name string) {
	w.padTo((w.off + align - 1) / align * align)
	w.secs = append(w.secs, section{name: name, off: w.off})
	w.crc = 0
}

func (w *writer) end() {
	s := &w.secs[len(w.secs)-1]
	s.len, s.crc = w.off-s.off, w.crc
}

// rel returns the offset in the open section, which must fit 32 bits.
func (w *writer) rel() uint32 {
	s := w.secs[len(w.secs)-1]
	o := w.off - s.off
	if o > math.MaxUint32 && w.err == nil {
		w.err = fmt.Errorf("section %q is over 4 GiB, past what its 32-bit offsets address", s.name)
	}
	return uint32(o)
}

// writeColumn writes vals as the section name, little-endian.
func writeColumn[T word](w *writer, name string, vals []T) {
	w.begin(name)
	buf := make([]byte, 0, 64<<10)
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
	w.end()
}

// strings writes the n strings at(i) as the section blob, and where each
// starts (and the last ends) as the section offs.
func (w *writer) strings(blob, offs string, n int, at func(i int) string) {
	o := make([]uint32, 0, n+1)
	w.begin(blob)
	for i := range n {
		o = append(o, w.rel())
		_, _ = io.WriteString(w, at(i))
	}
	o = append(o, w.rel())
	w.end()
	writeColumn(w, offs, o)
}

// json writes every document's JSON as index.Snapshot.DocJSON cuts it,
// and where each of its four parts starts (and the last ends).
func (w *writer) json(snap *index.Snapshot) {
	n := snap.Len()
	o := make([]uint32, 0, 4*n+1)
	w.begin(secJSON)
	for d := range n {
		b, cuts := snap.DocJSON(int32(d))
		start := w.rel()
		o = append(o, start, start+cuts[0], start+cuts[1], start+cuts[2])
		_, _ = w.Write(b)
	}
	o = append(o, w.rel())
	w.end()
	writeColumn(w, secJSONOffs, o)
}

// bitmaps writes bms in roaring's portable format as the section blob,
// each on an 8-byte boundary (the zeros between them are part of the
// section), and where each starts as the section offs.
func (w *writer) bitmaps(blob, offs string, bms []*roaring.Bitmap) {
	o := make([]uint32, 0, len(bms)+1)
	w.begin(blob)
	for _, bm := range bms {
		o = append(o, w.rel())
		if _, err := bm.WriteTo(w); err != nil && w.err == nil {
			w.err = err
		}
		w.zeros(-int(w.off-w.secs[len(w.secs)-1].off) & (align - 1))
	}
	o = append(o, w.rel())
	w.end()
	writeColumn(w, offs, o)
}

// zeros writes n zeros into the open section.
func (w *writer) zeros(n int) {
	var z [align]byte
	_, _ = w.Write(z[:n])
}

// terms writes the term dictionary of both text streams, each term
// mapped to its ordinal, and the terms' documents in that order.
func (w *writer) terms(snap *index.Snapshot) error {
	w.begin(secTerms)
	b, err := vellum.New(w, nil)
	if err != nil {
		return fmt.Errorf("building the term dictionary: %w", err)
	}
	var bms []*roaring.Bitmap
	var key []byte
	for _, stream := range []int{index.StreamEN, index.StreamFR} {
		snap.Postings(stream, func(term string, docs *roaring.Bitmap) {
			key, _ = termKey(key[:0], stream, term)
			if err == nil {
				err = b.Insert(key, uint64(len(bms)))
			}
			bms = append(bms, docs)
		})
	}
	if err == nil {
		err = b.Close()
	}
	if err != nil {
		return fmt.Errorf("building the term dictionary: %w", err)
	}
	w.end()
	w.bitmaps(secPostings, secPostingOffs, bms)
	return nil
}
