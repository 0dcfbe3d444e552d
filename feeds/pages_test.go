package feeds

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rappel-ca/rappel"
)

// TestFetchPages: which upstream each notice's detail comes from. A notice
// from PageFrom on is read from its recall pages (the English one at the
// dump's URL, the French one at its hreflang alternate), an older one from
// the old API; each falls back to the other when the first has nothing.
// A page fetched again is asked for conditionally, and a 304 keeps it.
func TestFetchPages(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	var conditional []string
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		if r.Header.Get("If-None-Match") != "" {
			conditional = append(conditional, r.URL.Path)
		}
		mu.Unlock()
		switch p := r.URL.Path; {
		case p == "/api/en/50" || p == "/api/fr/50" || p == "/api/en/300":
			fmt.Fprintf(w, `{"recallId": %q}`, p)
		case p == "/en/alert-recall/two-hundred":
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", `"v1"`)
			fmt.Fprintf(w, `<!DOCTYPE html><html><head><link rel="alternate" hreflang="fr" href="%s/fr/avis-rappel/deux-cents"></head><body><main>200</main></body></html>`, srv.URL)
		case p == "/fr/avis-rappel/deux-cents" || p == "/en/node/60":
			fmt.Fprint(w, `<html><body><main>page</main></body></html>`)
		case p == "/en/node/400":
			fmt.Fprint(w, `{"not": "a page"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	src := DetailPages(srv.URL+"/api/{lang}/{id}", srv.URL+"/{lang}/node/{id}", 100)
	if err := src.Validate(); err != nil {
		t.Fatal(err)
	}
	r := NewRefresher(nil, nil, src)
	r.Fetcher = NewFetcher()
	r.Fetcher.Logger = nil
	r.Fetcher.Retries = 0
	hints := map[string]noticeHint{
		"200": {url: srv.URL + "/en/alert-recall/two-hundred"},
		"300": {url: "https://elsewhere.example/en/alert-recall/three-hundred"}, // not on the pages' site: not fetched
	}
	got, problems := r.fetchDetails(context.Background(), src, []string{"400", "300", "200", "60", "50"}, nil, hints)
	if len(problems) != 1 || problems[0].RecordID != "hc-400" || !strings.Contains(problems[0].Reason, "not HTML") {
		t.Errorf("problems %+v, want notice 400's JSON refused as a page", problems)
	}
	docs, err := detailFormat{}.join(got)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range docs {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"en/200.html", "en/300.json", "en/50.json", "en/60.html", "fr/200.html", "fr/50.json"}
	if !slices.Equal(names, want) {
		t.Errorf("documents %v, want %v", names, want)
	}
	mu.Lock()
	for _, p := range []string{"/api/en/200", "/en/node/50", "/en/alert-recall/three-hundred"} {
		if slices.Contains(asked, p) {
			t.Errorf("asked for %s: %v", p, asked)
		}
	}
	for _, p := range []string{"/en/node/300", "/fr/node/300", "/api/en/300", "/api/en/60", "/api/fr/60", "/en/node/60"} {
		if !slices.Contains(asked, p) {
			t.Errorf("did not ask for %s: %v", p, asked)
		}
	}
	mu.Unlock()

	// Round trip: the stored record gives back its pages and validators,
	// and the next fetch asks conditionally; the 304 keeps the page.
	i := slices.IndexFunc(got, func(raw rappel.RawRecord) bool { return raw.Key == "200" })
	prev, ok := storedPagesOf(got[i])
	if !ok || prev.state[0].ETag != `"v1"` || prev.body[1] == nil {
		t.Fatalf("stored pages of 200: %+v, %v", prev, ok)
	}
	again, problems := r.fetchDetails(context.Background(), src, []string{"200"}, nil, map[string]noticeHint{"200": {url: hints["200"].url, prev: prev}})
	if len(problems) != 0 || len(again) != 1 || again[0].Hash != got[i].Hash {
		t.Fatalf("fetched again: %+v, %+v; want the same content", again, problems)
	}
	if !slices.Contains(conditional, "/en/alert-recall/two-hundred") {
		t.Errorf("the page was not asked for conditionally: %v", conditional)
	}

	// Split, as a corpus on disk is read back, gives the same content.
	split, err := detailFormat{}.split(docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range split {
		for _, g := range got {
			if g.Key == raw.Key && g.Hash != raw.Hash {
				t.Errorf("notice %s: split hash %s, fetched %s", raw.Key, raw.Hash, g.Hash)
			}
		}
	}
}

// TestPageFirst: from PageFrom on, pages first; without Page, never.
func TestPageFirst(t *testing.T) {
	s := DetailPages("https://a.example/{lang}/{id}", "https://b.example/{lang}/node/{id}", DefaultPageFrom)
	if s.pageFirst("76771") || !s.pageFirst("76772") || !s.pageFirst("82165") {
		t.Errorf("pageFirst around %d is wrong", DefaultPageFrom)
	}
	if Detail("https://a.example/{lang}/{id}").pageFirst("82165") {
		t.Error("a source without pages reads pages first")
	}
	if err := DetailPages("https://a.example/{lang}/{id}", "https://b.example/node", 1).Validate(); err == nil {
		t.Error("a page template without {id} and {lang} is valid")
	}
}
