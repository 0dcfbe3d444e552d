//go:build unix

package plugins

import "syscall"

// reserve maps n bytes of zeroed memory that take no room until written
// (MAP_NORESERVE: nor swap); where the mapping fails it falls back to the
// heap, whose fresh pages the kernel also gives only once touched.
func reserve(n uint64) []byte {
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return make([]byte, n)
	}
	return b
}

// release unmaps what reserve mapped, at once rather than at a later
// garbage collection.
func release(b []byte) {
	if len(b) > 0 {
		_ = syscall.Munmap(b)
	}
}
