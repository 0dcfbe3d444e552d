package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
)

// withDeprecated returns a copy of the embedded document, decoded, that
// mark has changed: an operation, or a parameter.
func withDeprecated(tb testing.TB, mark func(doc map[string]any)) []byte {
	tb.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		tb.Fatal(err)
	}
	mark(doc)
	b, err := json.Marshal(doc)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// operation returns the operation of method and path in doc.
func operation(tb testing.TB, doc map[string]any, method, path string) map[string]any {
	tb.Helper()
	op, ok := doc["paths"].(map[string]any)[path].(map[string]any)[method].(map[string]any)
	if !ok {
		tb.Fatalf("the document has no %s %s", method, path)
	}
	return op
}

// deprecate marks f deprecated on since until sunset, announced at notice.
func deprecate(f map[string]any, since, sunset, notice string) {
	f["deprecated"] = true
	f[extDeprecationDate] = since
	f[extSunset] = sunset
	f[extDeprecationNotice] = notice
}

const testNotice = "https://recalls.example.ca/changes#date_from"

// TestDeprecation_Parameter: a Server given a document in which a query
// parameter of GET /recall is deprecated answers a search using it with
// the Deprecation, Sunset and Link headers and counts it by feature and
// key; the same search without it carries none of them and counts
// nothing.
func TestDeprecation_Parameter(t *testing.T) {
	doc := withDeprecated(t, func(doc map[string]any) {
		for _, p := range operation(t, doc, "get", "/recall")["parameters"].([]any) {
			if p := p.(map[string]any); p["name"] == "date_from" {
				deprecate(p, "2026-12-01", "2027-06-01", testNotice)
			}
		}
	})
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	s.OpenAPI = doc
	s.AdminKey = metricsAdminKey
	base := MustHTTP(t, s.Handler()).URL
	key, err := s.Keys.Authenticate(context.Background(), testKey)
	if err != nil {
		t.Fatal(err)
	}

	res, body := fetch(t, base+"/recall?date_from=2025-01-01&limit=1", nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /recall?date_from=…: %d %s", res.StatusCode, body)
	}
	since := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if got, want := res.Header.Get("Deprecation"), "@"+strconv.FormatInt(since.Unix(), 10); got != want {
		t.Errorf("Deprecation = %q, want %q", got, want)
	}
	if got, want := res.Header.Get("Sunset"), "Tue, 01 Jun 2027 00:00:00 GMT"; got != want {
		t.Errorf("Sunset = %q, want %q", got, want)
	}
	wantLinks := []string{"<" + testNotice + `>; rel="deprecation"`, "<" + testNotice + `>; rel="sunset"`}
	if got := res.Header.Values("Link"); !slices.Equal(got, wantLinks) {
		t.Errorf("Link = %q, want %q", got, wantLinks)
	}
	if expose := res.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(expose, "Deprecation") || !strings.Contains(expose, "Sunset") || !strings.Contains(expose, "Link") {
		t.Errorf("Access-Control-Expose-Headers = %q, want Deprecation, Link and Sunset among them", expose)
	}

	// The same search by its current name: nothing deprecated is used.
	res, body = fetch(t, base+"/recall?issued_after=2025-01-01&limit=1", nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /recall?issued_after=…: %d %s", res.StatusCode, body)
	}
	for _, h := range []string{"Deprecation", "Sunset", "Link"} {
		if v := res.Header.Values(h); v != nil {
			t.Errorf("without the deprecated parameter, %s = %q, want none", h, v)
		}
	}

	fams := scrape(t, base+"/metrics", map[string]string{"x-admin-key": metricsAdminKey})
	m := series(fams, "rappel_deprecated_requests_total", map[string]string{"feature": "GET /recall?date_from", "key": key.ID})
	if m == nil || m.GetCounter().GetValue() != 1 {
		t.Fatalf("rappel_deprecated_requests_total{feature=\"GET /recall?date_from\",key=%q} = %v, want 1", key.ID, m)
	}
	if n := len(fams["rappel_deprecated_requests_total"].GetMetric()); n != 1 {
		t.Errorf("%d series of rappel_deprecated_requests_total, want 1", n)
	}
}

