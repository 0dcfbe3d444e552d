package feeds

import (
	"io/fs"

	"github.com/rappel-ca/rappel"
)

// ByteHashedRaw cuts a corpus as BundleRaw does, but with the hashes of
// the first definition, over the bytes, that a store written before
// content hashes holds. With data set the raw records keep their data, as
// a live source's do; without, they are a bundle's.
func ByteHashedRaw(docs map[string]fs.FS, data bool) (map[string][]rappel.RawRecord, error) {
	out, err := splitCorpus(docs)
	if err != nil {
		return nil, err
	}
	byBytes := func() {
		for _, recs := range out {
			for i := range recs {
				recs[i].Hash = byteHashOf(recs[i].Data)
			}
		}
	}
	// Before versioning, which takes the rows' hashes, and after, for the
	// records it adds.
	byBytes()
	versionDetails(out, nil)
	byBytes()
	for _, recs := range out {
		for i := range recs {
			if !data {
				recs[i].Data = nil
			}
		}
	}
	return out, nil
}

// ContentHashed reports that h is a raw record hash of content, not of
// bytes.
func ContentHashed(h string) bool { return h != "" && !byteHash(h) }
