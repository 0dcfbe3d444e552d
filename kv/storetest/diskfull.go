package storetest

import (
	"os"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// DiskFull returns an injector for Pebble's errorfs that, once turned On,
// fails with ENOSPC every operation that takes space on a real file
// system: creating, writing, preallocating, linking and renaming. Syncs
// are left alone: a local file system reserves space at write time and
// reports a full disk there.
func DiskFull() *errorfs.Toggle {
	return &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		switch op.Kind {
		case errorfs.OpCreate, errorfs.OpReuseForWrite, errorfs.OpFileWrite, errorfs.OpFileWriteAt,
			errorfs.OpFilePreallocate, errorfs.OpLink, errorfs.OpRename, errorfs.OpMkdirAll:
			return &os.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
		}
		return nil
	})}
}
