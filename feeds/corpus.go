package feeds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// A corpus fetched from the agencies is what a refresh of the sources
// fetches, written into a directory laid out as the generator's corpus
// (bundle/synth): `rappel bundle` then normalizes it by the same code path
// as a generated one, and BundleRaw cuts it into the raw records a refresh
// would make of the same documents, so that a node's first live refresh
// against the same upstream finds nothing changed.

// CorpusManifest is the manifest.json of a corpus FetchCorpus wrote.
type CorpusManifest struct {
	// FetchedAt is when the fetch started: a bundle built from the corpus
	// takes it as its build time.
	FetchedAt  time.Time          `json:"fetched_at"`
	Provenance *rappel.Provenance `json:"provenance"`
}

const (
	corpusManifest = "manifest.json"
	// pendingFile, in the detail source's directory, lists the notices
	// whose documents were not fetched, one NID a line: the budget left
	// them, or their fetch failed. BundleRaw gives them no raw record, so
	// that the node's first refreshes fetch them.
	pendingFile = "pending.txt"
)

// ReadCorpusManifest reads the manifest of the corpus in dir when
// FetchCorpus wrote it; it is nil for any other corpus (a generated one,
// or none).
func ReadCorpusManifest(dir string) (*CorpusManifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, corpusManifest))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var m CorpusManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, corpusManifest), err)
	}
	if m.Provenance == nil || m.Provenance.Kind != rappel.DatasetAgencies {
		return nil, nil
	}
	return &m, nil
}

// FetchCorpus fetches r's sources as a refresh does, with r's Fetcher
// (size caps, retries, gzip), and writes their documents into dir, each
// source's under dirs[source]: the documents fetched whole by their
// names, the detail documents as <lang>/<NID>.json (the old API's) or <lang>/<NID>.html (recall pages), for every notice of
// the dump that a refresh fetches them for, a 404 being no document, at
// most r.DetailRate a second for at most r.DetailBudget (0 fetches none).
// It needs no Store and no Normalizer, and r need not be open.
//
// dir is replaced whole, once everything is fetched, so that no document
// of an earlier fetch stays; a dir that holds anything but a corpus
// FetchCorpus wrote is refused. The manifest it writes (and returns)
// records each document fetched whole with its public address (no query
// string, which may hold a key), time, SHA-256 and size, and the notices
// whose detail documents were fetched or left.
func (r *Refresher) FetchCorpus(ctx context.Context, dir string, dirs map[string]string) (*CorpusManifest, error) {
	if err := checkCorpusDir(dir); err != nil {
		return nil, err
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	for _, src := range r.Sources {
		if _, ok := dirs[src.Name]; !ok {
			return nil, fmt.Errorf("source %s has no directory in the corpus", src.Name)
		}
		if err := src.Validate(); err != nil {
			return nil, err
		}
	}
	m := &CorpusManifest{FetchedAt: r.Now().UTC().Truncate(time.Second), Provenance: &rappel.Provenance{Kind: rappel.DatasetAgencies}}
	files := map[string][]byte{} // by path in the corpus
	// Every source's directory exists, and a detail source's per language,
	// even with no document in it: a plugin reads an absent one as a
	// corpus that is not its source's.
	var mkdirs []string
	fetched := map[string]map[string][]byte{}
	for _, src := range r.Sources {
		mkdirs = append(mkdirs, dirs[src.Name])
		if src.Template != "" {
			for _, lang := range rappel.Langs {
				mkdirs = append(mkdirs, path.Join(dirs[src.Name], lang))
			}
		}
		var docs map[string][]byte
		var err error
		if src.Template == "" {
			docs, err = r.fetchCorpusDocs(ctx, src, m.Provenance)
		} else {
			docs, err = r.fetchCorpusDetails(ctx, src, fetched[src.Follows], m.Provenance)
		}
		if err != nil {
			return nil, err
		}
		fetched[src.Name] = docs
		for name, b := range docs {
			files[path.Join(dirs[src.Name], name)] = b
		}
	}
	slices.SortFunc(m.Provenance.Fetched, func(a, b rappel.FetchedDoc) int {
		return strings.Compare(a.Source+"\x00"+a.Name, b.Source+"\x00"+b.Name)
	})
	if err := writeCorpus(dir, mkdirs, files, m); err != nil {
		return nil, err
	}
	return m, nil
}

// fetchCorpusDocs fetches src's documents whole, unconditionally, and
// records each in prov. An overlay (the vehicle file's daily extract) is
// left out: the corpus holds the documents the plugins read, and the
// node's first refresh overlays it.
func (r *Refresher) fetchCorpusDocs(ctx context.Context, src *Source, prov *rappel.Provenance) (map[string][]byte, error) {
	docs := map[string][]byte{}
	for _, d := range src.Docs {
		if d.Overlay {
			continue
		}
		resp, err := r.fetchDoc(ctx, d, rappel.FileState{}, nil)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", src.Name, err)
		}
		sum := sha256.Sum256(resp.Body)
		prov.Fetched = append(prov.Fetched, rappel.FetchedDoc{Source: src.Name, Name: d.Name, URL: rappel.PublicURL(d.URL),
			At: r.Now().UTC(), SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(resp.Body))})
		docs[d.Name] = resp.Body
		r.Logger.InfoContext(ctx, "fetched", "source", src.Name, "document", d.Name, "bytes", len(resp.Body))
	}
	return docs, nil
}

