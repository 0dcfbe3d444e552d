package edge

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/rappel-ca/rappel"
)

// TestExport_Formats exports the test records through the real router
// over a real store: NDJSON lines are the records GET /recall finds, CSV
// parses as RFC 4180 with the documented header, filters apply as they do
// to GET /recall, compression streams as the client asks, the cursor
// header follows the change feed, and a repeated request is a 304.
func TestExport_Formats(t *testing.T) {
	recs := append(lookupRecords(), fullRecord())
	e := newChangesEnv(t, recs)
	key := map[string]string{"X-Gateway-Key": testKey}

	get := func(target string, header map[string]string, status int) (*http.Response, []byte) {
		t.Helper()
		return e.request(t, target, header, status)
	}
	count := func(query string) int {
		t.Helper()
		var p struct{ Count int }
		if err := json.Unmarshal(e.get(t, "/recall?limit=1&"+query, http.StatusOK), &p); err != nil {
			t.Fatal(err)
		}
		return p.Count
	}

	for _, query := range []string{"", "recall_type=vehicle", "q=cheddar&lang=fr", "issued_after=2026-01-01&recall_agency=Health+Canada"} {
		resp, body := get("/recall/export?"+query, key, http.StatusOK)
		lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
		if string(body) == "" {
			lines = nil
		}
		want := count(query)
		if len(lines) != want || resp.Header.Get("Rappel-Count") != strconv.Itoa(want) {
			t.Fatalf("%s: %d lines, Rappel-Count %s, GET /recall counts %d", query, len(lines), resp.Header.Get("Rappel-Count"), want)
		}
		for _, l := range lines {
			var r rappel.Record
			if err := json.Unmarshal([]byte(l), &r); err != nil || r.RecordID == "" {
				t.Fatalf("%s: line %.100s: %v", query, l, err)
			}
			if strings.Contains(query, "lang=fr") && r.Translations.EN != nil {
				t.Fatalf("%s: %s has English", query, r.RecordID)
			}
		}

		_, body = get("/recall/export?format=csv&"+query, key, http.StatusOK)
		rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		if err != nil {
			t.Fatalf("%s: CSV: %v", query, err)
		}
		if !slices.Equal(rows[0], csvHeader) || len(rows)-1 != want {
			t.Fatalf("%s: CSV header %v and %d rows, want %d", query, rows[0], len(rows)-1, want)
		}
		if !bytes.Contains(body, []byte("\r\n")) {
			t.Errorf("%s: CSV lines do not end with CRLF", query)
		}
	}

	// Quoting: the full record's fields hold commas and several values.
	_, body := get("/recall/export?format=csv&q=kettle", key, http.StatusOK)
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("q=kettle: %d rows, %v", len(rows), err)
	}
	row := map[string]string{}
	for i, name := range csvHeader {
		row[name] = rows[1][i]
	}
	if row["record_id"] != "hc-990199" || row["units_affected"] != "42" || row["title_fr"] != "Kettle fr" || row["upcs"] == "" {
		t.Fatalf("the full record's row: %v", row)
	}

	// Compressed as asked, while streaming.
	plain, _ := get("/recall/export", key, http.StatusOK)
	for _, coding := range []string{"gzip", "zstd"} {
		resp, body := get("/recall/export", map[string]string{"X-Gateway-Key": testKey, "Accept-Encoding": coding}, http.StatusOK)
		if resp.Header.Get("Content-Encoding") != coding {
			t.Fatalf("Accept-Encoding %s: Content-Encoding %q", coding, resp.Header.Get("Content-Encoding"))
		}
		var r io.Reader
		if coding == "gzip" {
			r, err = gzip.NewReader(bytes.NewReader(body))
		} else {
			var d *zstd.Decoder
			d, err = zstd.NewReader(bytes.NewReader(body))
			r = d
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if err != nil || resp.Header.Get("Rappel-Count") != plain.Header.Get("Rappel-Count") ||
			strings.Count(string(got), "\n") != len(recs) {
			t.Fatalf("%s: %d lines, %v", coding, strings.Count(string(got), "\n"), err)
		}
	}

	// The cursor is the change feed's present: nothing after it yet.
	cur := plain.Header.Get(changesCursorHeader)
	if p := e.page(t, "/recall/changes?since="+cur); p.Count != 0 || p.Next != cur {
		t.Fatalf("the export's cursor %s: %+v", cur, p)
	}

	// Revalidation.
	tag := plain.Header.Get("Etag")
	get("/recall/export", map[string]string{"X-Gateway-Key": testKey, "If-None-Match": tag}, http.StatusNotModified)
	get("/recall/export", map[string]string{"X-Gateway-Key": testKey, "If-Modified-Since": plain.Header.Get("Last-Modified")}, http.StatusNotModified)
	if _, b := get("/recall/export?format=csv", map[string]string{"X-Gateway-Key": testKey, "If-None-Match": tag}, http.StatusOK); len(b) == 0 {
		t.Fatal("another format's export is not the same representation")
	}
}

