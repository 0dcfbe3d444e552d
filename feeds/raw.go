package feeds

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/s2"

	"github.com/rappel-ca/rappel"
)

// format cuts a source's documents into raw records and writes raw records
// back as the documents a plugin reads, so that a refresh can hand a plugin
// only the raw records that changed. Splitting reads no more of a record
// than its key and the record_ids its normalization should yield (the
// mapping testdata/FORMATS.md documents); if a plugin yields others, the
// refresh notices and normalizes everything instead.
type format interface {
	// split cuts the documents, by their names under the plugin's /in,
	// into raw records with Key, Hash, IDs and Data set. It fails when a
	// document is not in the format at all (HTML instead of JSON, a
	// truncated array, a CSV without its key column).
	split(docs map[string][]byte) ([]rappel.RawRecord, error)
	// join writes raw records back as documents, by name under /in.
	join(recs []rappel.RawRecord) (map[string][]byte, error)
	// canonical returns one item of a raw record (a row, a document) in
	// the canonical form its content hash is taken over.
	canonical(item []byte) []byte
}

// Keys of structural raw records start with structuralPrefix: they hold no
// record (a CSV header), go into every input, and a change to one makes
// every record change.
const structuralPrefix = "!"

func structural(key string) bool { return strings.HasPrefix(key, structuralPrefix) }

// anonymousPrefix starts the key of a raw record that has no key of its own
// (a row without NID): its content hash stands in.
const anonymousPrefix = "?"

// frame encodes lists of byte strings as one byte string: the number of
// lists, then per list the number of items, then per item its length and
// bytes, all lengths as uvarints. Raw records keep their upstream bytes
// exactly this way, so that what the plugin reads is what was fetched.
func frame(lists ...[][]byte) []byte {
	n := binary.MaxVarintLen64
	for _, l := range lists {
		n += binary.MaxVarintLen64
		for _, item := range l {
			n += binary.MaxVarintLen64 + len(item)
		}
	}
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, uint64(len(lists)))
	for _, l := range lists {
		b = binary.AppendUvarint(b, uint64(len(l)))
		for _, item := range l {
			b = binary.AppendUvarint(b, uint64(len(item)))
			b = append(b, item...)
		}
	}
	return b
}

var errFrame = errors.New("malformed raw record")

// packedMark starts a raw record's data that is its frame compressed (S2,
// a block): a frame never starts with it, since it would announce more
// than 127 lists. Raw records are stored packed: a vehicle recall's rows
// repeat the same two comments on every row, so the agency's 207 MB file
// packs into a fraction of it, and a refresh holds and writes that
// fraction (RATIONALE.md, "Why is the vehicle file split in two passes,
// and its rows kept packed?"). Data stored before, a bare frame, reads as
// it is.
const packedMark = 0xFF

// pack returns framed data compressed, behind packedMark; as it is when
// that would not be shorter.
func pack(framed []byte) []byte {
	if len(framed) < 64 || s2.MaxEncodedLen(len(framed)) < 0 {
		return framed
	}
	enc := s2.Encode(nil, framed)
	if len(enc)+1 >= len(framed) {
		return framed
	}
	// Copied to its own length: the encoder's buffer is the frame's size.
	b := make([]byte, 1+len(enc))
	b[0] = packedMark
	copy(b[1:], enc)
	return b
}

// unpack returns a raw record's frame, decompressed when it was packed.
func unpack(data []byte) ([]byte, error) {
	if len(data) == 0 || data[0] != packedMark {
		return data, nil
	}
	b, err := s2.Decode(nil, data[1:])
	if err != nil {
		return nil, errFrame
	}
	return b, nil
}

// unframe decodes what frame encoded. Items share b's memory.
func unframe(b []byte) ([][][]byte, error) {
	next := func() (uint64, error) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, errFrame
		}
		b = b[n:]
		return v, nil
	}
	nl, err := next()
	if err != nil || nl > uint64(len(b))+1 {
		return nil, errFrame
	}
	lists := make([][][]byte, nl)
	for i := range lists {
		ni, err := next()
		if err != nil || ni > uint64(len(b)) {
			return nil, errFrame
		}
		lists[i] = make([][]byte, ni)
		for j := range lists[i] {
			ln, err := next()
			if err != nil || ln > uint64(len(b)) {
				return nil, errFrame
			}
			lists[i][j], b = b[:ln:ln], b[ln:]
		}
	}
	if len(b) != 0 {
		return nil, errFrame
	}
	return lists, nil
}

// newRaw returns a raw record of key holding lists, hashed over their
// content in f's canonical form.
func newRaw(f format, key string, ids []string, lists ...[][]byte) rappel.RawRecord {
	return rappel.RawRecord{Key: key, Hash: contentHash(f.canonical, lists), IDs: ids, Data: pack(frame(lists...))}
}

// rawRecord returns a raw record of key holding lists, whose canonical
// form is canon.
func rawRecord(key string, ids []string, lists, canon [][][]byte) rappel.RawRecord {
	return rappel.RawRecord{Key: key, Hash: canonicalHash(canon), IDs: ids, Data: pack(frame(lists...))}
}

// inParallel calls fn with every index below n, spread over every core.
func inParallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// sortRaw sorts raw records by key.
func sortRaw(recs []rappel.RawRecord) {
	slices.SortFunc(recs, func(a, b rappel.RawRecord) int { return strings.Compare(a.Key, b.Key) })
}

// listsOf unframes a raw record's data into exactly n lists.
func listsOf(r rappel.RawRecord, n int) ([][][]byte, error) {
	lists, err := rawLists(r)
	if err != nil {
		return nil, err
	}
	if len(lists) != n {
		return nil, fmt.Errorf("reading raw record %q: %d lists, want %d", r.Key, len(lists), n)
	}
	return lists, nil
}

// rawLists unpacks and unframes a raw record's data, however many lists
// it holds.
func rawLists(r rappel.RawRecord) ([][][]byte, error) {
	framed, err := unpack(r.Data)
	if err != nil {
		return nil, fmt.Errorf("reading raw record %q: %w", r.Key, err)
	}
	lists, err := unframe(framed)
	if err != nil {
		return nil, fmt.Errorf("reading raw record %q: %w", r.Key, err)
	}
	return lists, nil
}

// skipBOM drops a UTF-8 byte order mark.
func skipBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		return b[3:]
	}
	return b
}

// describe names what a document that is not in its format looks like, for
// an error: an HTML page, nothing, or its length and the kind of content
// its first bytes look like. Never the bytes themselves: the sentence
// reaches /health and the log, and an upstream that answers with the wrong
// document may be answering with something private.
func describe(b []byte) string {
	t := strings.TrimSpace(string(b[:min(len(b), 512)]))
	switch {
	case t == "":
		return "it is empty"
	case strings.HasPrefix(t, "<"):
		return "it is an HTML or XML page, not data (the upstream answered with a web page)"
	}
	return fmt.Sprintf("it is %d bytes of %s", len(b), http.DetectContentType(b[:min(len(b), 512)]))
}
