package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/feeds/feedstest"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

// TestServe_RealSwitch runs a node as an operator deploys it: started from
// the embedded (generated) bundle with --feeds on, a webhook and a
// confirmed e-mail subscription registered while it still serves the
// bundle, then its feeds pointed at a loopback upstream of the agencies'
// real files (Health Canada's June 2025 dump, Transport Canada's whole
// daily file, every detail document 404). After the first live refresh no
// generated value is in any route's answer, the switch sent no alert
// e-mail and at most one delivery per webhook endpoint, and a change feed
// cursor of the generated data is gone (410). The same holds for an
// upstream whose notices carry the bundle's own NIDs, where every record
// id is one the bundle also had.
func TestServe_RealSwitch(t *testing.T) {
	needBundle(t)
	dump := guesttest.RealSample(t, "hc-dump-en-2025-06.json")
	vrdb := guesttest.RealSample(t, "tc-vrdb-daily-2023-01-13-whole.csv")
	t.Run("RealNIDs", func(t *testing.T) { testSwitch(t, dump, vrdb, false) })
	t.Run("BundleNIDs", func(t *testing.T) { testSwitch(t, dump, vrdb, true) })
}

func testSwitch(t *testing.T, dump, vrdb []byte, bundleNIDs bool) {
	up := feedstest.NewUpstream(t)
	for _, p := range []string{"/hc/recalls-en.json", "/hc/recalls-fr.json", "/tc/vrdb.csv"} {
		up.Fail(p, feedstest.Fault{Status: 503}) // down while the node serves the bundle
	}
	var deliveries atomic.Int64
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deliveries.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)

	mailDir, dataDir := filepath.Join(t.TempDir(), "mail"), t.TempDir()
	c := NewServeCommand()
	if err := c.ParseFlags([]string{
		"--data-dir", dataDir, "--api-keys", "k1", "--feeds", "on", "--admin-key", adminKey,
		"--feed-hc-en", up.URL + "/hc/recalls-en.json", "--feed-hc-fr", up.URL + "/hc/recalls-fr.json",
		"--feed-tc-vrdb", up.URL + "/tc/vrdb.csv", "--feed-detail", up.URL + "/detail/{lang}/{id}.json",
		"--refresh-interval", "1h", "--feed-detail-rate", "0", "--mail-dir", mailDir, "--alerts-interval", "1s",
		"--webhooks-allow-http-loopback",
	}); err != nil {
		t.Fatal(err)
	}
	base, _ := serve(t, c)

	// While it serves the bundle, the node says the data is generated.
	if h := healthKind(t, base); h != rappel.DatasetSynthetic {
		t.Fatalf("/health dataset_kind = %q before the first live refresh, want synthetic", h)
	}
	if code, hdr, _ := call(t, "GET", base+"/recall?limit=1", "k1", ""); code != 200 || hdr.Get("Rappel-Dataset") != "synthetic" {
		t.Fatalf("GET /recall on the bundle = %d, Rappel-Dataset %q", code, hdr.Get("Rappel-Dataset"))
	}
	generated := generatedValues(t, base)
	var oldCursor struct{ Next string }
	if code, _, body := call(t, "GET", base+"/recall/changes?since=now", "k1", ""); code != 200 || json.Unmarshal([]byte(body), &oldCursor) != nil {
		t.Fatalf("GET /recall/changes?since=now = %d %s", code, body)
	}
	// A webhook for every recall, and a confirmed subscription to a word
	// most real notices hold.
	if code, _, body := call(t, "POST", base+"/recall/webhooks", "k1", `{"url": "`+hook.URL+`/hook"}`); code != 201 {
		t.Fatalf("registering a webhook: %d %s", code, body)
	}
	confirmSubscription(t, base, mailDir, "recall")
	mailsBefore := countMails(t, mailDir)

	// The agencies' files, upstream.
	if bundleNIDs {
		dump = renumberNIDs(t, dump, generated.ids)
	}
	up.Heal()
	up.Set("/hc/recalls-en.json", dump)
	up.Set("/hc/recalls-fr.json", []byte("[]")) // no French file of that day was kept
	up.Set("/tc/vrdb.csv", vrdb)
	if code, body := adminRefresh(t, base, adminKey); code != 200 {
		t.Fatalf("POST /admin/refresh = %d %s", code, body)
	}
	waitFor(t, "every source live", func() bool {
		h := health(t, base)
		for _, f := range h.Feeds {
			if !f.Live {
				return false
			}
		}
		return len(h.Feeds) == 3
	})
	if h := healthKind(t, base); h != rappel.DatasetAgencies {
		t.Fatalf("/health dataset_kind = %q after the switch, want agencies", h)
	}

	// Every route's answer, scanned for every generated value that no
	// real file also holds (a generated product may be named "Beef Jerky"
	// as a real one is).
	var rows []map[string]string
	if err := json.Unmarshal(dump, &rows); err != nil {
		t.Fatal(err)
	}
	generated.drop(servedStrings(t, "application/json", string(dump)))
	generated.drop(servedStrings(t, "text/csv", string(vrdb)))
	realTitle := strings.TrimSpace(rows[len(rows)/2]["Title"])
	word := strings.Fields(realTitle)[0]
	paths := []string{
		"/recall?limit=100", "/recall?q=" + url.QueryEscape(realTitle) + "&limit=20",
		"/recall?q=" + url.QueryEscape(generated.title) + "&limit=20",
		"/recall?limit=50&facets=recall_type,recall_agency,hazard_class,allergen,category,year",
		"/recall/stats?group_by=agency&period=20y", "/recall/stats?group_by=category&period=20y",
		"/recall/suggest?q=" + url.QueryEscape(strings.ToLower(word[:min(len(word), 4)])),
		"/recall/suggest?q=" + url.QueryEscape(strings.ToLower(generated.word)),
		"/recall/export?format=ndjson", "/recall/export?format=csv",
		"/recall/changes?limit=500", "/recall/feed.atom",
		"/recall/upc?upc=" + url.QueryEscape(generated.upc),
		"/recall/vin?vin=19XFB2F56EE264518", // a real VIN (../shared/real/vins.tsv)
	}
	for _, id := range generated.ids[:20] {
		paths = append(paths, "/recall/"+id, "/recall/products?id="+strings.TrimPrefix(id, "hc-"))
	}
	for _, p := range paths {
		code, hdr, body := call(t, "GET", base+p, "k1", "")
		if code != 200 && code != 404 {
			t.Errorf("GET %s = %d %.300s", p, code, body)
			continue
		}
		if hdr.Get("Rappel-Dataset") != "" {
			t.Errorf("GET %s after the switch: Rappel-Dataset %q", p, hdr.Get("Rappel-Dataset"))
		}
		// The query's own words are echoed (the barcode asked for):
		// they are not served data.
		asked, _ := url.QueryUnescape(p)
		for _, v := range servedStrings(t, hdr.Get("Content-Type"), body) {
			if generated.set[v] && !strings.Contains(asked, v) {
				t.Errorf("GET %s after the switch serves the generated %q", p, v)
				break
			}
		}
	}
	if code, _, body := call(t, "GET", base+"/recall/upc?upc="+url.QueryEscape(generated.upc), "k1", ""); code != 200 || !strings.Contains(body, `"count":0`) {
		t.Errorf("the generated barcode %s still finds a recall: %d %.300s", generated.upc, code, body)
	}
	if code, _, body := call(t, "GET", base+"/recall/changes?since="+oldCursor.Next, "k1", ""); code != 410 || !strings.Contains(body, "reloaded in full") {
		t.Errorf("a cursor of the generated data = %d %s, want 410 saying why", code, body)
	}
	// Every real notice is served with its title.
	var all struct {
		Count int `json:"count"`
	}
	if code, _, body := call(t, "GET", base+"/recall?limit=1", "k1", ""); code != 200 || json.Unmarshal([]byte(body), &all) != nil || all.Count < len(rows)/2 {
		t.Errorf("after the switch the node serves %d recalls (%d %s), want the real dump's and the vehicle file's", all.Count, code, body)
	}

	// The switch was no news: give the alerts runner its rounds, then
	// count.
	time.Sleep(4 * time.Second)
	if n := countMails(t, mailDir) - mailsBefore; n != 0 {
		t.Errorf("the switch sent %d alert e-mails, want none", n)
	}
	if n := deliveries.Load(); n > 1 {
		t.Errorf("the switch made %d webhook deliveries to one endpoint, want at most one", n)
	}
	t.Logf("%d generated values checked; %d recalls served; %d webhook deliveries", len(generated.set), all.Count, deliveries.Load())
}

