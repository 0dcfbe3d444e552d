//go:build unix

// Package mmap maps files read-only: the read index's segment files and the
// bundle's unpacked index, which readers share through the page cache.
package mmap

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// File maps the file at path read-only, and returns its bytes and the
// function that unmaps them. The pages are the page cache's, shared with
// every process mapping the file; a write to them faults, so nothing in
// the process can change the file's bytes under their readers.
func File(path string) ([]byte, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if size == 0 {
		// Nothing to map; the caller reports an empty file.
		return []byte{}, func() error { return nil }, nil
	}
	if size != int64(int(size)) {
		return nil, nil, fmt.Errorf("%s: %d bytes do not fit in this platform's address space", path, size)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mapping %s: %w", path, err)
	}
	return b, func() error { return unix.Munmap(b) }, nil
}
