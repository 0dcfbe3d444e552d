package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/fleet"
	"github.com/rappel-ca/rappel/plugins"
	"github.com/rappel-ca/rappel/plugins/plugintest"
)

const adminKey = "admin-key-of-the-end-to-end-tests-0123456789"

// healthBody is what the test reads of GET /health.
type healthBody struct {
	Status           string             `json:"status"`
	Records          int                `json:"records"`
	DatasetUpdatedAt time.Time          `json:"dataset_updated_at"`
	DatasetSource    string             `json:"dataset_source"`
	DatasetVersion   int64              `json:"dataset_version"`
	Feeds            []rappel.FeedState `json:"feeds"`
	Fleet            *fleet.Status      `json:"fleet"`
}

func health(tb testing.TB, base string) healthBody {
	tb.Helper()
	code, body := get(tb, base+"/health", "")
	var h healthBody
	if code != 200 || json.Unmarshal(body, &h) != nil {
		tb.Fatalf("GET /health = %d %s", code, body)
	}
	return h
}

// waitFor polls until ok or fails after a minute and a half.
func waitFor(tb testing.TB, what string, ok func() bool) {
	tb.Helper()
	waitWithin(tb, what, 90*time.Second, ok)
}

// waitWithin is waitFor failing after d.
func waitWithin(tb testing.TB, what string, d time.Duration, ok func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func adminRefresh(tb testing.TB, base, key string) (int, []byte) {
	tb.Helper()
	return adminPost(tb, base+"/admin/refresh", key, "")
}

// adminPost posts body to url with the admin key, and returns the answer.
func adminPost(tb testing.TB, url, key, body string) (int, []byte) {
	tb.Helper()
	h := http.Header{}
	if key != "" {
		h.Set("x-admin-key", key)
	}
	return send(tb, http.MethodPost, url, h, strings.NewReader(body))
}

func record(tb testing.TB, base, id string) (int, *rappel.Record) {
	tb.Helper()
	code, body := get(tb, base+"/recall/"+id, "k1")
	if code != 200 {
		return code, nil
	}
	var r rappel.Record
	if err := json.Unmarshal(body, &r); err != nil {
		tb.Fatal(err)
	}
	return code, &r
}

// sampleUpstream serves the samples in testdata/ as the agencies' feeds.
func sampleUpstream(tb testing.TB) *feedstest.Upstream {
	tb.Helper()
	root := plugintest.ModuleRoot(tb)
	up := feedstest.NewUpstream(tb)
	up.LoadDir(tb, "/hc", filepath.Join(root, "testdata", "hc"))
	up.LoadDir(tb, "/tc", filepath.Join(root, "testdata", "tc"))
	up.LoadDir(tb, "/detail", filepath.Join(root, "testdata", "detail"))
	return up
}

// mustFetchBundle builds a bundle with rappel bundle --fetch from up's
// samples, as sampleUpstream serves them.
func mustFetchBundle(tb testing.TB, up *feedstest.Upstream) string {
	tb.Helper()
	pluginsDir, _ := shippedPlugins(tb)
	out, _ := fetchBundle(tb, pluginsDir, "--feed-hc-en", up.URL+"/hc/recalls-en.json", "--feed-hc-fr", up.URL+"/hc/recalls-fr.json",
		"--feed-tc-vrdb", up.URL+"/tc/vrdb.csv", "--feed-detail", up.URL+"/detail/{lang}/{id}.json", "--detail-rate", "0")
	return out
}

// A notice the samples do not have, and its detail document.
const (
	newRowEN    = `{"NID": "70009", "Title": "Acme brand frozen peas recalled due to Listeria", "URL": "https://recalls-rappels.canada.ca/en/alert-recall/acme-frozen-peas", "Organization": "CFIA", "Product": "Frozen peas", "Issue": "Microbiological - Listeria", "What you should do": "Do not consume the recalled product.", "Category": "Vegetables", "Recall class": "Class 1", "Last updated": null, "Archived": "0"}`
	newDetailEN = `{"url": "https://recalls-rappels.canada.ca/en/alert-recall/acme-frozen-peas", "recallId": "70009", "title": "Acme brand frozen peas recalled due to Listeria", "start_date": 1793000000, "date_published": 1793050000, "category": ["Food"], "panels": [{"panelName": "summary", "title": "Summary", "text": "Acme brand frozen peas may be contaminated with Listeria."}]}`
)

// TestServe_Feeds starts the server with its feeds pointed at a local
// upstream serving the samples, changes the upstream (a new recall, and one
// now archived), triggers a refresh and reads both through the API; then
// drops a new plugin into --plugins-dir and sees its effect, without a
// restart.
func TestServe_Feeds(t *testing.T) {
	up := sampleUpstream(t)
	// A bundle fetched from that upstream: its first live refresh diffs
	// (a generated one's replaces everything: TestServe_RealSwitch).
	bundleDir := mustFetchBundle(t, up)

	pluginsDir, dataDir := t.TempDir(), t.TempDir()
	c := NewServeCommand()
	err := c.ParseFlags([]string{
		"--data-dir", dataDir, "--api-keys", "k1", "--feeds", "on",
		"--feed-hc-en", up.URL + "/hc/recalls-en.json", "--feed-hc-fr", up.URL + "/hc/recalls-fr.json",
		"--feed-tc-vrdb", up.URL + "/tc/vrdb.csv", "--feed-detail", up.URL + "/detail/{lang}/{id}.json",
		"--refresh-interval", "3s", "--admin-key", adminKey, "--plugins-dir", pluginsDir, "--plugins-allow-unsigned", "--feed-detail-rate", "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Bundle = os.DirFS(bundleDir)
	base, _ := serve(t, c)

	// The refresh at start makes every source live.
	waitLive(t, base)
	before := health(t, base)
	for _, f := range before.Feeds {
		if f.LastError != "" || f.Stale || f.Records == 0 || f.Plugin == "" || f.LastSuccess.IsZero() || f.LastAttempt.IsZero() {
			t.Errorf("feed after the first refresh: %+v", f)
		}
	}
	if code, r := record(t, base, "hc-70003"); code != 200 || r.Status != rappel.StatusActive {
		t.Fatalf("hc-70003 before = %d %+v", code, r)
	}
	if code, _ := record(t, base, "hc-70009"); code != 404 {
		t.Fatalf("hc-70009 before = %d, want 404", code)
	}

	t.Run("AdminKey", func(t *testing.T) {
		if code, body := adminRefresh(t, base, ""); code != 403 {
			t.Fatalf("POST /admin/refresh without key = %d %s", code, body)
		}
		if code, body := adminRefresh(t, base, "k1"); code != 403 {
			t.Fatalf("POST /admin/refresh with an API key = %d %s", code, body)
		}
	})

	// Upstream: a new notice with its detail document, and 70003 archived.
	en := bytes.TrimSpace(up.Doc("/hc/recalls-en.json"))
	en = append(en[:len(en)-1], []byte(",\n"+newRowEN+"\n]")...)
	en = bytes.Replace(en, []byte(`"Type II", "Last updated": null, "Archived": "0"}`), []byte(`"Type II", "Last updated": null, "Archived": "1"}`), 1)
	up.Set("/hc/recalls-en.json", en)
	up.Set("/detail/en/70009.json", []byte(newDetailEN))
	// The change feed's present, to follow the refresh from.
	var since struct{ Next string }
	if code, body := get(t, base+"/recall/changes?since=now", "k1"); code != 200 || json.Unmarshal(body, &since) != nil {
		t.Fatalf("GET /recall/changes?since=now = %d %s", code, body)
	}
	code, body := adminRefresh(t, base, adminKey)
	if code != 200 {
		t.Fatalf("POST /admin/refresh = %d %s", code, body)
	}

	t.Run("NewRecall", func(t *testing.T) {
		code, r := record(t, base, "hc-70009")
		if code != 200 || r.Translations.EN == nil || !strings.Contains(r.Translations.EN.Title, "frozen peas") || r.EventDate == "" {
			t.Fatalf("GET /recall/hc-70009 = %d %+v", code, r)
		}
		code, page := get(t, base+"/recall?q=peas", "k1")
		if code != 200 || !strings.Contains(string(page), `"hc-70009"`) {
			t.Fatalf("GET /recall?q=peas = %d %s", code, page)
		}
		// Without a full rebuild: the node still serves the bundle's
		// segment from the binary, the refreshes' changes in one delta
		// segment beside it, and no base was written.
		files, err := filepath.Glob(filepath.Join(dataDir, "index", "*.seg"))
		if err != nil || len(files) != 1 || !strings.HasPrefix(filepath.Base(files[0]), "delta-") {
			t.Fatalf("the index directory holds %v (%v), want one delta segment", files, err)
		}
	})
	t.Run("Archived", func(t *testing.T) {
		if code, r := record(t, base, "hc-70003"); code != 200 || r.Status != rappel.StatusArchived {
			t.Fatalf("hc-70003 = %d %+v, want archived", code, r)
		}
	})
	t.Run("ChangeFeed", func(t *testing.T) {
		code, body := get(t, base+"/recall/changes?limit=500&since="+since.Next, "k1")
		var p struct {
			Changes []struct {
				Type     string `json:"type"`
				RecordID string `json:"record_id"`
			} `json:"changes"`
			HasMore bool `json:"has_more"`
		}
		if code != 200 || json.Unmarshal(body, &p) != nil || p.HasMore {
			t.Fatalf("GET /recall/changes = %d %.300s", code, body)
		}
		got := map[string]bool{}
		for _, c := range p.Changes {
			got[c.Type+" "+c.RecordID] = true
		}
		if !got["recall.created hc-70009"] || !got["recall.archived hc-70003"] {
			t.Fatalf("the refresh's changes: %s", body)
		}
	})
	t.Run("Health", func(t *testing.T) {
		h := health(t, base)
		// dataset_updated_at is written to the second: it moved, or
		// stayed within the second.
		if h.Records != before.Records+1 || h.DatasetUpdatedAt.Before(before.DatasetUpdatedAt) || h.DatasetSource != "feeds" {
			t.Fatalf("health after = %+v, before %+v", h, before)
		}
	})

	t.Run("UpstreamDown", func(t *testing.T) {
		up.Fail("/tc/vrdb.csv", feedstest.Fault{Status: 503})
		defer up.Heal()
		if code, body := adminRefresh(t, base, adminKey); code != 200 || !strings.Contains(string(body), "503") {
			t.Fatalf("POST /admin/refresh = %d %s, want vrdb's failure in its state", code, body)
		}
		if code, _ := get(t, base+"/recall/tc-2018123", "k1"); code != 200 {
			t.Fatalf("the last good data is not served: %d", code)
		}
		if code, _ := get(t, base+"/health", ""); code != 200 {
			t.Fatalf("/health = %d", code)
		}
	})

	t.Run("HotSwap", func(t *testing.T) {
		_, r := record(t, base, "tc-2018123")
		title := r.Translations.EN.Title
		upper := plugintest.Build(t, "./plugins/testdata/guests/upper")
		if err := os.WriteFile(filepath.Join(pluginsDir, "hcdump.wasm"), upper, 0o644); err != nil {
			t.Fatal(err)
		}
		// It changes every title: held until an operator approves it.
		waitFor(t, "the candidate's approval", func() bool {
			code, _ := adminPost(t, base+"/admin/plugins/hcdump/approve", adminKey, `{"sha256":"`+plugins.SHA256(upper)+`"}`)
			return code == 200
		})
		waitFor(t, "the new plugin's titles", func() bool {
			_, r := record(t, base, "tc-2018123")
			return r != nil && r.Translations.EN.Title == strings.ToUpper(title)
		})
		for _, f := range health(t, base).Feeds {
			if f.Source == "hcdump" && (f.Plugin != plugins.SHA256(upper) || f.LastError != "") {
				t.Errorf("hcdump after the swap: %+v", f)
			}
		}
	})
}

// TestServeCommand_PluginLimitFlags: the plugin limits' defaults, their
// variables, the refusal of a bad value naming its flag, and a memory bomb
// stopped at --plugin-memory by a host set from the flags, with a sentence
// naming the limit and the flag.
func TestServeCommand_PluginLimitFlags(t *testing.T) {
	c := NewServeCommand()
	if err := c.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if u := c.Upstream; u.PluginTimeout != 2*time.Minute || u.PluginMemoryMiB != 1024 || u.PluginOutputMiB != 512 {
		t.Fatalf("defaults: timeout %s, memory %d MiB, output %d MiB", u.PluginTimeout, u.PluginMemoryMiB, u.PluginOutputMiB)
	}
	for _, bad := range [][]string{{"--plugin-timeout", "0s"}, {"--plugin-memory", "8"}, {"--plugin-memory", "5000"}, {"--plugin-output", "0"}} {
		err := NewServeCommand().ParseFlags(bad)
		if err == nil || !strings.Contains(err.Error(), bad[0]+" is "+bad[1]) {
			t.Errorf("%v: %v, want a sentence naming the flag", bad, err)
		}
	}
	t.Setenv("RAPPEL_PLUGIN_MEMORY", "128")
	c = NewServeCommand()
	if err := c.ParseFlags([]string{"--plugin-timeout", "20s", "--plugin-output", "64"}); err != nil {
		t.Fatal(err)
	}
	host := plugins.NewHost()
	c.Upstream.limit(host)
	if host.Timeout != 20*time.Second || host.MemoryLimitPages != 2048 || host.MaxOutput != 64<<20 {
		t.Fatalf("host limits: %s, %d pages, %d bytes", host.Timeout, host.MemoryLimitPages, host.MaxOutput)
	}
	host.Logger = slog.New(slog.DiscardHandler)
	if err := host.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer host.Close(context.Background())
	p, err := host.Load(context.Background(), "hog", plugintest.Build(t, "./plugins/testdata/guests/hog"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Run(context.Background(), fstest.MapFS{})
	want := "it ran out of memory at the limit of 128 MiB (--plugin-memory)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("memory bomb: %v, want %q", err, want)
	}
}
