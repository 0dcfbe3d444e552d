package edge

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/kv"
)

// This file is a differential test harness: it sends the same generated
// requests to two servers that differ only in their catalog and requires
// byte-identical answers. It proves that another implementation of the read
// index (rappel.Snapshot) answers exactly as index.Build's does, through
// everything a client sees: status, headers, bodies, error sentences,
// cursors and ETags.

// diffStore is what the two servers share besides their catalogs: the
// durable store, which answers the barcode and VIN lookups and holds the
// records the catalogs were built from, from which the requests draw their
// values.
type diffStore interface {
	rappel.Lookup
	ForEachRecord(ctx context.Context, fn func(*rappel.Record) error) error
}

// Request classes of diffCatalogs, in the order its summary lists them.
const (
	classSearch   = "search"   // GET /recall, valid parameters
	classCursor   = "cursor"   // GET /recall pages following a cursor
	classRecord   = "record"   // GET /recall/{record_id}
	classStats    = "stats"    // GET /recall/stats
	classProducts = "products" // GET /recall/products
	classUPC      = "upc"      // GET /recall/upc
	classVIN      = "vin"      // GET /recall/vin
	classBad      = "bad"      // requests built to be refused
	classRevalid  = "revalid"  // an earlier request again with If-None-Match
	classSweep    = "sweep"    // every record, in pages of 500
)

var diffClasses = []string{classSearch, classCursor, classRecord, classStats, classProducts, classUPC, classVIN, classBad, classRevalid, classSweep}

// diffSweeps are the searches diffCatalogs walks to the end: every record,
// in three orders, in each language variant of its bytes.
var diffSweeps = []query{
	{"limit", "500"},
	{"sort_by", "published", "sort_order", "asc", "lang", "en", "limit", "500"},
	{"sort_order", "asc", "lang", "fr", "limit", "500"},
}

// diffCatalogs sends n generated requests (seeded, reproducible) through the
// real router, over real HTTP, to two servers that differ only in their
// catalog, then walks every record in three orders (diffSweeps), and fails
// on the first request whose status, headers or body bytes differ,
// printing the request and a short diff. The generated requests find what
// depends on the query (counts, orders, stats, errors); the sweeps find a
// difference in any one record's bytes or place. Both servers share
// store for the barcode and VIN lookups, a fixed clock (want's dataset
// time) and the same API key; got must sign cursors with want's key, as
// nodes behind one load balancer do. t may be a failRecorder.
//
// Every response header is compared except those that legitimately differ
// between two processes (diffIgnoredHeader): Date, and X-Request-Id when
// the request sent none. Bodies are compared as sent, compressed or not.
//
// When n is 1000 or more, it also requires every request class but the
// bad one to have been answered 200 at least once, a revalidation 304 and
// the bad requests 4xx, so that a generator gone stale (every request a
// 422) cannot pass silently.
func diffCatalogs(t testing.TB, want, got rappel.Catalog, store diffStore, seed int64, n int) {
	t.Helper()
	start := time.Now()
	now := want.Snapshot().Info().UpdatedAt
	d := &differ{
		t:    t,
		want: diffServer(t, want, store, now),
		got:  diffServer(t, got, store, now),
		// No transparent gzip: the bytes compared are the bytes sent.
		client: &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}},
		seed:   seed,
		seen:   map[string]map[int]int{},
		empty:  map[string]int{},
	}
	t.Cleanup(d.client.CloseIdleConnections)
	g := newDiffGen(t, store, seed)
	for d.sent < n {
		g.draw(d, n-d.sent)
	}
	for _, q := range diffSweeps {
		g.sweep(d, q)
	}
	var sum []string
	for _, c := range diffClasses {
		var codes []string
		total := 0
		for _, code := range slices.Sorted(maps.Keys(d.seen[c])) {
			codes = append(codes, fmt.Sprintf("%d×%d", d.seen[c][code], code))
			total += d.seen[c][code]
		}
		if k := d.empty[c]; k > 0 {
			codes = append(codes, fmt.Sprintf("%d found nothing", k))
		}
		sum = append(sum, fmt.Sprintf("%s %d (%s)", c, total, strings.Join(codes, " ")))
	}
	t.Logf("diffCatalogs: %d requests, seed %d, in %v, identical answers: %s", d.sent, seed, time.Since(start).Round(time.Millisecond), strings.Join(sum, "; "))
	if n < 1000 {
		return
	}
	for _, c := range diffClasses {
		if d.seen[c][http.StatusOK] == 0 && c != classBad && c != classRevalid {
			t.Errorf("no request of class %s was answered 200: the generator no longer builds valid ones", c)
		}
	}
	if d.seen[classRevalid][http.StatusNotModified] == 0 {
		t.Errorf("no revalidation was answered 304")
	}
	bad, bad4xx := 0, 0
	for code, k := range d.seen[classBad] {
		bad += k
		if code >= 400 && code < 500 {
			bad4xx += k
		}
	}
	if bad4xx*10 < bad*9 {
		t.Errorf("only %d of the %d bad requests were answered 4xx: the generator no longer builds bad requests", bad4xx, bad)
	}
}

