package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
)

// docURL names openapi.json for the JSON Schema compiler, which identifies
// every document by an absolute URL. The .invalid domain (RFC 2606) cannot
// be reached: the compiler has no loader for https anyway, so nothing is
// ever fetched.
const docURL = "https://rappel.invalid/openapi.json"

// openAPI is the parsed document, with helpers to follow its $refs, and a
// JSON Schema compiler that holds it, to validate values against the
// schemas at its locations.
type openAPI struct {
	root    map[string]any
	schemas *jsonschema.Compiler
}

// mustOpenAPI parses the document as served now: the embedded one, with
// the agencies another test of the binary registered (registration is
// process-wide and never undone). Its numbers are json.Number, as the
// validator reads them.
func mustOpenAPI(tb testing.TB) *openAPI {
	tb.Helper()
	root := mustJSONObject(tb, "openapi.json", servedOpenAPI())
	c := jsonschema.NewCompiler()
	// A Schema Object of OpenAPI 3.1 is JSON Schema 2020-12 plus a few
	// annotations (example, xml, ...) that validation ignores. Formats are
	// asserted: the handlers promise dates, times and URIs that parse.
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(docURL, root); err != nil {
		tb.Fatal(err)
	}
	return &openAPI{root: root, schemas: c}
}

func mustJSONObject(tb testing.TB, what string, b []byte) map[string]any {
	tb.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		tb.Fatalf("%s is not JSON: %v", what, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		tb.Fatalf("%s is not a JSON object", what)
	}
	return m
}

// pointer resolves a local JSON pointer such as #/components/schemas/Record.
func (d *openAPI) pointer(ref string) (any, error) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("$ref %q is not local", ref)
	}
	var v any = d.root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q: %q is not in an object", ref, tok)
		}
		if v, ok = m[tok]; !ok {
			return nil, fmt.Errorf("$ref %q: no %q", ref, tok)
		}
	}
	return v, nil
}

// ptrToken escapes one token of a JSON pointer.
func ptrToken(tok string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
}

// deref follows v's $ref, if it has one, repeatedly.
func (d *openAPI) deref(tb testing.TB, v any) map[string]any {
	tb.Helper()
	m, _ := d.follow(tb, v, "")
	return m
}

// follow is deref that also tells the location it ends at, loc if v has no
// $ref.
func (d *openAPI) follow(tb testing.TB, v any, loc string) (map[string]any, string) {
	tb.Helper()
	for range 10 {
		m, _ := v.(map[string]any)
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, loc
		}
		var err error
		if v, err = d.pointer(ref); err != nil {
			tb.Fatal(err)
		}
		loc = ref
	}
	tb.Fatalf("$ref chain too long at %s", loc)
	return nil, ""
}

// resolve returns the object at a location of the document given by
// tokens, following every $ref on the way, and the location it is really
// at, where the schema compiler finds it.
func (d *openAPI) resolve(tb testing.TB, tokens ...string) (map[string]any, string) {
	tb.Helper()
	var v any = d.root
	loc := "#"
	for _, tok := range tokens {
		m, at := d.follow(tb, v, loc)
		if v = m[tok]; v == nil {
			tb.Fatalf("%s has no %q", at, tok)
		}
		loc = at + "/" + ptrToken(tok)
	}
	return d.follow(tb, v, loc)
}

// validate checks v, decoded by jsonschema.UnmarshalJSON, against the
// schema at loc, a location in the document (#/components/schemas/Record).
func (d *openAPI) validate(tb testing.TB, loc string, v any) error {
	tb.Helper()
	sch, err := d.schemas.Compile(docURL + loc)
	if err != nil {
		tb.Fatalf("the schema at %s does not compile: %v", loc, err)
	}
	return sch.Validate(v)
}

// operations returns every operation of the document by "METHOD /path".
func (d *openAPI) operations(tb testing.TB) map[string]map[string]any {
	tb.Helper()
	ops := map[string]map[string]any{}
	for p, item := range d.root["paths"].(map[string]any) {
		for m, op := range d.deref(tb, item) {
			switch m {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
				ops[strings.ToUpper(m)+" "+p] = op.(map[string]any)
			}
		}
	}
	return ops
}

// params returns the names of an operation's parameters in location in
// (query or path), those of its path item included.
func (d *openAPI) params(tb testing.TB, path string, op map[string]any, in string) []string {
	tb.Helper()
	item := d.deref(tb, d.root["paths"].(map[string]any)[path])
	var list []any
	if ps, ok := item["parameters"].([]any); ok {
		list = append(list, ps...)
	}
	if ps, ok := op["parameters"].([]any); ok {
		list = append(list, ps...)
	}
	var names []string
	for _, p := range list {
		pm := d.deref(tb, p)
		if pm["in"] == in {
			names = append(names, pm["name"].(string))
		}
	}
	sort.Strings(names)
	return names
}