// TestDeprecation_Route: a deprecated public route carries the headers on
// every answer and counts its callers, who send no key, as anonymous; a
// route that is not deprecated carries none.
func TestDeprecation_Route(t *testing.T) {
	doc := withDeprecated(t, func(doc map[string]any) {
		deprecate(operation(t, doc, "get", "/health"), "2026-12-01", "2027-12-01", "/docs#/operations/getHealth")
	})
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	s.OpenAPI = doc
	s.AdminKey = metricsAdminKey
	base := MustHTTP(t, s.Handler()).URL
	for range 2 {
		res, body := fetch(t, base+"/health", nil)
		if res.StatusCode != http.StatusOK || res.Header.Get("Sunset") != "Wed, 01 Dec 2027 00:00:00 GMT" ||
			res.Header.Get("Deprecation") == "" || res.Header.Get("Link") != `</docs#/operations/getHealth>; rel="deprecation"` {
			t.Fatalf("GET /health: %d, headers %v\n%s", res.StatusCode, res.Header, body)
		}
	}
	if res, _ := fetch(t, base+"/livez", nil); res.Header.Get("Deprecation") != "" || res.Header.Get("Sunset") != "" {
		t.Errorf("GET /livez, not deprecated: headers %v", res.Header)
	}
	fams := scrape(t, base+"/metrics", map[string]string{"x-admin-key": metricsAdminKey})
	if m := series(fams, "rappel_deprecated_requests_total", map[string]string{"feature": "GET /health", "key": "anonymous"}); m.GetCounter().GetValue() != 2 {
		t.Errorf("rappel_deprecated_requests_total{feature=\"GET /health\",key=\"anonymous\"} = %v, want 2", m)
	}
}

// TestDeprecation_Document: what the document says of a deprecation is
// checked when it is read, each mistake with a sentence naming the
// feature and the fix.
func TestDeprecation_Document(t *testing.T) {
	param := func(mark func(p map[string]any)) func(map[string]any) {
		return func(doc map[string]any) {
			for _, p := range operation(t, doc, "get", "/recall")["parameters"].([]any) {
				if p := p.(map[string]any); p["name"] == "date_from" {
					mark(p)
				}
			}
		}
	}
	for _, tc := range []struct {
		name string
		mark func(map[string]any)
		want string // in the error; "" for none
	}{
		{"Clean", func(map[string]any) {}, ""},
		{"SixMonths", param(func(p map[string]any) { deprecate(p, "2026-12-01", "2027-06-01", testNotice) }), ""},
		{"SunsetTooSoon", param(func(p map[string]any) { deprecate(p, "2026-12-01", "2027-05-31", testNotice) }),
			"GET /recall?date_from is deprecated on 2026-12-01 with its sunset on 2027-05-31; a deprecated feature is served for at least 6 months, so its sunset is 2027-06-01 or later"},
		{"NoDate", param(func(p map[string]any) { deprecate(p, "", "2027-06-01", testNotice) }), "give both as dates, YYYY-MM-DD"},
		{"NoNotice", param(func(p map[string]any) { deprecate(p, "2026-12-01", "2027-06-01", "") }), "give the https URL (or the path on this API)"},
		{"PlainHTTPNotice", param(func(p map[string]any) { deprecate(p, "2026-12-01", "2027-06-01", "http://example.ca/x") }), "give the https URL"},
		{"NotMarked", param(func(p map[string]any) { p[extSunset] = "2027-06-01" }), `GET /recall?date_from has x-deprecation-date, x-sunset or x-deprecation-notice but is not marked "deprecated": true`},
		{"SharedParameter", func(doc map[string]any) {
			// Lang is a parameter of the components that operations $ref.
			lang := doc["components"].(map[string]any)["parameters"].(map[string]any)["Lang"].(map[string]any)
			deprecate(lang, "2026-12-01", "2027-06-01", testNotice)
		}, ""},
		{"PathParameter", func(doc map[string]any) {
			for _, p := range operation(t, doc, "get", "/recall/{record_id}")["parameters"].([]any) {
				if p := p.(map[string]any); p["in"] == "path" {
					deprecate(p, "2026-12-01", "2027-06-01", testNotice)
				}
			}
		}, "only a query parameter can be deprecated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table, err := deprecationsOf(withDeprecated(t, tc.mark))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("deprecationsOf: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("deprecationsOf: %v, want an error with %q", err, tc.want)
			case tc.name == "Clean" && len(table) != 0:
				t.Errorf("table = %v, want it empty", table)
			case tc.name == "SharedParameter" && (table["GET /recall/{record_id}"] == nil || table["GET /recall/{record_id}"].params["lang"] == nil):
				t.Errorf("table = %v, want lang of GET /recall/{record_id} deprecated", table)
			}
		})
	}
}

// TestDeprecation_KeyLabels: the key label is the key's id, "anonymous"
// without a key, and "other" once maxDeprecatedKeys ids are in use.
func TestDeprecation_KeyLabels(t *testing.T) {
	var k deprecatedKeys
	if got := k.label(nil); got != "anonymous" {
		t.Errorf("label(nil) = %q", got)
	}
	for i := range maxDeprecatedKeys {
		id := fmt.Sprintf("k%04d", i)
		if got := k.label(&rappel.APIKey{ID: id}); got != id {
			t.Fatalf("label(%s) = %q", id, got)
		}
	}
	if got := k.label(&rappel.APIKey{ID: "one-more"}); got != "other" {
		t.Errorf("label past the cap = %q, want other", got)
	}
	if got := k.label(&rappel.APIKey{ID: "k0007"}); got != "k0007" {
		t.Errorf("label of a key seen before the cap = %q, want its id", got)
	}
}
