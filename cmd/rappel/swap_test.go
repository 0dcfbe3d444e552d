package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

// feed is source's state in /health.
func feed(tb testing.TB, base, source string) rappel.FeedState {
	tb.Helper()
	for _, f := range health(tb, base).Feeds {
		if f.Source == source {
			return f
		}
	}
	return rappel.FeedState{}
}

// adminPlugins reads GET /admin/plugins.
func adminPlugins(tb testing.TB, base string) plugins.Report {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/admin/plugins", nil)
	req.Header.Set("x-admin-key", adminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var rep plugins.Report
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&rep) != nil {
		tb.Fatalf("GET /admin/plugins = %d", resp.StatusCode)
	}
	return rep
}

// activeOf is source's active plugin in rep.
func activeOf(rep plugins.Report, source string) *plugins.ActiveReport {
	for _, s := range rep.Sources {
		if s.Source == source {
			return s.Active
		}
	}
	return nil
}

// TestServe_PluginSwapPersists is the integrator's trial: Transport
// Canada's file with a column renamed makes the bundled vrdb plugin fail on
// a fresh node; a fixed plugin dropped into --plugins-dir is activated on
// that file although the source never had a live refresh, and serves. The
// node, stopped and started again on the same data dir (and an empty
// --plugins-dir), runs the fixed plugin, and /health and /admin/plugins
// say so.
func TestServe_PluginSwapPersists(t *testing.T) {
	bundleDir := MustBuildBundle(t)
	up := sampleUpstream(t)
	up.Set("/tc/vrdb.csv", bytes.Replace(up.Doc("/tc/vrdb.csv"), []byte(`"MANUFACTURER_RECALL_NO_TXT"`), []byte(`"MANUFACTURER_RECALL_NUMBER"`), 1))

	dataDir := t.TempDir()
	start := func(pluginsDir string) (string, func()) {
		c := NewServeCommand()
		if err := c.ParseFlags([]string{
			"--data-dir", dataDir, "--api-keys", "k1", "--feeds", "on",
			"--feed-hc-en", up.URL + "/hc/recalls-en.json", "--feed-hc-fr", up.URL + "/hc/recalls-fr.json",
			"--feed-tc-vrdb", up.URL + "/tc/vrdb.csv", "--feed-detail", up.URL + "/detail/{lang}/{id}.json",
			"--refresh-interval", "1h", "--admin-key", adminKey, "--plugins-dir", pluginsDir, "--plugins-allow-unsigned", "--feed-detail-rate", "0",
		}); err != nil {
			t.Fatal(err)
		}
		c.Bundle = os.DirFS(bundleDir)
		return serve(t, c)
	}
	pluginsDir := t.TempDir()
	base, stop := start(pluginsDir)
	waitFor(t, "the bundled vrdb plugin failing on the renamed column", func() bool {
		return strings.Contains(feed(t, base, "vrdb").LastError, "MANUFACTURER_RECALL_NO_TXT")
	})
	bundled := activeOf(adminPlugins(t, base), "vrdb")
	if f := feed(t, base, "vrdb"); bundled == nil || bundled.From != "bundled" || f.Plugin != bundled.SHA256 {
		t.Fatalf("before the fix: /health names %s, /admin/plugins %+v", f.Plugin, bundled)
	}

	fixed := plugintest.Build(t, "./plugins/testdata/guests/vrdbrenamed")
	plugintest.Install(t, pluginsDir, "vrdb", fixed)
	served := func() bool {
		f := feed(t, base, "vrdb")
		return f.Live && f.LastError == "" && f.Plugin == plugins.SHA256(fixed) && f.Records > 0
	}
	waitFor(t, "the fixed plugin active and its refresh served", served)
	if code, r := record(t, base, "tc-2018123"); code != 200 || r.Translations.EN == nil {
		t.Fatalf("GET /recall/tc-2018123 after the swap = %d %+v", code, r)
	}
	stop()

	base, _ = start(t.TempDir())
	if a := activeOf(adminPlugins(t, base), "vrdb"); a == nil || a.SHA256 != plugins.SHA256(fixed) || a.From != "dir" || !strings.Contains(a.Why, "current payload") {
		t.Fatalf("after a restart /admin/plugins says vrdb runs %+v, want the fixed plugin", a)
	}
	if code, body := adminRefresh(t, base, adminKey); code != 200 {
		t.Fatalf("POST /admin/refresh after a restart = %d %s", code, body)
	}
	if f := feed(t, base, "vrdb"); !served() || f.Stale {
		t.Fatalf("after a restart /health says vrdb %+v, want the fixed plugin serving", f)
	}
}
