package segment

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"runtime"
	"time"
)

// The file layout, every integer little-endian:
//
//	header     128 bytes at offset 0
//	  0  magic "RAPPELSG"
//	  8  format version, u32
//	 12  number of sections, u32
//	 16  file length, u64
//	 24  records, u64              (the dataset version: records,
//	 32  updated_at, i64 Unix ns    time of the last change, SHA-256 of
//	 40  digest, 32 bytes           every record's JSON in document order,
//	 72  source: length u8, 31 bytes and where the data came from)
//	104  content version, u32      (what the sections mean: their user's own
//	                                version, see Meta.Content)
//	108  reserved, zero
//	124  CRC-32C of the header and directory, this field read as zero
//	directory  48 bytes a section, right after the header
//	  0  name, 24 bytes, NUL-padded
//	 24  offset, u64 (a multiple of 8)
//	 32  length, u64
//	 40  CRC-32C of the section's bytes, u32
//	 44  reserved, zero
//	sections   in directory order, each starting on an 8-byte boundary;
//	           the padding between them is zero
//
// The directory is at the front, so that a file cut short names the
// section it was cut in.
const (
	magic = "RAPPELSG"
	// Version is the format version this package writes and reads. A
	// change in what a section holds or how it is laid out is a new
	// version: a reader refuses any other rather than misread it.
	Version = 1

	headerSize = 128
	entrySize  = 48
	nameSize   = 24
	align      = 8
	// maxSections bounds the directory a header can claim, so that a
	// corrupt count cannot make the reader allocate or read much.
	maxSections = 256
	maxSource   = 31

	offVersion = 8
	offCount   = 12
	offFileLen = 16
	offRecords = 24
	offUpdated = 32
	offDigest  = 40
	offSource  = 72
	offContent = 104
	offCRC     = 124
)

// castagnoli is CRC-32C, computed by a CPU instruction on amd64 and arm64.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Error is why a segment cannot be opened: the file (the name given to
// OpenBytes for bytes), the section at fault ("header" for the header and
// directory, "" when the bytes are no segment at all), and what is wrong.
type Error struct {
	File    string
	Section string
	Msg     string
}

