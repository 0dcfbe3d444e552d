package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/rappel-ca/rappel/internal/mmap"
)

// IndexDir is where a node keeps the bundle's read index unpacked: a
// directory of its data dir holding index.seg, the segment, and
// index.json, the manifest's entry for it, written last. The segment is
// read from there, mapped, as a segment file of the data dir is.
//
// An unpack that did not finish (a crash, a full disk) leaves no
// index.json, or one that names another file: the next start unpacks
// again, and says why, rather than serve what is there (README, "The
// embedded bundle").
type IndexDir struct {
	Dir string
	// FS is the file system the directory is on: vfs.Default when nil.
	FS  vfs.FS
	Log *slog.Logger
}

// Names inside an IndexDir.
const (
	unpackedIndex = indexFile
	unpackedStamp = "index.json"
)

// Open returns the read index of the bundle in src, the version of the
// bundle it indexes, and the function that releases it; nil when the
// bundle has none. A packed index is unpacked into the directory first,
// unless it holds it already; an index the bundle holds unpacked (a
// bundle built before they were packed) is read from src: in place when
// src is the embedded bundle, a copy otherwise.
func (d IndexDir) Open(src fs.FS) ([]byte, string, func() error, error) {
	none := func() error { return nil }
	m, err := ReadManifest(src)
	if errors.Is(err, ErrEmpty) || (err == nil && m.Index == nil) {
		return nil, "", none, nil
	} else if err != nil {
		return nil, "", none, err
	}
	if m.Index.Packed == "" {
		var b []byte
		if _, ok := src.(embeddedFS); ok {
			b, _, err = IndexSegment()
		} else {
			b, _, err = ReadIndex(src)
		}
		return b, m.Index.Bundle, none, err
	}
	if why := d.unpacked(*m.Index); why != "" {
		d.Log.Info("unpacking the bundle's read index into the data dir", "why", why, "dir", d.Dir, "bytes", m.Index.Size)
		if err := d.unpack(src, *m.Index); err != nil {
			return nil, "", none, fmt.Errorf("unpacking the bundle's read index into %s: %w", d.Dir, err)
		}
	}
	b, unmap, err := mmap.File(d.fs().PathJoin(d.Dir, unpackedIndex))
	if err != nil {
		return nil, "", none, fmt.Errorf("opening the bundle's read index: %w", err)
	}
	if int64(len(b)) != m.Index.Size {
		return nil, "", none, errors.Join(fmt.Errorf("the bundle's read index in %s changed while it was opened: it has %d bytes, its manifest says %d; start again", d.Dir, len(b), m.Index.Size), unmap())
	}
	return b, m.Index.Bundle, unmap, nil
}

func (d IndexDir) fs() vfs.FS {
	if d.FS == nil {
		return vfs.Default
	}
	return d.FS
}

// unpacked says why the directory does not hold ix, or "" when it does:
// index.json names it and index.seg has its size. Its content is not
// hashed again at every start: unpack checked it before writing
// index.json, and the read index checks the segment's own checksums in
// the background once it serves (kv/index, checkstamp.go).
func (d IndexDir) unpacked(ix Index) string {
	fsys := d.fs()
	b, err := readAll(fsys, fsys.PathJoin(d.Dir, unpackedStamp))
	if errors.Is(err, os.ErrNotExist) {
		if _, err := fsys.Stat(fsys.PathJoin(d.Dir, unpackedIndex+".tmp")); err == nil {
			return "an earlier unpack did not finish (a crash or a full disk); unpacking it again"
		}
		return "first start on this data dir"
	} else if err != nil {
		return fmt.Sprintf("its record %s is unreadable (%v)", unpackedStamp, err)
	}
	var have Index
	if err := json.Unmarshal(b, &have); err != nil || have != ix {
		return "the data dir holds the index of another bundle"
	}
	fi, err := fsys.Stat(fsys.PathJoin(d.Dir, unpackedIndex))
	if err != nil {
		return fmt.Sprintf("%s is missing (%v)", unpackedIndex, err)
	}
	if fi.Size() != ix.Size {
		return fmt.Sprintf("%s has %d bytes, not the %d unpacked: it was cut short or changed; unpacking it again", unpackedIndex, fi.Size(), ix.Size)
	}
	return ""
}

// unpack writes ix into the directory: index.json is removed first and
// written last, each file synced before the next step, so that a crash
// anywhere leaves a directory unpacked finds incomplete.
func (d IndexDir) unpack(src fs.FS, ix Index) error {
	fsys := d.fs()
	stamp, seg := fsys.PathJoin(d.Dir, unpackedStamp), fsys.PathJoin(d.Dir, unpackedIndex)
	if err := fsys.MkdirAll(d.Dir, 0o755); err != nil {
		return err
	}
	if err := fsys.Remove(stamp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	r, err := openTable(src, ix.Table)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := writeSynced(fsys, seg, r); err != nil {
		return err
	}
	b, err := json.Marshal(ix)
	if err != nil {
		return err
	}
	if err := writeSynced(fsys, stamp, bytes.NewReader(b)); err != nil {
		return err
	}
	return syncDir(fsys, d.Dir)
}

// writeSynced writes r to path+".tmp", syncs it and renames it to path.
func writeSynced(fsys vfs.FS, path string, r io.Reader) error {
	tmp := path + ".tmp"
	f, err := fsys.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return err
	}
	return fsys.Rename(tmp, path)
}

// syncDir syncs the directory dir, so that the renames in it survive a
// crash.
func syncDir(fsys vfs.FS, dir string) error {
	f, err := fsys.OpenDir(dir)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// readAll reads the file at path on fsys.
func readAll(fsys vfs.FS, path string) ([]byte, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
