//go:build !unix

package mmap

import "os"

// File reads the file at path into memory, where no memory mapping is
// used: the file is then on the heap, but reads the same.
func File(path string) ([]byte, func() error, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}
