// Package archive reads and writes a node's backup (docs/operations.md,
// "Backup and restore"): a tar stream of the data dir's files under their paths relative
// to it, directories implied, followed by one last entry, ManifestName,
// listing every file with its size and SHA-256. The manifest comes last
// because the archive is streamed as the files are read: a stream cut
// anywhere lacks it, and a reader refuses an archive whose files do not
// match it. Writer.AddTree walks a directory into an archive. It depends
// on the standard library only, so that its fuzz target builds and starts
// quickly.
package archive

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"strings"
	"time"
)

// ManifestName is the manifest's name in the archive; no data dir
// file has it.
const ManifestName = "rappel-backup.json"

// Format is the manifest's format version; a restore refuses others.
const Format = 1

// maxManifest bounds the manifest a restore reads into memory.
const maxManifest = 16 << 20

// Manifest is the archive's last entry.
type Manifest struct {
	Format    int       `json:"format"`
	CreatedAt time.Time `json:"created_at"`
	Files     []File    `json:"files"`
}

// File is one file of the archive as the manifest records it.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Writer writes the archive's files and then its manifest.
type Writer struct {
	tw       *tar.Writer
	manifest Manifest
}

// NewWriter returns a Writer of an archive created at now.
func NewWriter(w io.Writer, now time.Time) *Writer {
	return &Writer{tw: tar.NewWriter(w), manifest: Manifest{Format: Format, CreatedAt: now.UTC()}}
}

// Add writes the file name of size bytes read from r. A reader that ends
// before size bytes (a file that shrank) fails the archive rather than
// padding it.
func (a *Writer) Add(name string, size int64, mode int64, r io.Reader) error {
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: mode & 0o777, ModTime: a.manifest.CreatedAt, Format: tar.FormatPAX}
	if err := a.tw.WriteHeader(hdr); err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.CopyN(a.tw, io.TeeReader(r, h), size); err != nil {
		return fmt.Errorf("archiving %s: %w", name, err)
	}
	a.manifest.Files = append(a.manifest.Files, File{Path: name, Size: size, SHA256: hex.EncodeToString(h.Sum(nil))})
	return nil
}

// Files returns the number of files added so far.
func (a *Writer) Files() int { return len(a.manifest.Files) }

// Close writes the manifest and the tar trailer.
func (a *Writer) Close() error {
	b, err := json.MarshalIndent(a.manifest, "", "  ")
	if err != nil {
		return err
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Size: int64(len(b)), Mode: 0o600, ModTime: a.manifest.CreatedAt, Format: tar.FormatPAX}
	if err := a.tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := a.tw.Write(b); err != nil {
		return err
	}
	return a.tw.Close()
}

// ErrArchive marks an archive that is not a whole, intact backup.
var ErrArchive = errors.New("the archive is not a whole rappel backup")

// archiveError is ErrArchive with the reason.
func archiveError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrArchive, fmt.Sprintf(format, args...))
}

// Read reads an archive from r, giving each file's content to the
// writer create returns for its path, and checks it against the
// manifest: every file listed, with its size and SHA-256, none more, the
// manifest last. Paths are relative and clean (no "..", no absolute
// path, no link), so a restore writes inside its data dir only. An error
// wraps ErrArchive when the archive itself is at fault.
func Read(r io.Reader, create func(name string, mode int64) (io.WriteCloser, error)) (*Manifest, error) {
	tr := tar.NewReader(r)
	got := map[string]File{}
	dirs := map[string]string{} // each directory of a file read: one of its files
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil, archiveError("it ends before its manifest (%s), so it was cut short", ManifestName)
		}
		if err != nil {
			return nil, archiveError("reading it failed (%v); it is cut short or corrupt", err)
		}
		if hdr.Name == ManifestName {
			m, err := readManifest(tr, hdr.Size)
			if err != nil {
				return nil, err
			}
			if err := checkEnd(tr); err != nil {
				return nil, err
			}
			return m, matchManifest(m, got)
		}
		f, err := readFile(tr, hdr, got, dirs, create)
		if err != nil {
			return nil, err
		}
		got[f.Path] = f
		for dir := path.Dir(f.Path); dir != "." && dirs[dir] == ""; dir = path.Dir(dir) {
			dirs[dir] = f.Path
		}
	}
}

