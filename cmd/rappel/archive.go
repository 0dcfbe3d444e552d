package main

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

// The backup archive (docs/operations.md, "Backup and restore") is a tar stream of
// the data dir's files under their paths relative to it, directories
// implied, followed by one last entry, archiveManifestName, listing every
// file with its size and SHA-256. The manifest comes last because the
// archive is streamed as the files are read: a stream cut anywhere lacks
// it, and a restore refuses an archive whose files do not match it.

// archiveManifestName is the manifest's name in the archive; no data dir
// file has it.
const archiveManifestName = "rappel-backup.json"

// archiveFormat is the manifest's format version; a restore refuses others.
const archiveFormat = 1

// maxArchiveManifest bounds the manifest a restore reads into memory.
const maxArchiveManifest = 16 << 20

// archiveManifest is the archive's last entry.
type archiveManifest struct {
	Format    int           `json:"format"`
	CreatedAt time.Time     `json:"created_at"`
	Files     []archiveFile `json:"files"`
}

// archiveFile is one file of the archive as the manifest records it.
type archiveFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// archiveWriter writes the archive's files and then its manifest.
type archiveWriter struct {
	tw       *tar.Writer
	manifest archiveManifest
}

func newArchiveWriter(w io.Writer, now time.Time) *archiveWriter {
	return &archiveWriter{tw: tar.NewWriter(w), manifest: archiveManifest{Format: archiveFormat, CreatedAt: now.UTC()}}
}

// add writes the file name of size bytes read from r. A reader that ends
// before size bytes (a file that shrank) fails the archive rather than
// padding it.
func (a *archiveWriter) add(name string, size int64, mode int64, r io.Reader) error {
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: mode & 0o777, ModTime: a.manifest.CreatedAt, Format: tar.FormatPAX}
	if err := a.tw.WriteHeader(hdr); err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.CopyN(a.tw, io.TeeReader(r, h), size); err != nil {
		return fmt.Errorf("archiving %s: %w", name, err)
	}
	a.manifest.Files = append(a.manifest.Files, archiveFile{Path: name, Size: size, SHA256: hex.EncodeToString(h.Sum(nil))})
	return nil
}

// close writes the manifest and the tar trailer.
func (a *archiveWriter) close() error {
	b, err := json.MarshalIndent(a.manifest, "", "  ")
	if err != nil {
		return err
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: archiveManifestName, Size: int64(len(b)), Mode: 0o600, ModTime: a.manifest.CreatedAt, Format: tar.FormatPAX}
	if err := a.tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := a.tw.Write(b); err != nil {
		return err
	}
	return a.tw.Close()
}

// errArchive marks an archive that is not a whole, intact backup.
var errArchive = errors.New("the archive is not a whole rappel backup")

// archiveError is errArchive with the reason.
func archiveError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errArchive, fmt.Sprintf(format, args...))
}

// readArchive reads an archive from r, giving each file's content to the
// writer create returns for its path, and checks it against the
// manifest: every file listed, with its size and SHA-256, none more, the
// manifest last. Paths are relative and clean (no "..", no absolute
// path, no link), so a restore writes inside its data dir only. An error
// wraps errArchive when the archive itself is at fault.
func readArchive(r io.Reader, create func(name string, mode int64) (io.WriteCloser, error)) (*archiveManifest, error) {
	tr := tar.NewReader(r)
	got := map[string]archiveFile{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil, archiveError("it ends before its manifest (%s), so it was cut short", archiveManifestName)
		}
		if err != nil {
			return nil, archiveError("reading it failed (%v); it is cut short or corrupt", err)
		}
		if hdr.Name == archiveManifestName {
			m, err := readManifest(tr, hdr.Size)
			if err != nil {
				return nil, err
			}
			if err := checkArchiveEnd(tr); err != nil {
				return nil, err
			}
			return m, matchManifest(m, got)
		}
		f, err := readArchiveFile(tr, hdr, got, create)
		if err != nil {
			return nil, err
		}
		got[f.Path] = f
	}
}

// readArchiveFile copies one entry to its writer, hashing it.
func readArchiveFile(tr *tar.Reader, hdr *tar.Header, seen map[string]archiveFile, create func(string, int64) (io.WriteCloser, error)) (archiveFile, error) {
	name := hdr.Name
	switch {
	case hdr.Typeflag != tar.TypeReg:
		return archiveFile{}, archiveError("%q is not a regular file; a backup holds files only", name)
	case !validArchivePath(name):
		return archiveFile{}, archiveError("%q is not a clean relative path", name)
	case seen[name].Path != "":
		return archiveFile{}, archiveError("%q appears twice", name)
	}
	w, err := create(name, hdr.Mode)
	if err != nil {
		return archiveFile{}, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), tr)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, tar.ErrHeader) {
			return archiveFile{}, archiveError("%q is cut short", name)
		}
		return archiveFile{}, fmt.Errorf("writing %s: %w", name, err)
	}
	return archiveFile{Path: name, Size: n, SHA256: hexSum(h)}, nil
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// validArchivePath reports whether name is a clean, relative, slash
// separated path that is not the manifest's.
func validArchivePath(name string) bool {
	return name != "" && name != archiveManifestName && path.Clean(name) == name && !path.IsAbs(name) &&
		name != ".." && !strings.HasPrefix(name, "../") && !strings.Contains(name, "\\") && !strings.ContainsRune(name, 0)
}

// readManifest reads and decodes the manifest entry.
func readManifest(tr *tar.Reader, size int64) (*archiveManifest, error) {
	if size > maxArchiveManifest {
		return nil, archiveError("its manifest is %d bytes, more than a backup's", size)
	}
	b, err := io.ReadAll(tr)
	if err != nil {
		return nil, archiveError("its manifest is cut short")
	}
	var m archiveManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, archiveError("its manifest is not valid JSON (%v)", err)
	}
	if m.Format != archiveFormat {
		return nil, archiveError("its manifest has format %d; this rappel reads format %d", m.Format, archiveFormat)
	}
	return &m, nil
}

// checkArchiveEnd requires the tar trailer right after the manifest.
func checkArchiveEnd(tr *tar.Reader) error {
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
func matchManifest(m *archiveManifest, got map[string]archiveFile) error {
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