// docPath is the document's path of a route pattern: a {name...} wildcard
// is a plain path parameter there, and {$} (the end of "/" alone) is not
// written.
func docPath(pattern string) string {
	return strings.ReplaceAll(strings.TrimSuffix(pattern, "{$}"), "...}", "}")
}

var wildcard = regexp.MustCompile(`\{([a-z_]+)(\.\.\.)?\}`)

// semver is a SemVer version without pre-release or build: MAJOR.MINOR.PATCH.
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

func TestOpenAPI_Document(t *testing.T) {
	d := mustOpenAPI(t)
	if d.root["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", d.root["openapi"])
	}
	info, _ := d.root["info"].(map[string]any)
	// The version is SemVer's MAJOR.MINOR.PATCH, the newest release of
	// CHANGELOG.md (internal/apicompat holds the two together).
	if v, _ := info["version"].(string); !semver.MatchString(v) || info["title"] == "" {
		t.Errorf("info = %v, want a version MAJOR.MINOR.PATCH and a title", info)
	}
	if openAPIInfo.Version != info["version"] || APIVersion != info["version"] || openAPIInfo.Title != info["title"] {
		t.Errorf("openAPIInfo = %+v, APIVersion = %q", openAPIInfo, APIVersion)
	}

	t.Run("Deprecations", func(t *testing.T) {
		// The embedded document's deprecations are well formed: a
		// Server reads them at start and panics on one that is not.
		if _, err := deprecationsOf(openAPIDoc); err != nil {
			t.Error(err)
		}
	})

	t.Run("MetaSchema", func(t *testing.T) {
		if err := mustMetaSchema(t, true).Validate(d.root); err != nil {
			t.Errorf("openapi.json is not a valid OpenAPI 3.1 document:\n%v", err)
		}
	})

	t.Run("RefsResolve", func(t *testing.T) {
		var refs int
		var walk func(v any, at string)
		walk = func(v any, at string) {
			switch v := v.(type) {
			case map[string]any:
				if ref, ok := v["$ref"].(string); ok {
					refs++
					if _, err := d.pointer(ref); err != nil {
						t.Errorf("at %s: %v", at, err)
					}
				}
				for k, c := range v {
					walk(c, at+"/"+ptrToken(k))
				}
			case []any:
				for i, c := range v {
					walk(c, fmt.Sprintf("%s/%d", at, i))
				}
			}
		}
		walk(d.root, "#")
		if refs < 50 {
			t.Errorf("only %d $refs found: is the walk broken?", refs)
		}
	})

	t.Run("Examples", func(t *testing.T) {
		// Every example validates against its schema: that of the
		// parameter, header or media type it sits in (example, or the
		// values of examples), or the named schema that holds it.
		var n int
		check := func(schemaLoc, exampleLoc string, ex any) {
			n++
			if err := d.validate(t, schemaLoc, ex); err != nil {
				t.Errorf("the example at %s does not match its schema:\n%v", exampleLoc, err)
			}
		}
		var walk func(v any, at string)
		walk = func(v any, at string) {
			switch v := v.(type) {
			case map[string]any:
				if _, hasSchema := v["schema"]; hasSchema {
					if ex, ok := v["example"]; ok {
						check(at+"/schema", at+"/example", ex)
					}
					examples, _ := v["examples"].(map[string]any)
					for name, e := range examples {
						if ex, ok := d.deref(t, e)["value"]; ok {
							check(at+"/schema", at+"/examples/"+ptrToken(name), ex)
						}
					}
				}
				for k, c := range v {
					walk(c, at+"/"+ptrToken(k))
				}
			case []any:
				for i, c := range v {
					walk(c, fmt.Sprintf("%s/%d", at, i))
				}
			}
		}
		walk(d.root, "#")
		for name, s := range d.root["components"].(map[string]any)["schemas"].(map[string]any) {
			if ex, ok := s.(map[string]any)["example"]; ok {
				loc := "#/components/schemas/" + ptrToken(name)
				check(loc, loc+"/example", ex)
			}
		}
		if n < 10 {
			t.Errorf("only %d examples checked", n)
		}
	})

	t.Run("Operations", func(t *testing.T) {
		ids := map[string]string{}
		for key, op := range d.operations(t) {
			id, _ := op["operationId"].(string)
			if id == "" || op["summary"] == nil {
				t.Errorf("%s has no operationId or summary", key)
			}
			if other, dup := ids[id]; dup {
				t.Errorf("%s and %s share operationId %q", key, other, id)
			}
			ids[id] = key
			responses, _ := op["responses"].(map[string]any)
			_, ok200 := responses["200"]
			_, ok201 := responses["201"] // a creation
			_, ok202 := responses["202"] // a request queued (a webhook test)
			_, ok204 := responses["204"] // a deletion
			if !ok200 && !ok201 && !ok202 && !ok204 {
				t.Errorf("%s documents no 200, 201, 202 or 204", key)
			}
			for status, resp := range responses {
				r := d.deref(t, resp)
				if r["description"] == nil {
					t.Errorf("%s %s has no description", key, status)
				}
				// Every error is JSON {"detail": ...}.
				if status >= "400" {
					c, _ := r["content"].(map[string]any)
					if _, ok := c["application/json"]; !ok || len(c) != 1 {
						t.Errorf("%s %s is not only application/json: %v", key, status, c)
					}
				}
			}
		}
	})
}

