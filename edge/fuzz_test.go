package edge

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/rappel-ca/rappel"
)

// FuzzHandler sends arbitrary methods, paths and query strings through the
// whole handler: the answer is never a 500, every 200 is JSON, every other
// answer is JSON with a detail, and the items of a 422 are shaped as
// rappel's constructors shape them.
func FuzzHandler(f *testing.F) {
	s, _ := MustServer(f, MustCatalog(f, testRecords()))
	s.Logger = discardLogger()
	s.Lookup = mustStore(f, testRecords())
	h := s.Handler()
	methods := []string{"GET", "HEAD", "POST", "DELETE", "OPTIONS", "CONNECT", "PATCH", "BREW"}
	for _, seed := range []struct {
		method uint8
		key    bool
		path   string
		query  string
	}{
		{0, true, "/recall/hc-73841", "lang=fr"},
		{0, true, "/recall/hc-73841", "lang=en&lang=en"},
		{0, true, "/recall/hc-73841", "lnag=xx&lang=%zz"},
		{0, false, "/health", ""},
		{1, true, "/recall/tc-2025123", ""},
		{2, true, "/health", "x=1"},
		{5, true, "/recall/", ""},
		{0, true, "//recall/../health/.", "a;b"},
		{0, true, "/recall/%2e%2e", ""},
		{0, true, "*", ""},
		{0, true, "/recall/stats", "group_by=allergen&period=2%20weeks&sum_field=units_affected"},
		{0, true, "/recall/products", "id=2025123"},
		{0, true, "/recall/upc", "upc=0-62639-31285-4&lang=fr"},
		{0, true, "/recall/vin", "vin=4T1BB3EK5AU118081"},
	} {
		f.Add(seed.method, seed.key, seed.path, seed.query)
	}
	f.Fuzz(func(t *testing.T, method uint8, key bool, path, query string) {
		target := path
		if query != "" {
			target += "?" + query
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			t.Skip("net/http would refuse this request line")
		}
		r := (&http.Request{
			Method:     methods[int(method)%len(methods)],
			URL:        u,
			Proto:      "HTTP/1.1",
			ProtoMajor: 1,
			ProtoMinor: 1,
			Header:     http.Header{},
			Host:       "recalls.example.ca",
			RequestURI: target,
			Body:       http.NoBody,
		}).WithContext(context.Background())
		if key {
			r.Header.Set("X-Gateway-Key", testKey)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)

		if w.Code >= 500 {
			t.Fatalf("%s %q: status %d: %s", r.Method, target, w.Code, w.Body)
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("%s %q: Content-Type %q", r.Method, target, ct)
		}
		if r.Method == http.MethodHead {
			if w.Body.Len() != 0 {
				t.Fatalf("HEAD %q: a body", target)
			}
			return
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s %q: body is not a JSON object: %v: %s", r.Method, target, err, w.Body)
		}
		if w.Code != http.StatusOK && body["detail"] == nil {
			t.Fatalf("%s %q: %d without detail: %s", r.Method, target, w.Code, w.Body)
		}
		if w.Code == http.StatusUnprocessableEntity {
			var items []rappel.Invalid
			if err := json.Unmarshal(body["detail"], &items); err != nil || len(items) == 0 {
				t.Fatalf("%s %q: 422 without items: %s", r.Method, target, w.Body)
			}
			for _, it := range items {
				for _, p := range itemProblems(it, false) {
					t.Errorf("%s %q: %s: %+v", r.Method, target, p, it)
				}
			}
		}
	})
}
