package feeds_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/kv/kvtest"
	"github.com/rappel-ca/rappel/kv/storetest"
)

// Each failure's reason is checked where it is recorded, on a real
// refresh: the upstream's and the plugins' faults in
// TestRefresher_Refresh_Faults, the store's, the detail source's and a
// source that waits for another's here.

// detailPaths are the upstream paths of the detail documents of every
// notice the dump sample lists, whether the sample has them or not.
func detailPaths(t *testing.T, h *harness) []string {
	t.Helper()
	var rows []struct{ NID string }
	if err := json.Unmarshal(h.up.Doc("/hc/recalls-en.json"), &rows); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		for _, lang := range rappel.Langs {
			out = append(out, "/detail/"+lang+"/"+r.NID+".json")
		}
	}
	return out
}

// TestRefresh_DetailJudgedByWhatItFetched: the detail source's status
// says what its fetch of the notices' documents did. An upstream that
// answers 500 to every notice fails the source with reason fetch, one
// that answers a maintenance page to every notice with reason parse, the
// last good data serving either way; once it answers again the source
// succeeds, and a refresh with nothing to fetch says so, not an error.
// One notice that fails among others is a problem of that notice.
func TestRefresh_DetailJudgedByWhatItFetched(t *testing.T) {
	h := newHarness(t)
	h.open()
	paths := detailPaths(t, h)
	stored := map[string][]byte{}
	for _, p := range paths {
		if b := h.up.Doc(p); b != nil {
			stored[p] = b
		}
	}
	if len(paths) < 6 || len(stored) == 0 {
		t.Fatalf("the samples give %d detail paths, %d with documents", len(paths), len(stored))
	}

	t.Run("Status500", func(t *testing.T) {
		for _, p := range paths {
			h.up.Fail(p, feedstest.Fault{Status: 500})
		}
		if err := h.refresh(); err == nil || !strings.Contains(err.Error(), "refreshing detail") {
			t.Fatalf("refresh: %v, want the detail source's failure", err)
		}
		st := h.state("detail")
		if st.LastErrorReason != rappel.FailureFetch || !st.LastSuccess.IsZero() || st.Live {
			t.Errorf("detail = %+v, want failed with reason fetch, never live", st)
		}
		if want := " notices whose detail documents this refresh tried could be fetched"; !strings.HasPrefix(st.LastError, "None of the ") || !strings.Contains(st.LastError, want) || !strings.Contains(st.LastError, "500") {
			t.Errorf("last_error = %q, want %q and the status", st.LastError, want)
		}
		if st := h.state("hcdump"); st.LastError != "" || !st.Live {
			t.Errorf("hcdump = %+v, want refreshed", st)
		}
	})

	t.Run("Garbage", func(t *testing.T) {
		h.up.Heal()
		for _, p := range paths {
			h.up.Set(p, []byte("<!DOCTYPE html><html><body>Site maintenance</body></html>"))
		}
		if err := h.refresh(); err == nil {
			t.Fatal("the refresh succeeded on pages that are no documents")
		}
		st := h.state("detail")
		if st.LastErrorReason != rappel.FailureParse || !strings.Contains(st.LastError, "was readable") || !strings.Contains(st.LastError, "not JSON") {
			t.Errorf("detail = %+v, want failed with reason parse", st)
		}
	})

	t.Run("Recovered", func(t *testing.T) {
		for _, p := range paths {
			if b, ok := stored[p]; ok {
				h.up.Set(p, b)
			} else {
				h.up.Delete(p)
			}
		}
		h.mustRefresh()
		st := h.state("detail")
		if st.LastError != "" || st.LastErrorReason != "" || st.Note != "" || !st.Live || st.Records == 0 {
			t.Errorf("detail = %+v, want refreshed with records and no note", st)
		}
	})

	t.Run("NothingToFetch", func(t *testing.T) {
		h.up.ResetHits()
		h.mustRefresh()
		st := h.state("detail")
		if st.LastError != "" || !strings.HasPrefix(st.Note, "Nothing to fetch: every notice hcdump lists has the detail documents") || st.Records == 0 {
			t.Errorf("detail = %+v, want a success whose note says there was nothing to fetch", st)
		}
		if n := h.up.Hits("/detail/"); n != 0 {
			t.Errorf("%d detail requests with nothing to fetch", n)
		}
	})

	t.Run("OneNoticeFails", func(t *testing.T) {
		replace(t, h, "/hc/recalls-en.json", `"NID": "70001"`, `"NID": "70001", "Extra": "a changed row"`)
		h.up.Fail("/detail/en/70001.json", feedstest.Fault{Status: 500})
		h.mustRefresh()
		st := h.state("detail")
		if st.LastError != "" || st.Note != "" {
			t.Errorf("detail = %+v, want a success: one notice failing is its problem", st)
		}
		found := false
		for _, pr := range st.Problems {
			found = found || pr.RecordID == "hc-70001" && strings.Contains(pr.Reason, "500")
		}
		if !found {
			t.Errorf("problems = %+v, want hc-70001's", st.Problems)
		}
	})
}

// TestRefresh_StorageFailure fills the disk under the real Pebble store
// (errorfs injecting ENOSPC): every source's refresh fails with reason
// storage, and succeeds again once the disk has room.
func TestRefresh_StorageFailure(t *testing.T) {
	h := newHarness(t)
	full := storetest.DiskFull()
	st := kvtest.New(t)
	st.FS = errorfs.Wrap(vfs.Default, full)
	st.ProbeInterval = 20 * time.Millisecond
	kvtest.MustOpen(t, st)
	h.store, h.r.Store = st, st
	h.open()
	h.mustRefresh()

	full.On()
	if err := h.refresh(); err == nil {
		t.Fatal("the refresh succeeded on a full disk")
	}
	for _, source := range []string{"hcdump", "vrdb", "detail"} {
		if st := h.state(source); st.LastErrorReason != rappel.FailureStorage || !strings.Contains(st.LastError, "no space left on device") {
			t.Errorf("%s = %+v, want failed with reason storage", source, st)
		}
	}

	full.Off()
	deadline := time.Now().Add(30 * time.Second)
	for h.refresh() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the refreshes still fail once the disk has room: %+v", h.r.States())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, source := range []string{"hcdump", "vrdb", "detail"} {
		if st := h.state(source); st.LastError != "" || st.LastErrorReason != "" {
			t.Errorf("%s = %+v after the disk has room", source, st)
		}
	}
}

// TestRefresh_WaitingForTheDump: over a bundle, the detail documents wait
// for the dump's first live refresh; while the dump fails, the detail
// source fails with reason waiting and the dump with its own.
func TestRefresh_WaitingForTheDump(t *testing.T) {
	h := newHarness(t)
	h.loadBundle(nil, false)
	h.open()
	h.up.Fail("/hc/recalls-fr.json", feedstest.Fault{Status: 503})
	if err := h.refresh(); err == nil {
		t.Fatal("the refresh succeeded")
	}
	if st := h.state("hcdump"); st.LastErrorReason != rappel.FailureFetch || !strings.Contains(st.LastError, "503") {
		t.Errorf("hcdump = %+v, want failed with reason fetch", st)
	}
	if st := h.state("detail"); st.LastErrorReason != rappel.FailureWaiting || !strings.Contains(st.LastError, "Waiting for hcdump's first live refresh") {
		t.Errorf("detail = %+v, want failed with reason waiting", st)
	}
	if st := h.state("vrdb"); st.LastError != "" || st.LastErrorReason != "" {
		t.Errorf("vrdb = %+v, want refreshed", st)
	}
}
