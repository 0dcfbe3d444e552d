package feeds_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds"
	"github.com/rappel-ca/rappel/kv/index"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// openLive opens live feeds over h's store and sources with a registry of
// the shipped plugins watching dir, keeping swaps in activeDir, both closed
// at cleanup, with the read index the feeds feed.
func openLive(t *testing.T, h *harness, dir, activeDir string) (*feeds.Live, *plugins.Registry, *index.Catalog) {
	t.Helper()
	mods := map[string][]byte{}
	for source, pkg := range shipped {
		mods[source] = plugintest.Build(t, pkg)
	}
	reg := plugins.NewRegistry(MustOpenHost(t), mods)
	reg.Dir, reg.ActiveDir, reg.PollInterval, reg.Logger = dir, activeDir, 100*time.Millisecond, slog.New(slog.DiscardHandler)
	if err := reg.Open(h.ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	idx := MustIndex(t, h.store)
	live := &feeds.Live{
		Store: h.store, Plugins: reg, Sources: h.r.Sources,
		Interval: time.Hour, MaxRemoval: 0.2, DetailRate: 0,
		Listeners: []rappel.ChangeListener{idx},
		Logger:    slog.New(slog.DiscardHandler),
	}
	if err := live.Open(h.ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	return live, reg, idx.Catalog
}

// vrdbState is the vrdb source's state in live's states.
func vrdbState(live *feeds.Live) rappel.FeedState {
	for _, st := range live.States() {
		if st.Source == "vrdb" {
			return st
		}
	}
	return rappel.FeedState{}
}

// A node whose upstream renamed a column, which the bundled plugin fails
// on, activates a fixed candidate on the upstream's current payload, with
// no successful live refresh ever, and its next refresh serves the fix's
// records. The swap is kept: reopened on the same data dir, the node runs
// the fix, not the bundled plugin.
func TestLive_CandidateOnCurrentPayload(t *testing.T) {
	h := newHarness(t)
	h.loadBundle(nil, true) // the bundle's raw records: keys and hashes, no payload
	csv := h.up.Doc("/tc/vrdb.csv")
	h.up.Set("/tc/vrdb.csv", bytes.Replace(csv, []byte(`"MANUFACTURER_RECALL_NO_TXT"`), []byte(`"MANUFACTURER_RECALL_NUMBER"`), 1))
	dir, activeDir := t.TempDir(), t.TempDir()
	live, reg, _ := openLive(t, h, dir, activeDir)
	waitFor(t, "the bundled vrdb plugin failing on the renamed column", func() bool {
		return strings.Contains(vrdbState(live).LastError, "MANUFACTURER_RECALL_NO_TXT")
	})

	fixed := plugintest.Build(t, guests+"vrdbrenamed")
	tmp := filepath.Join(dir, ".vrdb.tmp")
	if err := os.WriteFile(tmp, fixed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "vrdb.wasm")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	waitFor(t, "the fix active and its refresh served", func() bool {
		st := vrdbState(live)
		return reg.Active("vrdb") == plugins.SHA256(fixed) && st.Live && st.LastError == "" && st.Plugin == plugins.SHA256(fixed)
	})
	t.Logf("candidate written → active and refreshed in %s", time.Since(start).Round(time.Millisecond))
	if st := vrdbState(live); st.Records == 0 || h.record("tc-2018123") == nil {
		t.Fatalf("vrdb after the swap: %+v, tc-2018123 %v", st, h.record("tc-2018123"))
	}

	// A restart: the same store and data dir, a new registry and feeds.
	live.Close()
	reg.Close()
	live, reg, _ = openLive(t, h, t.TempDir(), activeDir)
	if got := reg.Active("vrdb"); got != plugins.SHA256(fixed) {
		t.Fatalf("after a restart vrdb runs %s, want the swapped-in %s", got, plugins.SHA256(fixed))
	}
	if err := live.Trigger(h.ctx); err != nil {
		t.Fatalf("the refresh after a restart: %v", err)
	}
	if st := vrdbState(live); st.LastError != "" || st.Plugin != plugins.SHA256(fixed) || st.Stale {
		t.Fatalf("vrdb after a restart: %+v", st)
	}
}
