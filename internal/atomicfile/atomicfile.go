// Package atomicfile writes a file so that a reader, or a restart after a
// crash, finds the old file or the new one whole, never a part: the one
// home of that rule for the bundle's files and the plugins kept in the data
// dir.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write writes b to path with mode perm through a temporary file in the
// same directory, synced to disk before it is renamed into place, and the
// directory synced after, so that the rename itself survives a crash. On
// an error the temporary file is removed and path is as it was.
func Write(path string, b []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// A directory that cannot be opened or synced (some file systems
	// refuse) leaves the file written: the rename is done, only its
	// durability across a power loss is the file system's.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
