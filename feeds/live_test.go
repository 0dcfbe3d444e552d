package feeds_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/kv"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// told is a listener that keeps what it is told and fails when asked to,
// beside the real read index.
type told struct {
	mu    sync.Mutex
	calls []bool
	fail  error
}

func (l *told) DataChanged(_ context.Context, records bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, records)
	err := l.fail
	l.fail = nil
	return err
}

// take returns what the listener was told since the last take.
func (l *told) take() []bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.calls
	l.calls = nil
	return c
}

// MustIndex opens the read index of store as a node serves it: segment
// files in a temporary directory, kept in step with the store by
// index.Segments, the refresher's listener; closed at cleanup.
func MustIndex(tb testing.TB, store *kv.Store) *index.Segments {
	tb.Helper()
	seg := &index.Segments{Dir: filepath.Join(tb.TempDir(), "index"), Store: store, Catalog: &index.Catalog{}}
	if err := seg.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { seg.Close() })
	return seg
}

// TestRefresher_Listeners refreshes through the real read index as a
// listener: a new recall upstream is in the index's snapshot after the
// refresh, with no one in between; a refresh that found nothing moves the
// dataset's time only; a listener that fails is told again, with records
// changed, until it catches up.
func TestRefresher_Listeners(t *testing.T) {
	h := newHarness(t)
	h.loadBundle(nil, true)
	idx := MustIndex(t, h.store)
	catalog := idx.Catalog
	other := &told{}
	h.r.Listeners = []rappel.ChangeListener{idx, other}
	h.open()
	h.mustRefresh()
	if info := catalog.Current().Info(); info.Source != "feeds" || !info.UpdatedAt.Equal(h.now) {
		t.Fatalf("the index's dataset after the first live refresh: %+v", info)
	}
	other.take()

	t.Run("NewRecall", func(t *testing.T) {
		if _, ok := catalog.Current().Record("hc-70009"); ok {
			t.Fatal("hc-70009 is in the index before it is upstream")
		}
		addRow(h, newRowEN, newRowFR)
		h.up.Set("/detail/en/70009.json", []byte(newDetailEN))
		n := catalog.Current().Len()
		h.mustRefresh()
		snap := catalog.Current()
		r, ok := snap.Record("hc-70009")
		if !ok || !strings.Contains(r.Translations.EN.Title, "frozen peas") {
			t.Fatalf("hc-70009 in the index after the refresh: %+v, %v", r, ok)
		}
		if snap.Len() != n+1 || !snap.Info().UpdatedAt.Equal(h.now) {
			t.Errorf("index after the refresh: %d records, info %+v; want %d, updated now", snap.Len(), snap.Info(), n+1)
		}
		// Told once the dump is written, then once the detail documents
		// are: the new notice's dates are in its detail document, so its
		// record comes with the second.
		if got := other.take(); len(got) != 2 || got[0] || !got[1] {
			t.Errorf("the other listener was told %v, want [false true]", got)
		}
	})
	t.Run("NothingNew", func(t *testing.T) {
		before := catalog.Current()
		h.mustRefresh()
		after := catalog.Current()
		if !after.Info().UpdatedAt.Equal(h.now) || after.Len() != before.Len() {
			t.Errorf("index after a refresh that found nothing: %d records, info %+v", after.Len(), after.Info())
		}
		if got := other.take(); len(got) != 1 || got[0] {
			t.Errorf("the other listener was told %v, want [false]", got)
		}
	})
	t.Run("ListenerFails", func(t *testing.T) {
		other.fail = errors.New("the other listener is down")
		replace(t, h, "/hc/recalls-en.json", `"Type II", "Last updated": null, "Archived": "0"}`, `"Type II", "Last updated": null, "Archived": "1"}`)
		if err := h.refresh(); err == nil || !strings.Contains(err.Error(), "the other listener is down") {
			t.Fatalf("refresh = %v, want the listener's error", err)
		}
		// The index, told first, caught up all the same.
		if r, _ := catalog.Current().Record("hc-70003"); r == nil || r.Status != rappel.StatusArchived {
			t.Errorf("hc-70003 in the index = %+v, want archived", r)
		}
		// Nothing changes upstream: the listeners are told records
		// changed until both caught up, then no more.
		h.mustRefresh()
		h.mustRefresh()
		if got := other.take(); len(got) != 3 || !got[0] || !got[1] || got[2] {
			t.Errorf("the other listener was told %v, want [true true false]", got)
		}
	})
}