// pipeWriter is a ResponseWriter writing the body into a pipe, so that a
// reader consumes the export while the handler produces it.
type pipeWriter struct {
	h    http.Header
	code int
	w    *io.PipeWriter
}

func (p *pipeWriter) Header() http.Header         { return p.h }
func (p *pipeWriter) WriteHeader(code int)        { p.code = code }
func (p *pipeWriter) Write(b []byte) (int, error) { return p.w.Write(b) }

// lineCounter counts the lines written to it and, every sample lines,
// the live heap after a collection.
type lineCounter struct {
	lines, bytes, next int
	sample             int
	peak               uint64
}

func (c *lineCounter) Write(b []byte) (int, error) {
	c.lines += bytes.Count(b, []byte{'\n'})
	c.bytes += len(b)
	if c.lines >= c.next {
		c.next = c.lines + c.sample
		c.peak = max(c.peak, liveHeap())
	}
	return len(b), nil
}

// liveHeap is the heap in use after a full collection: what is reachable,
// not garbage waiting for the collector.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// exportBound is how much the live heap may grow while the whole corpus
// is exported: a few pages of the searcher and the compressor's window,
// a fraction of the export's size (about 100 MB of NDJSON).
const exportBound = 32 << 20

// TestExport_Bundle exports the whole real corpus, gzip-compressed, and
// checks that the live heap stays within exportBound meanwhile (the body
// is streamed, never held whole) and that the rows are GET /recall's
// count, for the corpus and for a filtered search.
func TestExport_Bundle(t *testing.T) {
	catalog, m := mustBundleCatalog(t)
	s, _ := MustServer(t, catalog)
	s.Logger = discardLogger()
	h := s.Handler()

	export := func(query string) *lineCounter {
		t.Helper()
		pr, pw := io.Pipe()
		w := &pipeWriter{h: http.Header{}, w: pw}
		r := httptest.NewRequest(http.MethodGet, "/recall/export?"+query, nil)
		r.Header.Set("X-Gateway-Key", testKey)
		r.Header.Set("Accept-Encoding", "gzip")
		go func() {
			h.ServeHTTP(w, r)
			pw.Close()
		}()
		c := &lineCounter{sample: 4000}
		base := liveHeap()
		zr, err := gzip.NewReader(pr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(c, zr); err != nil {
			t.Fatal(err)
		}
		if w.code != http.StatusOK || w.h.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: status %d, Content-Encoding %q", query, w.code, w.h.Get("Content-Encoding"))
		}
		if c.peak > base && c.peak-base > exportBound {
			t.Errorf("%s: the live heap grew by %d MiB while exporting %d MiB, more than %d MiB",
				query, (c.peak-base)>>20, c.bytes>>20, exportBound>>20)
		}
		t.Logf("%s: %d records, %d MiB, live heap growth at most %d MiB", query, c.lines, c.bytes>>20, (max(c.peak, base)-base)>>20)
		return c
	}

	all := export("")
	if all.lines != m.Records || all.lines != serveSearch(t, h, "limit=1").Count {
		t.Fatalf("exported %d records, the manifest says %d", all.lines, m.Records)
	}
	if all.bytes < 2*exportBound {
		t.Fatalf("the export is %d MiB: too small to tell streaming from buffering", all.bytes>>20)
	}
	for _, query := range []string{"recall_type=food&q=listeria", "recall_agency=Transport+Canada&issued_after=2015-01-01&format=csv"} {
		got := export(query).lines
		want := serveSearch(t, h, "limit=1&"+strings.TrimSuffix(query, "&format=csv")).Count
		if strings.HasSuffix(query, "csv") {
			got-- // the header
		}
		if got != want || want == 0 {
			t.Errorf("%s: exported %d records, GET /recall counts %d", query, got, want)
		}
	}
}