// diffServer serves catalog over real HTTP with store for the lookups and
// the clock stopped at now. The query budget is a minute so that a search
// never times out on one server only.
func diffServer(tb testing.TB, catalog rappel.Catalog, store rappel.Lookup, now time.Time) string {
	tb.Helper()
	s, _ := MustServer(tb, catalog)
	s.Lookup = store
	s.Logger = discardLogger()
	s.Now = func() time.Time { return now }
	s.QueryBudget = time.Minute
	return MustHTTP(tb, s.Handler()).URL
}

// diffRequest is one generated request.
type diffRequest struct {
	class  string
	method string // GET when empty
	target string // path and query, escaped
	header map[string]string
}

func (r diffRequest) String() string {
	m := r.method
	if m == "" {
		m = http.MethodGet
	}
	s := m + " " + r.target
	for _, k := range slices.Sorted(maps.Keys(r.header)) {
		if k != "X-Gateway-Key" || r.header[k] != testKey {
			s += fmt.Sprintf(" [%s: %q]", k, r.header[k])
		}
	}
	return s
}

// diffResponse is what one server answered.
type diffResponse struct {
	status int
	header http.Header
	body   []byte
}

// differ sends requests to both servers and compares the answers.
type differ struct {
	t         testing.TB
	want, got string // base URLs
	client    *http.Client
	seed      int64 // for the failure message: the same seed sends the same requests
	sent      int
	seen      map[string]map[int]int // class → status → requests
	empty     map[string]int         // class → searches answered 200 with no result
	// recent are earlier requests answered 200 with an ETag, for
	// revalidation.
	recent []revalidatable
}

type revalidatable struct {
	req  diffRequest
	etag string
}

// do sends r to both servers, fails the test on any difference, and
// returns want's answer.
func (d *differ) do(r diffRequest) *diffResponse {
	d.t.Helper()
	if r.header == nil {
		r.header = map[string]string{}
	}
	if _, ok := r.header["X-Gateway-Key"]; !ok {
		r.header["X-Gateway-Key"] = testKey
	}
	// Half the requests carry their own request id, which the server echoes
	// and which is then compared; the others let the server make one.
	if d.sent%2 == 0 {
		r.header["X-Request-Id"] = fmt.Sprintf("diff-%06d", d.sent)
	}
	// Both at once: the servers share nothing but the store.
	var g *diffResponse
	var gErr error
	var wg sync.WaitGroup
	wg.Go(func() { g, gErr = d.send(d.got, r) })
	w, wErr := d.send(d.want, r)
	wg.Wait()
	if err := cmp.Or(wErr, gErr); err != nil {
		d.t.Fatalf("%s: %v", r, err)
	}
	d.sent++
	if d.seen[r.class] == nil {
		d.seen[r.class] = map[int]int{}
	}
	d.seen[r.class][w.status]++
	if w.status == http.StatusOK && bytes.HasPrefix(w.body, []byte(`{"entity_type":"recall","count":0,`)) {
		d.empty[r.class]++
	}
	if diff := diffResponses(r, w, g); diff != "" {
		d.t.Fatalf("request %d (seed %d) differs: %s\n%s", d.sent, d.seed, r, diff)
	}
	if w.status == http.StatusOK && w.header.Get("Etag") != "" && len(d.recent) < 64 {
		d.recent = append(d.recent, revalidatable{r, w.header.Get("Etag")})
	}
	return w
}