// TestOpenAPI_Routes holds the document and the routes table together:
// adding a route, a method or a query parameter without documenting it
// fails here, and so does documenting one the router does not serve.
func TestOpenAPI_Routes(t *testing.T) {
	d := mustOpenAPI(t)
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	routes := s.routes()
	ops := d.operations(t)
	served := map[string]route{}
	for _, rt := range routes {
		for _, m := range rt.methods {
			served[m+" "+docPath(rt.pattern)] = rt
		}
	}
	for key := range ops {
		if _, ok := served[key]; !ok {
			t.Errorf("the document has %s, which no route serves", key)
		}
	}
	for key, rt := range served {
		op, ok := ops[key]
		if !ok {
			t.Errorf("route %s is not in openapi.json", key)
			continue
		}
		path := docPath(rt.pattern)
		t.Run(key, func(t *testing.T) {
			accepted := slices.Sorted(slices.Values(rt.params))
			if documented := d.params(t, path, op, "query"); !slices.Equal(documented, accepted) {
				t.Errorf("query parameters: documented %v, the route accepts %v", documented, accepted)
			}
			var wild []string
			for _, m := range wildcard.FindAllStringSubmatch(rt.pattern, -1) {
				wild = append(wild, m[1])
			}
			sort.Strings(wild)
			if documented := d.params(t, path, op, "path"); !slices.Equal(documented, wild) {
				t.Errorf("path parameters: documented %v, the pattern has %v", documented, wild)
			}
			// A keyed route inherits the document's x-gateway-key
			// requirement; a public one overrides it (with none, or
			// with the admin key its handler checks).
			sec, overrides := op["security"].([]any)
			switch {
			case rt.public && !overrides:
				t.Errorf("public route documented as needing x-gateway-key")
			case !rt.public && overrides:
				t.Errorf("keyed route documented with security %v", sec)
			}
		})
	}
}

