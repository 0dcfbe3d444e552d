package feeds

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/rappel-ca/rappel"
)

// BundleRaw cuts a corpus in the upstream formats into the raw records the
// feeds would make of it, without their data, by source: hcdump from
// docs["hcdump"] (recalls-en.json, recalls-fr.json), vrdb from
// docs["vrdb"] (vrdb.csv) and detail from docs["detail"] (en/<NID>.json,
// fr/<NID>.json), each detail record versioned by its notice's dump row.
// A notice that a corpus fetched from the agencies lists as not fetched
// (FetchCorpus's pending.txt) gets no detail record, so that the node's
// first refreshes fetch its documents, as for a new notice.
//
// A bundle ships them with the records it normalized from that corpus, so
// that a node remembers the raw records its bundled records came from: a
// source's first live refresh then normalizes only the upstream records
// that differ from the bundle's (all of them, for real feeds against a
// synthetic bundle), and keeps the rest as they are.
func BundleRaw(docs map[string]fs.FS) (map[string][]rappel.RawRecord, error) {
	out, err := splitCorpus(docs)
	if err != nil {
		return nil, err
	}
	var pending map[string]bool
	if d, ok := docs["detail"]; ok {
		if pending, err = readPending(d); err != nil {
			return nil, fmt.Errorf("reading the detail corpus: %w", err)
		}
	}
	versionDetails(out, pending)
	for name, recs := range out {
		for i := range recs {
			recs[i].Data = nil
		}
		out[name] = recs
	}
	return out, nil
}

// splitCorpus cuts each source's documents in docs into raw records, with
// their data.
func splitCorpus(docs map[string]fs.FS) (map[string][]rappel.RawRecord, error) {
	out := map[string][]rappel.RawRecord{}
	for _, src := range []*Source{HCDump("", ""), VRDB(""), Detail("")} {
		fsys, ok := docs[src.Name]
		if !ok {
			continue
		}
		files, err := readAll(fsys)
		if err != nil {
			return nil, fmt.Errorf("reading the %s corpus: %w", src.Name, err)
		}
		recs, err := src.format.split(files)
		if err != nil {
			return nil, fmt.Errorf("splitting the %s corpus: %w", src.Name, err)
		}
		out[src.Name] = recs
	}
	return out, nil
}

// versionDetails versions the detail records of out as the refresher
// versions them: by their notice's row, for every notice it would fetch
// documents for (those without any too, so that they are known to have
// none), but those pending, whose documents were not fetched.
func versionDetails(out map[string][]rappel.RawRecord, pending map[string]bool) {
	detail, ok := out["detail"]
	if !ok {
		return
	}
	rows := map[string]string{}
	for _, r := range out["hcdump"] {
		if wantsDetail(r) && !pending[r.Key] {
			rows[r.Key] = r.Hash
		}
	}
	kept := detail[:0]
	for _, r := range detail {
		if v, ok := rows[r.Key]; ok {
			r.Version = v
			kept = append(kept, r)
			delete(rows, r.Key)
		}
	}
	for nid, v := range rows {
		r := detailRaw(nid, nil, nil)
		r.Version = v
		kept = append(kept, r)
	}
	sortRaw(kept)
	out["detail"] = kept
}

// readAll reads every regular file of fsys, by slash-separated name.
func readAll(fsys fs.FS) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		b, err := fs.ReadFile(fsys, name)
		files[name] = b
		return err
	})
	return files, err
}
