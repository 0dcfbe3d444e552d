// Package fdatest rebuilds, for tests, the documents an openFDA source
// fetches from the real sample of openFDA's answers kept beside the
// repository (../shared/real).
package fdatest

import (
	"encoding/json"
	"maps"
	"net/url"
	"path"
	"slices"
	"testing"

	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

// RealDocuments rebuilds, from the real sample's recorded exchanges (each
// the answer to a query for one recall number), the documents the
// manifest's list queries would fetch: one response per endpoint holding
// all its results, named as the manifest names them.
func RealDocuments(tb testing.TB) map[string][]byte {
	tb.Helper()
	var exchanges []struct {
		SourceURL string `json:"source_url"`
		Response  struct {
			Meta    json.RawMessage   `json:"meta"`
			Results []json.RawMessage `json:"results"`
		} `json:"response"`
	}
	if err := json.Unmarshal(guesttest.RealSample(tb, "openfda-enforcement.json"), &exchanges); err != nil {
		tb.Fatal(err)
	}
	results := map[string][]json.RawMessage{}
	for _, e := range exchanges {
		u, err := url.Parse(e.SourceURL)
		if err != nil {
			tb.Fatal(err)
		}
		name := path.Base(path.Dir(u.Path)) + ".json" // /food/enforcement.json → food.json
		results[name] = append(results[name], e.Response.Results...)
	}
	fsys := map[string][]byte{}
	for name, rs := range results {
		b, err := json.Marshal(map[string]any{"meta": map[string]any{"results": map[string]int{"skip": 0, "limit": 1000, "total": len(rs)}}, "results": rs})
		if err != nil {
			tb.Fatal(err)
		}
		fsys[name] = b
	}
	if len(fsys) != 2 || fsys["food.json"] == nil || fsys["drug.json"] == nil {
		tb.Fatalf("the real sample makes documents %v, want food.json and drug.json", slices.Sorted(maps.Keys(fsys)))
	}
	return fsys
}
