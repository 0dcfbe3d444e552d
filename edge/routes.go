package edge

import (
	"fmt"
	"html/template"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/rappel-ca/rappel"
)

// route is one entry of the routes table.
type route struct {
	// methods the route answers. GET implies HEAD (the body is not sent).
	// A path served by different handlers per method takes one entry per
	// handler, with the same pattern.
	methods []string
	// pattern is a net/http path pattern without method or host, for
	// example "/recall/{record_id}"; handlers read wildcards with
	// r.PathValue.
	pattern string
	// public routes need no x-gateway-key (docs/api.md, "Plans, keys and rate limits", and the README's routes table).
	// The zero value requires a key.
	public bool
	// params are the query parameter names the route accepts; any other
	// name is a 422. The handler reads them with paramsOf(w).
	params []string
	// idempotent, when not 0, makes the route take an Idempotency-Key
	// (idempotency.go): it is the most body bytes the handler reads,
	// which are read before it runs.
	idempotent int64
	// handle writes the response on success and returns an error
	// otherwise; Server.fail turns the error into the response.
	handle func(w http.ResponseWriter, r *http.Request) error
	// deprecations is what the OpenAPI document marks deprecated of the
	// route, set by router; nil for a route with nothing deprecated.
	deprecations *routeDeprecations
}

var get = []string{http.MethodGet}

// routes is the API's one routes table: adding an endpoint is adding an
// entry here and writing its handler.
func (s *Server) routes() []route {
	return []route{
		// Where people land first: pointers to the description.
		{methods: get, pattern: rootPattern, public: true, handle: s.root},
		{methods: get, pattern: "/health", public: true, handle: s.health},
		{methods: get, pattern: "/livez", public: true, handle: s.livez},
		{methods: get, pattern: "/readyz", public: true, handle: s.readyz},
		{methods: get, pattern: "/recall", params: recallParams, handle: s.searchRecalls},
		{methods: get, pattern: "/recall/stats", params: statsParams, handle: s.getStats},
		{methods: get, pattern: "/recall/changes", params: changesParams, handle: s.getChanges},
		{methods: get, pattern: "/recall/export", params: exportParams, handle: s.getExport},
		// Public: feed readers cannot send a key (docs/api.md, "Change feed, Atom and export").
		{methods: get, pattern: "/recall/feed.atom", public: true, params: atomParams, handle: s.getAtom},
		{methods: get, pattern: "/recall/suggest", params: suggestParams, handle: s.getSuggest},
		{methods: get, pattern: "/recall/products", params: []string{"id"}, handle: s.getProducts},
		{methods: get, pattern: "/recall/upc", params: []string{"upc", "lang"}, handle: s.getByBarcode},
		{methods: get, pattern: "/recall/vin", params: []string{"vin", "lang"}, handle: s.getByVIN},
		{methods: get, pattern: "/recall/{record_id}", params: []string{"lang"}, handle: s.getRecord},
		{methods: []string{http.MethodPost}, pattern: "/recall/match", handle: s.matchCatalog},
		{methods: []string{http.MethodPost}, pattern: "/recall/alerts/subscribe", idempotent: maxSubscribeBody, handle: s.subscribe},
		{methods: get, pattern: "/recall/alerts/confirm", public: true, params: []string{"token"}, handle: s.linkGet(confirmLink)},
		{methods: []string{http.MethodPost}, pattern: "/recall/alerts/confirm", public: true, params: []string{"token"}, handle: s.linkPost(confirmLink)},
		{methods: get, pattern: "/recall/alerts/unsubscribe", public: true, params: []string{"token"}, handle: s.linkGet(unsubscribeLink)},
		{methods: []string{http.MethodPost}, pattern: "/recall/alerts/unsubscribe", public: true, params: []string{"token"}, handle: s.linkPost(unsubscribeLink)},
		{methods: []string{http.MethodPost}, pattern: "/recall/webhooks", idempotent: maxWebhookBody, handle: s.createWebhook},
		{methods: get, pattern: "/recall/webhooks", handle: s.listWebhooks},
		{methods: get, pattern: "/recall/webhooks/{id}", handle: s.getWebhook},
		{methods: []string{http.MethodDelete}, pattern: "/recall/webhooks/{id}", handle: s.deleteWebhook},
		{methods: []string{http.MethodPost}, pattern: "/recall/webhooks/{id}/test", idempotent: maxTestBody, handle: s.testWebhook},
		{methods: []string{http.MethodPost}, pattern: "/recall/watchlists", idempotent: maxWatchBody, handle: s.createWatchlist},
		{methods: get, pattern: "/recall/watchlists", handle: s.listWatchlists},
		{methods: get, pattern: "/recall/watchlists/{id}", handle: s.getWatchlist},
		{methods: []string{http.MethodDelete}, pattern: "/recall/watchlists/{id}", handle: s.deleteWatchlist},
		{methods: get, pattern: "/recall/watchlists/{id}/items", params: []string{"after", "limit"}, handle: s.listWatchItems},
		{methods: get, pattern: "/recall/watchlists/{id}/hits", params: []string{"after", "limit"}, handle: s.listWatchHits},
		{methods: []string{http.MethodPatch}, pattern: "/recall/watchlists/{id}/hits/{hit_id}", handle: s.handleWatchHit},
		// Public to the gateway keys: the admin key is checked instead.
		{methods: []string{http.MethodPost}, pattern: "/admin/refresh", public: true, handle: s.adminRefresh},
		{methods: []string{http.MethodPost}, pattern: "/admin/backup", public: true, handle: s.adminBackup},
		{methods: get, pattern: "/admin/plugins", public: true, handle: s.adminPlugins},
		{methods: []string{http.MethodPost}, pattern: "/admin/plugins/{source}/approve", public: true, handle: s.adminApprovePlugin},
		{methods: []string{http.MethodPut}, pattern: "/admin/plugins/{source}", public: true, handle: s.adminPutPlugin},
		{methods: []string{http.MethodDelete}, pattern: "/admin/plugins/{source}", public: true, handle: s.adminDeletePlugin},
		{methods: get, pattern: "/metrics", public: true, handle: s.getMetrics},
		// The API description (openapi.json, with its test) and the page
		// rendering it: public, as the README's routes table says.
		{methods: get, pattern: "/openapi.json", public: true, handle: s.openAPI},
		{methods: get, pattern: "/docs", public: true, handle: s.docsPage},
		{methods: get, pattern: "/docs/{file...}", public: true, handle: s.docsFile},
	}
}