// healthKind returns /health's dataset_kind.
func healthKind(tb testing.TB, base string) string {
	tb.Helper()
	_, body := get(tb, base+"/health", "")
	var h struct {
		Kind string `json:"dataset_kind"`
	}
	if err := json.Unmarshal(body, &h); err != nil {
		tb.Fatal(err)
	}
	return h.Kind
}

// generatedSet is what a node serving the generated bundle serves that
// the generator made up: titles, product names, barcodes, images, brands
// and companies of its Health Canada and CFIA notices (the vehicle
// recalls' titles are built from real makes and models, as the real
// file's are, so they are left out).
type generatedSet struct {
	set         map[string]bool
	ids         []string // record_ids of the generated notices, in export order
	title, word string
	upc         string
}

// drop forgets the generated values that are also in real.
func (g *generatedSet) drop(real []string) {
	for _, v := range real {
		delete(g.set, v)
	}
}

// servedStrings returns every string an answer of contentType holds,
// trimmed: a JSON document's (or NDJSON stream's) string values, an XML
// document's text and attributes, a CSV file's fields. Scanning an answer
// for a set of values is then one pass, whatever the number of values.
func servedStrings(t *testing.T, contentType, body string) []string {
	t.Helper()
	var out []string
	add := func(vs ...string) {
		for _, v := range vs {
			if v = strings.TrimSpace(v); v != "" {
				out = append(out, v)
			}
		}
	}
	// next reads the answer's next piece into add; io.EOF at its end.
	var next func() error
	switch {
	case strings.Contains(contentType, "xml"):
		dec := xml.NewDecoder(strings.NewReader(body))
		next = func() error {
			tok, err := dec.Token()
			switch tok := tok.(type) {
			case xml.CharData:
				add(string(tok))
			case xml.StartElement:
				for _, a := range tok.Attr {
					add(a.Value)
				}
			}
			return err
		}
	case strings.Contains(contentType, "csv"):
		cr := csv.NewReader(strings.NewReader(body))
		cr.FieldsPerRecord, cr.LazyQuotes = -1, true
		next = func() error {
			fields, err := cr.Read()
			add(fields...)
			return err
		}
	default:
		dec := json.NewDecoder(strings.NewReader(body))
		next = func() error {
			tok, err := dec.Token()
			if s, ok := tok.(string); ok {
				add(s)
			}
			return err
		}
	}
	for {
		if err := next(); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("reading the %s answer: %v", contentType, err)
		}
	}
}

