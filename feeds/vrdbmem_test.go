package feeds

import (
	"bytes"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/rappel-ca/rappel/bundle/synth"
)

// TestVRDBSplit_HoldsThePackedRows splits a generated vehicle file of 40 MB
// and checks what the raw records keep of it once the document is dropped:
// their rows packed, a fraction of the file, not a copy of it (nor the
// canonical rows as well, as the split once kept until its end). The
// agency's full file is 207 MB; a refresh holds these raw records from the
// split to the store's write (RATIONALE.md, "Why is the vehicle file split
// in two passes, and its rows kept packed?").
func TestVRDBSplit_HoldsThePackedRows(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 40 MB file")
	}
	base := liveHeap()
	var doc bytes.Buffer
	cfg := synth.Config{Seed: 1, ReferenceDate: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)}
	if _, err := synth.WriteVRDB(&doc, cfg, 40<<20, nil); err != nil {
		t.Fatal(err)
	}
	size := doc.Len()
	docs := map[string][]byte{vrdbFile: doc.Bytes()}
	doc = bytes.Buffer{}
	recs, err := vrdbFormat{}.split(docs)
	if err != nil {
		t.Fatal(err)
	}
	clear(docs)
	held := liveHeap() - base
	data := 0
	for _, r := range recs {
		data += len(r.Data)
	}
	t.Logf("%d bytes split into %d raw records holding %d bytes; %d bytes of heap held", size, len(recs), data, held)
	// A fixed share of the file: the bound does not grow with what the
	// split made, only with the input.
	if limit := int64(size) / 3; held > limit {
		t.Errorf("the raw records of a %d-byte file hold %d bytes of heap, more than a third of it (%d)", size, held, limit)
	}
	// And they still give back the rows as written.
	joined, err := vrdbFormat{}.join(recs)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(joined[vrdbFile]); got != size+len(bom) {
		t.Errorf("joined back %d bytes, want the %d of the file and its BOM", got, size+len(bom))
	}
	runtime.KeepAlive(recs)
}

// liveHeap is the heap the collector found live, after a collection.
func liveHeap() int64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}
