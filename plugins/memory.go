package plugins

import "github.com/tetratelabs/wazero/experimental"

// reservedMemory backs a guest's linear memory with one buffer the size of
// its limit, reserved up front and never copied: growing only lengthens
// the slice. wazero's own memory grows by copying into a larger slice, so
// a guest near its limit briefly costs twice it, and the garbage of each
// copy more; a memory bomb with a 1 GiB limit took its process past
// 2.5 GiB. Reserved pages cost nothing until the guest writes them.
type reservedMemory struct {
	buf []byte
}

// allocateMemory is the guest's experimental.MemoryAllocator.
func allocateMemory(_, max uint64) experimental.LinearMemory {
	return &reservedMemory{buf: reserve(max)}
}

// Reallocate returns the memory at size bytes; nil past the reservation,
// which the guest sees as a failed memory.grow.
func (m *reservedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size]
}

func (m *reservedMemory) Free() {
	release(m.buf)
	m.buf = nil
}