// router returns the handler that matches routes. Patterns are registered on
// a ServeMux without a method, and with a "/" catch-all, so that ServeMux
// never answers itself (its 404 and 405 are plain text): an endpoint
// dispatches on the method and answers 405, the catch-all answers 404.
func (s *Server) router(routes []route) http.Handler {
	mux := http.NewServeMux()
	var order []string
	byPattern := map[string]*endpoint{}
	deprecated := s.deprecations()
	for _, rt := range routes {
		if !strings.HasPrefix(rt.pattern, "/") || rt.pattern == "/" {
			panic(fmt.Sprintf("edge: route pattern %q must be a path other than /, without method or host", rt.pattern))
		}
		rt.deprecations = deprecated.deprecationsFor(rt)
		e := byPattern[rt.pattern]
		if e == nil {
			e = &endpoint{s: s}
			byPattern[rt.pattern] = e
			order = append(order, rt.pattern)
		}
		e.add(rt)
	}
	var paths []string
	for _, p := range order {
		e := byPattern[p]
		ms := e.methods()
		e.allow = strings.Join(ms, ", ")
		e.path = strings.TrimSuffix(p, "{$}")
		mux.Handle(p, e)
		for _, m := range ms {
			if m != http.MethodHead {
				paths = append(paths, m+" "+e.path)
			}
		}
	}
	known := strings.Join(paths, ", ")
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, notFound(r, known))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ServeMux redirects a path that is not clean (//health,
		// /a/../health) with a plain-text 307 and answers "*" with a bare
		// 400. The API's paths are exact: those get the JSON 404.
		if p := r.URL.EscapedPath(); r.RequestURI == "*" || cleanPath(p) != p {
			s.fail(w, r, notFound(r, known))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// datasetHeader is set to "synthetic" on every answer of a node serving
// generated data.
const datasetHeader = "Rappel-Dataset" // canonical, to be set in the map directly

// headerSynthetic is the Rappel-Dataset value of a node serving generated
// data, shared (never modified) so that setting it allocates nothing.
var headerSynthetic = []string{rappel.DatasetSynthetic}

// rootPattern matches the path "/" alone; "/" itself is the catch-all.
const rootPattern = "/{$}"

// rootBody is the JSON answer of GET / on a node serving the agencies'
// data, and rootSyntheticBody on one serving generated data.
var (
	rootBody          = []byte(`{"name":"Canadian Product and Vehicle Recall API","docs":"/docs","openapi":"/openapi.json","dataset":"agencies"}`)
	rootSyntheticBody = []byte(`{"name":"Canadian Product and Vehicle Recall API","docs":"/docs","openapi":"/openapi.json","dataset":"synthetic",` +
		`"notice":"` + syntheticNotice + `"}`)
)

// syntheticNotice is what a node serving generated data says of it.
const syntheticNotice = "This node serves generated demo data, not real recalls: its titles, products, barcodes and companies are made up. " +
	"It serves the agencies' recalls once its first live refresh has replaced them."

// rootPage is the answer of GET / to a browser.
var rootPage = template.Must(template.New("root").Parse(pageHead +
	`<h1>Canadian Product and Vehicle Recall API</h1>` +
	`{{if .}}<p><strong>` + syntheticNotice + `</strong></p>{{end}}` +
	`<p>Read the documentation at <a href="/docs">/docs</a>, or the OpenAPI description at <a href="/openapi.json">/openapi.json</a>.</p>` +
	`<h1 lang="fr">API des rappels de produits et de véhicules au Canada</h1>` +
	`{{if .}}<p lang="fr"><strong>Ce nœud sert des données de démonstration générées, pas de vrais rappels : titres, produits, codes-barres et entreprises sont inventés. ` +
	`Il sert les rappels des organismes dès que sa première actualisation en direct les a remplacées.</strong></p>{{end}}` +
	`<p lang="fr">Lisez la documentation à <a href="/docs">/docs</a>, ou la description OpenAPI à <a href="/openapi.json">/openapi.json</a>.</p></body></html>`))

// root answers GET / with where the API describes itself: JSON naming
// /docs and /openapi.json, or, to a browser, a page linking to them.
func (s *Server) root(w http.ResponseWriter, r *http.Request) error {
	if err := paramsOf(w).err(); err != nil {
		return err
	}
	synthetic := s.Catalog.Snapshot().Info().Synthetic()
	if wantsHTML(r) {
		return writeHTMLPage(w, r, rootPage, synthetic)
	}
	body := rootBody
	if synthetic {
		body = rootSyntheticBody
	}
	writeJSON(w, r, http.StatusOK, body)
	return nil
}

// cleanPath is ServeMux's canonical form of a path: rooted, no empty, "."
// or ".." segments, a trailing slash kept.
func cleanPath(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// notFound is the 404 for a path no route matches.
func notFound(r *http.Request, known string) error {
	return rappel.Errorf(rappel.ENOTFOUND,
		"There is no path %s in this API; its paths are %s.", rappel.Quote(r.URL.Path), known)
}

// endpoint serves the routes that share one path pattern.
type endpoint struct {
	s      *Server
	routes []route
	allow  string // the Allow header of a 405
	path   string // the pattern as messages show it: "/" for "/{$}"
}

func (e *endpoint) add(rt route) {
	for _, m := range rt.methods {
		if e.match(m) != nil {
			panic(fmt.Sprintf("edge: two routes for %s %s", m, rt.pattern))
		}
	}
	e.routes = append(e.routes, rt)
}

// match returns the route for method, or nil.
func (e *endpoint) match(method string) *route {
	for i := range e.routes {
		for _, m := range e.routes[i].methods {
			if m == method || (m == http.MethodGet && method == http.MethodHead) {
				return &e.routes[i]
			}
		}
	}
	return nil
}

// methods lists the methods the endpoint answers, HEAD after GET.
func (e *endpoint) methods() []string {
	var ms []string
	for _, rt := range e.routes {
		for _, m := range rt.methods {
			ms = append(ms, m)
			if m == http.MethodGet && !slices.Contains(ms, http.MethodHead) {
				ms = append(ms, http.MethodHead)
			}
		}
	}
	return ms
}

// ServeHTTP checks, in order, the method (405), the key (403) and the query
// string (400), then calls the route's handler, which checks the
// parameters' values (422).
func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt := e.match(r.Method)
	if rt == nil {
		w.Header().Set("Allow", e.allow)
		e.s.fail(w, r, rappel.Errorf(rappel.EMETHOD,
			"Method %s is not allowed on %s; use %s.", rappel.Clip(r.Method), e.path, e.allow))
		return
	}
	// Generated data says so on every answer, so that no client takes a
	// made-up recall for a real one.
	if e.s.Catalog.Snapshot().Info().Synthetic() {
		w.Header()[datasetHeader] = headerSynthetic
	}
	if err := e.s.serve(rt, w, r); err != nil {
		e.s.fail(w, r, err)
	}
}

// serve authenticates the caller when the route needs a key and applies
// the key's rate limit and quota (limit.go), parses the query for the
// handler, marks a request using a deprecated route or parameter
// (deprecation.go), and calls the handler.
func (s *Server) serve(rt *route, w http.ResponseWriter, r *http.Request) error {
	x := exchangeOf(w)
	if !rt.public {
		key, err := s.authenticate(r)
		if err != nil {
			return err
		}
		x.key = key
		// After authentication, so that a 403 costs the key nothing.
		if err := s.limit(w, key); err != nil {
			return err
		}
	}
	p, err := parseParams(r.URL.RawQuery, rt.params)
	if err != nil {
		return err
	}
	x.params = p
	if rt.deprecations != nil {
		s.markDeprecated(w, rt.deprecations, &x.params, x.key)
	}
	if rt.idempotent > 0 && s.Idempotency != nil {
		return s.serveIdempotent(rt, w, r)
	}
	return rt.handle(w, r)
}
