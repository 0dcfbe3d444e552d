package edge

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv/index"
)

// exchangeHTTP sends method url with the test key (when withKey) and the
// headers hdr over a client that does not ask for compression, and returns
// the response with its body read.
func exchangeHTTP(tb testing.TB, method, url string, withKey bool, hdr map[string]string) (*http.Response, string) {
	tb.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if withKey {
		req.Header.Set("X-Gateway-Key", testKey)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	// A transport of its own: http.DefaultTransport would add
	// Accept-Encoding: gzip and decode the body out of sight.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp, string(b)
}

// strongTag is a body hash, or "p" and a search page's version hash.
var strongTag = regexp.MustCompile(`^"p?[0-9a-f]{16}"$`)

func TestETag_Revalidation(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	ts := MustHTTP(t, s.Handler())
	reads := []string{
		"/recall/hc-73841",
		"/recall/hc-73841?lang=fr",
		"/recall?q=cheddar",
		"/recall/stats?period=all",
		"/recall/products?id=73841",
	}
	for _, path := range reads {
		t.Run(path, func(t *testing.T) {
			resp, body := exchangeHTTP(t, http.MethodGet, ts.URL+path, true, nil)
			tag := resp.Header.Get("ETag")
			if resp.StatusCode != http.StatusOK || !strongTag.MatchString(tag) {
				t.Fatalf("GET %s = %d with ETag %q, want 200 with a strong ETag", path, resp.StatusCode, tag)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "private, max-age=60" {
				t.Errorf("Cache-Control %q, want private, max-age=60 (a shared cache would bypass the key)", cc)
			}
			want := etagOf([]byte(body))
			if strings.HasPrefix(path, "/recall?") {
				// A page's tag is its dataset version and query (pageETag).
				want = pageETag(s.Catalog.Snapshot().Info(), strings.SplitN(path, "?", 2)[1])
			}
			if tag != want {
				t.Errorf("ETag %s, want %s", tag, want)
			}
			for _, inm := range []string{
				tag,
				"W/" + tag,
				`"0000000000000000", ` + tag,
				`"a,b", W/` + tag + `, "c"`,
				strings.TrimSuffix(tag, `"`) + `-gz"`,
				strings.TrimSuffix(tag, `"`) + `-zst"`,
				"*",
			} {
				for _, method := range []string{http.MethodGet, http.MethodHead} {
					r304, b304 := exchangeHTTP(t, method, ts.URL+path, true, map[string]string{"If-None-Match": inm})
					if r304.StatusCode != http.StatusNotModified || b304 != "" {
						t.Errorf("%s with If-None-Match %s = %d with %d bytes, want 304 without a body", method, inm, r304.StatusCode, len(b304))
						continue
					}
					if got := r304.Header.Get("ETag"); got != tag {
						t.Errorf("304 ETag %q, want %q", got, tag)
					}
					if cc := r304.Header.Get("Cache-Control"); cc != "private, max-age=60" {
						t.Errorf("304 Cache-Control %q", cc)
					}
				}
			}
			for _, inm := range []string{`"0123456789abcdef"`, `W/"nope"`, strings.Trim(tag, `"`), `"` + tag, ","} {
				r, b := exchangeHTTP(t, http.MethodGet, ts.URL+path, true, map[string]string{"If-None-Match": inm})
				if r.StatusCode != http.StatusOK || b != body {
					t.Errorf("If-None-Match %s = %d, want 200 with the full body", inm, r.StatusCode)
				}
			}
		})
	}
	t.Run("LanguagesDiffer", func(t *testing.T) {
		en, _ := exchangeHTTP(t, http.MethodGet, ts.URL+"/recall/hc-73841?lang=en", true, nil)
		fr, _ := exchangeHTTP(t, http.MethodGet, ts.URL+"/recall/hc-73841?lang=fr", true, nil)
		if en.Header.Get("ETag") == fr.Header.Get("ETag") {
			t.Errorf("lang=en and lang=fr share the ETag %s", en.Header.Get("ETag"))
		}
	})
	t.Run("KeyStillChecked", func(t *testing.T) {
		resp, _ := exchangeHTTP(t, http.MethodGet, ts.URL+"/recall/hc-73841", true, nil)
		r, _ := exchangeHTTP(t, http.MethodGet, ts.URL+"/recall/hc-73841", false,
			map[string]string{"If-None-Match": resp.Header.Get("ETag")})
		if r.StatusCode != http.StatusForbidden {
			t.Errorf("a matching If-None-Match without a key = %d, want 403", r.StatusCode)
		}
	})
}

// TestETag_DatasetChange swaps a new snapshot into the catalog, as a feed
// refresh does: the changed record's tag changes, an unchanged one's stays.
func TestETag_DatasetChange(t *testing.T) {
	catalog := MustCatalog(t, testRecords())
	s, _ := MustServer(t, catalog)
	ts := MustHTTP(t, s.Handler())
	get := func(path, inm string) (int, string) {
		r, _ := exchangeHTTP(t, http.MethodGet, ts.URL+path, true, map[string]string{"If-None-Match": inm})
		return r.StatusCode, r.Header.Get("ETag")
	}
	_, changed := get("/recall/hc-73841", "")
	_, same := get("/recall/tc-2025123", "")
	_, search := get("/recall", "")

	recs := testRecords()
	recs[0].Translations.EN.Title += " (updated)"
	snap, err := index.Build(recs, rappel.DatasetInfo{UpdatedAt: datasetTime.Add(15 * 60e9), Source: "live"})
	if err != nil {
		t.Fatal(err)
	}
	catalog.Swap(snap)

	if code, tag := get("/recall/hc-73841", changed); code != http.StatusOK || tag == changed {
		t.Errorf("changed record after the swap = %d with ETag %s (was %s), want 200 with a new ETag", code, tag, changed)
	}
	if code, tag := get("/recall", search); code != http.StatusOK || tag == search {
		t.Errorf("search after the swap = %d with ETag %s (was %s), want 200 with a new ETag", code, tag, search)
	}
	if code, tag := get("/recall/tc-2025123", same); code != http.StatusNotModified || tag != same {
		t.Errorf("unchanged record after the swap = %d with ETag %s, want 304 with %s", code, tag, same)
	}
}

// TestCacheControl_NotCached checks that errors, rate limits, probes and
// token links are never stored, and carry no ETag.
func TestCacheControl_NotCached(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	ts := MustHTTP(t, s.Handler())
	for _, c := range []struct {
		method, path string
		key          bool
		status       int
	}{
		{http.MethodGet, "/recall/nope", true, http.StatusNotFound},
		{http.MethodGet, "/recall/hc-73841", false, http.StatusForbidden},
		{http.MethodGet, "/recall?limit=0", true, http.StatusUnprocessableEntity},
		{http.MethodGet, "/recall?sort_by=relevance", true, http.StatusBadRequest},
		{http.MethodDelete, "/recall/hc-73841", true, http.StatusMethodNotAllowed},
		{http.MethodGet, "/nowhere", false, http.StatusNotFound},
		{http.MethodGet, "/health", false, http.StatusOK},
		{http.MethodGet, "/recall/alerts/confirm?token=x", false, 0},
	} {
		resp, body := exchangeHTTP(t, c.method, ts.URL+c.path, c.key, nil)
		if c.status != 0 && resp.StatusCode != c.status {
			t.Errorf("%s %s = %d, want %d: %s", c.method, c.path, resp.StatusCode, c.status, body)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s %s (%d): Cache-Control %q, want no-store", c.method, c.path, resp.StatusCode, cc)
		}
		if tag := resp.Header.Get("ETag"); tag != "" {
			t.Errorf("%s %s (%d): ETag %s on a response that is not a cacheable read", c.method, c.path, resp.StatusCode, tag)
		}
	}
}

// TestCacheControl_RateLimited checks that a 429 is not stored: replayed
// from a cache, it would refuse requests the key may make again.
func TestCacheControl_RateLimited(t *testing.T) {
	e := mustKeyedEnv(t, "", march2025)
	key := e.issue(t, "tiny") // bursts of 3
	var tag string
	for i := 0; i < 3; i++ {
		code, h, _ := e.get(t, "/recall/hc-73841", key)
		if code != http.StatusOK || h.Get("Cache-Control") != "private, max-age=60" {
			t.Fatalf("request %d: %d, Cache-Control %q", i+1, code, h.Get("Cache-Control"))
		}
		tag = h.Get("ETag")
	}
	code, h, _ := e.get(t, "/recall/hc-73841", key, "If-None-Match", tag)
	if code != http.StatusTooManyRequests || h.Get("Cache-Control") != "no-store" || h.Get("ETag") != "" {
		t.Errorf("over the burst: %d, Cache-Control %q, ETag %q; want 429, no-store, no ETag", code, h.Get("Cache-Control"), h.Get("ETag"))
	}
}

func TestCacheControl_Public(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	routes := append(s.routes(), route{methods: get, pattern: "/test/doc", public: true,
		handle: func(w http.ResponseWriter, r *http.Request) error {
			setCachePublic(w)
			writeJSON(w, r, http.StatusOK, []byte(`{"doc":true}`))
			return nil
		}})
	ts := MustHTTP(t, s.handler(routes))
	resp, _ := exchangeHTTP(t, http.MethodGet, ts.URL+"/test/doc", false, nil)
	if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=3600" || !strongTag.MatchString(resp.Header.Get("ETag")) {
		t.Errorf("public document: Cache-Control %q, ETag %q; want public, max-age=3600 and a strong ETag", cc, resp.Header.Get("ETag"))
	}
}

func TestNoneMatch(t *testing.T) {
	const tag = `"0123456789abcdef"`
	for _, c := range []struct {
		inm  []string
		none bool
	}{
		{nil, true},
		{[]string{""}, true},
		{[]string{tag}, false},
		{[]string{"W/" + tag}, false},
		{[]string{"*"}, false},
		{[]string{` ,, ` + tag + ` ,`}, false},
		{[]string{`"x"`, tag}, false}, // two field lines
		{[]string{`"0123456789abcdef-br"`}, false},
		{[]string{`"0123456789abcdef-gz"`}, false},
		{[]string{`W/"0123456789abcdef-zst"`}, false},
		{[]string{`"0123456789abcdef-xx"`}, true},
		{[]string{`"0123456789abcdeF"`}, true},
		{[]string{`0123456789abcdef`}, true},
		{[]string{`w/` + tag}, true},
		{[]string{`"a, ` + tag[1:]}, true}, // the comma is inside the first tag
		{[]string{`garbage, ` + tag}, false},
		{[]string{`"unterminated`}, true},
	} {
		if got := noneMatch(c.inm, tag); got != c.none {
			t.Errorf("noneMatch(%q) = %v, want %v", c.inm, got, c.none)
		}
	}
}

func TestTaggedETag(t *testing.T) {
	for _, c := range []struct {
		tag  string
		c    coding
		want string
	}{
		{`"abc"`, identity, `"abc"`},
		{`"abc"`, codingGzip, `"abc-gz"`},
		{`"abc"`, codingZstd, `"abc-zst"`},
		{`"abc"`, codingBrotli, `"abc-br"`},
		{`"abc-gz"`, codingGzip, `"abc-gz"`},
		{`W/"abc"`, codingGzip, `W/"abc"`},
		{`abc`, codingGzip, `abc`},
	} {
		if got := taggedETag(c.tag, c.c); got != c.want {
			t.Errorf("taggedETag(%s, %s) = %s, want %s", c.tag, codingNames[c.c], got, c.want)
		}
	}
}

// etagList is RFC 9110's If-None-Match list of entity tags (with empty
// members, which the list syntax allows).
var etagList = regexp.MustCompile(`^[ \t,]*((W/)?"[^"]*"[ \t]*(,[ \t,]*|$))*$`)

// FuzzIfNoneMatch checks that any If-None-Match value is parsed without a
// panic; that a well-formed list, with the current tag appended, matches;
// that a list matches exactly when one of its tags is the current one
// (modulo W/ and coding suffixes); and that the current tag on a field line
// of its own matches whatever the other line holds.
func FuzzIfNoneMatch(f *testing.F) {
	for _, s := range []string{`"a"`, `W/"a", "b"`, `*`, `"a-gz"`, `,,`, `W/`, `"`, `"a,b"`, `0",","`} {
		f.Add(s)
	}
	const tag = `"0123456789abcdef"`
	f.Fuzz(func(t *testing.T, v string) {
		got := noneMatch([]string{v}, tag)
		if etagList.MatchString(v) {
			want := true
			for _, m := range regexp.MustCompile(`(W/)?"[^"]*"`).FindAllString(v, -1) {
				if untaggedOpaque(m) == tag {
					want = false
				}
			}
			if got != want {
				t.Errorf("noneMatch(%q) = %v, want %v", v, got, want)
			}
			if noneMatch([]string{v + ", " + tag}, tag) {
				t.Errorf("If-None-Match %q followed by the current tag does not match", v)
			}
		}
		if noneMatch([]string{v, tag}, tag) {
			t.Errorf("the current tag on its own line after %q does not match", v)
		}
	})
}

// TestPageETag checks what a search page's tag depends on: the dataset's
// version and the query, each of them.
func TestPageETag(t *testing.T) {
	info := rappel.DatasetInfo{UpdatedAt: datasetTime, Source: "bundle", Records: 10}
	base := pageETag(info, "q=cheese&lang=fr")
	if !strongTag.MatchString(base) || base == etagOf(nil) {
		t.Fatalf("pageETag = %s", base)
	}
	later, more, live, rebundled := info, info, info, info
	later.UpdatedAt = later.UpdatedAt.Add(1)
	more.Records++
	live.Source = "feeds"
	rebundled.Bundle = "2025-03-04T10:06:07Z sha256:0123"
	for name, tag := range map[string]string{
		"UpdatedAt": pageETag(later, "q=cheese&lang=fr"),
		"Records":   pageETag(more, "q=cheese&lang=fr"),
		"Source":    pageETag(live, "q=cheese&lang=fr"),
		"Bundle":    pageETag(rebundled, "q=cheese&lang=fr"),
		"query":     pageETag(info, "q=cheese&lang=en"),
		"no query":  pageETag(info, ""),
	} {
		if tag == base {
			t.Errorf("a different %s gives the same tag %s", name, tag)
		}
	}
	if again := pageETag(info, "q=cheese&lang=fr"); again != base {
		t.Errorf("the same version and query give %s, then %s", base, again)
	}
}
