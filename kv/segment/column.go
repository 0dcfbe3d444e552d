package segment

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// littleEndian reports whether the host stores integers as the format
// does, so that a column can be used where it lies.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Word is the type of a fixed-width column's values.
type Word interface{ ~int32 | ~uint32 | ~int64 }

func sizeOf[T Word](v T) int { return int(unsafe.Sizeof(v)) }

// Column returns b, a column of little-endian values, as a []T. On a
// little-endian host with b aligned for T (every section starts on an
// 8-byte boundary, and a mapping or an embedded file starts on a page or a
// larger boundary) it is b itself, no copy; elsewhere it is a decoded copy.
// len(b) must be a multiple of T's size.
func Column[T Word](b []byte) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	n := len(b) / size
	if n == 0 {
		return nil
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if littleEndian && uintptr(p)%unsafe.Alignof(zero) == 0 {
		return unsafe.Slice((*T)(p), n)
	}
	out := make([]T, n)
	for i := range out {
		if size == 4 {
			out[i] = T(binary.LittleEndian.Uint32(b[4*i:]))
		} else {
			out[i] = T(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	return out
}

// Table is a list of byte strings kept as one blob and a column of
// offsets: string i is Blob[Offs[i]:Offs[i+1]].
type Table struct {
	Blob []byte
	Offs []uint32
}

// NewTable checks that offs starts at 0, never decreases and ends at the
// end of blob, so that every string of the table lies within it.
func NewTable(blob []byte, offs []uint32) (Table, error) {
	if len(offs) == 0 {
		return Table{}, fmt.Errorf("no offsets")
	}
	if offs[0] != 0 {
		return Table{}, fmt.Errorf("the first offset is %d, not 0", offs[0])
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			return Table{}, fmt.Errorf("offset %d (%d) is below the one before it (%d)", i, offs[i], offs[i-1])
		}
	}
	if last := offs[len(offs)-1]; uint64(last) != uint64(len(blob)) {
		return Table{}, fmt.Errorf("the last offset is %d, not the end of the %d bytes", last, len(blob))
	}
	return Table{Blob: blob, Offs: offs}, nil
}

// Len is the number of strings.
func (t Table) Len() int { return max(len(t.Offs)-1, 0) }

// At returns string i.
func (t Table) At(i int) []byte { return t.Blob[t.Offs[i]:t.Offs[i+1]] }
