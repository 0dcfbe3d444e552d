package edge

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/buildinfo"
)

// testBuild is a stamped build, as the Makefile's -ldflags -X make one.
var testBuild = buildinfo.Info{Version: "v1.4.0-3-g9d8e7f6", Commit: "9d8e7f6a1b2c3d4e5f60718293a4b5c6d7e8f901",
	BuildDate: "2026-11-22T06:00:00Z", GoVersion: "go1.26.8"}

func TestHealth_Build(t *testing.T) {
	t.Run("Stamped", func(t *testing.T) {
		s, _ := MustServer(t, MustCatalog(t, testRecords()))
		s.Build = testBuild
		code, body := adminDo(t, http.MethodGet, MustHTTP(t, s.Handler()).URL+"/health", "")
		var h struct {
			Status string         `json:"status"`
			Build  buildinfo.Info `json:"build"`
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &h) != nil || h.Status != "ok" {
			t.Fatalf("GET /health = %d %s", code, body)
		}
		if h.Build != testBuild {
			t.Fatalf("build = %+v, want %+v", h.Build, testBuild)
		}
	})
	t.Run("Default", func(t *testing.T) {
		// NewServer reports the running binary's build: never empty.
		s, _ := MustServer(t, MustCatalog(t, testRecords()))
		_, body := adminDo(t, http.MethodGet, MustHTTP(t, s.Handler()).URL+"/health", "")
		var h struct {
			Build buildinfo.Info `json:"build"`
		}
		if json.Unmarshal([]byte(body), &h) != nil || h.Build != buildinfo.Read() || h.Build.Version == "" || h.Build.Commit == "" {
			t.Fatalf("GET /health = %s, want the build of %+v", body, buildinfo.Read())
		}
	})
}

func TestMetrics_BuildInfo(t *testing.T) {
	s := mustMetricsServer(t)
	s.Build = testBuild
	want := map[string]string{"version": testBuild.Version, "commit": testBuild.Commit,
		"build_date": testBuild.BuildDate, "go_version": testBuild.GoVersion}
	for name, url := range map[string]string{
		"API":      MustHTTP(t, s.Handler()).URL + "/metrics",
		"Listener": MustHTTP(t, s.MetricsHandler()).URL + "/metrics",
	} {
		t.Run(name, func(t *testing.T) {
			fams := scrape(t, url, map[string]string{"x-admin-key": metricsAdminKey})
			m := series(fams, "rappel_build_info", want)
			if m == nil || m.GetGauge().GetValue() != 1 {
				t.Fatalf("rappel_build_info%v = %v, want 1", want, m)
			}
			if n := len(fams["rappel_build_info"].GetMetric()); n != 1 {
				t.Errorf("%d rappel_build_info series, want 1", n)
			}
		})
	}
}

// TestHealth_StaleFeeds: a feed with no success for three intervals makes
// /health say degraded, naming it, and still answer 200, so that a probe
// that reads only status sees that the node serves old records; with
// every feed fresh it is ok and names none.
func TestHealth_StaleFeeds(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	states := []rappel.FeedState{{Source: "hcdump"}, {Source: "vrdb", Stale: true}}
	s.Feeds = func() []rappel.FeedState { return states }
	url := MustHTTP(t, s.Handler()).URL + "/health"
	var h struct {
		Status       string   `json:"status"`
		StaleSources []string `json:"stale_sources"`
	}
	code, body := adminDo(t, http.MethodGet, url, "")
	if code != http.StatusOK || json.Unmarshal([]byte(body), &h) != nil || h.Status != "degraded" || !slices.Equal(h.StaleSources, []string{"vrdb"}) {
		t.Fatalf("GET /health with vrdb stale = %d %s", code, body)
	}
	states[1].Stale = false
	h.StaleSources = nil
	code, body = adminDo(t, http.MethodGet, url, "")
	if code != http.StatusOK || json.Unmarshal([]byte(body), &h) != nil || h.Status != "ok" || h.StaleSources != nil {
		t.Fatalf("GET /health with every feed fresh = %d %s", code, body)
	}
}
