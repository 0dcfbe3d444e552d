package guest

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
)

// NoticeFiles lists a directory of per-notice documents, <lang>/<NID><ext>
// (en/82165.html, fr/82165.json): the file names by NID, language and
// ending, for each of exts. A file of one of those endings not named after
// a number is reported, for source, and skipped; other files are not
// documents and are left alone. It fails when neither en/ nor fr/ exists
// or a directory cannot be listed.
func NoticeFiles(fsys fs.FS, source string, report func(rappel.Problem), exts ...string) (map[string]map[string]map[string]string, error) {
	docs := map[string]map[string]map[string]string{} // NID → ext → lang → file
	found := 0
	for _, lang := range rappel.Langs {
		entries, err := fs.ReadDir(fsys, lang)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("reading %s/: %w", lang, err)
		}
		found++
		for _, e := range entries {
			i := slices.IndexFunc(exts, func(ext string) bool { return strings.HasSuffix(e.Name(), ext) })
			if e.IsDir() || i < 0 {
				continue // not a document; nothing the contract puts here
			}
			nid, file := strings.TrimSuffix(e.Name(), exts[i]), path.Join(lang, e.Name())
			if !IsNumber(nid) {
				report(rappel.Problem{Source: source, Reason: fmt.Sprintf("%s was skipped: a document is named after its notice's NID, a number.", file)})
				continue
			}
			if docs[nid] == nil {
				docs[nid] = map[string]map[string]string{}
			}
			if docs[nid][exts[i]] == nil {
				docs[nid][exts[i]] = make(map[string]string, 2)
			}
			docs[nid][exts[i]][lang] = file
		}
	}
	if found == 0 {
		return nil, fmt.Errorf("reading documents: neither en/ nor fr/ exists: %w", fs.ErrNotExist)
	}
	return docs, nil
}

// SortedNIDs returns the keys of docs, NIDs, in numeric order: they are
// digits, and a shorter one is smaller.
func SortedNIDs[V any](docs map[string]V) []string {
	nids := make([]string, 0, len(docs))
	for nid := range docs {
		nids = append(nids, nid)
	}
	slices.SortFunc(nids, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b)) })
	return nids
}
