package edge

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/internal/buildinfo"
	"github.com/rappel-ca/rappel/kv/index"
)

// decoded is an error body or a record, decoded loosely.
type decoded struct {
	Detail       json.RawMessage            `json:"detail"`
	Translations map[string]json.RawMessage `json:"translations"`
}

// TestServer_Handler sends real HTTP requests through the real router and
// middlewares, over the real index.Catalog.
func TestServer_Handler(t *testing.T) {
	catalog := MustCatalog(t, testRecords())
	main, _ := MustServer(t, catalog)
	// A fixed build, so that /health's body is known to the byte.
	main.Build = buildinfo.Info{Version: "v1.2.3", Commit: "abc123", BuildDate: "2026-01-02T03:04:05Z", GoVersion: "go1.26.8"}
	empty, _ := MustServer(t, &index.Catalog{})
	gated, _ := MustServer(t, catalog)
	gated.GatewayHost = "recalls.example.ca"
	servers := map[string]string{
		"main":  MustHTTP(t, main.Handler()).URL,
		"empty": MustHTTP(t, empty.Handler()).URL,
		"gated": MustHTTP(t, gated.Handler()).URL,
	}
	snapBytes := func(id, lang string) string {
		b, ok := catalog.Snapshot().RecordJSON(id, lang)
		if !ok {
			t.Fatalf("no record %s", id)
		}
		return string(b)
	}
	item := func(typ, loc, msg string) string {
		return `{"type":"` + typ + `","loc":["query","` + loc + `"],"msg":"` + msg + `"`
	}

	tests := []struct {
		name   string
		server string            // key of servers; "main" when empty
		method string            // GET when empty
		target string            // path and query
		header map[string]string // sent as is; x-gateway-key: testKey unless set here
		status int
		body   string   // the exact body, when set
		has    []string // substrings the body holds
		allow  string   // the Allow header wanted
		langs  []string // the translations a record body holds
	}{
		{name: "Health", target: "/health", header: map[string]string{"X-Gateway-Key": ""}, status: 200,
			body: `{"status":"ok","records":3,"dataset_updated_at":"2025-03-04T10:06:07Z","dataset_source":"bundle","dataset_kind":"synthetic","feeds":[],"build":{"version":"v1.2.3","commit":"abc123","build_date":"2026-01-02T03:04:05Z","go_version":"go1.26.8"},"api_version":"` + APIVersion + `","coverage":[{"year":2025,"notices":1,"with_products":1,"with_barcode":0,"products_share":1,"barcode_share":0},{"year":2024,"notices":1,"with_products":0,"with_barcode":0,"products_share":0,"barcode_share":0}]}`},
		{name: "HealthHead", method: "HEAD", target: "/health", status: 200, body: ""},
		{name: "HealthEmpty", server: "empty", target: "/health", status: 503, has: []string{"No recall data is loaded yet"}},
		{name: "HealthUnknownParam", target: "/health?verbose=1", status: 422,
			has: []string{item("extra_forbidden", "verbose", "Query parameter 'verbose' is unknown; remove it, as this path takes no query parameters.")}},

		{name: "Record", target: "/recall/hc-73841", status: 200, body: snapBytes("hc-73841", ""), langs: []string{"en", "fr"}},
		{name: "RecordEN", target: "/recall/hc-73841?lang=en", status: 200, body: snapBytes("hc-73841", "en"), langs: []string{"en"}},
		{name: "RecordFR", target: "/recall/tc-2025123?lang=fr", status: 200, body: snapBytes("tc-2025123", "fr"), langs: []string{"fr"}},
		{name: "RecordFRAbsent", target: "/recall/hc-74012?lang=fr", status: 200, body: snapBytes("hc-74012", "fr"), langs: []string{}},
		{name: "RecordHead", method: "HEAD", target: "/recall/hc-73841", status: 200, body: ""},
		{name: "RecordNotFound", target: "/recall/hc-1", status: 404,
			body: `{"detail":"No recall has record_id 'hc-1'; find record ids with GET /recall."}`},
		{name: "RecordNotFoundEscaped", target: "/recall/a%2Fb", status: 404, has: []string{"record_id 'a/b'"}},

		{name: "UnknownPath", target: "/recals", status: 404,
			body: `{"detail":"There is no path '/recals' in this API; its paths are GET /, GET /health, GET /livez, GET /readyz, GET /recall, GET /recall/stats, GET /recall/changes, GET /recall/export, GET /recall/feed.atom, GET /recall/suggest, GET /recall/products, GET /recall/upc, GET /recall/vin, GET /recall/{record_id}, POST /recall/match, POST /recall/alerts/subscribe, GET /recall/alerts/confirm, POST /recall/alerts/confirm, GET /recall/alerts/unsubscribe, POST /recall/alerts/unsubscribe, POST /recall/webhooks, GET /recall/webhooks, GET /recall/webhooks/{id}, DELETE /recall/webhooks/{id}, POST /recall/webhooks/{id}/test, POST /recall/watchlists, GET /recall/watchlists, GET /recall/watchlists/{id}, DELETE /recall/watchlists/{id}, GET /recall/watchlists/{id}/items, GET /recall/watchlists/{id}/hits, PATCH /recall/watchlists/{id}/hits/{hit_id}, POST /admin/refresh, POST /admin/backup, GET /admin/plugins, POST /admin/plugins/{source}/approve, PUT /admin/plugins/{source}, DELETE /admin/plugins/{source}, GET /metrics, GET /openapi.json, GET /docs, GET /docs/{file...}."}`},
		{name: "UnknownPathNoKey", target: "/nope", header: map[string]string{"X-Gateway-Key": ""}, status: 404},
		{name: "UnknownSubpath", target: "/recall/hc-73841/products", status: 404},
		{name: "UncleanPath", target: "//health", status: 404, has: []string{"'//health'"}},
		{name: "DotPath", target: "/recall/../health", status: 404},
		{name: "TrailingSlash", target: "/health/", status: 404},
		{name: "Root", target: "/", status: 200,
			has: []string{`{"name":"Canadian Product and Vehicle Recall API","docs":"/docs","openapi":"/openapi.json","dataset":"synthetic","notice":"This node serves generated demo data`}},
		{name: "RootPost", method: "POST", target: "/", status: 405, allow: "GET, HEAD",
			body: `{"detail":"Method POST is not allowed on /; use GET, HEAD."}`},

		{name: "MethodPost", method: "POST", target: "/health", status: 405, allow: "GET, HEAD",
			body: `{"detail":"Method POST is not allowed on /health; use GET, HEAD."}`},
		{name: "MethodBeforeAuth", method: "DELETE", target: "/recall/hc-73841", header: map[string]string{"X-Gateway-Key": ""},
			status: 405, allow: "GET, HEAD"},

		{name: "MissingKey", target: "/recall/hc-73841", header: map[string]string{"X-Gateway-Key": ""}, status: 403,
			body: `{"detail":"Missing API key: send it in the x-gateway-key header."}`},
		{name: "UnknownKey", target: "/recall/hc-73841", header: map[string]string{"X-Gateway-Key": "rk_stolen"}, status: 403,
			has: []string{"Unknown API key"}},
		{name: "AuthBeforeParams", target: "/recall/hc-73841?lamg=en", header: map[string]string{"X-Gateway-Key": ""}, status: 403},
		{name: "AuthBeforeNotFound", target: "/recall/hc-1", header: map[string]string{"X-Gateway-Key": ""}, status: 403},
		{name: "HostIgnored", target: "/recall/hc-73841", header: map[string]string{"X-Gateway-Host": "elsewhere.example"}, status: 200},
		{name: "HostRight", server: "gated", target: "/recall/hc-73841", header: map[string]string{"X-Gateway-Host": "Recalls.Example.CA"}, status: 200},
		{name: "HostWrong", server: "gated", target: "/recall/hc-73841", header: map[string]string{"X-Gateway-Host": "elsewhere.example"}, status: 403,
			body: `{"detail":"Wrong gateway host 'elsewhere.example': send x-gateway-host: recalls.example.ca."}`},
		{name: "HostMissing", server: "gated", target: "/recall/hc-73841", status: 403, has: []string{"Missing gateway host"}},
		{name: "HostPublic", server: "gated", target: "/health", status: 200},

		{name: "UnknownParam", target: "/recall/hc-73841?lamg=en", status: 422,
			body: `{"detail":[` + item("extra_forbidden", "lamg", "Query parameter 'lamg' is unknown; did you mean 'lang'?") + `,"input":"en"}]}`},
		{name: "UnknownParamFar", target: "/recall/hc-73841?zzz=1", status: 422,
			has: []string{"Query parameter 'zzz' is unknown; use 'lang'."}},
		{name: "DuplicateParam", target: "/recall/hc-73841?lang=en&lang=fr", status: 422,
			body: `{"detail":[` + item("value_error", "lang", "Query parameter 'lang' was given 2 times; give it once.") + `,"input":["en","fr"]}]}`},
		{name: "BadLang", target: "/recall/hc-73841?lang=EN", status: 422,
			body: `{"detail":[` + item("enum", "lang", "Query parameter 'lang' should be 'en' or 'fr', not 'EN'; did you mean 'en'?") +
				`,"input":"EN","ctx":{"expected":"'en' or 'fr'","suggestion":"en"}}]}`},
		{name: "BadLangFar", target: "/recall/hc-73841?lang=de", status: 422,
			has: []string{"should be 'en' or 'fr', not 'de'.\""}},
		{name: "EmptyLang", target: "/recall/hc-73841?lang=", status: 422, has: []string{`"type":"enum"`}},
		{name: "AllItems", target: "/recall/hc-73841?lang=xx&foo=1&foo=2", status: 422,
			has: []string{`"type":"extra_forbidden","loc":["query","foo"]`, `"type":"enum","loc":["query","lang"]`}},
		{name: "ParamsBeforeNotFound", target: "/recall/hc-1?lang=de", status: 422},
		{name: "BadEscape", target: "/recall/hc-73841?lang=%zz", status: 400, has: []string{"bad %-escape"}},
		{name: "Semicolon", target: "/recall/hc-73841?lang=en;x=1", status: 400, has: []string{"';'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := servers[tt.server]
			if tt.server == "" {
				base = servers["main"]
			}
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			req, err := http.NewRequest(method, base+tt.target, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Gateway-Key", testKey)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			body := string(b)

			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if resp.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
			if tt.body != "" || method == http.MethodHead {
				if body != tt.body {
					t.Errorf("body\n%s\nwant\n%s", body, tt.body)
				}
			}
			for _, s := range tt.has {
				if !strings.Contains(body, s) {
					t.Errorf("body %s\nlacks %s", body, s)
				}
			}
			if got := resp.Header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow %q, want %q", got, tt.allow)
			}
			if method == http.MethodHead {
				if resp.ContentLength <= 0 {
					t.Errorf("HEAD without Content-Length: %d", resp.ContentLength)
				}
				return
			}

			// Every response is JSON; every error is {"detail": ...}.
			var d decoded
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatalf("body is not JSON: %v: %s", err, body)
			}
			if tt.status >= 400 && len(d.Detail) == 0 {
				t.Errorf("error body without detail: %s", body)
			}
			if tt.status == 422 {
				var items []rappel.Invalid
				if err := json.Unmarshal(d.Detail, &items); err != nil || len(items) == 0 {
					t.Errorf("422 detail is not a list of items: %s", body)
				}
			} else if tt.status >= 400 {
				var sentence string
				if err := json.Unmarshal(d.Detail, &sentence); err != nil || !strings.HasSuffix(sentence, ".") {
					t.Errorf("detail is not a sentence: %s", body)
				}
			}
			if tt.langs != nil {
				if len(d.Translations) != len(tt.langs) {
					t.Errorf("translations hold %d languages, want %v: %s", len(d.Translations), tt.langs, body)
				}
				for _, l := range tt.langs {
					if d.Translations[l] == nil {
						t.Errorf("translations lack %s: %s", l, body)
					}
				}
			}
		})
	}
}