// TestExport_ViewCursor checks that the export's change cursor is the
// place the read index holds, not the store's, when the index says it: an
// index a refresh behind the store exports the older records, and the
// feed from its cursor brings the changes it lacks.
func TestExport_ViewCursor(t *testing.T) {
	recs := testRecords()
	st := mustStore(t, recs) // entries 1 to 3, one per record
	gen, _, err := st.ChangeSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	catalog := MustCatalog(t, recs[:1])
	catalog.SwapView(catalog.Current().WithChangePos(gen, 1))
	s, _ := MustServer(t, catalog)
	s.Changes = st
	h := s.Handler()
	r := httptest.NewRequest(http.MethodGet, "/recall/export", nil)
	r.Header.Set("X-Gateway-Key", testKey)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	cur := w.Header().Get(changesCursorHeader)
	if w.Code != http.StatusOK || strings.Count(w.Body.String(), "\n") != 1 || cur != (changeCursor{gen, 1}).String() {
		t.Fatalf("status %d, %d records, cursor %q", w.Code, strings.Count(w.Body.String(), "\n"), cur)
	}
	r = httptest.NewRequest(http.MethodGet, "/recall/changes?since="+cur, nil)
	r.Header.Set("X-Gateway-Key", testKey)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var p changesPage
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Count != 2 || p.Changes[0].RecordID != recs[1].RecordID {
		t.Fatalf("the feed from the export's cursor: %v %s", err, w.Body)
	}
}

// BenchmarkExport_Bundle measures exporting the whole real corpus as
// NDJSON and CSV, plain and compressed, through the real handler into a
// writer that keeps nothing: records and uncompressed bytes per second.
func BenchmarkExport_Bundle(b *testing.B) {
	catalog, m := mustBundleCatalog(b)
	s, _ := MustServer(b, catalog)
	s.Logger = discardLogger()
	h := s.Handler()
	for _, format := range []string{"ndjson", "csv"} {
		for _, coding := range []string{"identity", "zstd", "gzip"} {
			b.Run(format+"/"+coding, func(b *testing.B) {
				var sent int
				for b.Loop() {
					w := &benchWriter{h: http.Header{}}
					r := httptest.NewRequest(http.MethodGet, "/recall/export?format="+format, nil)
					r.Header.Set("X-Gateway-Key", testKey)
					r.Header.Set("Accept-Encoding", coding)
					h.ServeHTTP(w, r)
					if w.status != http.StatusOK {
						b.Fatalf("status %d", w.status)
					}
					sent = w.n
				}
				b.ReportMetric(float64(m.Records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
				b.ReportMetric(float64(sent)/(1<<20), "MiB-sent")
			})
		}
	}
}

// formulaTitles are titles a spreadsheet would run as formulas, or that
// start with the quote the neutralized cells start with.
var formulaTitles = []string{
	`=HYPERLINK("https://example.com/x","Click")`,
	`@cmd|' /C calc'!A0`,
	"=1+1",
	"-Negative reaction to the product",
	"+1 613 555 0100",
	"\t=1+1",
	"\r=2+2",
	"  =3+3",
	"\u00a0\u200b@SUM(A1:A2)",
	"'Tis the season kettle",
}

// TestExport_CSVFormulas exports records whose titles would be formulas
// in a spreadsheet: in the CSV every such cell starts with the added
// quote and is the title once the quote is dropped, no cell starts with
// a character that makes a formula, and the NDJSON keeps the titles as
// they are.
func TestExport_CSVFormulas(t *testing.T) {
	var recs []*rappel.Record
	for i, title := range formulaTitles {
		r := fullRecord()
		id := strconv.Itoa(700000 + i)
		r.RecordID, r.RecallID = "hc-"+id, id
		r.Translations.EN.Title = title
		r.Translations.FR.Title = "Titre " + id
		r.RecallingFirm = "=" + id // another column
		recs = append(recs, r)
	}
	s, logs := MustServer(t, MustCatalog(t, recs))
	base := MustHTTP(t, s.Handler()).URL
	_, body := fetch(t, base+"/recall/export?format=csv", nil)
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(rows) != len(recs)+1 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	titleCol := slices.Index(csvHeader, "title_en")
	firmCol := slices.Index(csvHeader, "recalling_firm")
	got := map[string]bool{}
	for _, row := range rows[1:] {
		for i, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("column %s: cell %q starts with %q", csvHeader[i], cell, cell[0])
			}
		}
		title, ok := strings.CutPrefix(row[titleCol], "'")
		if !ok {
			t.Errorf("title %q has no quote in front", row[titleCol])
		}
		got[title] = true
		if firm := row[firmCol]; !strings.HasPrefix(firm, "'=") {
			t.Errorf("recalling_firm %q is not neutralized", firm)
		}
	}
	for _, title := range formulaTitles {
		// The CSV writer ends lines with CRLF and, so that a lone
		// carriage return cannot end one, drops it from the cells.
		if title = strings.ReplaceAll(title, "\r", ""); !got[title] {
			t.Errorf("no row has the title %q once its quote is dropped", title)
		}
	}
	_, body = fetch(t, base+"/recall/export", nil)
	for _, title := range formulaTitles {
		j, _ := json.Marshal(title)
		if !strings.Contains(body, `"title":`+string(j)) {
			t.Errorf("the NDJSON lacks the title %s as it is", j)
		}
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Fatalf("logs:\n%s", logs)
	}
}