// fetchCorpusDetails fetches the detail documents of the notices in the
// followed source's documents, as the refresher's detail fetch does for
// new notices, and counts in prov those fetched and those left. The
// notices left are listed in pendingFile.
func (r *Refresher) fetchCorpusDetails(ctx context.Context, src *Source, followed map[string][]byte, prov *rappel.Provenance) (map[string][]byte, error) {
	follow := r.Source(src.Follows)
	if follow == nil || followed == nil {
		return nil, fmt.Errorf("source %s follows %s, which must be fetched before it", src.Name, src.Follows)
	}
	rows, err := follow.format.split(followed)
	if err != nil {
		return nil, err
	}
	versions := map[string]string{}
	var nids []string
	for _, raw := range rows {
		if wantsDetail(raw) {
			versions[raw.Key] = raw.Hash
			nids = append(nids, raw.Key)
		}
	}
	r.Logger.InfoContext(ctx, "fetching detail documents", "source", src.Name, "notices", len(nids), "rate", r.DetailRate, "budget", r.DetailBudget)
	hints := corpusHints(src, rows)
	fctx, stop := r.detailContext(ctx)
	got, problems := r.fetchDetails(fctx, src, detailOrder(nids, nil), versions, hints)
	stop()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, p := range problems {
		r.Logger.WarnContext(ctx, "a detail document could not be fetched; the node's first refreshes fetch it", "record_id", p.RecordID, "reason", p.Reason)
	}
	docs, err := src.format.join(got)
	if err != nil {
		return nil, err
	}
	done := make(map[string]bool, len(got))
	for _, raw := range got {
		done[raw.Key] = true
	}
	n := len(docs)
	var pending []string
	for _, nid := range nids {
		if !done[nid] {
			pending = append(pending, nid)
		}
	}
	if len(pending) > 0 {
		slices.Sort(pending)
		docs[pendingFile] = []byte(strings.Join(pending, "\n") + "\n")
	}
	prov.Details, prov.DetailsLeft = len(got), len(pending)
	r.Logger.InfoContext(ctx, "fetched detail documents", "source", src.Name, "notices", len(got), "left", len(pending), "documents", n)
	return docs, nil
}

// readPending reads the notices a detail corpus lists as not fetched.
func readPending(fsys fs.FS) (map[string]bool, error) {
	b, err := fs.ReadFile(fsys, pendingFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	pending := map[string]bool{}
	for _, nid := range strings.Fields(string(b)) {
		pending[nid] = true
	}
	return pending, nil
}

// checkCorpusDir refuses a dir that holds anything but a corpus
// FetchCorpus wrote, which replacing it would destroy.
func checkCorpusDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(entries) == 0 {
		return nil
	} else if err != nil {
		return err
	}
	if m, err := ReadCorpusManifest(dir); err != nil || m == nil {
		return fmt.Errorf("%s holds something other than a corpus fetched from the agencies (its manifest.json does not say it is one), which fetching would replace; choose another directory", dir)
	}
	return nil
}

// writeCorpus writes the directories mkdirs, files and the manifest m
// into dir.partial, then puts it in dir's place.
func writeCorpus(dir string, mkdirs []string, files map[string][]byte, m *CorpusManifest) error {
	tmp := filepath.Clean(dir) + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	for _, d := range mkdirs {
		if err := os.MkdirAll(filepath.Join(tmp, filepath.FromSlash(d)), 0o755); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	files[corpusManifest] = append(b, '\n')
	for name, body := range files {
		p := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
