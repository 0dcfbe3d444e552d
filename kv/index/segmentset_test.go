package index

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/kvtest"
	"github.com/rappel-ca/rappel/kv/segment"
)

// seedStore opens a store in dir holding mixedRecords.
func seedStore(tb testing.TB, dir string) *kv.Store {
	tb.Helper()
	s := kvtest.OpenAt(tb, filepath.Join(dir, "pebble"))
	ctx := context.Background()
	if err := s.PutRecords(ctx, mixedRecords()); err != nil {
		tb.Fatal(err)
	}
	if err := s.SetDatasetInfo(ctx, rappel.DatasetInfo{UpdatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Source: "feeds"}); err != nil {
		tb.Fatal(err)
	}
	return s
}

func segmentsAt(store *kv.Store, dir string) *Segments {
	return &Segments{Dir: filepath.Join(dir, "index"), Store: store, Catalog: &Catalog{}}
}

// checkServes checks that seg's catalog answers as a snapshot built from
// every record of the store does.
func checkServes(t *testing.T, seg *Segments, n int) {
	t.Helper()
	ctx := context.Background()
	var recs []*rappel.Record
	if err := seg.Store.ForEachRecord(ctx, func(r *rappel.Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	info, err := seg.Store.DatasetInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Build(cloneAll(recs), info)
	if err != nil {
		t.Fatal(err)
	}
	sameAnswers(t, want.View(), seg.Catalog.Current(), recs, uint64(len(recs)), n)
}

// change adds, changes and removes records of the store, as a refresh
// would; round makes each call's changes its own.
func change(t testing.TB, store *kv.Store, round, added, changed, removed int) {
	t.Helper()
	ctx := context.Background()
	var all []*rappel.Record
	if err := store.ForEachRecord(ctx, func(r *rappel.Record) error { all = append(all, r); return nil }); err != nil {
		t.Fatal(err)
	}
	var put []*rappel.Record
	for i := range added {
		r := *all[i%len(all)]
		r.RecordID = fmt.Sprintf("new-%d-%d", round, i)
		r.EventDate = fmt.Sprintf("2027-%02d-%02d", 1+i%12, 1+i%28)
		put = append(put, &r)
	}
	for i := range changed {
		r := *all[(i*37+round)%len(all)]
		r.Status = rappel.StatusArchived
		u := 1000 + round + i
		r.UnitsAffected = &u
		if tr := r.Translations.EN; tr != nil {
			c := *tr
			c.Title = fmt.Sprintf("Corrected title %d of round %d", i, round)
			r.Translations.EN = &c
		}
		put = append(put, &r)
	}
	if err := store.PutRecords(ctx, put); err != nil {
		t.Fatal(err)
	}
	var del []string
	for i := range removed {
		del = append(del, all[len(all)-1-(i*13+round)%(len(all)/2)].RecordID)
	}
	if err := store.DeleteRecords(ctx, del); err != nil {
		t.Fatal(err)
	}
}

// state reads the store's index state.
func state(t *testing.T, seg *Segments) segmentState {
	t.Helper()
	raw, err := seg.Store.IndexState(context.Background())
	if err != nil || raw == nil {
		t.Fatalf("index state %q: %v", raw, err)
	}
	var st segmentState
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// files lists the files of the segments' directory.
func files(t *testing.T, seg *Segments) []string {
	t.Helper()
	entries, err := os.ReadDir(seg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// checkFiles checks that the directory holds the state's files alone.
func checkFiles(t *testing.T, seg *Segments) {
	t.Helper()
	st := state(t, seg)
	want := []string{} // each named file, and its check stamp
	if st.Base != BundleBase {
		want = append(want, st.Base, st.Base+checkedSuffix)
	}
	if st.Delta != "" {
		want = append(want, st.Delta, st.Delta+checkedSuffix)
	}
	slices.Sort(want)
	if got := files(t, seg); !slices.Equal(got, want) {
		t.Fatalf("the index directory holds %v; the state names %v", got, want)
	}
}

func TestSegments_Lifecycle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := seedStore(t, dir)
	defer store.Close()
	seg := segmentsAt(store, dir)
	if err := seg.Open(ctx); err != nil {
		t.Fatal(err)
	}
	checkServes(t, seg, 200)
	base := state(t, seg).Base
	checkFiles(t, seg)

	// A refresh writes a delta; the base stays.
	for round := range 3 {
		change(t, store, round, 15, 10, 5)
		if err := seg.DataChanged(ctx, true); err != nil {
			t.Fatal(err)
		}
		st := state(t, seg)
		if st.Base != base || st.Delta == "" {
			t.Fatalf("round %d: state %+v; want the base %s and a delta", round, st, base)
		}
		checkFiles(t, seg)
		checkServes(t, seg, 200)
		if g, s, ok := seg.Catalog.Current().ChangePos(); !ok || g != st.Gen || s != st.Seq {
			t.Fatalf("round %d: the view holds the changes up to %d/%d (%v), the state %d/%d", round, g, s, ok, st.Gen, st.Seq)
		}
	}
	// A refresh that changed nothing writes nothing.
	before := state(t, seg)
	if err := seg.DataChanged(ctx, false); err != nil {
		t.Fatal(err)
	}
	if after := state(t, seg); after.Delta != before.Delta || after.Seq != before.Seq {
		t.Fatalf("a refresh without changes moved the state from %+v to %+v", before, after)
	}

	// A restart opens the same set: no rebuild.
	again := segmentsAt(store, dir)
	if err := again.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if st := state(t, again); st.Base != base || st.Delta != before.Delta {
		t.Fatalf("after a restart: state %+v", st)
	}
	checkServes(t, again, 200)

	// A delta past MergeAt is folded into a new base, in the background.
	again.MergeAt = func(_, delta int) bool { return delta > 0 }
	change(t, store, 9, 3, 3, 3)
	if err := again.DataChanged(ctx, true); err != nil {
		t.Fatal(err)
	}
	again.Wait()
	if st := state(t, again); st.Base == base || st.Delta != "" {
		t.Fatalf("after a merge: state %+v", st)
	}
	checkFiles(t, again)
	checkServes(t, again, 200)
	gen, seq, err := store.ChangeSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := store.Changes(ctx, gen, 0, func(uint64, string, bool) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d changes up to %d are kept after the merge folded them in", n, seq)
	}
	if g, s, ok := again.Catalog.Current().ChangePos(); !ok || g != gen || s != seq {
		t.Fatalf("the view holds the changes up to %d/%d (%v), the store is at %d/%d", g, s, ok, gen, seq)
	}
}

// baseAndDelta opens segments of a seeded store in dir and refreshes them
// once, so that the set is a base file and a delta file; the store is
// closed with the test.
func baseAndDelta(t *testing.T, dir string) (*kv.Store, *Segments, segmentState) {
	t.Helper()
	ctx := context.Background()
	store := seedStore(t, dir)
	t.Cleanup(func() { store.Close() })
	seg := segmentsAt(store, dir)
	if err := seg.Open(ctx); err != nil {
		t.Fatal(err)
	}
	change(t, store, 1, 5, 5, 5)
	if err := seg.DataChanged(ctx, true); err != nil {
		t.Fatal(err)
	}
	return store, seg, state(t, seg)
}

// TestSegments_Corrupt checks that a segment that fails its checks is
// rebuilt from the store, never served.
func TestSegments_Corrupt(t *testing.T) {
	ctx := context.Background()
	for _, which := range []string{"base", "delta"} {
		t.Run(which, func(t *testing.T) {
			dir := t.TempDir()
			store, seg, st := baseAndDelta(t, dir)
			name := st.Base
			if which == "delta" {
				name = st.Delta
			}
			path := filepath.Join(seg.Dir, name)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0x40
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			var log strings.Builder
			again := segmentsAt(store, dir)
			again.Log = slog.New(slog.NewTextHandler(&log, nil))
			if err := again.Open(ctx); err != nil {
				t.Fatal(err)
			}
			// The rewrite may keep the file's time (its clock is coarse):
			// then the check runs in the background, and Wait waits for it.
			again.Wait()
			if !strings.Contains(log.String(), "rebuil") || !strings.Contains(log.String(), "checksum") {
				t.Fatalf("the log does not say the corrupt segment was rebuilt:\n%s", log.String())
			}
			if st2 := state(t, again); st2.Base == st.Base {
				t.Fatalf("the corrupt set %+v is still named", st2)
			}
			checkFiles(t, again)
			checkServes(t, again, 150)
		})
	}
}

// TestSegments_CheckedOnce checks that a segment is checked in full
// before it is first served and, at a later start that finds it as
// stamped, in the background: a byte lost in place (size and time kept)
// is found there and the index rebuilt from the store; a file whose time
// changed is checked in full again before it serves.
func TestSegments_CheckedOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, seg, st := baseAndDelta(t, dir)
	seg.Wait()
	if n := seg.Stats().Checked; n != 0 {
		t.Fatalf("%d segments were checked in the background; each was new, and checked in full as it opened", n)
	}
	checkFiles(t, seg) // each segment has its stamp

	reopen := func() (*Segments, *strings.Builder) {
		var log strings.Builder
		again := segmentsAt(store, dir)
		again.Log = slog.New(slog.NewTextHandler(&log, nil))
		if err := again.Open(ctx); err != nil {
			t.Fatal(err)
		}
		again.Wait()
		return again, &log
	}
	again, _ := reopen()
	if n := again.Stats().Checked; n != 2 {
		t.Fatalf("%d segments were checked in the background at a start on stamped files, want the base and the delta", n)
	}
	if st2 := state(t, again); st2.Base != st.Base || st2.Delta != st.Delta {
		t.Fatalf("a start on sound segments changed the set from %+v to %+v", st, st2)
	}
	checkServes(t, again, 150)

	// A file touched since its stamp is checked in full before it serves.
	base := filepath.Join(seg.Dir, st.Base)
	fi, err := os.Stat(base)
	if err != nil {
		t.Fatal(err)
	}
	later := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(base, later, later); err != nil {
		t.Fatal(err)
	}
	again, _ = reopen()
	if n := again.Stats().Checked; n != 1 {
		t.Fatalf("%d segments were checked in the background, want the delta alone: the touched base is checked as it opens", n)
	}
	checkFiles(t, again) // and stamped again

	// A stamp of other checks (an older build's) is no stamp.
	raw, err := os.ReadFile(base + checkedSuffix)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(raw), checksVersion, "content 0, structure 0", 1)
	if err := os.WriteFile(base+checkedSuffix, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if again, _ = reopen(); again.Stats().Checked != 1 {
		t.Fatalf("%d segments were checked in the background, want the delta alone: the base's stamp is of other checks", again.Stats().Checked)
	}

	// A byte lost in place, size and time kept: served at start, found by
	// the background check, rebuilt.
	f, err := os.OpenFile(base, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	at := fi.Size() / 2
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x40
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(base, later, later); err != nil {
		t.Fatal(err)
	}
	again, log := reopen()
	if !strings.Contains(log.String(), "failed its check") || !strings.Contains(log.String(), "read index rebuilt") {
		t.Fatalf("the log does not say the segment lost in place was found and rebuilt:\n%s", log.String())
	}
	if again.Stats().Rebuilding {
		t.Fatal("the index still says it is rebuilding after the rebuild")
	}
	if st2 := state(t, again); st2.Base == st.Base {
		t.Fatalf("the corrupt base is still named: %+v", st2)
	}
	checkFiles(t, again)
	checkServes(t, again, 150)
}

// The crash tests run a refresh in a child process that kills itself with
// SIGKILL at one step of writing a segment and committing it, then open
// the store and its segments as a restarted node does: the set must be
// whole and serve the store's records.
const (
	crashDirEnv   = "RAPPEL_TEST_CRASH_DIR"
	crashStepEnv  = "RAPPEL_TEST_CRASH_STEP"
	crashMergeEnv = "RAPPEL_TEST_CRASH_MERGE"
)

func TestSegments_CrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("run by TestSegments_Crash")
	}
	ctx := context.Background()
	store := kvtest.OpenAt(t, filepath.Join(dir, "pebble"))
	seg := segmentsAt(store, dir)
	if err := seg.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if os.Getenv(crashMergeEnv) != "" {
		seg.MergeAt = func(_, delta int) bool { return delta > 0 }
	}
	change(t, store, 7, 10, 10, 10)
	step := os.Getenv(crashStepEnv)
	// In a merge, the steps count from the merge's start: the refresh
	// before it writes a delta through the same steps.
	armed := os.Getenv(crashMergeEnv) == ""
	seg.onStep = func(s string) {
		if s == StepMerge {
			armed = true
		}
		if armed && s == step {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Minute)
		}
	}
	err := seg.DataChanged(ctx, true)
	seg.Wait()
	t.Fatalf("the refresh finished (%v) without reaching step %s", err, step)
}

func TestSegments_Crash(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	steps := []string{segment.StepWritten, segment.StepSynced, segment.StepRenamed, StepStateWrite, StepStateSaved}
	for _, merge := range []bool{false, true} {
		for _, step := range steps {
			name := "delta/" + step
			if merge {
				name = "merge/" + step
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				dir := t.TempDir()
				store := seedStore(t, dir)
				seg := segmentsAt(store, dir)
				if err := seg.Open(ctx); err != nil {
					t.Fatal(err)
				}
				before := state(t, seg)
				store.Close()

				cmd := exec.Command(os.Args[0], "-test.run=^TestSegments_CrashChild$", "-test.count=1")
				cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashStepEnv+"="+step)
				if merge {
					cmd.Env = append(cmd.Env, crashMergeEnv+"=1")
				}
				out, err := cmd.CombinedOutput()
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
					t.Fatalf("the child was not killed at %s (%v):\n%s", step, err, out)
				}

				store = kvtest.OpenAt(t, filepath.Join(dir, "pebble"))
				defer store.Close()
				again := segmentsAt(store, dir)
				if err := again.Open(ctx); err != nil {
					t.Fatal(err)
				}
				after := state(t, again)
				if step != StepStateSaved && after.Seq == before.Seq && after.Delta != "" {
					t.Fatalf("state %+v names a delta the crash never committed", after)
				}
				checkFiles(t, again)
				checkServes(t, again, 120)
			})
		}
	}
}