// FuzzNeutralizeCell checks the rule of neutralizeCell on any text: the
// cell is the text, or the text with one quote in front; it never starts
// with = + - @, a tab, a carriage return or a NUL, even once what a
// spreadsheet may trim is trimmed; and dropping a leading quote always
// gives the text back.
func FuzzNeutralizeCell(f *testing.F) {
	for _, s := range append(formulaTitles, "", "Kettle", "2026-11-01", "''", "'", "\x00=", " ", "-", "\u2028+1") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cell := neutralizeCell(text)
		if cell != text && cell != "'"+text {
			t.Fatalf("neutralizeCell(%q) = %q: neither the text nor the text quoted", text, cell)
		}
		if back, _ := strings.CutPrefix(cell, "'"); back != text {
			t.Fatalf("neutralizeCell(%q) = %q: dropping the quote gives %q", text, cell, back)
		}
		if cell != "" && strings.IndexByte("=+-@\t\r\x00", cell[0]) >= 0 {
			t.Fatalf("neutralizeCell(%q) = %q starts with %q", text, cell, cell[0])
		}
		if trimmed := strings.TrimLeftFunc(cell, invisible); trimmed != "" && strings.IndexByte("=+-@", trimmed[0]) >= 0 {
			t.Fatalf("neutralizeCell(%q) = %q starts with %q once trimmed", text, cell, trimmed[0])
		}
	})
}

// FuzzSplitRecords checks splitRecords against encoding/json: it never
// panics, and on a JSON array of objects it finds the elements
// json.Unmarshal finds, byte for byte.
func FuzzSplitRecords(f *testing.F) {
	for _, s := range []string{``, `[]`, ` [ ] `, `[{}]`, `[{"a":"}"},{"b":["{",{"c":"\"}"}]}]`, `[{"a":1} , {"b":"\\"}]`, `[{]`, `[{"a":"\u007d"}]`, `{}`, `[1]`, `[{}]x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := splitRecords(nil, b)
		var want []json.RawMessage
		if json.Unmarshal(b, &want) != nil {
			return // not JSON: any answer but a panic will do
		}
		for _, w := range want {
			if len(w) == 0 || w[0] != '{' {
				return // not an array of objects
			}
		}
		if err != nil {
			t.Fatalf("splitRecords(%q): %v; encoding/json finds %d objects", b, err, len(want))
		}
		if len(got) != len(want) {
			t.Fatalf("splitRecords(%q): %d objects, encoding/json %d", b, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("splitRecords(%q): object %d is %q, encoding/json's %q", b, i, got[i], want[i])
			}
		}
	})
}

// TestExport_CSVPages exports to CSV a page of records that have every
// optional field followed by a page of records that have none: each row
// holds its own record's fields, nothing left from the record that
// stood at its place on the page before.
func TestExport_CSVPages(t *testing.T) {
	recs := bulkRecords(2 * exportPage)
	sparse := map[string]bool{}
	for i, r := range recs[exportPage:] {
		// Older than the full ones, so on the second page.
		r.EventDate, r.RecallDate = "2020-01-01", "2020-01-01"
		r.Category, r.HazardClass, r.VehicleMake, r.VehicleModel, r.RecallingFirm, r.UPC = "", "", "", "", "", ""
		r.UnitsAffected, r.ProductList, r.Allergens, r.Translations.FR = nil, nil, nil, nil
		r.Translations.EN.Title = "Sparse " + strconv.Itoa(i)
		sparse[r.RecordID] = true
	}
	s, _ := MustServer(t, MustCatalog(t, recs))
	_, body := fetch(t, MustHTTP(t, s.Handler()).URL+"/recall/export?format=csv", nil)
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(rows) != len(recs)+1 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	empty := []string{"category", "hazard_class", "title_fr", "allergens", "products", "upcs", "vehicle_make", "vehicle_model", "units_affected", "recalling_firm"}
	seen := 0
	for _, row := range rows[1:] {
		if !sparse[row[0]] {
			continue
		}
		seen++
		for _, name := range empty {
			if cell := row[slices.Index(csvHeader, name)]; cell != "" {
				t.Fatalf("%s has no %s, and its row says %q", row[0], name, cell)
			}
		}
	}
	if seen != exportPage {
		t.Fatalf("%d rows of the sparse records, want %d", seen, exportPage)
	}
}
