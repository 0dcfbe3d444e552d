package index

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
)

// A segment is checked in full (every byte's checksum, and its structure:
// orders, offsets, bitmaps) before it is first served. Checking again at
// every start cost a read of the whole file before the first answer:
// 25-35 ms of the bundle's warm start, 2 s at a million records. So once
// a file passed, its stamp beside it, "<name>.checked", records its size,
// modification time, digest and the version of the checks; a later start
// that finds the file as stamped reads only its header and directory (the
// same bytes passed the rest), serves, and checks every byte again in the
// background (verifyLater). A file copied, rewritten or cut has another
// size or time and is checked in full before it is served; a byte the
// disk loses in place is found by the background check, and the index is
// then rebuilt from the store while the node answers 503 to /readyz.
const checkedSuffix = ".checked"

// checkStamp is what a stamp records of its file.
type checkStamp struct {
	Size    int64  `json:"size"`
	ModTime int64  `json:"mod_time_unix_nano"`
	Digest  string `json:"digest"`
	// Checks is the version of the checks the file passed (checksVersion):
	// a build whose checks differ checks the file in full again.
	Checks string `json:"checks"`
}

// checksVersion names what a full check of a file covers: the segment
// content it reads, and the structure checks of fromFile (checkStructure,
// the bitmaps' validation), to be raised whenever those change.
var checksVersion = fmt.Sprintf("content %d, structure 1", SegmentContent)

// stampNow is the stamp path's file has now, with digest.
func stampNow(path string, digest [32]byte) (checkStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return checkStamp{}, err
	}
	return checkStamp{Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Digest: hex.EncodeToString(digest[:]), Checks: checksVersion}, nil
}

// stamped reports whether path's stamp matches the file as it is now (its
// digest is compared once the header is read: see Segments.openFile).
func stamped(path string) (checkStamp, bool) {
	b, err := os.ReadFile(path + checkedSuffix)
	if err != nil {
		return checkStamp{}, false
	}
	var st checkStamp
	if json.Unmarshal(b, &st) != nil {
		return checkStamp{}, false
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != st.Size || fi.ModTime().UnixNano() != st.ModTime || st.Checks != checksVersion {
		return checkStamp{}, false
	}
	return st, true
}

// writeStamp records that path, of content digest, passed its full check.
// It is not synced: a stamp lost in a crash costs only a full check at
// the next start.
func writeStamp(path string, digest [32]byte) error {
	st, err := stampNow(path, digest)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(st)
	tmp := path + checkedSuffix + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path+checkedSuffix)
}

// verifyLater checks every byte of the segments opened on their stamp's
// word (or the bundle's, whose bytes were hashed as they were unpacked),
// in the background at the refreshes' low priority. A segment that fails
// takes the node out of rotation (Stats' Rebuilding, and so /readyz) and
// the index is rebuilt from the store, as at a start that found it so.
func (m *Segments) verifyLater(snaps []*Snapshot) {
	if len(snaps) == 0 {
		return
	}
	if m.ctx == nil {
		m.ctx, m.stop = context.WithCancel(context.Background())
	}
	ctx := m.ctx
	m.merging.Add(1)
	go func() {
		defer m.merging.Done()
		for _, s := range snaps {
			if ctx.Err() != nil {
				return
			}
			err := lowPriority(func() error { return s.file.Verify(ctx) })
			runtime.KeepAlive(s) // its mapping stays while it is read
			if ctx.Err() != nil {
				return // the node stops
			}
			if err != nil {
				m.failedCheck(ctx, s, err)
				return
			}
			m.stats.checked.Add(1)
		}
	}()
}

// failedCheck rebuilds the index from the store after s, a segment being
// served, failed its background check.
func (m *Segments) failedCheck(ctx context.Context, s *Snapshot, err error) {
	m.stats.rebuilding.Store(true)
	defer m.stats.rebuilding.Store(false)
	m.log().Error("a segment of the read index failed its check: not ready until the read index is rebuilt from the store", "err", err)
	_ = os.Remove(s.file.Name() + checkedSuffix)
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur := m.Catalog.Current(); cur.base != s && cur.delta != s {
		return // a merge or a rebuild replaced it meanwhile
	}
	if err := lowPriority(func() error { return m.rebuild(ctx) }); err != nil {
		m.log().Error("rebuilding the read index after a failed check failed; serving the segment that failed it", "err", err)
	}
}
