package archive

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// AddTree adds the regular files under the directory root, under their
// slash-separated paths relative to it, skipping the top-level names skip
// reports, every dot-name (a file being written under a temporary name),
// and files that vanish while it walks: a running node's data dir
// changes under a backup. It returns ctx's error once ctx is done.
func (a *Writer) AddTree(ctx context.Context, root string, skip func(name string) bool) error {
	return a.addTree(ctx, root, "", skip)
}

// addTree is AddTree for the directory root/rel.
func (a *Writer) addTree(ctx context.Context, root, rel string, skip func(string) bool) error {
	entries, err := os.ReadDir(filepath.Join(root, rel))
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		if (rel == "" && skip(name)) || strings.HasPrefix(name, ".") {
			continue
		}
		p := treePath(rel, name)
		switch {
		case e.IsDir():
			err = a.addTree(ctx, root, p, skip)
		case e.Type().IsRegular():
			err = a.addFileAt(filepath.Join(root, filepath.FromSlash(p)), p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// treePath joins an archive path.
func treePath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// addFileAt adds the file at fsPath as name; a file gone before it is
// opened is left out.
func (a *Writer) addFileAt(fsPath, name string) error {
	f, err := os.Open(fsPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return a.Add(name, fi.Size(), int64(fi.Mode().Perm()), f)
}