// readFile copies one entry to its writer, hashing it.
func readFile(tr *tar.Reader, hdr *tar.Header, seen map[string]File, dirs map[string]string, create func(string, int64) (io.WriteCloser, error)) (File, error) {
	name := hdr.Name
	switch {
	case hdr.Typeflag != tar.TypeReg:
		return File{}, archiveError("%q is not a regular file; a backup holds files only", name)
	case !ValidPath(name):
		return File{}, archiveError("%q is not a clean relative path", name)
	case seen[name].Path != "":
		return File{}, archiveError("%q appears twice", name)
	case clash(name, seen, dirs) != "":
		return File{}, archiveError("%q and %q cannot both be files: one would be the other's directory", clash(name, seen, dirs), name)
	case sparse(hdr):
		// Its holes would be written out whole: a few KB on the wire can
		// declare gigabytes. A backup never writes one.
		return File{}, archiveError("%q is a sparse entry (GNU.sparse), which a backup never holds", name)
	}
	w, err := create(name, hdr.Mode)
	if err != nil {
		return File{}, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), tr)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, tar.ErrHeader) {
			return File{}, archiveError("%q is cut short", name)
		}
		return File{}, fmt.Errorf("writing %s: %w", name, err)
	}
	return File{Path: name, Size: n, SHA256: hexSum(h)}, nil
}

// clash returns the file already read that name cannot sit beside, ""
// when none: a file that would be one of name's directories, or one in a
// directory that name would be (dirs maps each directory of the files
// read to one of them). (A backup of a real directory holds no
// such pair; without this check the restore fails with the file
// system's own "file exists".)
func clash(name string, seen map[string]File, dirs map[string]string) string {
	for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
		if seen[dir].Path != "" {
			return dir
		}
	}
	return dirs[name]
}

// sparse reports whether hdr is a sparse entry, in any of the forms tar
// has for one.
func sparse(hdr *tar.Header) bool {
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return hdr.Typeflag == tar.TypeGNUSparse
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// ValidPath reports whether name is a clean, relative, slash
// separated path that is not the manifest's.
func ValidPath(name string) bool {
	return name != "" && name != "." && name != ManifestName && path.Clean(name) == name && !path.IsAbs(name) &&
		name != ".." && !strings.HasPrefix(name, "../") && !strings.Contains(name, "\\") && !strings.ContainsRune(name, 0)
}

// readManifest reads and decodes the manifest entry.
func readManifest(tr *tar.Reader, size int64) (*Manifest, error) {
	if size > maxManifest {
		return nil, archiveError("its manifest is %d bytes, more than a backup's", size)
	}
	b, err := io.ReadAll(tr)
	if err != nil {
		return nil, archiveError("its manifest is cut short")
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, archiveError("its manifest is not valid JSON (%v)", err)
	}
	if m.Format != Format {
		return nil, archiveError("its manifest has format %d; this rappel reads format %d", m.Format, Format)
	}
	return &m, nil
}

// checkEnd requires the tar trailer right after the manifest.
func checkEnd(tr *tar.Reader) error {
	hdr, err := tr.Next()
	switch {
	case err == io.EOF:
		return nil
	case err != nil:
		return archiveError("its end is cut short or corrupt (%v)", err)
	}
	return archiveError("%q follows the manifest, which must come last", hdr.Name)
}

// matchManifest checks the files read against those the manifest lists.
func matchManifest(m *Manifest, got map[string]File) error {
	listed := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		g, ok := got[f.Path]
		switch {
		case !ok:
			return archiveError("the manifest lists %q, which the archive lacks", f.Path)
		case g.Size != f.Size:
			return archiveError("%q is %d bytes; the manifest says %d", f.Path, g.Size, f.Size)
		case g.SHA256 != f.SHA256:
			return archiveError("%q does not match its SHA-256 in the manifest; the archive is corrupt", f.Path)
		}
		listed[f.Path] = true
	}
	for name := range got {
		if !listed[name] {
			return archiveError("%q is not in the manifest", name)
		}
	}
	return nil
}

// Discard is Read's create for checking an archive without keeping its
// files.
func Discard(string, int64) (io.WriteCloser, error) { return nopWriteCloser{io.Discard}, nil }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