// TestOpenAPI_Vocabularies checks the document's enums against the
// vocabularies the handlers validate with.
func TestOpenAPI_Vocabularies(t *testing.T) {
	d := mustOpenAPI(t)
	ops := d.operations(t)
	enum := func(schema map[string]any) []string {
		var out []string
		for _, v := range d.deref(t, schema)["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	param := func(key, name string) []string {
		for _, p := range ops[key]["parameters"].([]any) {
			if pm := d.deref(t, p); pm["name"] == name {
				return enum(pm["schema"].(map[string]any))
			}
		}
		t.Fatalf("%s has no parameter %s", key, name)
		return nil
	}
	schema := func(name string) []string {
		return enum(map[string]any{"$ref": "#/components/schemas/" + name})
	}
	for _, c := range []struct {
		what       string
		documented []string
		vocab      []string
	}{
		{"RecallType", schema("RecallType"), rappel.RecallTypes},
		{"Agency", schema("Agency"), rappel.KnownAgencies()},
		{"HazardClass", schema("HazardClass"), rappel.HazardClasses},
		{"Allergen", schema("Allergen"), rappel.Allergens},
		{"Lang", schema("Lang"), rappel.Langs},
		{"FeedFailure", schema("FeedFailure"), feedFailures()},
		{"sort_by", param("GET /recall", "sort_by"), sortKeys},
		{"sort_order", param("GET /recall", "sort_order"), sortOrders},
		{"highlight", param("GET /recall", "highlight"), rappel.Booleans},
		{"group_by", param("GET /recall/stats", "group_by"), rappel.StatsGroupFields},
		{"sum_field", param("GET /recall/stats", "sum_field"), rappel.StatsSumFields},
	} {
		if !slices.Equal(slices.Sorted(slices.Values(c.documented)), slices.Sorted(slices.Values(c.vocab))) {
			t.Errorf("%s: documented %v, the handlers take %v", c.what, c.documented, c.vocab)
		}
	}
}

// feedFailures is rappel.FeedFailures as strings.
func feedFailures() []string {
	out := make([]string, len(rappel.FeedFailures))
	for i, f := range rappel.FeedFailures {
		out[i] = string(f)
	}
	return out
}

// docCase is one request of TestOpenAPI_Responses.
type docCase struct {
	method, target, body string
	header               map[string]string
	status               int
}

// TestOpenAPI_Responses sends real requests through the real router, with
// a real Pebble store and alert service, and checks each response against
// the document: its status is documented for the operation, its content
// type is one the operation names, and a JSON body validates against the
// operation's schema.
func TestOpenAPI_Responses(t *testing.T) {
	d := mustOpenAPI(t)
	recs := append(lookupRecords(), fullRecord())
	st := mustStore(t, recs)
	svc := alerts.NewService(st)
	svc.Logger, svc.Now = slog.New(slog.DiscardHandler), stepClock()
	inbox := newConfirmInbox(t, st)
	s, _ := MustServer(t, MustCatalog(t, recs))
	s.Lookup, s.Alerts, s.AdminKey, s.Idempotency = st, svc, testAdminKey, st
	hookSender := alerts.NewHookSender()
	hookSender.Logger = slog.New(slog.DiscardHandler)
	hooks := alerts.NewHookService(st, hookSender)
	t.Cleanup(hooks.Close)
	s.Webhooks = hooks
	// Keys of limited plans, so that responses carry the RateLimit
	// headers (development keys carry none); the tiny plan's one request
	// is followed by a 429.
	s.Keys = planKeys{testKey: "roomy", "rk_tiny": "tiny"}
	s.Plans = map[string]rappel.Plan{
		"roomy": {Name: "roomy", Rate: 1000, Burst: 1000, Monthly: 1_000_000},
		"tiny":  {Name: "tiny", Rate: 0.001, Burst: 1, Monthly: 100},
	}
	s.Now = func() time.Time { return lookupNow }
	s.Feeds = feedStates
	s.Refresh = func(ctx context.Context) error { return nil }
	s.Plugins = mustPluginsReport(t)
	base := MustHTTP(t, s.Handler()).URL

	key := map[string]string{"X-Gateway-Key": testKey}
	idem := map[string]string{"X-Gateway-Key": testKey, headerIdempotencyKey: "doc-1"}
	admin := map[string]string{"X-Admin-Key": testAdminKey}
	html := map[string]string{"Accept": "text/html"}
	jsonAccept := map[string]string{"Accept": "application/json"}
	run := d.runner(t, base)
	cases := []docCase{
		{"GET", "/", "", nil, 200},
		{"GET", "/", "", html, 200},
		{"GET", "/?x=1", "", nil, 422},
		{"GET", "/health", "", nil, 200},
		{"GET", "/health?verbose=1", "", nil, 422},
		{"GET", "/livez", "", nil, 200},
		{"GET", "/readyz", "", nil, 200},
		{"GET", "/recall", "", key, 200},
		{"GET", "/recall?q=cheddar&lang=fr&limit=1&sort_by=relevance", "", key, 200},
		{"GET", "/recall?recall_type=vehicle&sort_by=value&sort_order=asc&date_from=2020-01-01&issued_before=2026-12-31", "", key, 200},
		{"GET", "/recall?q=kettle%20OR%20cheddar&facets=recall_type,recall_agency,hazard_class,allergen,category,year&highlight=true", "", key, 200},
		{"GET", "/recall?q=zzqxv&facets=category&highlight=true&lang=en", "", key, 200},
		{"GET", "/recall?facets=yaer&highlight=maybe", "", key, 422},
		{"GET", "/recall?offset=9501", "", key, 400},
		{"GET", "/recall?recal_type=food&limit=501&issued_after=2025-02-30", "", key, 422},
		{"GET", "/recall", "", nil, 403},
		{"GET", "/recall/stats", "", key, 200},
		{"GET", "/recall/stats?group_by=allergen&period=all&sum_field=units_affected", "", key, 200},
		{"GET", "/recall/stats?group_by=month&period=2y", "", key, 200},
		{"GET", "/recall/stats?period=3%20mnths&group_by=units_affected", "", key, 422},
		{"GET", "/recall/products?id=990101", "", key, 200},
		{"GET", "/recall/products?id=2026901", "", key, 200},
		{"GET", "/recall/products?id=nope", "", key, 404},
		{"GET", "/recall/products", "", key, 422},
		{"GET", "/recall/upc?upc=" + cheddarUPC + "&lang=fr", "", key, 200},
		{"GET", "/recall/upc?upc=12345", "", key, 422},
		{"GET", "/recall/vin?vin=" + camryVIN, "", key, 200},
		{"GET", "/recall/vin?vin=" + camryVIN[:16], "", key, 422},
		{"GET", "/recall/hc-990101", "", key, 200},
		{"GET", "/recall/hc-990199", "", key, 200},
		{"GET", "/recall/products?id=990199", "", key, 200},
		{"GET", "/recall/tc-2026901?lang=en", "", key, 200},
		{"GET", "/recall/hc-1", "", key, 404},
		{"POST", "/recall/match", `{"items":[{"id":"a","gtin":"` + cheddarUPC + `","brand":"Laiterie Charlevoix","lot":"BB 2026 DE 15","lang":"fr"},` +
			`{"id":7,"brand":"Toyota","model":"Camry","year":2011},{"brand":"Toyota","model":"Camry","year":2014},{"brand":"Desert Sun","name":"pitted dates"},` +
			`{"gtin":"12345","colour":"red"},{"name":"zzqxv"},{"lot":"A1"}]}`, key, 200},
		{"POST", "/recall/match", `{"item":[]}`, key, 422},
		{"POST", "/recall/match", `{"items":[{"name":"cheddar"}]}`, map[string]string{"X-Gateway-Key": testKey, "Content-Type": "text/plain"}, 415},
		{"POST", "/recall/alerts/subscribe", `{"email":"name@example.ca","q":"cheddar","agency":null,"lang":"fr"}`, key, 200},
		{"POST", "/recall/alerts/subscribe", `{"emial":"name@example.ca"}`, key, 422},
		// A retry with its Idempotency-Key replays; the key with another
		// body is a 422, a malformed key a 400.
		{"POST", "/recall/alerts/subscribe", `{"email":"name@example.ca","q":"cheddar"}`, idem, 200},
		{"POST", "/recall/alerts/subscribe", `{"email":"name@example.ca","q":"cheddar"}`, idem, 200},
		{"POST", "/recall/alerts/subscribe", `{"email":"other@example.ca"}`, idem, 422},
		{"POST", "/recall/alerts/subscribe", `{"email":"name@example.ca"}`, map[string]string{"X-Gateway-Key": testKey, headerIdempotencyKey: `"unclosed`}, 400},
		{"GET", "/recall/alerts/confirm?token=AAAAAAAAAAAAAAAAAAAAAA", "", jsonAccept, 404},
		{"POST", "/recall/alerts/confirm?token=AAAAAAAAAAAAAAAAAAAAAA", "", nil, 404},
		{"POST", "/recall/alerts/subscribe", "email=name@example.ca", map[string]string{"X-Gateway-Key": testKey, "Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"GET", "/recall/alerts/unsubscribe", "", nil, 422},
		{"POST", "/admin/refresh", "", admin, 200},
		{"POST", "/admin/refresh", "", nil, 403},
		{"GET", "/admin/plugins", "", admin, 200},
		{"GET", "/admin/plugins", "", nil, 403},
		{"GET", "/metrics", "", admin, 200},
		{"GET", "/metrics", "", nil, 403},
		{"GET", "/openapi.json", "", nil, 200},
		{"GET", "/docs", "", nil, 200},
		{"GET", "/docs/assets/swagger-ui.css", "", nil, 200},
		{"GET", "/docs/assets/nope.js", "", nil, 404},
		{"GET", "/recall/hc-990101", "", map[string]string{"X-Gateway-Key": "rk_tiny"}, 200},
		{"GET", "/recall/hc-990101", "", map[string]string{"X-Gateway-Key": "rk_tiny"}, 429},
	}
	for _, c := range cases {
		run(c)
	}
	// Webhook endpoints: one registered, read, tested (a 202: the test is
	// queued, and the endpoint shows it pending) and deleted.
	created := run(docCase{"POST", "/recall/webhooks", `{"url":"https://hooks.invalid:1/hook?token=abc","q":"cheddar","recall_agency":"CFIA","events":["recall.created"]}`, key, 201})
	var hook struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(created, &hook); err != nil || hook.ID == "" {
		t.Fatalf("POST /recall/webhooks: %s, %v", created, err)
	}
	for _, c := range []docCase{
		{"POST", "/recall/webhooks", `{"url":"http://10.0.0.1/","events":["recall.deleted"],"recall_agency":"fda"}`, key, 422},
		{"GET", "/recall/webhooks", "", key, 200},
		{"GET", "/recall/webhooks/" + hook.ID, "", key, 200},
		{"POST", "/recall/webhooks/" + hook.ID + "/test", "", key, 202},
		{"GET", "/recall/webhooks/" + hook.ID, "", key, 200},
		{"GET", "/recall/webhooks/wh_nope", "", key, 404},
		{"DELETE", "/recall/webhooks/" + hook.ID, "", key, 204},
	} {
		run(c)
	}

	// The alert links, with the tokens of the confirmation e-mail.
	links := inbox.links(t)
	if len(links.confirm) != 1 {
		t.Fatalf("%d confirmation links, want 1", len(links.confirm))
	}
	confirm, unsub := links.confirm[0], links.unsub[0]
	run(docCase{"GET", "/recall/alerts/confirm?token=" + confirm, "", html, 200})
	run(docCase{"GET", "/recall/alerts/confirm?token=" + confirm, "", nil, 200})
	run(docCase{"POST", "/recall/alerts/confirm?token=" + confirm, "", html, 200})
	run(docCase{"GET", "/recall/alerts/confirm?token=" + confirm, "", jsonAccept, 200})
	run(docCase{"GET", "/recall/alerts/unsubscribe?token=" + unsub, "", html, 200})
	run(docCase{"GET", "/recall/alerts/unsubscribe?token=" + unsub, "", jsonAccept, 200})
	run(docCase{"POST", "/recall/alerts/unsubscribe?token=" + unsub, "List-Unsubscribe=One-Click", nil, 200})

	// An unknown path is a 404, documented once as a component.
	notFound := docCase{"GET", "/nowhere", "", nil, 404}
	resp, body := docRequest(t, base, notFound)
	if resp.StatusCode != notFound.status {
		t.Fatalf("GET /nowhere: status %d, want 404", resp.StatusCode)
	}
	comp, loc := d.resolve(t, "components", "responses", "NotFound")
	d.checkBody(t, "GET /nowhere", comp, loc, resp, body)

	// A known path asked with a method it does not answer is a 405 with
	// Allow, on any path. OpenAPI has no place for the responses of the
	// methods a path lacks, so the document's description says it, and the
	// body is an Error like every other.
	resp, body = docRequest(t, base, docCase{"DELETE", "/recall", "", key, 405})
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") == "" {
		t.Fatalf("DELETE /recall: status %d, Allow %q, want 405 and the methods", resp.StatusCode, resp.Header.Get("Allow"))
	}
	if desc, _ := d.root["info"].(map[string]any)["description"].(string); !strings.Contains(desc, "405 with `Allow`") {
		t.Errorf("the description does not tell of the 405 with Allow")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("DELETE /recall: body is not JSON: %v", err)
	}
	if err := d.validate(t, "#/components/schemas/Error", v); err != nil {
		t.Errorf("DELETE /recall: the body is not an Error:\n%v", err)
	}
}

// planKeys is a rappel.KeyService giving each of its keys the plan named.
type planKeys map[string]string

func (k planKeys) Authenticate(_ context.Context, key string) (*rappel.APIKey, error) {
	plan, ok := k[key]
	if !ok {
		return nil, rappel.Errorf(rappel.EFORBIDDEN, "Unknown API key.")
	}
	return &rappel.APIKey{ID: "key-" + plan, Plan: plan, Label: "openapi test"}, nil
}

// fullRecord has every field of a record, so that the document's Record
// schema is checked property by property.
func fullRecord() *rappel.Record {
	units := 42
	tr := func(lang string) *rappel.Translation {
		return &rappel.Translation{Title: "Kettle " + lang, ProductDescription: "Electric kettle", HazardDescription: "Burns",
			WhatToDo: "Stop using it", URL: "https://recalls-rappels.canada.ca/" + lang + "/alert-recall/990199",
			Category: "Household", System: "Electrical", VehicleCategory: "None", NotificationType: "Recall"}
	}
	return &rappel.Record{
		RecordID: "hc-990199", RecallID: "990199", RecallType: rappel.TypeConsumerProduct, Agency: rappel.AgencyHealthCanada,
		Status: rappel.StatusActive, EventDate: "2026-11-01", RecallDate: "2026-11-02", FetchedAt: "2026-11-22T03:00:00Z",
		Translations: rappel.Translations{EN: tr("en"), FR: tr("fr")},
		URLEn:        "https://recalls-rappels.canada.ca/en/alert-recall/990199", URLFr: "https://recalls-rappels.canada.ca/fr/avis-rappel/990199",
		Category: "Household", AlertType: "Recall", IdentificationNumber: "RA-990199", Categories: []string{"Household", "Kitchen"},
		ProductList: []rappel.Product{{Name: "Kettle", UPC: toyEAN8, LotCodes: []string{"L1"}, Size: "1.7 L",
			Applicability: &rappel.Applicability{Lots: []string{"L1"}, LotPrefixes: []string{"0216911"},
				BestBefore: []rappel.DateRange{{From: "2027-04-01", To: "2027-04-30"}}, Models: []string{"K1"}, Serials: []string{"1000 to 1999"},
				DINs: []string{"02433230"}, AllCodes: true, Text: "L1", Unread: "10/02/27"}}},
		HazardClass: "class_3", DateModified: "2026-11-03", LastUpdated: "2026-11-04",
		AffectedModels:   []rappel.VehicleModel{{Make: "ACME", Model: "K1", Year: 2026}},
		NotificationType: "Recall", System: "Electrical", UnitsAffected: &units, VehicleCategory: "None",
		VehicleSlugs: []string{"acme-k1"}, VehicleMake: "ACME", VehicleModel: "K1", ManufacturerRecallNumber: "M-1",
		Images:   []rappel.Image{{URL: "https://recalls-rappels.canada.ca/k.jpg", Title: "Kettle"}},
		ImageURL: "https://recalls-rappels.canada.ca/k.jpg", RecallClassPage: "Type III", RecallingFirm: "Acme Ltd",
		Allergens: []string{"milk"}, Companies: []string{"Acme Ltd"}, Distribution: []string{"National"},
		PlaceOfOrigin: "China", UnitsSold: "40", TimePeriodSold: "2025 to 2026", Manufacturer: "Acme Mfg", Importer: "Acme Import",
		CFIAID: "C-1", DIN: "0001", Municipality: "Ottawa", NPN: "8000", UPC: toyEAN8,
	}
}

// TestOpenAPI_FullRecord checks that fullRecord sets every field the Record
// schema documents, and that the schema takes it.
func TestOpenAPI_FullRecord(t *testing.T) {
	b, err := json.Marshal(fullRecord())
	if err != nil {
		t.Fatal(err)
	}
	got := mustJSONObject(t, "the record", b)
	d := mustOpenAPI(t)
	record, loc := d.resolve(t, "components", "schemas", "Record")
	for name := range record["properties"].(map[string]any) {
		// highlights belongs to a search's results, not to the record.
		if _, ok := got[name]; !ok && name != "highlights" {
			t.Errorf("fullRecord lacks %s", name)
		}
	}
	if err := d.validate(t, loc, got); err != nil {
		t.Errorf("fullRecord does not match the Record schema:\n%v", err)
	}
}

// runner returns a function that sends a case to base, checks its status
// and its response against the document, and returns its body.
func (d *openAPI) runner(tb testing.TB, base string) func(docCase) []byte {
	return func(c docCase) []byte {
		tb.Helper()
		resp, body := docRequest(tb, base, c)
		if resp.StatusCode != c.status {
			tb.Fatalf("%s %s: status %d, want %d: %s", c.method, c.target, resp.StatusCode, c.status, body)
		}
		d.checkResponse(tb, c, resp, body)
		return body
	}
}

func docRequest(tb testing.TB, base string, c docCase) (*http.Response, []byte) {
	tb.Helper()
	req, err := http.NewRequest(c.method, base+c.target, strings.NewReader(c.body))
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	// A body is JSON but for the form of the unsubscribe links, unless
	// the case sets its own Content-Type.
	if c.method == http.MethodPost && c.body != "" && req.Header.Get("Content-Type") == "" {
		ct := "application/json"
		if strings.HasPrefix(c.body, "List-Unsubscribe=") {
			ct = "application/x-www-form-urlencoded"
		}
		req.Header.Set("Content-Type", ct)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp, b
}

// checkResponse finds the documented response of c's operation and status
// and checks resp against it.
func (d *openAPI) checkResponse(tb testing.TB, c docCase, resp *http.Response, body []byte) {
	tb.Helper()
	what := c.method + " " + c.target
	r, _ := http.NewRequest(c.method, c.target, nil)
	var op, opPath string
	literal := -1 // the most literal template wins, as in the router
	for key := range d.operations(tb) {
		m, p, _ := strings.Cut(key, " ")
		if n := len(p) - len(wildcard.ReplaceAllString(p, "")); m == c.method && pathMatches(p, r.URL.Path) && len(p)-n > literal {
			op, opPath, literal = strings.ToLower(m), p, len(p)-n
		}
	}
	if op == "" {
		tb.Fatalf("%s: no operation documented", what)
	}
	status := fmt.Sprint(resp.StatusCode)
	responses, _ := d.resolve(tb, "paths", opPath, op, "responses")
	if _, ok := responses[status]; !ok {
		tb.Fatalf("%s: status %d is not documented", what, resp.StatusCode)
	}
	doc, loc := d.resolve(tb, "paths", opPath, op, "responses", status)
	d.checkBody(tb, what, doc, loc, resp, body)
	// The headers a response documents are sent.
	headers, _ := doc["headers"].(map[string]any)
	for name := range headers {
		// Idempotent-Replayed marks replays only, and says "true" then
		// (TestIdempotency_Subscribe checks that a replay has it).
		if name == headerReplayed && resp.Header.Get(name) == "" {
			continue
		}
		if resp.Header.Get(name) == "" {
			tb.Errorf("%s: %d has no %s header, which the document promises", what, resp.StatusCode, name)
		}
	}
}

// pathMatches reports whether a concrete path matches a documented path
// template; a template's last parameter may span slashes, as the router's
// {file...} does.
func pathMatches(template, path string) bool {
	ts, ps := strings.Split(template, "/"), strings.Split(path, "/")
	for i, t := range ts {
		if i >= len(ps) {
			return false
		}
		if strings.HasPrefix(t, "{") {
			if i == len(ts)-1 {
				return true
			}
			continue
		}
		if t != ps[i] {
			return false
		}
	}
	return len(ts) == len(ps)
}

// checkBody checks the content type of resp against doc, the response
// documented at loc, and a JSON body against its schema.
func (d *openAPI) checkBody(tb testing.TB, what string, doc map[string]any, loc string, resp *http.Response, body []byte) {
	tb.Helper()
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	content, _ := doc["content"].(map[string]any)
	if resp.StatusCode == http.StatusNoContent && content == nil {
		if len(body) > 0 {
			tb.Errorf("%s: a 204 with a body: %s", what, body)
		}
		return
	}
	if _, ok := content[ct]; !ok {
		tb.Fatalf("%s: Content-Type %q is not documented (%v)", what, ct, slices.Collect(maps.Keys(content)))
	}
	if ct != "application/json" {
		return
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("%s: body is not JSON: %v", what, err)
	}
	if err := d.validate(tb, loc+"/content/"+ptrToken(ct)+"/schema", v); err != nil {
		tb.Errorf("%s: the body does not match the document:\n%v\nbody: %.600s", what, err, body)
	}
}

// TestOpenAPI_Filters checks the document against the table of filters
// (rappel.Filters): each is a query parameter of GET /recall with its
// vocabulary, a field of a webhook's body and view under its Param, a
// field of a subscription's body under its Field when saved searches
// take it, and a group of GET /recall/stats. Adding a filter to the table
// without documenting it fails here, naming what is missing.
func TestOpenAPI_Filters(t *testing.T) {
	d := mustOpenAPI(t)
	ops := d.operations(t)
	// enumOf returns the enum a schema allows (through $ref and an anyOf
	// with null), nil for one without.
	var enumOf func(v any) []string
	enumOf = func(v any) []string {
		s := d.deref(t, v)
		if alts, ok := s["anyOf"].([]any); ok {
			for _, a := range alts {
				if e := enumOf(a); e != nil {
					return e
				}
			}
			return nil
		}
		var out []string
		enum, _ := s["enum"].([]any)
		for _, x := range enum {
			out = append(out, x.(string))
		}
		return out
	}
	props := func(name string) map[string]any {
		return d.deref(t, map[string]any{"$ref": "#/components/schemas/" + name})["properties"].(map[string]any)
	}
	queryParam := func(key, name string) map[string]any {
		for _, p := range ops[key]["parameters"].([]any) {
			if pm := d.deref(t, p); pm["name"] == name {
				return pm
			}
		}
		return nil
	}
	sameEnum := func(what string, schema any, f *rappel.Filter) {
		t.Helper()
		var want []string
		if !f.Free() {
			want = slices.Sorted(slices.Values(f.Vocab()))
		}
		if got := slices.Sorted(slices.Values(enumOf(schema))); !slices.Equal(got, want) {
			t.Errorf("filter %s: %s allows %v, the filter takes %v", f.Param, what, got, want)
		}
	}
	subscribe, webhook, view := props("SubscribeRequest"), props("WebhookRequest"), props("WebhookFields")
	for i := range rappel.Filters {
		f := &rappel.Filters[i]
		if p := queryParam("GET /recall", f.Param); p == nil {
			t.Errorf("filter %s: GET /recall documents no query parameter %q", f.Param, f.Param)
		} else {
			sameEnum("GET /recall's parameter", p["schema"], f)
		}
		for what, schema := range map[string]map[string]any{"WebhookRequest": webhook, "WebhookFields": view} {
			if s, ok := schema[f.Param]; !ok {
				t.Errorf("filter %s: %s has no property %q", f.Param, what, f.Param)
			} else {
				sameEnum(what, s, f)
			}
		}
		switch s, ok := subscribe[f.Field]; {
		case f.InAlerts && !ok:
			t.Errorf("filter %s: SubscribeRequest has no property %q", f.Param, f.Field)
		case !f.InAlerts && ok:
			t.Errorf("filter %s: SubscribeRequest has a property %q, and saved searches do not take the filter", f.Param, f.Field)
		case ok:
			sameEnum("SubscribeRequest", s, f)
		}
		if !rappel.StatsGroupFields.Has(f.Field) {
			t.Errorf("filter %s: %q is not a group_by of GET /recall/stats", f.Param, f.Field)
		}
	}
}
