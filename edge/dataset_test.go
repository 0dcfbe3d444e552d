package edge

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
)

// TestServer_DatasetKind: generated data says so on every answer (the
// Rappel-Dataset header, /health, / and its page), and the agencies' data
// carries no such sign.
func TestServer_DatasetKind(t *testing.T) {
	for _, kind := range []string{rappel.DatasetSynthetic, rappel.DatasetAgencies} {
		t.Run(kind, func(t *testing.T) {
			snap, err := index.Build(testRecords(), rappel.DatasetInfo{UpdatedAt: datasetTime, Source: "feeds", Kind: kind})
			if err != nil {
				t.Fatal(err)
			}
			c := &index.Catalog{}
			c.Swap(snap)
			s, _ := MustServer(t, c)
			url := MustHTTP(t, s.Handler()).URL
			get := func(path, accept string) (*http.Response, string) {
				req, _ := http.NewRequest(http.MethodGet, url+path, nil)
				req.Header.Set("x-gateway-key", testKey)
				if accept != "" {
					req.Header.Set("Accept", accept)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp, string(b)
			}
			for _, path := range []string{"/recall?q=recall", "/recall/hc-73841", "/recall/stats?group_by=agency", "/recall/upc?upc=012345678905", "/recall/suggest?q=re", "/recall/export", "/recall/changes", "/recall/feed.atom", "/health", "/recall/nope?x=1"} {
				resp, _ := get(path, "")
				got := resp.Header.Get("Rappel-Dataset")
				if want := map[string]string{rappel.DatasetSynthetic: "synthetic"}[kind]; got != want {
					t.Errorf("GET %s (%d): Rappel-Dataset %q, want %q", path, resp.StatusCode, got, want)
				}
			}
			_, health := get("/health", "")
			if !strings.Contains(health, `"dataset_kind":"`+kind+`"`) {
				t.Errorf("/health = %s, want dataset_kind %s", health, kind)
			}
			_, root := get("/", "")
			if !strings.Contains(root, `"dataset":"`+kind+`"`) || strings.Contains(root, "generated demo data") != (kind == rappel.DatasetSynthetic) {
				t.Errorf("/ = %s", root)
			}
			_, page := get("/", "text/html")
			if strings.Contains(page, "generated demo data") != (kind == rappel.DatasetSynthetic) || strings.Contains(page, "données de démonstration générées") != (kind == rappel.DatasetSynthetic) {
				t.Errorf("the / page says of %s data: %s", kind, page)
			}
		})
	}
}