// TestLive runs the live feeds over a store loaded from a bundle, with the
// real plugin registry and the real read index as a listener: the refresh
// at start makes every source live, Trigger brings a new recall into the
// index, a plugin dropped into the plugins dir replaces the running one
// and shows in the index without a trigger, and a module that cannot run
// is refused, as /health says.
func TestLive(t *testing.T) {
	h := newHarness(t)
	h.loadBundle(nil, true)
	live, reg, catalog := openLive(t, h, t.TempDir(), "")

	// The index is told once the dumps are written, before the detail
	// documents: the refresh at start is over once every source is live.
	waitFor(t, "the refresh at start", func() bool {
		for _, st := range live.States() {
			if !st.Live && st.LastError == "" {
				return false
			}
		}
		return catalog.Current().Info().Source == "feeds"
	})
	for _, st := range live.States() {
		if !st.Live || st.LastError != "" || st.Plugin != reg.Active(st.Source) {
			t.Errorf("state after the refresh at start: %+v", st)
		}
	}

	t.Run("Trigger", func(t *testing.T) {
		addRow(h, newRowEN, newRowFR)
		h.up.Set("/detail/en/70009.json", []byte(newDetailEN))
		if err := live.Trigger(h.ctx); err != nil {
			t.Fatal(err)
		}
		if _, ok := catalog.Current().Record("hc-70009"); !ok {
			t.Fatal("hc-70009 is not in the index after a triggered refresh")
		}
	})
	t.Run("HotSwap", func(t *testing.T) {
		r, _ := catalog.Current().Record("tc-2018123")
		title := r.Translations.EN.Title
		upper := plugintest.Build(t, guests+"upper")
		if err := os.WriteFile(filepath.Join(reg.Dir, "hcdump.wasm"), upper, 0o644); err != nil {
			t.Fatal(err)
		}
		// It changes every title: held until its digest is approved.
		waitFor(t, "the candidate held for approval", func() bool {
			ev := reg.Report().History
			return len(ev) > 0 && ev[0].Event == "held" && ev[0].SHA256 == plugins.SHA256(upper)
		})
		if err := reg.Approve(h.ctx, "hcdump", plugins.SHA256(upper)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the new plugin's titles in the index", func() bool {
			r, ok := catalog.Current().Record("tc-2018123")
			return ok && r.Translations.EN.Title == strings.ToUpper(title)
		})
		if got := reg.Active("hcdump"); got != plugins.SHA256(upper) {
			t.Errorf("hcdump's plugin = %s, want the candidate's", got)
		}
	})
	t.Run("Refused", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(reg.Dir, "vrdb.wasm"), []byte("not a module"), 0o644); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the refusal in the states", func() bool {
			for _, st := range live.States() {
				if st.Source == "vrdb" && strings.Contains(st.PluginRejected, "not a usable module") {
					return true
				}
			}
			return false
		})
	})
	t.Run("Off", func(t *testing.T) {
		if err := live.Close(); err != nil {
			t.Fatal(err)
		}
		off := &feeds.Live{Store: h.store, Off: true}
		if err := off.Open(h.ctx); err != nil {
			t.Fatal(err)
		}
		defer off.Close()
		states := off.States()
		if len(states) != 3 {
			t.Fatalf("stored states = %+v, want the three sources'", states)
		}
		for _, st := range states {
			if !st.Live || st.Records == 0 {
				t.Errorf("stored state %+v, want the live refreshes'", st)
			}
		}
		if err := off.Trigger(h.ctx); err == nil {
			t.Error("Trigger with the feeds off refreshed")
		}
	})
}

// waitFor polls ok until it holds, or fails after a minute.
func waitFor(tb testing.TB, what string, ok func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
	}
}