// TestSegments_FollowsRefreshes checks what a node's catalog does after
// each refresh, told through Segments.DataChanged: the catalog's cursor
// key signs every part; a refresh that moved only the dataset info swaps
// in the new info and builds nothing; one that changed records serves
// them; and a store that cannot be read leaves the catalog as it was.
func TestSegments_FollowsRefreshes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := kvtest.OpenAt(t, filepath.Join(dir, "pebble"))
	t.Cleanup(func() { store.Close() })
	if err := store.PutRecords(ctx, []*rappel.Record{testRecord("hc-1"), testRecord("hc-2")}); err != nil {
		t.Fatal(err)
	}
	setInfo := func(day int, source string) time.Time {
		t.Helper()
		at := time.Date(2026, 1, day, 0, 0, 0, 0, time.UTC)
		if err := store.SetDatasetInfo(ctx, rappel.DatasetInfo{UpdatedAt: at, Source: source, Records: 2}); err != nil {
			t.Fatal(err)
		}
		return at
	}
	setInfo(1, "bundle")
	key := bytes.Repeat([]byte{7}, 32)
	seg := segmentsAt(store, dir)
	seg.Catalog.Options = Options{CursorKey: key}
	if err := seg.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { seg.Close() })
	v := seg.Catalog.Current()
	if v.Len() != 2 || v.Info().Source != "bundle" || !bytes.Equal(v.base.cursorKey, key) {
		t.Fatalf("after Open: %d records, info %+v, cursor key %x", v.Len(), v.Info(), v.base.cursorKey)
	}
	t.Run("InfoOnly", func(t *testing.T) {
		before := seg.Catalog.Current()
		later := setInfo(2, "feeds")
		if err := seg.DataChanged(ctx, false); err != nil {
			t.Fatal(err)
		}
		v := seg.Catalog.Current()
		if !v.Info().UpdatedAt.Equal(later) || v.Info().Source != "feeds" || v.Len() != 2 || v.Info().Records != 2 {
			t.Fatalf("after an info-only change: %d records, info %+v", v.Len(), v.Info())
		}
		if v.base != before.base || v.delta != before.delta {
			t.Fatal("an info-only change built a segment")
		}
	})
	t.Run("Records", func(t *testing.T) {
		if err := store.PutRecords(ctx, []*rappel.Record{testRecord("hc-3")}); err != nil {
			t.Fatal(err)
		}
		if err := seg.DataChanged(ctx, true); err != nil {
			t.Fatal(err)
		}
		v := seg.Catalog.Current()
		if _, ok := v.Record("hc-3"); !ok || v.Len() != 3 || v.delta == nil || !bytes.Equal(v.delta.cursorKey, key) {
			t.Fatalf("after a records change: %d records, delta %v", v.Len(), v.delta != nil)
		}
	})
	t.Run("Closed", func(t *testing.T) {
		before := seg.Catalog.Current()
		store.Close()
		for _, records := range []bool{false, true} {
			if err := seg.DataChanged(ctx, records); err == nil {
				t.Fatalf("DataChanged(records %v) on a closed store succeeded", records)
			}
		}
		if seg.Catalog.Current() != before {
			t.Fatal("a failed refresh swapped the view")
		}
	})
}