func generatedValues(t *testing.T, base string) *generatedSet {
	t.Helper()
	code, _, body := call(t, "GET", base+"/recall/export?format=ndjson", "k1", "")
	if code != 200 {
		t.Fatalf("exporting the bundle: %d %.300s", code, body)
	}
	g := &generatedSet{set: map[string]bool{}}
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= 8 {
			g.set[v] = true
		}
	}
	dec := json.NewDecoder(strings.NewReader(body))
	for {
		var r rappel.Record
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.RecordID, "hc-") {
			continue
		}
		g.ids = append(g.ids, r.RecordID)
		for _, tr := range []*rappel.Translation{r.Translations.EN, r.Translations.FR} {
			if tr != nil {
				add(tr.Title)
			}
		}
		for _, p := range r.ProductList {
			add(p.Name)
			add(p.UPC)
			if g.upc == "" && len(p.UPC) >= 12 {
				g.upc = p.UPC
			}
		}
		for _, im := range r.Images {
			add(im.URL)
		}
		add(r.ImageURL)
		add(r.UPC)
		for _, co := range r.Companies {
			add(co)
		}
		add(r.RecallingFirm)
		add(r.Manufacturer)
		add(r.Importer)
		if g.title == "" && r.Translations.EN != nil && len(r.ProductList) > 0 {
			g.title = r.Translations.EN.Title
			g.word = strings.Fields(g.title)[0]
		}
	}
	if len(g.ids) < 100 || g.upc == "" || g.title == "" {
		t.Fatalf("the bundle's export has %d notices, barcode %q, title %q: not the generated bundle", len(g.ids), g.upc, g.title)
	}
	return g
}

// renumberNIDs gives the dump's rows the NIDs of the bundle's notices ids,
// in order, and their URLs the same number.
func renumberNIDs(t *testing.T, dump []byte, ids []string) []byte {
	t.Helper()
	var rows []map[string]any
	if err := json.Unmarshal(dump, &rows); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, row := range rows {
		if row["Organization"] == "TC" {
			continue // Transport Canada's rows are keyed by their recall number
		}
		old, _ := row["NID"].(string)
		nid := strings.TrimPrefix(ids[n%len(ids)], "hc-")
		n++
		row["NID"] = nid
		if u, ok := row["URL"].(string); ok {
			row["URL"] = strings.ReplaceAll(u, old, nid)
		}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// confirmSubscription subscribes an address to q and follows the link of
// its confirmation e-mail.
func confirmSubscription(t *testing.T, base, mailDir, q string) {
	t.Helper()
	code, _, body := call(t, "POST", base+"/recall/alerts/subscribe", "k1", fmt.Sprintf(`{"email":"ana@example.ca","q":%q,"lang":"en"}`, q))
	if code != 200 {
		t.Fatalf("subscribing: %d %s", code, body)
	}
	var data []byte
	waitFor(t, "the confirmation e-mail", func() bool {
		ents, _ := os.ReadDir(mailDir)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".eml") && !strings.HasPrefix(e.Name(), ".") {
				data, _ = os.ReadFile(filepath.Join(mailDir, e.Name()))
				return len(data) > 0
			}
		}
		return false
	})
	link := regexp.MustCompile(`https?://[^/\s]+(/recall/alerts/confirm\?token=[A-Za-z0-9_-]{22})`).FindStringSubmatch(decodedBody(t, string(data)))
	if link == nil {
		t.Fatalf("no confirmation link in\n%s", data)
	}
	if code, _, body := call(t, "POST", base+link[1], "", ""); code != 200 || !bytes.Contains([]byte(body), []byte(`"subscribed"`)) {
		t.Fatalf("confirming: %d %s", code, body)
	}
}

// countMails counts the e-mails written to dir.
func countMails(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".eml") && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}