// TestServer_Routes checks what every entry of the routes table must do:
// report an unknown query parameter (its handler checks its parameters),
// and answer HEAD wherever it answers GET, with the same status and no body.
func TestServer_Routes(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	s.AdminKey = testAdminKey
	base := MustHTTP(t, s.Handler()).URL
	do := func(t *testing.T, method, url string) (int, string) {
		req, _ := http.NewRequest(method, url, nil)
		req.Header.Set("X-Gateway-Key", testKey)
		req.Header.Set("X-Admin-Key", testAdminKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, rt := range s.routes() {
		path := strings.TrimSuffix(rt.pattern, "{$}")
		for strings.Contains(path, "{") {
			i, j := strings.Index(path, "{"), strings.Index(path, "}")
			path = path[:i] + "x" + path[j+1:]
		}
		for _, m := range rt.methods {
			t.Run(m+" "+rt.pattern, func(t *testing.T) {
				if status, body := do(t, m, base+path+"?no_such_param=1"); status != 422 || !strings.Contains(body, "extra_forbidden") {
					t.Errorf("unknown parameter: %d %s; want 422 extra_forbidden", status, body)
				}
				if m != http.MethodGet {
					return
				}
				getStatus, _ := do(t, m, base+path)
				if headStatus, body := do(t, http.MethodHead, base+path); headStatus != getStatus || body != "" {
					t.Errorf("HEAD: %d %q; GET: %d", headStatus, body, getStatus)
				}
			})
		}
	}
}

func TestServer_HTTPServer(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	hs := s.HTTPServer("127.0.0.1:0")
	if hs.Handler == nil || hs.ErrorLog == nil {
		t.Fatal("no handler or error log")
	}
	if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 || hs.WriteTimeout <= 0 || hs.IdleTimeout <= 0 || hs.MaxHeaderBytes <= 0 {
		t.Fatalf("a timeout or limit is unset: %+v", hs)
	}
}

func TestServer_HandlerPanicsUnwired(t *testing.T) {
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), "Catalog") {
			t.Fatalf("recovered %v, want a panic naming Catalog", v)
		}
	}()
	NewServer().Handler()
}