func (d *differ) send(base string, r diffRequest) (*diffResponse, error) {
	method := r.method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, base+r.target, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range r.header {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	return &diffResponse{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// diffIgnoredHeader reports whether header name of a response to r may
// differ between two servers giving the same answer: Date, which net/http
// stamps from the wall clock, and X-Request-Id when r sent none, since the
// server then makes a random one. Nothing else is ignored.
func diffIgnoredHeader(r diffRequest, name string) bool {
	switch name {
	case "Date":
		return true
	case "X-Request-Id":
		return r.header["X-Request-Id"] == ""
	}
	return false
}

// diffResponses describes how got differs from want in a few lines, or
// returns "" when they are the same.
func diffResponses(r diffRequest, want, got *diffResponse) string {
	var out []string
	if want.status != got.status {
		out = append(out, fmt.Sprintf("status: want %d, got %d", want.status, got.status))
	}
	names := map[string]bool{}
	for k := range want.header {
		names[k] = true
	}
	for k := range got.header {
		names[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(names)) {
		if diffIgnoredHeader(r, k) {
			continue
		}
		if w, g := want.header[k], got.header[k]; !slices.Equal(w, g) {
			out = append(out, fmt.Sprintf("header %s: want %q, got %q", k, w, g))
		}
	}
	if !bytes.Equal(want.body, got.body) {
		out = append(out, bodyDiff(want.body, got.body))
	}
	return strings.Join(out, "\n")
}

// bodyDiff shows where two bodies first differ, with some context.
func bodyDiff(want, got []byte) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	const before, after = 160, 160
	from := max(0, i-before)
	clip := func(b []byte) string {
		to := min(len(b), i+after)
		s := ""
		if from > 0 {
			s = "…"
		}
		s += string(b[from:to])
		if to < len(b) {
			s += "…"
		}
		return strconv.Quote(s)
	}
	return fmt.Sprintf("body: want %d bytes, got %d; first difference at byte %d:\n  want %s\n  got  %s",
		len(want), len(got), i, clip(want), clip(got))
}

// diffGen draws requests from the records of the store, reproducibly from
// its seed: the records are read in record_id order and every choice comes
// from one generator.
type diffGen struct {
	rng  *rand.Rand
	recs []*rappel.Record

	categories []string         // as the records spell them, English and French
	yearsOf    map[string][]int // normalized make → model years of its recalls
	upcs       []string         // barcodes as the records print them
	prefixes   []string         // upc_prefix values
	vins       []realVIN
	// unusual are q words written with punctuation (F-150, O157:H7).
	unusual []string
}

func newDiffGen(tb testing.TB, store diffStore, seed int64) *diffGen {
	tb.Helper()
	g := &diffGen{rng: rand.New(rand.NewPCG(uint64(seed), 0xd1ff)), yearsOf: map[string][]int{}, vins: realVINs(tb)}
	cats := map[string]bool{}
	if err := store.ForEachRecord(tb.Context(), func(r *rappel.Record) error {
		g.recs = append(g.recs, r)
		for _, c := range append([]string{r.Category}, r.Categories...) {
			cats[c] = true
		}
		if fr := r.Translations.FR; fr != nil {
			cats[fr.Category] = true
		}
		if r.RecallType == rappel.TypeVehicle {
			for _, m := range r.AffectedModels {
				mk := kv.NormalizeVehicle(m.Make)
				if m.Year > 0 && !slices.Contains(g.yearsOf[mk], m.Year) {
					g.yearsOf[mk] = append(g.yearsOf[mk], m.Year)
				}
			}
		}
		for _, p := range r.ProductList {
			if p.UPC != "" {
				g.upcs = append(g.upcs, p.UPC)
			}
			if p.UPCPrefix != "" {
				g.prefixes = append(g.prefixes, p.UPCPrefix)
			}
		}
		for _, u := range strings.FieldsFunc(r.UPC, func(c rune) bool { return c == ';' || c == ',' }) {
			g.upcs = append(g.upcs, strings.TrimSpace(u))
		}
		if tr := r.Translations.EN; tr != nil {
			for _, w := range strings.Fields(tr.Title) {
				if w = trimWord(w); len(w) > 2 && strings.ContainsAny(w, "-.:/") {
					g.unusual = append(g.unusual, w)
				}
			}
		}
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	if len(g.recs) == 0 {
		tb.Fatal("diffCatalogs: the store holds no record to draw requests from")
	}
	delete(cats, "")
	g.categories = slices.Sorted(maps.Keys(cats))
	for _, ys := range g.yearsOf {
		slices.Sort(ys)
	}
	return g
}

func (g *diffGen) intn(n int) int          { return g.rng.IntN(n) }
func (g *diffGen) chance(percent int) bool { return g.rng.IntN(100) < percent }
func (g *diffGen) rec() *rappel.Record     { return g.recs[g.intn(len(g.recs))] }

func pick[T any](g *diffGen, vs []T) T { return vs[g.intn(len(vs))] }

// draw sends one request, or a few for a cursor walk (at most left), to d.
func (g *diffGen) draw(d *differ, left int) {
	switch x := g.intn(100); {
	case x < 34:
		g.search(d)
	case x < 39:
		g.walk(d, left)
	case x < 49:
		d.do(g.withExtras(diffRequest{class: classRecord, target: g.recordTarget()}))
	case x < 60:
		d.do(g.withExtras(diffRequest{class: classStats, target: g.statsTarget()}))
	case x < 66:
		d.do(g.withExtras(diffRequest{class: classProducts, target: g.productsTarget()}))
	case x < 75:
		d.do(g.withExtras(diffRequest{class: classUPC, target: g.upcTarget()}))
	case x < 82:
		d.do(g.withExtras(diffRequest{class: classVIN, target: g.vinTarget()}))
	case x < 96:
		d.do(g.bad())
	default:
		g.revalidate(d)
	}
}

// withExtras makes some requests HEAD, and asks for compression now and
// then: both change the response's headers and bytes.
func (g *diffGen) withExtras(r diffRequest) diffRequest {
	if r.header == nil {
		r.header = map[string]string{}
	}
	if g.chance(6) {
		r.method = http.MethodHead
	}
	switch x := g.intn(100); {
	case x < 5:
		r.header["Accept-Encoding"] = "gzip"
	case x < 8:
		r.header["Accept-Encoding"] = "zstd, br;q=0.5"
	case x < 10:
		r.header["Accept-Encoding"] = "br"
	}
	return r
}

// revalidate sends an earlier successful request again with its ETag in
// If-None-Match (304), or with a stale tag (200).
func (g *diffGen) revalidate(d *differ) {
	if len(d.recent) == 0 {
		g.search(d)
		return
	}
	i := g.intn(len(d.recent))
	old := d.recent[i]
	d.recent = slices.Delete(d.recent, i, i+1)
	r := diffRequest{class: classRevalid, method: old.req.method, target: old.req.target, header: map[string]string{}}
	for k, v := range old.req.header {
		if k != "X-Request-Id" {
			r.header[k] = v
		}
	}
	r.header["If-None-Match"] = old.etag
	switch g.intn(4) {
	case 0:
		r.header["If-None-Match"] = `"0000000000000000", ` + old.etag
	case 1:
		r.header["If-None-Match"] = `"0000000000000000"`
	}
	d.do(r)
}

// query builds a query string from name-value pairs, in their order.
type query []string

func (q query) add(name, value string) query { return append(q, name, value) }

func (q query) String() string {
	var b strings.Builder
	for i := 0; i+1 < len(q); i += 2 {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(q[i]))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(q[i+1]))
	}
	return b.String()
}

func target(path string, q query) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.String()
}

// shuffled returns q with its pairs in a random order: the parameters'
// order must not matter to the answer (the page's ETag hashes the raw
// query, the same for both servers).
func (g *diffGen) shuffled(q query) query {
	n := len(q) / 2
	g.rng.Shuffle(n, func(i, j int) {
		q[2*i], q[2*j] = q[2*j], q[2*i]
		q[2*i+1], q[2*j+1] = q[2*j+1], q[2*i+1]
	})
	return q
}

// trimWord removes the punctuation around a word of a title.
func trimWord(w string) string {
	return strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// word draws a word of a record as a client would type it: from a title in
// either language, a product name, a firm, a make or model, or an
// identifier.
func (g *diffGen) word() string {
	for {
		r := g.rec()
		var src string
		switch g.intn(10) {
		case 0, 1, 2:
			if r.Translations.EN != nil {
				src = r.Translations.EN.Title
			}
		case 3, 4:
			if r.Translations.FR != nil {
				src = r.Translations.FR.Title
			}
		case 5:
			if len(r.ProductList) > 0 {
				src = pick(g, r.ProductList).Name
			}
		case 6:
			src = strings.Join(append(slices.Clone(r.Companies), r.RecallingFirm, r.Manufacturer), " ")
		case 7:
			if len(r.AffectedModels) > 0 {
				m := pick(g, r.AffectedModels)
				src = m.Make + " " + m.Model
			}
		case 8:
			src = strings.Join(append(slices.Clone(r.Allergens), r.Category, r.System), " ")
		default:
			src = strings.Join([]string{r.RecallID, r.ManufacturerRecallNumber, r.IdentificationNumber}, " ")
			if len(r.ProductList) > 0 {
				p := pick(g, r.ProductList)
				src += " " + strings.ReplaceAll(p.UPC, " ", "") + " " + strings.Join(p.LotCodes, " ")
			}
		}
		ws := strings.Fields(src)
		if len(ws) == 0 {
			continue
		}
		w := trimWord(pick(g, ws))
		if w == "" || w == "OR" {
			continue
		}
		switch x := g.intn(20); {
		case x == 0:
			w = strings.ToUpper(w)
		case x == 1:
			w = strings.ToLower(w)
		}
		return w
	}
}

// phrase draws two to four consecutive words of a title.
func (g *diffGen) phrase() string {
	for {
		r := g.rec()
		tr := r.Translations.EN
		if g.chance(40) || tr == nil {
			tr = r.Translations.FR
		}
		if tr == nil {
			continue
		}
		ws := strings.Fields(strings.ReplaceAll(tr.Title, `"`, " "))
		k := 2 + g.intn(3)
		if len(ws) < k {
			continue
		}
		i := g.intn(len(ws) - k + 1)
		return `"` + strings.Join(ws[i:i+k], " ") + `"`
	}
}

// term is a word or, now and then, a phrase.
func (g *diffGen) term() string {
	if g.chance(25) {
		return g.phrase()
	}
	return g.word()
}

// q draws a valid q in one of the forms the query language accepts.
func (g *diffGen) q() string {
	switch g.intn(16) {
	case 0, 1:
		return g.word()
	case 2:
		return g.word() + " " + g.word()
	case 3:
		return g.word() + " " + g.word() + " " + g.word()
	case 4:
		return g.phrase()
	case 5:
		return g.term() + " OR " + g.term()
	case 6:
		return g.word() + " " + g.term() + " OR " + g.term() + " OR " + g.word()
	case 7:
		return g.word() + " -" + g.term()
	case 8:
		return "-" + g.term()
	case 9:
		return "-" + g.word() + " -" + g.word()
	case 10:
		return g.term() + " " + g.term() + " OR " + g.term() + " -" + g.term()
	case 11:
		if len(g.unusual) > 0 {
			return pick(g, g.unusual)
		}
		return g.word()
	case 12:
		// Spacing, tabs, a lone dash and lower-case "or" are not operators.
		return "  " + g.word() + "\t- " + g.word() + " or " + g.word() + "  "
	case 13:
		return pick(g, []string{"zzqxv", "recalled", "rappel", "recall", "listeria", "salmonella", "undeclared", "airbag", " ", "-"})
	case 14:
		var ws []string
		for range 3 + g.intn(4) {
			ws = append(ws, g.word())
		}
		return strings.Join(ws, " OR ")
	default:
		return g.rec().RecallID
	}
}

// date draws a YYYY-MM-DD near a record's event_date.
func (g *diffGen) date() string {
	for {
		r := g.rec()
		t, err := time.Parse(time.DateOnly, r.EventDate)
		if err != nil {
			continue
		}
		if g.chance(50) {
			t = t.AddDate(0, 0, g.intn(61)-30)
		}
		return t.Format(time.DateOnly)
	}
}

// category draws a category as the records spell it, or re-cased, or
// accent-stripped.
func (g *diffGen) category() string {
	c := pick(g, g.categories)
	switch g.intn(6) {
	case 0:
		c = strings.ToUpper(c)
	case 1:
		c = strings.ToLower(c)
	case 2:
		c = strings.Map(func(r rune) rune {
			switch r {
			case 'é', 'è', 'ê':
				return 'e'
			case 'à', 'â':
				return 'a'
			}
			return r
		}, c)
	}
	return c
}

// lang adds lang=en or lang=fr to q two times in three.
func (g *diffGen) lang(q query) query {
	if x := g.intn(3); x > 0 {
		return q.add("lang", rappel.Langs[x-1])
	}
	return q
}

// searchQuery draws the parameters of a valid GET /recall; cursor tells
// whether the search will be walked with cursors (no value sort, no
// offset).
func (g *diffGen) searchQuery(cursor bool) query {
	var q query
	hasQ := g.chance(65)
	if hasQ {
		q = q.add("q", g.q())
	}
	if g.chance(20) {
		q = q.add("recall_type", pick(g, rappel.RecallTypes))
	}
	if g.chance(10) {
		// The spec's agencies, not KnownAgencies: one another test
		// registered would change what a seed generates.
		q = q.add("recall_agency", pick(g, rappel.Agencies))
	}
	if g.chance(10) {
		q = q.add("hazard_class", pick(g, rappel.HazardClasses))
	}
	if g.chance(8) {
		q = q.add("allergen", pick(g, rappel.Allergens))
	}
	if g.chance(12) {
		q = q.add("category", g.category())
	}
	if g.chance(6) {
		q = q.add("recall_status", pick(g, rappel.Statuses))
	}
	if g.chance(20) || (!hasQ && g.chance(30)) {
		a, b := g.date(), g.date()
		if a > b {
			a, b = b, a
		}
		switch g.intn(4) {
		case 0:
			q = q.add(pick(g, issuedAfterNames), a)
		case 1:
			q = q.add(pick(g, issuedBeforeNames), b)
		default:
			q = q.add(pick(g, issuedAfterNames), a).add(pick(g, issuedBeforeNames), b)
		}
	}
	sorts := []string{"", "", "date", "published", "value"}
	if cursor {
		sorts = sorts[:4]
	}
	if hasQ {
		sorts = append(sorts, "relevance", "relevance")
	}
	if s := pick(g, sorts); s != "" {
		q = q.add("sort_by", s)
	}
	if x := g.intn(3); x > 0 {
		q = q.add("sort_order", []string{"", "asc", "desc"}[x])
	}
	if l := g.limit(); l != "" {
		q = q.add("limit", l)
	}
	if !cursor && g.chance(25) {
		o := g.intn(300)
		if g.chance(10) {
			o = rappel.MaxOffset - g.intn(600)
		}
		q = q.add("offset", strconv.Itoa(o))
	}
	if g.chance(12) {
		var names []string
		for _, f := range rappel.FacetFields {
			if g.chance(40) {
				names = append(names, f)
			}
		}
		if len(names) == 0 {
			names = append(names, pick(g, rappel.FacetFields))
		}
		g.rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		q = q.add("facets", strings.Join(names, ","))
	}
	if g.chance(10) {
		q = q.add("highlight", pick(g, rappel.Booleans))
	}
	q = g.lang(q)
	return g.shuffled(q)
}

// limit draws a limit, mostly small; "" for the default.
func (g *diffGen) limit() string {
	switch x := g.intn(100); {
	case x < 20:
		return ""
	case x < 70:
		return strconv.Itoa(1 + g.intn(20))
	case x < 92:
		return strconv.Itoa(21 + g.intn(80))
	default:
		return strconv.Itoa(101 + g.intn(rappel.MaxLimit-100))
	}
}

func (g *diffGen) search(d *differ) {
	d.do(g.withExtras(diffRequest{class: classSearch, target: target("/recall", g.searchQuery(false))}))
}

// walk follows want's next cursors for two to seven pages of one search,
// sending each to both servers, so that each server must accept the
// other's cursors; limit and lang may change between pages, as cursors
// allow. It may end with the cursor misused, which both must refuse
// alike.
func (g *diffGen) walk(d *differ, left int) {
	base := g.searchQuery(true)
	pages := min(left, 2+g.intn(6))
	w := d.do(diffRequest{class: classCursor, target: target("/recall", base)})
	for p := 1; p < pages; p++ {
		cur := nextCursor(w.body)
		if cur == "" {
			return
		}
		next := slices.Clone(base)
		if g.chance(30) {
			next = setParam(next, "limit", g.limit())
		}
		if g.chance(30) {
			next = setParam(next, "lang", pick(g, []string{"", "en", "fr"}))
		}
		next = next.add("cursor", cur)
		if p == pages-1 && g.chance(30) {
			// Misuse: another search's cursor, an altered one, a cursor
			// with offset or with the value sort: a 400 from both.
			switch g.intn(4) {
			case 0:
				next = setParam(next, "q", g.word())
			case 1:
				b := []byte(cur)
				i := g.intn(len(b))
				b[i] = "AQgw"[g.intn(4)]
				if b[i] == cur[i] {
					b[i] = '_'
				}
				next = setParam(next, "cursor", string(b))
			case 2:
				next = next.add("offset", "0")
			default:
				next = setParam(next, "sort_by", "value")
			}
		}
		r := diffRequest{class: classCursor, target: target("/recall", next)}
		if p == pages-1 {
			// Only the last page: the next cursor is read from a body
			// sent whole and uncompressed.
			r = g.withExtras(r)
		}
		w = d.do(r)
	}
}

// sweep walks the search q to its last page, following want's cursors.
func (g *diffGen) sweep(d *differ, q query) {
	r := d.do(diffRequest{class: classSweep, target: target("/recall", q)})
	// Bounded, in case want's cursors never end: every record fits in
	// len(g.recs)/500+1 pages.
	for pages := 0; pages <= len(g.recs)/500+1; pages++ {
		cur := nextCursor(r.body)
		if cur == "" {
			return
		}
		r = d.do(diffRequest{class: classSweep, target: target("/recall", slices.Clone(q).add("cursor", cur))})
	}
	d.t.Fatalf("the sweep %s did not end after %d pages", q, len(g.recs)/500+2)
}

// setParam replaces name's value in q, adds it when absent, or removes it
// when value is "".
func setParam(q query, name, value string) query {
	out := query{}
	found := false
	for i := 0; i+1 < len(q); i += 2 {
		if q[i] == name {
			found = true
			if value != "" {
				out = out.add(name, value)
			}
			continue
		}
		out = out.add(q[i], q[i+1])
	}
	if !found && value != "" {
		out = out.add(name, value)
	}
	return out
}

// nextCursor returns the next_cursor of a GET /recall body, "" when null or
// absent.
func nextCursor(body []byte) string {
	const key = `"next_cursor":"`
	i := bytes.LastIndex(body, []byte(key))
	if i < 0 {
		return ""
	}
	rest := body[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// recordTarget draws GET /recall/{record_id}, mostly of a record that
// exists.
func (g *diffGen) recordTarget() string {
	id := g.rec().RecordID
	switch g.intn(20) {
	case 0:
		id = "hc-0"
	case 1:
		id = strings.ToUpper(id)
	case 2:
		id += " "
	}
	var q query
	q = g.lang(q)
	return target("/recall/"+url.PathEscape(id), q)
}

// statsTarget draws GET /recall/stats over every group_by, periods from a
// week to all, with or without the sum.
func (g *diffGen) statsTarget() string {
	var q query
	if g.chance(90) {
		q = q.add("group_by", pick(g, rappel.StatsGroupFields))
	}
	if g.chance(85) {
		periods := []string{"7d", "30d", "90 days", "2w", "6mo", "3 Months", "1y", "2yrs", "5y", "10 years", "all", "ALL", "all"}
		p := pick(g, periods)
		if g.chance(20) {
			p = strconv.Itoa(1+g.intn(400)) + pick(g, []string{"d", "w", "mo", "y"})
			if strings.HasSuffix(p, "y") {
				p = strconv.Itoa(1+g.intn(60)) + "y"
			}
		}
		q = q.add("period", p)
	}
	if g.chance(40) {
		q = q.add("sum_field", "units_affected")
	}
	return target("/recall/stats", g.shuffled(q))
}

// productsTarget draws GET /recall/products by a recall_id, mostly one
// that exists.
func (g *diffGen) productsTarget() string {
	id := g.rec().RecallID
	switch g.intn(12) {
	case 0:
		id = "999999999"
	case 1:
		id = " " + id + " "
	}
	return target("/recall/products", query{"id", id})
}

// upcTarget draws GET /recall/upc: a barcode a record prints, in another
// printed form, or a full code under a product's upc_prefix.
func (g *diffGen) upcTarget() string {
	var code string
	if len(g.prefixes) > 0 && g.chance(25) {
		p := pick(g, g.prefixes)
		if len(p) < 12 {
			body := p
			for len(body) < 12 {
				body += strconv.Itoa(g.intn(10))
			}
			code = body + strconv.Itoa(rappel.CheckDigit(body)) // EAN-13
			if g.chance(50) && code[0] == '0' {
				code = code[1:] // UPC-A
			}
		} else {
			code = p
		}
	} else if len(g.upcs) > 0 {
		code = pick(g, g.upcs)
		if gt, err := rappel.ParseGTIN(code); err == nil {
			switch g.intn(5) {
			case 0:
				code = string(gt) // GTIN-14
			case 1:
				code = strings.TrimLeft(string(gt), "0") // shortest digits, maybe no valid form
			case 2:
				code = rappel.StripBarcode(code)
			}
		}
	} else {
		code = withCheck("06263931285")
	}
	var q query
	q = q.add("upc", code)
	q = g.lang(q)
	return target("/recall/upc", g.shuffled(q))
}

// vinYears are the position-10 codes of the model years, from 1980 on in
// a 30-year cycle.
const vinYears = "ABCDEFGHJKLMNPRSTVWXY123456789"

// vinTarget draws GET /recall/vin: a real VIN, or one with its model year
// moved to a year the data holds recalls for that make, printed in several
// ways.
func (g *diffGen) vinTarget() string {
	row := pick(g, g.vins)
	vin := row.vin
	// A VIN codes model years from 1980 on (vinYears).
	if ys := g.yearsOf[kv.NormalizeVehicle(row.make)]; len(ys) > 0 && g.chance(60) {
		if y := pick(g, ys); y >= 1980 {
			vin = withVINCheck(vin[:9] + string(vinYears[(y-1980)%30]) + vin[10:])
		}
	}
	switch g.intn(6) {
	case 0:
		vin = strings.ToLower(vin)
	case 1:
		vin = vin[:3] + "-" + vin[3:9] + "-" + vin[9:]
	case 2:
		vin = " " + vin[:8] + " " + vin[8:]
	}
	var q query
	q = q.add("vin", vin)
	q = g.lang(q)
	return target("/recall/vin", g.shuffled(q))
}

// bad draws a request built to be refused, on every endpoint: each
// refusal's body, sentences included, must be the same from both.
func (g *diffGen) bad() diffRequest {
	r := diffRequest{class: classBad}
	search := func(name, value string) string {
		return target("/recall", g.searchQuery(false).add(name, value))
	}
	switch g.intn(30) {
	case 0:
		r.target = search("q", pick(g, []string{`"` + g.word(), "OR " + g.word(), g.word() + " OR", "-" + g.word() + " OR " + g.word(),
			g.word() + " OR OR " + g.word(), g.word() + "\x01", "\xff" + g.word()}))
	case 1:
		r.target = search("q", strings.Repeat(g.word()+" ", 33))
	case 2:
		r.target = search("q", strings.Repeat("a", rappel.MaxQueryBytes+1))
	case 3:
		// A category no record has, near one that exists: the 422 names
		// the nearest, from the catalog's own list.
		c := pick(g, g.categories)
		r.target = target("/recall", query{"category", c + "x"})
	case 4:
		r.target = target("/recall", query{"category", "Nothing like any category " + strconv.Itoa(g.intn(100))})
	case 5:
		r.target = target("/recall", query{"recall_type", pick(g, []string{"vehicule", "Food", "car", ""})})
	case 6:
		r.target = target("/recall", query{"hazard_class", "class_4", "allergen", "nuts", "recall_agency", "CFIA "})
	case 7:
		r.target = target("/recall", query{"limit", pick(g, []string{"0", "501", "-1", "ten", "1.5"})})
	case 8:
		r.target = target("/recall", query{"offset", pick(g, []string{"9501", "-1", "x"})})
	case 9:
		r.target = target("/recall", query{"issued_after", pick(g, []string{"2024-13-01", "yesterday", "2024-02-30", "20240101"})})
	case 10:
		a, b := g.date(), g.date()
		if a == b {
			b = "1990-01-01"
		}
		if a < b {
			a, b = b, a
		}
		r.target = target("/recall", query{"issued_after", a, "date_to", b})
	case 11:
		r.target = target("/recall", query{"issued_after", g.date(), "date_from", g.date()})
	case 12:
		r.target = target("/recall", query{"sort_by", "closing"})
	case 13:
		r.target = target("/recall", query{"sort_by", "relevance", "category", g.category()})
	case 14:
		r.target = target("/recall", query{"cursor", pick(g, []string{"nope", "AAAA", "AQ" + strings.Repeat("A", 40)})})
	case 15:
		r.target = target("/recall", query{"sort_by", "sortby", "sort_order", "up"})
	case 16:
		r.target = target("/recall", query{pick(g, []string{"qq", "limt", "recall-type", "sort", "page"}), "1"})
	case 17:
		r.target = "/recall?limit=5&limit=6"
	case 18:
		r.target = "/recall?q=%zz"
	case 19:
		r.target = "/recall?q=a;b"
	case 20:
		r.target = target("/recall/stats", query{"group_by", pick(g, []string{"units_affected", "event_date", "recall_typ", "record_id", ""})})
	case 21:
		r.target = target("/recall/stats", query{"period", pick(g, []string{"-7d", "3 mnths", "200y", "0d", "", "1.5mo", "week"}), "sum_field", pick(g, []string{"units_affected", "units_sold"})})
	case 22:
		r.target = target("/recall/products", query{"id", pick(g, []string{"", " "})})
	case 23:
		code := rappel.StripBarcode(pick(g, append(slices.Clone(g.upcs[:min(len(g.upcs), 50)]), "0626393128")))
		if len(code) > 1 {
			code = code[:len(code)-1] + strconv.Itoa((int(code[len(code)-1]-'0')+1)%10)
		}
		r.target = target("/recall/upc", query{"upc", pick(g, []string{code, "12345", "abc", "", "0-0-0"})})
	case 24:
		// A North American VIN, whose check digit is required, made wrong.
		row := pick(g, g.vins)
		for row.vin[0] < '1' || row.vin[0] > '5' {
			row = pick(g, g.vins)
		}
		vin := row.vin[:8] + string("0123456789X"[(strings.IndexByte("0123456789X", row.vin[8])+1)%11]) + row.vin[9:]
		r.target = target("/recall/vin", query{"vin", pick(g, []string{vin, vin[:16], "1HGCM82633A00435I", ""})})
	case 25:
		r.target = "/recall/" + url.PathEscape(g.rec().RecordID) + "?lang=EN"
	case 26:
		r.target = pick(g, []string{"/recalls", "/recall/x/y", "/recall/", "//recall"})
	case 27:
		r.method = pick(g, []string{http.MethodPost, http.MethodDelete, http.MethodPut})
		r.target = pick(g, []string{"/recall", "/recall/stats", "/recall/" + g.rec().RecordID})
	case 28:
		r.target = "/recall/" + g.rec().RecordID
		r.header = map[string]string{"X-Gateway-Key": pick(g, []string{"", "rk_stolen"})}
	default:
		r.target = target("/recall", query{"q", g.word(), "cursor", g.rec().RecordID, "offset", "10"})
	}
	return r
}

// failRecorder is a testing.TB that records failures instead of failing,
// so that a test can require diffCatalogs to fail. Fatal and FailNow end
// the calling goroutine, as testing's do: call the code under test in
// runRecorded.
type failRecorder struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (f *failRecorder) record(msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, msg)
}

func (f *failRecorder) Error(args ...any)                 { f.record(fmt.Sprint(args...)) }
func (f *failRecorder) Errorf(format string, args ...any) { f.record(fmt.Sprintf(format, args...)) }
func (f *failRecorder) Fail()                             { f.record("Fail") }
func (f *failRecorder) Fatal(args ...any)                 { f.record(fmt.Sprint(args...)); runtime.Goexit() }
func (f *failRecorder) Fatalf(format string, args ...any) {
	f.record(fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (f *failRecorder) FailNow() { f.record("FailNow"); runtime.Goexit() }

func (f *failRecorder) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.msgs) > 0
}

// failures returns what was recorded.
func (f *failRecorder) failures() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.msgs)
}

// runRecorded calls fn with a failRecorder over t in a goroutine of its
// own, so that a Fatal ends fn only, and returns the recorder.
func runRecorded(t *testing.T, fn func(tb testing.TB)) *failRecorder {
	t.Helper()
	f := &failRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}
