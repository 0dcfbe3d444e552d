package storetest

import (
	"os"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// DiskFull returns an injector for Pebble's errorfs that, once turned On,
// fails with NoSpace every operation that takes space.
func DiskFull() *errorfs.Toggle {
	return &errorfs.Toggle{Injector: errorfs.InjectorFunc(NoSpace)}
}

// NoSpace fails with ENOSPC, as a full disk does, the operations that take
// space on a real file system: creating, writing, preallocating, linking
// and renaming; it lets every other pass. Syncs are left alone: a local
// file system reserves space at write time and reports a full disk there.
// A test that fills the disk for some paths only, or some of the time,
// calls it from an injector of its own.
func NoSpace(op errorfs.Op) error {
	if TakesSpace(op.Kind) {
		return &os.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
	}
	return nil
}

// TakesSpace reports whether an operation of kind takes space on a real
// file system, so that a full disk fails it (NoSpace).
func TakesSpace(kind errorfs.OpKind) bool {
	switch kind {
	case errorfs.OpCreate, errorfs.OpReuseForWrite, errorfs.OpFileWrite, errorfs.OpFileWriteAt,
		errorfs.OpFilePreallocate, errorfs.OpLink, errorfs.OpRename, errorfs.OpMkdirAll:
		return true
	}
	return false
}