func (e *Error) Error() string {
	if e.Section == "" {
		return fmt.Sprintf("segment %s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("segment %s: section %q: %s", e.File, e.Section, e.Msg)
}

// section is one directory entry.
type section struct {
	name     string
	off, len uint64
	crc      uint32
}

func (s section) end() uint64 { return s.off + s.len }

// header is the decoded header and directory.
type header struct {
	version  uint32
	fileLen  uint64
	meta     Meta
	sections []section
}

// size is the length of the header and directory, where sections start.
func (h *header) size() int { return headerSize + len(h.sections)*entrySize }

// encode returns the header and directory, checksummed. The source must
// fit its field (write checks it first).
func (h *header) encode() []byte {
	b := make([]byte, h.size())
	copy(b, magic)
	le := binary.LittleEndian
	le.PutUint32(b[offVersion:], h.version)
	le.PutUint32(b[offCount:], uint32(len(h.sections)))
	le.PutUint64(b[offFileLen:], h.fileLen)
	le.PutUint64(b[offRecords:], uint64(h.meta.Info.Records))
	if !h.meta.Info.UpdatedAt.IsZero() {
		le.PutUint64(b[offUpdated:], uint64(h.meta.Info.UpdatedAt.UnixNano()))
	}
	copy(b[offDigest:], h.meta.Digest[:])
	le.PutUint32(b[offContent:], h.meta.Content)
	b[offSource] = byte(len(h.meta.Info.Source))
	copy(b[offSource+1:], h.meta.Info.Source)
	for i, s := range h.sections {
		e := b[headerSize+i*entrySize:]
		copy(e[:nameSize], s.name)
		le.PutUint64(e[24:], s.off)
		le.PutUint64(e[32:], s.len)
		le.PutUint32(e[40:], s.crc)
	}
	le.PutUint32(b[offCRC:], headerCRC(b))
	return b
}

// headerCRC is the checksum of a header and directory, its own field read
// as zero.
func headerCRC(b []byte) uint32 {
	c := crc32.Update(0, castagnoli, b[:offCRC])
	c = crc32.Update(c, castagnoli, []byte{0, 0, 0, 0})
	return crc32.Update(c, castagnoli, b[offCRC+4:])
}

// parseHeader decodes and checks the header and directory of data, a
// segment named file: magic, version, checksum, length, and the directory's
// entries (aligned, in order, within the file, named once each).
func parseHeader(file string, data []byte) (*header, error) {
	fail := func(sec, format string, args ...any) error {
		return &Error{File: file, Section: sec, Msg: fmt.Sprintf(format, args...)}
	}
	if n := min(len(data), len(magic)); string(data[:n]) != magic[:n] {
		return nil, fail("", "not a segment file: it starts with %q, not %q", data[:n], magic)
	}
	if len(data) < headerSize {
		return nil, fail("header", "truncated: the file has %d bytes, fewer than the %d of a header", len(data), headerSize)
	}
	le := binary.LittleEndian
	h := &header{version: le.Uint32(data[offVersion:]), fileLen: le.Uint64(data[offFileLen:])}
	if h.version != Version {
		return nil, fail("header", "format version %d; this build reads version %d only: rebuild the segment with this build", h.version, Version)
	}
	count := le.Uint32(data[offCount:])
	if count > maxSections {
		return nil, fail("header", "corrupt: it claims %d sections, more than the %d a segment may have", count, maxSections)
	}
	size := headerSize + int(count)*entrySize
	if len(data) < size {
		return nil, fail("header", "truncated: the file has %d bytes, fewer than the %d of its header and directory", len(data), size)
	}
	if got, want := headerCRC(data[:size]), le.Uint32(data[offCRC:]); got != want {
		return nil, fail("header", "corrupt: checksum %08x, want %08x", got, want)
	}
	for i := range count {
		e := data[headerSize+int(i)*entrySize:]
		name, _, _ := bytes.Cut(e[:nameSize], []byte{0})
		h.sections = append(h.sections, section{name: string(name), off: le.Uint64(e[24:]), len: le.Uint64(e[32:]), crc: le.Uint32(e[40:])})
	}
	if n := uint64(len(data)); n != h.fileLen {
		if n > h.fileLen {
			return nil, fail("", "%d bytes follow the end of the segment (%d bytes)", n-h.fileLen, h.fileLen)
		}
		for _, s := range h.sections {
			if s.end() > n {
				return nil, fail(s.name, "truncated: the file has %d of its %d bytes, and this section (bytes %d to %d) is cut short", n, h.fileLen, s.off, s.end())
			}
		}
		return nil, fail("", "truncated: the file has %d of its %d bytes", n, h.fileLen)
	}
	if err := h.checkDirectory(size); err != nil {
		return nil, fail("header", "%v", err)
	}
	records := le.Uint64(data[offRecords:])
	if records > 1<<31-1 {
		return nil, fail("header", "corrupt: it claims %d records", records)
	}
	h.meta.Info.Records = int(records)
	if ns := int64(le.Uint64(data[offUpdated:])); ns != 0 {
		h.meta.Info.UpdatedAt = time.Unix(0, ns).UTC()
	}
	copy(h.meta.Digest[:], data[offDigest:])
	h.meta.Content = le.Uint32(data[offContent:])
	n := int(data[offSource])
	if n > maxSource {
		return nil, fail("header", "corrupt: a source of %d bytes", n)
	}
	h.meta.Info.Source = string(data[offSource+1 : offSource+1+n])
	return h, nil
}

// checkDirectory checks that the sections are named once each, aligned,
// in file order without overlap, after the directory and within the file.
func (h *header) checkDirectory(start int) error {
	seen := map[string]bool{}
	prev := uint64(start)
	for _, s := range h.sections {
		switch {
		case s.name == "" || seen[s.name]:
			return fmt.Errorf("corrupt: a section is unnamed or named twice (%q)", s.name)
		case s.off%align != 0:
			return fmt.Errorf("corrupt: section %q starts at %d, not on an %d-byte boundary", s.name, s.off, align)
		case s.off < prev || s.len > h.fileLen || s.off > h.fileLen-s.len:
			return fmt.Errorf("corrupt: section %q (%d bytes at %d) overlaps another or ends past the file", s.name, s.len, s.off)
		}
		seen[s.name] = true
		prev = s.end()
	}
	return nil
}

// verifyChunk is how much of a section verify checksums between looks at
// its context, and between yields of its processor: a fraction of a
// millisecond, so that a check running beside requests, on a node of one
// processor, delays none of them by more.
const verifyChunk = 1 << 20

// verify checks every section's checksum, and that the padding between
// sections is zero, so that every byte of the file is checked. It stops
// with ctx's error when ctx is done.
func (h *header) verify(ctx context.Context, file string, data []byte) error {
	prev := uint64(h.size())
	for _, s := range h.sections {
		for _, c := range data[prev:s.off] {
			if c != 0 {
				return &Error{File: file, Section: s.name, Msg: fmt.Sprintf("corrupt: the padding before it (bytes %d to %d) is not zero", prev, s.off)}
			}
		}
		var got uint32
		for off := s.off; off < s.end(); off += verifyChunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			got = crc32.Update(got, castagnoli, data[off:min(off+verifyChunk, s.end())])
			runtime.Gosched()
		}
		if got != s.crc {
			return &Error{File: file, Section: s.name, Msg: fmt.Sprintf("corrupt: checksum %08x of bytes %d to %d, want %08x", got, s.off, s.end(), s.crc)}
		}
		prev = s.end()
	}
	for _, c := range data[prev:] {
		if c != 0 {
			return &Error{File: file, Msg: fmt.Sprintf("corrupt: the padding after the last section (from byte %d) is not zero", prev)}
		}
	}
	return nil
}

func crcOf(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
