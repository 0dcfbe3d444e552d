package segment

import "encoding/binary"

// Reseal rewrites the checksums of the segment in b, of every section its
// directory lists and of the header, as a writer would have computed them
// for these bytes: tests use it to reach the checks of structure behind
// the checksums, what a faulty writer rather than a faulty disk makes.
// Bytes too short or too garbled to hold a directory are left as they are.
func Reseal(b []byte) {
	if len(b) < headerSize {
		return
	}
	le := binary.LittleEndian
	count := int(le.Uint32(b[offCount:]))
	if count > maxSections || len(b) < headerSize+count*entrySize {
		return
	}
	for i := range count {
		e := b[headerSize+i*entrySize:]
		off, n := le.Uint64(e[24:]), le.Uint64(e[32:])
		if off <= uint64(len(b)) && n <= uint64(len(b))-off {
			le.PutUint32(e[40:], crcOf(b[off:off+n]))
		}
	}
	size := headerSize + count*entrySize
	le.PutUint32(b[offCRC:], headerCRC(b[:size]))
}
