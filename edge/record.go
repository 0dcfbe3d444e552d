package edge

import (
	"net/http"
	"sync"

	"github.com/rappel-ca/rappel"
)

// getRecord answers GET /recall/{record_id}[?lang=en|fr] with the bytes the
// snapshot encoded for that record and language: no encoding per request,
// no hashing for its ETag, and, with recordBufs, no allocation of the body.
func (s *Server) getRecord(w http.ResponseWriter, r *http.Request) error {
	p := paramsOf(w)
	lang := p.enum("lang", rappel.Langs)
	if err := p.err(); err != nil {
		return err
	}
	id := r.PathValue("record_id")
	buf := recordBufs.Get().(*[]byte)
	defer putRecordBuf(buf)
	b, digest, ok := s.Catalog.Snapshot().AppendRecordJSON((*buf)[:0], id, lang)
	if !ok {
		return rappel.Errorf(rappel.ENOTFOUND,
			"No recall has record_id %s; find record ids with GET /recall.", rappel.Quote(id))
	}
	*buf = b
	// writeJSON is done with b when it returns: the writers under it copy
	// what they are given (io.Writer's rule), so the buffer can go back.
	// The digest is the xxhash etagOf would work out from b: the tag is the
	// one hashing gave, with the hashing done once per snapshot.
	writeJSONTagged(w, r, http.StatusOK, quotedHash(0, digest), b)
	return nil
}

// recordBufs recycles the buffers records are copied into: a record is a
// few kilobytes, and allocating one per request was most of the garbage
// GET /recall/{record_id} made. A copy rather than a slice of the
// snapshot's bytes, because a record is spliced per language and because a
// segment's mapping may be released while a slow client is still reading.
var recordBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// maxPooledRecord bounds the buffers kept: the rare record far larger than
// the others is left to the collector rather than pinned in the pool.
const maxPooledRecord = 256 << 10

// putRecordBuf returns buf to recordBufs unless it grew past
// maxPooledRecord.
func putRecordBuf(buf *[]byte) {
	if cap(*buf) <= maxPooledRecord {
		recordBufs.Put(buf)
	}
}
