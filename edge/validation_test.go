package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
	"github.com/rappel-ca/rappel/idn"
)

// badCase is one bad request of the validation walk. what names what is
// bad, as the coverage check counts it: "query:<name>", "path:<name>" or
// "body".
type badCase struct {
	what   string
	method string
	target string
	body   string
	status int
	items  []string // type@loc of each 422 item, in order
	header map[string]string
}

// TestValidation_Walk sends bad requests to every route of the routes
// table, through the real router over real HTTP: each query parameter a
// route declares with a bad value, an unknown parameter, bad bodies and bad
// path values. Every answer must be a 4xx whose detail reads as rappel's
// constructors write it: for a 422, items of a type from rappel.ItemTypes,
// each at a loc in the query, path or body, with a msg that starts with
// the loc's subject and has its type's shape; every message a sentence
// that, for a 422 or a 400, says how to fix the request; values quoted one
// way, and long inputs clipped. The walk fails too when a route or one of
// its parameters has no case.
func TestValidation_Walk(t *testing.T) {
	recs := lookupRecords()
	st := mustStore(t, recs)
	svc := alerts.NewService(st)
	svc.Logger, svc.Now = slog.New(slog.DiscardHandler), stepClock()
	s, _ := MustServer(t, MustCatalog(t, recs))
	s.Lookup, s.Alerts, s.AdminKey = st, svc, testAdminKey
	s.Webhooks = alerts.NewHookService(st, alerts.NewHookSender())
	s.Watchlists = alerts.NewWatchService(st)
	s.Now = func() time.Time { return lookupNow }
	s.Feeds = feedStates
	s.Refresh = func(ctx context.Context) error { return nil }
	s.Logger = discardLogger()
	base := MustHTTP(t, s.Handler()).URL

	long := strings.Repeat("é", 400) // 800 bytes: must come back clipped
	// q encodes a query, its names sorted.
	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return v.Encode()
	}
	get := func(what, path, query string, status int, items ...string) badCase {
		return badCase{what: what, method: http.MethodGet, target: path + "?" + query, status: status, items: items}
	}
	sub := func(body string, items ...string) badCase {
		return badCase{what: "body", method: http.MethodPost, target: "/recall/alerts/subscribe", body: body, status: 422, items: items}
	}
	hook := func(body string, items ...string) badCase {
		return badCase{what: "body", method: http.MethodPost, target: "/recall/webhooks", body: body, status: 422, items: items}
	}
	screen := func(body string, items ...string) badCase {
		return badCase{what: "body", method: http.MethodPost, target: "/recall/match", body: body, status: 422, items: items}
	}
	watch := func(body string, items ...string) badCase {
		return badCase{what: "body", method: http.MethodPost, target: "/recall/watchlists", body: body, status: 422, items: items}
	}
	cursor := "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	wrongCheck := "0"
	if camryVIN[8] == '0' {
		wrongCheck = "1"
	}
	cases := []badCase{
		// Routes without parameters: an unknown one, near or far from
		// none.
		get("query:", "/", q("docs", "1"), 422, "extra_forbidden@query.docs"),
		get("query:", "/health", q("verbose", "1"), 422, "extra_forbidden@query.verbose"),
		get("query:", "/livez", q("x", "1"), 422, "extra_forbidden@query.x"),
		get("query:", "/readyz", q(long, "1"), 422, "extra_forbidden@query."+rappel.Clip(long)),
		get("query:", "/openapi.json", q("format", "yaml"), 422, "extra_forbidden@query.format"),
		get("query:", "/docs", q("url", "x"), 422, "extra_forbidden@query.url"),
		get("query:", "/docs/assets/swagger-ui.css", q("v", "2"), 422, "extra_forbidden@query.v"),
		{what: "query:", method: http.MethodPost, target: "/admin/refresh?force=1", status: 422, items: []string{"extra_forbidden@query.force"}},
		{what: "query:", method: http.MethodPost, target: "/admin/backup?to=x", status: 422, items: []string{"extra_forbidden@query.to"}},
		{what: "query:", method: http.MethodGet, target: "/admin/plugins?source=vrdb", status: 422, items: []string{"extra_forbidden@query.source"}},
		{what: "query:", method: http.MethodPost, target: "/admin/plugins/hcdump/approve?force=1", status: 422, items: []string{"extra_forbidden@query.force"}},
		{what: "path:source", method: http.MethodPost, target: "/admin/plugins/HC%20dump/approve", body: `{"sha256":"` + strings.Repeat("0", 64) + `"}`, status: 422, items: []string{"value_error@path.source"}},
		{what: "body", method: http.MethodPost, target: "/admin/plugins/hcdump/approve", body: `{}`, status: 422, items: []string{"missing@body.sha256"}},
		{what: "body", method: http.MethodPost, target: "/admin/plugins/hcdump/approve", body: `{"sha256":"4011e8c0"}`, status: 422, items: []string{"value_error@body.sha256"}},
		{what: "body", method: http.MethodPost, target: "/admin/plugins/hcdump/approve", body: `{"sha256":42,"digest":"x"}`, status: 422, items: []string{"extra_forbidden@body.digest", "value_error@body.sha256"}},
		{what: "body", method: http.MethodPost, target: "/admin/plugins/hcdump/approve", body: `[1]`, status: 422, items: []string{"json_invalid@body"}},
		{what: "path:source", method: http.MethodPut, target: "/admin/plugins/HC%20dump", body: `x`, status: 422, items: []string{"value_error@path.source"}},
		{what: "body", method: http.MethodPut, target: "/admin/plugins/openfda", body: `{"plugin": "AGFzbQ=="}`, status: 415},
		{what: "body", method: http.MethodPut, target: "/admin/plugins/openfda", body: "--b\r\nContent-Disposition: form-data; name=\"module\"\r\n\r\nx\r\n--b--\r\n", status: 422, items: []string{"extra_forbidden@body.module"}, header: map[string]string{"Content-Type": "multipart/form-data; boundary=b"}},
		{what: "body", method: http.MethodPut, target: "/admin/plugins/openfda", body: "--b--\r\n", status: 422, items: []string{"missing@body.plugin"}, header: map[string]string{"Content-Type": "multipart/form-data; boundary=b"}},
		{what: "path:source", method: http.MethodDelete, target: "/admin/plugins/HC%20dump", body: `{"reason":"x"}`, status: 422, items: []string{"value_error@path.source"}},
		{what: "body", method: http.MethodDelete, target: "/admin/plugins/openfda", body: `{}`, status: 422, items: []string{"missing@body.reason"}},
		{what: "body", method: http.MethodDelete, target: "/admin/plugins/openfda", body: `{"reason":"x","why":1}`, status: 422, items: []string{"extra_forbidden@body.why"}},
		get("query:", "/metrics", q("name", "x"), 422, "extra_forbidden@query.name"),

		// GET /recall, each parameter.
		get("query:q", "/recall", q("q", `"listeria`), 422, "value_error@query.q"),
		get("query:q", "/recall", q("q", "OR cheese"), 422, "value_error@query.q"),
		get("query:q", "/recall", q("q", "cheese OR -milk"), 422, "value_error@query.q"),
		get("query:q", "/recall", q("q", "a\x01b"), 422, "value_error@query.q"),
		get("query:q", "/recall", q("q", strings.Repeat("word ", 40)), 422, "value_error@query.q"),
		get("query:q", "/recall", q("q", strings.Repeat("x", 600)), 422, "string_too_long@query.q"),
		get("query:q", "/recall", "q=%FF", 422, "value_error@query.q"),
		get("query:category", "/recall", q("category", "Dairyy"), 422, "value_error@query.category"),
		get("query:category", "/recall", q("category", "Spacecraft"), 422, "value_error@query.category"),
		get("query:recall_type", "/recall", q("recall_type", "vehicule"), 422, "enum@query.recall_type"),
		get("query:recall_agency", "/recall", q("recall_agency", "RCMP"), 422, "enum@query.recall_agency"),
		get("query:hazard_class", "/recall", q("hazard_class", "class_4"), 422, "enum@query.hazard_class"),
		get("query:allergen", "/recall", q("allergen", long), 422, "enum@query.allergen"),
		get("query:recall_status", "/recall", q("recall_status", "archive"), 422, "enum@query.recall_status"),
		get("query:issued_after", "/recall", q("issued_after", "2024-02-30"), 422, "date_from_datetime_parsing@query.issued_after"),
		get("query:issued_after", "/recall", q("issued_after", "2024-05-01", "issued_before", "2024-04-01"), 422, "value_error@query.issued_after"),
		get("query:date_from", "/recall", q("date_from", "yesterday"), 422, "date_from_datetime_parsing@query.date_from"),
		get("query:date_from", "/recall", "issued_after=2024-01-01&date_from=2024-01-01", 422, "value_error@query.date_from"),
		get("query:date_after", "/recall", q("date_after", "2023-02-29"), 422, "date_from_datetime_parsing@query.date_after"),
		get("query:issued_before", "/recall", q("issued_before", "2024-01-01T00:00:00Z"), 422, "date_from_datetime_parsing@query.issued_before"),
		get("query:date_to", "/recall", q("date_to", "04/01/2024"), 422, "date_from_datetime_parsing@query.date_to"),
		get("query:date_before", "/recall", "date_to=2024-01-01&date_before=2024-01-01", 422, "value_error@query.date_before"),
		get("query:sort_by", "/recall", q("sort_by", "publshed"), 422, "enum@query.sort_by"),
		get("query:sort_by", "/recall", q("sort_by", "closing"), 400),
		get("query:sort_by", "/recall", q("sort_by", "relevance"), 400),
		get("query:sort_order", "/recall", q("sort_order", "descending"), 422, "enum@query.sort_order"),
		get("query:typos", "/recall", q("typos", "no"), 422, "enum@query.typos"),
		get("query:prefix", "/recall", q("prefix", "first"), 422, "enum@query.prefix"),
		get("query:relax", "/recall", q("relax", "no"), 422, "enum@query.relax"),
		get("query:q", "/recall/suggest", q("q", `"peanut`), 422, "value_error@query.q"),
		get("query:lang", "/recall/suggest", q("lang", "de"), 422, "enum@query.lang"),
		get("query:limit", "/recall/suggest", q("limit", "21"), 422, "less_than_equal@query.limit"),
		get("query:limit", "/recall", q("limit", "abc"), 422, "int_parsing@query.limit"),
		get("query:limit", "/recall", q("limit", "0"), 422, "greater_than_equal@query.limit"),
		get("query:limit", "/recall", q("limit", "501"), 422, "less_than_equal@query.limit"),
		get("query:offset", "/recall", q("offset", "-1"), 422, "greater_than_equal@query.offset"),
		get("query:offset", "/recall", q("offset", "9501"), 400),
		get("query:offset", "/recall", q("offset", "5", "cursor", cursor), 400),
		get("query:cursor", "/recall", q("cursor", "not-a-cursor"), 400),
		get("query:cursor", "/recall", q("cursor", cursor), 400),
		get("query:cursor", "/recall", q("sort_by", "value", "cursor", cursor), 400),
		get("query:lang", "/recall", q("lang", "EN"), 422, "enum@query.lang"),
		get("query:lang", "/recall", q("lang", "de", "lang", "fr"), 422, "value_error@query.lang"),
		get("query:facets", "/recall", q("facets", "recall_type,agency"), 422, "enum@query.facets"),
		get("query:facets", "/recall", q("facets", "year,year"), 422, "value_error@query.facets"),
		get("query:facets", "/recall", q("facets", "year", "facets", "category"), 422, "value_error@query.facets"),
		get("query:highlight", "/recall", q("highlight", "maybe"), 422, "enum@query.highlight"),
		get("query:", "/recall", q("recal_type", "food"), 422, "extra_forbidden@query.recal_type"),
		get("query:", "/recall", q("zzzz", "1"), 422, "extra_forbidden@query.zzzz"),
		get("query:", "/recall", "lang=%zz", 400),
		get("query:", "/recall", "lang=en;limit=5", 400),
		get("query:", "/recall", strings.Repeat("limit=1&", maxParams+1), 400),

		// GET /recall/stats.
		get("query:group_by", "/recall/stats", q("group_by", "recal_type"), 422, "enum@query.group_by"),
		get("query:group_by", "/recall/stats", q("group_by", "units_affected"), 422, "enum@query.group_by"),
		get("query:group_by", "/recall/stats", q("group_by", "event_date"), 422, "enum@query.group_by"),
		get("query:group_by", "/recall/stats", q("group_by", "zzzzzz"), 422, "enum@query.group_by"),
		get("query:period", "/recall/stats", q("period", ""), 422, "value_error@query.period"),
		get("query:period", "/recall/stats", q("period", "30"), 422, "value_error@query.period"),
		get("query:period", "/recall/stats", q("period", "30dys"), 422, "value_error@query.period"),
		get("query:period", "/recall/stats", q("period", "30x"), 422, "value_error@query.period"),
		get("query:period", "/recall/stats", q("period", "1.5y"), 422, "value_error@query.period"),
		get("query:period", "/recall/stats", q("period", "0d"), 422, "value_error@query.period"),
		get("query:period", "/recall/stats", q("period", "-7d"), 422, "value_error@query.period"),
		get("query:period", "/recall/stats", q("period", "forever"), 422, "value_error@query.period"),
		get("query:period", "/recall/stats", q("period", "200y"), 422, "value_error@query.period"),
		get("query:sum_field", "/recall/stats", q("sum_field", "units_sold"), 422, "enum@query.sum_field"),

		// GET /recall/products.
		get("query:id", "/recall/products", "", 422, "missing@query.id"),
		get("query:id", "/recall/products", q("id", " "), 422, "value_error@query.id"),
		get("query:id", "/recall/products", q("id", "nope"), 404),

		// The lookups.
		get("query:upc", "/recall/upc", "", 422, "missing@query.upc"),
		get("query:upc", "/recall/upc", q("upc", ""), 422, "value_error@query.upc"),
		get("query:upc", "/recall/upc", q("upc", "04179800145X"), 422, "value_error@query.upc"),
		get("query:upc", "/recall/upc", q("upc", "12345"), 422, "value_error@query.upc"),
		get("query:upc", "/recall/upc", q("upc", cheddarUPC[:11]+string('0'+(cheddarUPC[11]-'0'+1)%10)), 422, "value_error@query.upc"),
		get("query:upc", "/recall/upc", q("upc", long), 422, "value_error@query.upc"),
		get("query:lang", "/recall/upc", q("upc", cheddarUPC, "lang", "english"), 422, "enum@query.lang"),
		get("query:vin", "/recall/vin", "", 422, "missing@query.vin"),
		get("query:vin", "/recall/vin", q("vin", camryVIN[:16]), 422, "value_error@query.vin"),
		get("query:vin", "/recall/vin", q("vin", "4T1BB3EK5AU11808I"), 422, "value_error@query.vin"),
		get("query:vin", "/recall/vin", q("vin", camryVIN[:8]+wrongCheck+camryVIN[9:]), 422, "value_error@query.vin"),
		get("query:lang", "/recall/vin", q("vin", camryVIN, "lang", "fra"), 422, "enum@query.lang"),

		// One record: the language, and path values no record has.
		get("query:lang", "/recall/hc-990101", q("lang", "de"), 422, "enum@query.lang"),
		get("path:record_id", "/recall/hc-1", "", 404),
		get("path:record_id", "/recall/"+url.PathEscape(long), "", 404),
		get("path:file", "/docs/assets/nope.js", "", 404),

		// The alerts: the subscribe body, and the links' token.
		sub(strings.Repeat(" ", maxSubscribeBody+1), "string_too_long@body"),
		sub("", "json_invalid@body"),
		sub(`{"email": "a@example.ca",`, "json_invalid@body"),
		sub(`["a@example.ca"]`, "json_invalid@body"),
		sub(`null`, "json_invalid@body"),
		sub(`{"email":"a@example.ca","agncy":"CFIA","zzzz":1}`, "extra_forbidden@body.agncy", "extra_forbidden@body.zzzz"),
		sub(`{"email":42,"q":["cheese"]}`, "value_error@body.email", "value_error@body.q"),
		sub(`{}`, "missing@body.email"),
		sub(`{"email":"ana\u202e@example.ca"}`, "value_error@body.email"),
		sub(`{"email":"\ufeffana@example.ca"}`, "value_error@body.email"),
		sub(`{"email":"ana\ud800@example.ca"}`, "value_error@body.email"),
		sub("{\"email\":\"ana\xff@example.ca\"}", "value_error@body.email"),
		// A body that is not JSON, by its Content-Type: a 415 sentence.
		{what: "body", method: http.MethodPost, target: "/recall/alerts/subscribe", body: `email=a@example.ca`, status: 415,
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		{what: "body", method: http.MethodPost, target: "/recall/alerts/subscribe", body: `{"email":"a@example.ca"}`, status: 415,
			header: map[string]string{"Content-Type": "text/plain;charset=UTF-8"}},
		sub(`{"email":"Name <a@example.ca>"}`, "value_error@body.email"),
		sub(`{"email":"`+strings.Repeat("a", 250)+`@example.ca"}`, "string_too_long@body.email"),
		sub(`{"email":"a@example.ca","q":"cheese\r\nBcc: b@example.ca"}`, "value_error@body.q"),
		sub(`{"email":"a@example.ca","q":"\"listeria"}`, "value_error@body.q"),
		sub(`{"email":"a@example.ca","q":"`+strings.Repeat("x", 600)+`"}`, "string_too_long@body.q"),
		sub(`{"email":"a@example.ca","agency":"CFIAA","recall_type":"vehicule","hazard_class":"class_9","allergen":"peanuts","lang":"de"}`,
			"enum@body.recall_type", "enum@body.agency", "enum@body.hazard_class", "enum@body.allergen", "enum@body.lang"),
		{what: "query:", method: http.MethodPost, target: "/recall/alerts/subscribe?email=a@example.ca", body: `{"email":"a@example.ca"}`,
			status: 422, items: []string{"extra_forbidden@query.email"}},
		get("query:token", "/recall/alerts/confirm", "", 422, "missing@query.token"),
		get("query:token", "/recall/alerts/confirm", q("token", "a", "token", "b"), 422, "value_error@query.token"),
		{what: "query:token", method: http.MethodGet, target: "/recall/alerts/confirm?token=AAAAAAAAAAAAAAAAAAAAAA", status: 404,
			header: map[string]string{"Accept": "application/json"}},
		{what: "query:token", method: http.MethodPost, target: "/recall/alerts/confirm", status: 422, items: []string{"missing@query.token"}},
		{what: "query:token", method: http.MethodPost, target: "/recall/alerts/confirm?token=nope", status: 404},
		get("query:token", "/recall/alerts/unsubscribe", "", 422, "missing@query.token"),
		get("query:token", "/recall/alerts/unsubscribe", q("tokn", "x"), 422, "extra_forbidden@query.tokn", "missing@query.token"),
		{what: "query:token", method: http.MethodPost, target: "/recall/alerts/unsubscribe", status: 422, items: []string{"missing@query.token"}},
		{what: "query:token", method: http.MethodPost, target: "/recall/alerts/unsubscribe?token=nope", status: 404},

		// Screening a catalog: a body that holds no catalog. An item that
		// cannot be read is its own 422 inside a 200 (TestMatch).
		screen(strings.Repeat(" ", maxMatchBody+1), "string_too_long@body"),
		screen(``, "json_invalid@body"),
		screen(`{"items":[{"name":"cheddar"}`, "json_invalid@body"),
		screen(`{"itms":[{"name":"cheddar"}]}`, "extra_forbidden@body.itms", "missing@body.items"),
		screen(`{"items":"cheddar"}`, "value_error@body.items"),
		screen(`{"items":[]}`, "value_error@body.items"),
		screen(`{"items":[`+strings.Repeat(`{"name":"cheddar"},`, maxMatchItems)+`{"name":"cheddar"}]}`, "value_error@body.items"),
		{what: "body", method: http.MethodPost, target: "/recall/match", body: `items=1`, status: 415,
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		{what: "query:", method: http.MethodPost, target: "/recall/match?lang=fr", body: `{"items":[{"name":"cheddar"}]}`,
			status: 422, items: []string{"extra_forbidden@query.lang"}},

		// Webhooks: the body, unknown parameters and ids no endpoint has.
		hook(strings.Repeat(" ", maxWebhookBody+1), "string_too_long@body"),
		hook(`{"url": "https://x.ca/",`, "json_invalid@body"),
		hook(`{}`, "missing@body.url"),
		hook(`{"url":"https://x.ca/","recall_agncy":"CFIA","events":"recall.created"}`, "value_error@body.events", "extra_forbidden@body.recall_agncy"),
		hook(`{"url":"http://hooks.example.ca/","events":["recall.deleted"],"recall_agency":"RCMP","q":"\"listeria"}`,
			"value_error@body.url", "value_error@body.q", "enum@body.recall_agency", "enum@body.events"),
		hook(`{"url":"https://169.254.169.254/latest/meta-data","category":"`+strings.Repeat("x", 201)+`"}`, "value_error@body.url", "string_too_long@body.category"),
		hook(`{"url":"https://user:secret@hooks.example.ca/#frag"}`, "value_error@body.url"),
		{what: "body", method: http.MethodPost, target: "/recall/webhooks", body: `url=https://x.ca/`, status: 415,
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		get("query:", "/recall/webhooks", q("limit", "5"), 422, "extra_forbidden@query.limit"),
		get("path:id", "/recall/webhooks/wh_nope", "", 404),
		{what: "path:id", method: http.MethodDelete, target: "/recall/webhooks/wh_nope", status: 404},
		{what: "path:id", method: http.MethodPost, target: "/recall/webhooks/wh_nope/test", status: 404},

		// Watchlists: the body, the pages' parameters and ids no list or
		// hit has. A list with an item that cannot be read is refused
		// whole (TestWatchlists_Routes).
		watch(strings.Repeat(" ", maxWatchBody+1), "string_too_long@body"),
		watch(`{"name": "x",`, "json_invalid@body"),
		watch(`{"name": 1, "itms": []}`, "extra_forbidden@body.itms", "missing@body.items", "value_error@body.name"),
		watch(`{"items": {}}`, "value_error@body.items"),
		{what: "body", method: http.MethodPost, target: "/recall/watchlists", body: `items=1`, status: 415,
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		get("query:", "/recall/watchlists", q("limit", "5"), 422, "extra_forbidden@query.limit"),
		get("path:id", "/recall/watchlists/wl_nope", "", 404),
		{what: "path:id", method: http.MethodDelete, target: "/recall/watchlists/wl_nope", status: 404},
		get("path:id", "/recall/watchlists/wl_nope/items", "", 404),
		get("query:limit", "/recall/watchlists/wl_nope/items", q("limit", "0"), 422, "greater_than_equal@query.limit"),
		get("query:after", "/recall/watchlists/wl_nope/items", q("after", "a", "aftr", "b"), 422, "extra_forbidden@query.aftr"),
		get("path:id", "/recall/watchlists/wl_nope/hits", "", 404),
		get("query:limit", "/recall/watchlists/wl_nope/hits", q("limit", "1001"), 422, "less_than_equal@query.limit"),
		get("query:after", "/recall/watchlists/wl_nope/hits", q("after", "", "lmit", "1"), 422, "extra_forbidden@query.lmit"),
		{what: "body", method: http.MethodPatch, target: "/recall/watchlists/wl_nope/hits/hit_1", body: `{"handled": 1, "x": 2}`, status: 422,
			items: []string{"value_error@body.handled", "extra_forbidden@body.x"}},
		{what: "path:id", method: http.MethodPatch, target: "/recall/watchlists/wl_nope/hits/hit_1", body: `{"handled": true}`, status: 404},
		{what: "path:hit_id", method: http.MethodPatch, target: "/recall/watchlists/wl_nope/hits/hit_nope", body: `{"handled": false}`, status: 404},
	}

	cases = append(cases, feedsBadCases(q, get)...)
	covered := map[string]bool{} // route key, then route key + " " + what
	for _, c := range cases {
		t.Run(c.method+" "+c.target[:min(len(c.target), 60)], func(t *testing.T) {
			key := routeKey(t, s, c.method, c.target)
			covered[key] = true
			covered[key+" "+c.what] = true
			checkBad(t, base, c)
		})
	}
	for _, rt := range s.routes() {
		for _, m := range rt.methods {
			key := m + " " + rt.pattern
			if !covered[key] {
				t.Errorf("%s: no bad request", key)
			}
			for _, p := range rt.params {
				if !covered[key+" query:"+p] {
					t.Errorf("%s: no bad value of query parameter %s", key, p)
				}
			}
			for _, w := range wildcard.FindAllStringSubmatch(rt.pattern, -1) {
				if !covered[key+" path:"+w[1]] {
					t.Errorf("%s: no bad path value of %s", key, w[1])
				}
			}
			if (m == http.MethodPost || m == http.MethodPut) && (rt.pattern == "/recall/alerts/subscribe" || rt.pattern == "/recall/match" || strings.HasPrefix(rt.pattern, "/admin/plugins/{source}")) && !covered[key+" body"] {
				t.Errorf("%s: no bad body", key)
			}
		}
	}
}

// routeKey returns "METHOD pattern" of the route the router gives target.
func routeKey(tb testing.TB, s *Server, method, target string) string {
	tb.Helper()
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		for _, m := range rt.methods {
			mux.Handle(m+" "+rt.pattern, http.NotFoundHandler())
		}
	}
	r, err := http.NewRequest(method, target, nil)
	if err != nil {
		tb.Fatal(err)
	}
	_, pattern := mux.Handler(r)
	if pattern == "" {
		tb.Fatalf("%s %s matches no route", method, target)
	}
	return pattern
}

// checkBad sends c and checks its answer.
func checkBad(tb testing.TB, base string, c badCase) {
	tb.Helper()
	keys := map[string]string{"X-Gateway-Key": testKey, "X-Admin-Key": testAdminKey}
	for k, v := range c.header {
		keys[k] = v
	}
	resp, b := docRequest(tb, base, docCase{c.method, c.target, c.body, keys, c.status})
	if resp.StatusCode != c.status {
		tb.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, b)
	}
	var body struct{ Detail json.RawMessage }
	if err := json.Unmarshal(b, &body); err != nil || len(body.Detail) == 0 {
		tb.Fatalf("not {\"detail\": ...}: %s", b)
	}
	if c.status != http.StatusUnprocessableEntity {
		var msg string
		if err := json.Unmarshal(body.Detail, &msg); err != nil {
			tb.Fatalf("detail is not a sentence: %s", b)
		}
		for _, p := range messageProblems(msg, nil, c.status == http.StatusBadRequest, true) {
			tb.Errorf("%s: %q", p, msg)
		}
		return
	}
	var items []rappel.Invalid
	if err := json.Unmarshal(body.Detail, &items); err != nil {
		tb.Fatalf("422 detail is not a list of items: %s", b)
	}
	var got []string
	for _, it := range items {
		got = append(got, fmt.Sprintf("%s@%s", it.Type, locString(it.Loc)))
		for _, p := range itemProblems(it, true) {
			tb.Errorf("%s: %+v", p, it)
		}
	}
	if !slices.Equal(got, c.items) {
		tb.Errorf("items %v, want %v: %s", got, c.items, b)
	}
}

func locString(loc []any) string {
	parts := make([]string, len(loc))
	for i, p := range loc {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ".")
}

// clipped is the longest string rappel.Clip returns.
const clipped = rappel.MaxEcho + len("…")

// itemProblems lists what is wrong with a 422 item: a type outside
// rappel.ItemTypes, a loc that is not in the query, path or body, a
// message that does not start with the loc's subject or lacks its type's
// shape, an input or loc not clipped, and messageProblems. strict adds the
// checks of quoting, which inputs holding quotes or common words could
// trip by chance: the walk's inputs hold none, a fuzzer's may.
func itemProblems(it rappel.Invalid, strict bool) []string {
	var ps []string
	if !rappel.ItemTypes.Has(it.Type) {
		ps = append(ps, "type "+it.Type+" is not one of rappel.ItemTypes")
	}
	if len(it.Loc) == 0 || !slices.Contains([]any{rappel.InQuery, rappel.InPath, rappel.InBody}, it.Loc[0]) ||
		(it.Loc[0] != rappel.InBody && len(it.Loc) != 2) {
		return append(ps, "loc is not [query|path, name] or [body, ...]")
	}
	for _, p := range it.Loc[1:] {
		if s, ok := p.(string); !ok || len(s) > clipped {
			ps = append(ps, "loc part not a clipped string")
		}
	}
	var inputs []string
	switch v := it.Input.(type) {
	case string:
		inputs = []string{v}
	case []any:
		for _, e := range v {
			s, _ := e.(string)
			inputs = append(inputs, s)
		}
	}
	for _, in := range inputs {
		if len(in) > clipped {
			ps = append(ps, "input not clipped")
		}
	}
	subject := rappel.Subject(it.Loc)
	if !strings.HasPrefix(it.Msg, subject+" ") {
		ps = append(ps, "msg does not start with "+subject)
	}
	if shape, ok := shapes[it.Type]; ok && !shape.MatchString(strings.TrimPrefix(it.Msg, subject)) {
		ps = append(ps, "msg is not shaped as "+it.Type+" items are: "+shape.String())
	}
	// The reasons of a VIN refused are worded by rappel.ParseVIN, not
	// by these constructors: some name the VIN unquoted or state the rule
	// without a verb.
	vin := strings.HasPrefix(it.Msg, "Query parameter 'vin' is not a valid VIN: ")
	echoed := inputs
	if vin {
		echoed = nil
	}
	return append(ps, messageProblems(it.Msg, echoed, !vin, strict)...)
}

// shapes is what follows the subject in the message of each item type, as
// the constructors write it.
var shapes = map[string]*regexp.Regexp{
	rappel.ItemMissing:  regexp.MustCompile(`(?s)^ is required; `),
	rappel.ItemExtra:    regexp.MustCompile(`(?s)^ is unknown; `),
	rappel.ItemEnum:     regexp.MustCompile(`(?s)^ should be .+, not '.*'[;.]`),
	rappel.ItemInt:      regexp.MustCompile(`(?s)^ should be a whole number, not '.*'\.$`),
	rappel.ItemTooSmall: regexp.MustCompile(`(?s)^ should be at least -?\d+, not '.*'\.$`),
	rappel.ItemTooLarge: regexp.MustCompile(`(?s)^ should be at most \d+, not '.*'\.$`),
	rappel.ItemDate:     regexp.MustCompile(`(?s)^ should be a date written YYYY-MM-DD, not '.*': (it is not written YYYY-MM-DD|there is no such day)\.$`),
	rappel.ItemTooLong:  regexp.MustCompile(`(?s)^ is (\d+ bytes long|longer than \d+ bytes); keep it to \d+ bytes or fewer\.$`),
	rappel.ItemJSON:     regexp.MustCompile(`(?s)^ is (empty|not valid JSON|not a JSON object)`),
	rappel.ItemValue:    regexp.MustCompile(`(?s)^ \S`),
}

// fixVerbs are the verbs a fix starts with.
var fixVerbs = []string{"add", "ask", "check", "drop", "exclude", "give", "group", "keep", "list", "page", "pass", "put", "remove", "send", "separate", "sort", "swap", "use", "write"}

var (
	didYouMean = regexp.MustCompile(`; did you mean '[^']*'\?$`)
	quoted     = regexp.MustCompile(`'[^']*'`)
)

// messageProblems lists what is wrong with a message: not a sentence
// (capital first, then a period or a closing "did you mean '…'?"); when
// fix is set, no fix (a suggestion, what the value should be, or a clause
// after a semicolon starting with one of fixVerbs); more than 1000 bytes;
// and when strict is set, a value quoted other than in single quotes (a
// double quote or a backquote outside them), or one of echoed repeated in
// it but not quoted.
func messageProblems(msg string, echoed []string, fix, strict bool) []string {
	var ps []string
	first, _ := utf8.DecodeRuneInString(msg)
	if !unicode.IsUpper(first) || !(strings.HasSuffix(msg, ".") || didYouMean.MatchString(msg)) {
		ps = append(ps, "not a sentence")
	}
	if fix && !saysFix(msg) {
		ps = append(ps, "says no fix")
	}
	if len(msg) > 1000 {
		ps = append(ps, "longer than 1000 bytes")
	}
	if !strict {
		return ps
	}
	if rest := quoted.ReplaceAllString(msg, ""); strings.ContainsAny(rest, "\"`") {
		ps = append(ps, "a value quoted otherwise than in single quotes")
	}
	for _, in := range echoed {
		if len(in) >= 4 && strings.Contains(msg, in) && !strings.Contains(msg, rappel.Quote(in)) {
			ps = append(ps, "input "+rappel.Quote(in)+" repeated unquoted")
		}
	}
	return ps
}

func saysFix(msg string) bool {
	if didYouMean.MatchString(msg) || strings.Contains(msg, " should be ") {
		return true
	}
	clauses := strings.Split(msg, "; ")
	for _, c := range clauses[1:] {
		if w, _, _ := strings.Cut(c, " "); slices.Contains(fixVerbs, w) {
			return true
		}
	}
	return false
}

// TestValidation_Root checks GET / for a browser: a page linking to the
// documentation and the description.
func TestValidation_Root(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	base := MustHTTP(t, s.Handler()).URL
	code, body, h := do(t, http.MethodGet, base+"/", "", map[string]string{"Accept": "text/html,application/xhtml+xml"})
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") ||
		!strings.Contains(body, `<a href="/docs">`) || !strings.Contains(body, `<a href="/openapi.json">`) {
		t.Fatalf("%d %s: %s", code, h.Get("Content-Type"), body)
	}
}

// FuzzValidation_Subscribe sends any body, with any Content-Type, to the
// subscribe endpoint's decoding and validation: each refusal is a 415
// sentence naming the Content-Type to send, or a 422 whose items are shaped
// as rappel's constructors shape them; an accepted address holds no
// invisible or replacement character.
func FuzzValidation_Subscribe(f *testing.F) {
	for _, b := range []string{``, `{}`, `null`, `{"email":"a@example.ca","lang":"de"}`, `{"email":1,"agncy":"x"}`,
		`{"email":"a@example.ca","q":"\"x OR"}`, `{"email":"Name <a@b.ca>","allergen":"peanuts"}`,
		`{"email":"ana\u202e@example.ca"}`, `{"email":"ana\ud800@example.ca"}`, "{\"email\":\"\xef\xbb\xbfana@example.ca\"}",
		"{\"email\":\"a@example.ca\",\"q\":\"milk\xff\"}", `{"email":"a@example.ca","q":"\udc00\ud83d\ude00"}`, `{"email":"a@[127.0.0.1]","q":"\ufffd"}`,
		`{"email":"a@0x7f.1","colour":"red","lang":"de"}`, `{"email":7,"q":"\"x","agncy":null}`} {
		f.Add(b, "application/json")
	}
	f.Add(`{"email":"a@example.ca"}`, "")
	f.Add(`email=a@example.ca`, "application/x-www-form-urlencoded")
	f.Add(`{"email":"a@example.ca"}`, "application/json; charset=latin1")
	f.Fuzz(func(t *testing.T, body, contentType string) {
		r := httptest.NewRequest(http.MethodPost, "/recall/alerts/subscribe", strings.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		req, err := decodeSubscribe(r)
		var addr string
		if err == nil {
			addr, _, _, err = req.Validate(idn.Names{})
		}
		if err == nil {
			for _, c := range addr {
				if c == utf8.RuneError || unicode.Is(unicode.Cf, c) {
					t.Fatalf("%q: accepted address %q", body, addr)
				}
			}
			// Every string was text: the body was UTF-8 whole.
			if !utf8.ValidString(body) {
				t.Fatalf("%q: accepted a body that is not UTF-8", body)
			}
			return
		}
		var e *rappel.Error
		if errors.As(err, &e) && e.Code == rappel.EMEDIATYPE {
			if !strings.HasSuffix(e.Message, "send it as JSON, with the header 'Content-Type: application/json'.") {
				t.Fatalf("%q: 415 %q", contentType, e.Message)
			}
			return
		}
		if !errors.As(err, &e) || e.Code != rappel.EINVALID || len(e.Items) == 0 {
			t.Fatalf("%q: %v, want a 422 with items", body, err)
		}
		locs := map[string]bool{}
		for _, it := range e.Items {
			for _, p := range itemProblems(it, false) {
				t.Errorf("%q: %s: %+v", body, p, it)
			}
			// One answer, one item a field.
			if loc := fmt.Sprint(it.Loc); locs[loc] {
				t.Errorf("%q: two items at %s", body, loc)
			} else {
				locs[loc] = true
			}
		}
	})
}
