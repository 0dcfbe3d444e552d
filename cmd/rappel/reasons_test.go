package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/kv/storetest"
)

// TestServe_FeedFailureReasons runs a node on a loopback upstream and
// breaks its feeds one way after another: a document missing (fetch), a
// source waiting for the dump (waiting), a vehicle file that is an HTML
// page (parse), detail documents answering 500 (fetch) and then a
// maintenance page (parse), a renamed column the plugin fails on
// (plugin), a vehicle file of its header alone (suspicious_removal) and a
// full disk (storage). After each refresh, /health, POST /admin/refresh's
// answer and /metrics give every source's reason, one rappel_feed_error
// series a source: 1 with the reason while it fails, 0 with reason ""
// while it does not.
func TestServe_FeedFailureReasons(t *testing.T) {
	bundleDir := MustBuildBundle(t)
	up := sampleUpstream(t)
	frDump := up.Doc("/hc/recalls-fr.json")
	vrdb := up.Doc("/tc/vrdb.csv")
	up.Delete("/hc/recalls-fr.json")
	full := storetest.DiskFull()
	c := NewServeCommand()
	if err := c.ParseFlags([]string{
		"--data-dir", t.TempDir(), "--api-keys", "k1", "--feeds", "on",
		"--feed-hc-en", up.URL + "/hc/recalls-en.json", "--feed-hc-fr", up.URL + "/hc/recalls-fr.json",
		"--feed-tc-vrdb", up.URL + "/tc/vrdb.csv", "--feed-detail", up.URL + "/detail/{lang}/{id}.json",
		"--refresh-interval", "1h", "--admin-key", adminKey, "--feed-detail-rate", "0", "--metrics-addr", "127.0.0.1:0",
	}); err != nil {
		t.Fatal(err)
	}
	c.Bundle = os.DirFS(bundleDir)
	c.storeFS = errorfs.Wrap(vfs.Default, full)
	metricsAddr := make(chan net.Addr, 1)
	c.Telemetry.MetricsReady = func(a net.Addr) { metricsAddr <- a }
	base, _ := serve(t, c)
	metricsURL := "http://" + (<-metricsAddr).String() + "/metrics"

	// The detail documents of every notice of the dump, whether the
	// samples have them or not.
	var rows []struct{ NID string }
	if err := json.Unmarshal(up.Doc("/hc/recalls-en.json"), &rows); err != nil {
		t.Fatal(err)
	}
	details := map[string][]byte{}
	for _, r := range rows {
		for _, lang := range rappel.Langs {
			p := "/detail/" + lang + "/" + r.NID + ".json"
			details[p] = up.Doc(p)
		}
	}

	// check reads every source's reason from /health, from the answer of
	// the refresh (nil at start) and from /metrics.
	check := func(t *testing.T, refreshed []rappel.FeedState, want map[string]rappel.FeedFailure) {
		t.Helper()
		for where, feeds := range map[string][]rappel.FeedState{"GET /health": health(t, base).Feeds, "POST /admin/refresh": refreshed} {
			if feeds == nil {
				continue
			}
			for _, f := range feeds {
				if f.LastErrorReason != want[f.Source] || (f.LastError == "") != (want[f.Source] == "") {
					t.Errorf("%s: %s has last_error_reason %q, last_error %q; want reason %q", where, f.Source, f.LastErrorReason, f.LastError, want[f.Source])
				}
			}
		}
		m := scrapeNode(t, metricsURL)
		for source, reason := range want {
			want := 0.0
			if reason != "" {
				want = 1
			}
			if v := m.value(t, "rappel_feed_error", map[string]string{"source": source, "reason": string(reason)}); v != want {
				t.Errorf("rappel_feed_error{source=%q, reason=%q} = %v, want %v", source, reason, v, want)
			}
			n := 0
			for _, s := range m["rappel_feed_error"].GetMetric() {
				for _, l := range s.GetLabel() {
					if l.GetName() == "source" && l.GetValue() == source {
						n++
					}
				}
			}
			if n != 1 {
				t.Errorf("rappel_feed_error has %d series of source %s, want 1", n, source)
			}
		}
	}
	refresh := func(t *testing.T) []rappel.FeedState {
		t.Helper()
		code, body := adminRefresh(t, base, adminKey)
		var got struct{ Feeds []rappel.FeedState }
		if code != http.StatusOK || json.Unmarshal(body, &got) != nil {
			t.Fatalf("POST /admin/refresh = %d %s", code, body)
		}
		return got.Feeds
	}

	t.Run("FetchAndWaiting", func(t *testing.T) {
		// The refresh at start: the vehicle file replaces the bundle
		// alone, the dump's French document is missing, and the detail
		// documents wait for the dump.
		waitFor(t, "the first refresh", func() bool {
			f := feed(t, base, "detail")
			return feed(t, base, "vrdb").Live && !f.LastAttempt.IsZero()
		})
		check(t, nil, map[string]rappel.FeedFailure{"hcdump": rappel.FailureFetch, "vrdb": "", "detail": rappel.FailureWaiting})
	})
	t.Run("ParseAndDetailFetch", func(t *testing.T) {
		up.Set("/hc/recalls-fr.json", frDump)
		up.Set("/tc/vrdb.csv", []byte("<!DOCTYPE html>\n<html><body>Site maintenance</body></html>\n"))
		for p := range details {
			up.Fail(p, feedstest.Fault{Status: 500})
		}
		check(t, refresh(t), map[string]rappel.FeedFailure{"hcdump": "", "vrdb": rappel.FailureParse, "detail": rappel.FailureFetch})
	})
	t.Run("PluginAndDetailParse", func(t *testing.T) {
		up.Heal()
		for p := range details {
			up.Set(p, []byte("<html><body>Site maintenance</body></html>"))
		}
		up.Set("/tc/vrdb.csv", bytes.Replace(vrdb, []byte(`"MANUFACTURER_RECALL_NO_TXT"`), []byte(`"MANUFACTURER_RECALL_NUMBER"`), 1))
		check(t, refresh(t), map[string]rappel.FeedFailure{"hcdump": "", "vrdb": rappel.FailurePlugin, "detail": rappel.FailureParse})
	})
	t.Run("SuspiciousRemoval", func(t *testing.T) {
		for p, b := range details {
			if b != nil {
				up.Set(p, b)
			} else {
				up.Delete(p)
			}
		}
		header, _, _ := bytes.Cut(vrdb, []byte("\n"))
		up.Set("/tc/vrdb.csv", append(header, '\n'))
		check(t, refresh(t), map[string]rappel.FeedFailure{"hcdump": "", "vrdb": rappel.FailureSuspiciousRemoval, "detail": ""})
		if f := feed(t, base, "detail"); f.Records == 0 {
			t.Errorf("detail = %+v, want its records fetched", f)
		}
	})
	t.Run("Storage", func(t *testing.T) {
		up.Set("/tc/vrdb.csv", vrdb)
		full.On()
		check(t, refresh(t), map[string]rappel.FeedFailure{"hcdump": rappel.FailureStorage, "vrdb": rappel.FailureStorage, "detail": rappel.FailureStorage})
		if f := feed(t, base, "vrdb"); !strings.Contains(f.LastError, "no space left on device") {
			t.Errorf("vrdb's last_error = %q, want the disk's error", f.LastError)
		}
		full.Off()
		deadline := time.Now().Add(time.Minute)
		for {
			feeds := refresh(t)
			ok := true
			for _, f := range feeds {
				ok = ok && f.LastError == ""
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the refreshes still fail once the disk has room: %+v", feeds)
			}
			time.Sleep(100 * time.Millisecond)
		}
		check(t, nil, map[string]rappel.FeedFailure{"hcdump": "", "vrdb": "", "detail": ""})
	})
}