// TestServer_HeadersTooLarge: through the server HTTPServer makes, a
// request whose request line and headers exceed the limit (a 100 KB since,
// a 40 KB header) gets a 431 in the API's JSON error shape, an Error the
// document describes, with a sentence naming the limit and the longest
// part, rather than net/http's plain text; a request under it is served.
func TestServer_HeadersTooLarge(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	hs := s.HTTPServer("127.0.0.1:0")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	base := "http://" + ln.Addr().String()
	d := mustOpenAPI(t)
	for _, tc := range []struct {
		name, target string
		hdr          map[string]string
		want         string
	}{
		{"Since", "/recall/changes?since=" + strings.Repeat("2", 100<<10), keyHdr,
			"over this API's limit of 32768 bytes; the longest part is query parameter 'since', of 102400 bytes: send it shorter"},
		{"Header", "/recall", map[string]string{"x-gateway-key": testKey, "X-Junk": strings.Repeat("a", 40<<10)},
			"the longest part is header 'X-Junk', of 40960 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, h := do(t, http.MethodGet, base+tc.target, "", tc.hdr)
			var eb struct{ Detail string }
			if err := json.Unmarshal([]byte(body), &eb); code != http.StatusRequestHeaderFieldsTooLarge || err != nil ||
				!strings.HasPrefix(h.Get("Content-Type"), "application/json") || !strings.HasPrefix(eb.Detail, "The request line and headers take ") ||
				!strings.Contains(eb.Detail, tc.want) || !strings.HasSuffix(eb.Detail, ".") {
				t.Fatalf("%d %s %q, want a 431 saying %q", code, h.Get("Content-Type"), rappel.Clip(body), tc.want)
			}
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if err := d.validate(t, "#/components/schemas/Error", v); err != nil {
				t.Errorf("the body is not an Error:\n%v", err)
			}
		})
	}
	if desc, _ := d.root["info"].(map[string]any)["description"].(string); !strings.Contains(desc, "431") {
		t.Errorf("the description does not tell of the 431")
	}
	if code, body, _ := do(t, http.MethodGet, base+"/recall?q=milk&x="+strings.Repeat("a", 30<<10), "", keyHdr); code != http.StatusUnprocessableEntity {
		t.Fatalf("a request under the limit: %d %s", code, rappel.Clip(body))
	}
}
