//go:build !unix

package segment

import "os"

// mapFile reads the file at path into memory, where no memory mapping is
// used: the segment is then on the heap, but reads the same.
func mapFile(path string) ([]byte, func() error, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}
