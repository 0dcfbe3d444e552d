package feeds

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"sync"
	"testing/fstest"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/rappel-ca/rappel"
)

// minChunk is the fewest raw records worth a plugin run of their own: below
// it, the fixed cost of a run outweighs running in parallel.
const minChunk = 2000

// maxChunkBytes is the most bytes of raw records (as the plugin reads
// them) that one plugin run is given when the records can be cut: a
// plugin process holds its input and what its guest makes of it, a few
// times the input, so Transport Canada's 207 MB file in two runs took two
// processes of 350 MiB each. Chunks beyond Parallelism wait for a run to
// end, their documents not yet written.
const maxChunkBytes = 32 << 20

// run is what normalizing some raw records produced.
type run struct {
	// records are the partial records by record_id, those of one
	// record_id merged (the first emitted wins, field by field).
	records  map[string]*rappel.Record
	problems []rappel.Problem
	// plugin is the SHA-256 of the plugin that ran; "" when none did.
	plugin   string
	runs     int
	duration time.Duration
}

// normalize runs src's plugin over recs, with the structural raw records in
// every input. Many records are cut into chunks, of at most maxChunkBytes
// when they can be, run Parallelism at a time; records expected to yield
// the same record_id stay in one chunk.
func (r *Refresher) normalize(ctx context.Context, src *Source, structural, recs []rappel.RawRecord) (*run, error) {
	out := &run{records: map[string]*rappel.Record{}}
	if len(recs) == 0 {
		return out, nil
	}
	parallel := max(1, r.Parallelism)
	n := max(1, min(parallel, len(recs)/minChunk))
	if size := inputBytes(recs); size > maxChunkBytes {
		n = max(n, min(len(recs), int((size+maxChunkBytes-1)/maxChunkBytes)))
	}
	chunks := partition(recs, n)
	results := make([]*rappel.Normalized, len(chunks))
	errs := make([]error, len(chunks))
	var wg sync.WaitGroup
	slots := make(chan struct{}, parallel)
	for i, chunk := range chunks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			if err := ctx.Err(); err != nil {
				errs[i] = err
				return
			}
			docs, err := src.format.join(append(append([]rappel.RawRecord(nil), structural...), chunk...))
			if err != nil {
				errs[i] = err
				return
			}
			if len(docs) == 0 {
				return // only records that hold no document (a notice without detail)
			}
			results[i], errs[i] = r.Normalizer.Normalize(ctx, src.Name, docsFS(docs))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("normalizing: %w", err)
	}
	for _, res := range results {
		if res == nil {
			continue
		}
		if out.plugin != "" && res.Plugin != out.plugin {
			return nil, errors.New("normalizing: the plugin was swapped during the refresh; the next refresh runs the new one on everything")
		}
		out.plugin = res.Plugin
		out.runs++
		out.duration = max(out.duration, res.Duration)
		out.problems = append(out.problems, res.Problems...)
		for _, rec := range res.Records {
			if rec == nil || rec.RecordID == "" {
				continue
			}
			rec.FetchedAt = "" // the host stamps it when assembling
			if cur, ok := out.records[rec.RecordID]; ok {
				rappel.Merge(cur, rec)
				continue
			}
			out.records[rec.RecordID] = rec
		}
	}
	return out, nil
}

// inputBytes is the size of recs' data as a plugin reads it: unpacked.
func inputBytes(recs []rappel.RawRecord) int64 {
	var n int64
	for _, r := range recs {
		size := len(r.Data)
		if size > 0 && r.Data[0] == packedMark {
			if l, err := s2.DecodedLen(r.Data[1:]); err == nil {
				size = l
			}
		}
		n += int64(size)
	}
	return n
}

// partition cuts recs into at most n chunks, keeping the raw records that
// are expected to yield the same record_id together.
func partition(recs []rappel.RawRecord, n int) [][]rappel.RawRecord {
	if n <= 1 {
		return [][]rappel.RawRecord{recs}
	}
	chunks := make([][]rappel.RawRecord, n)
	for _, rec := range recs {
		key := rec.Key
		if len(rec.IDs) > 0 {
			key = rec.IDs[0]
		}
		h := fnv.New32a()
		h.Write([]byte(key))
		i := h.Sum32() % uint32(n)
		chunks[i] = append(chunks[i], rec)
	}
	out := chunks[:0]
	for _, c := range chunks {
		if len(c) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// docsFS is documents by name as a read-only file system, directories
// implied by the names.
func docsFS(docs map[string][]byte) fs.FS {
	m := make(fstest.MapFS, len(docs))
	for name, b := range docs {
		m[name] = &fstest.MapFile{Data: b, Mode: 0o444}
	}
	return m
}
