package rappel_test

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest/guesttest"
)

// realCodes returns the printed code strings of the real samples
// (../shared/real), by source as testdata/applicability-real.tsv names
// them: the affected-products cells of the parsed live pages, the cell
// lines of the trimmed food page, the barcode table's cells and notes,
// openFDA's code_info, and the product texts of the dumps, the open-data
// CSV, the 2023 pages and the CFIA scrapes' titles. Product texts are
// mostly names; they print codes in sentences ("Cayston (Lots 032168 and
// 033357)").
func realCodes(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	add := func(source, s string) {
		if s = strings.TrimSpace(s); s != "" {
			out[source] = append(out[source], s)
		}
	}

	var excerpt struct {
		Records []struct {
			Detail *struct {
				AffectedProducts []struct {
					Fields map[string]string `json:"fields"`
				} `json:"affectedProducts"`
			} `json:"Detail"`
		} `json:"records"`
	}
	mustJSON(t, guesttest.RealSample(t, "pages/recall-radar-web-2026-07-canada-detail-parsed-EXCERPT.json"), &excerpt)
	// The columns that hold codes (the repo's camelCase of each <th>).
	codeColumns := []string{"lotOrSerialNumber", "modelOrCatalogueNumber", "modelOrCatalogNumber", "lotNumber", "marketAuthorization",
		"codes", "codeS", "serialNumbers", "partNumber", "modelNumber", "styleNumber", "model", "modelName", "packagingDate", "column3", "column6"}
	for _, r := range excerpt.Records {
		if r.Detail == nil {
			continue
		}
		for _, p := range r.Detail.AffectedProducts {
			for _, k := range codeColumns {
				add("excerpt", p.Fields[k])
			}
		}
	}

	// The food page's row is Brand | Product | codes (its trim put the
	// codes under UPC): the third cell, line by line.
	page := guesttest.RealSample(t, "pages/maplestats-2026-09-trimmed-current-layout-nid82667-en.html")
	for i, m := range regexp.MustCompile(`(?s)<td><p>(.*?)</p></td>`).FindAllSubmatch(page, -1) {
		if i%3 != 2 {
			continue
		}
		for _, line := range regexp.MustCompile(`<br\s*/?>`).Split(string(m[1]), -1) {
			add("maplestats", line)
		}
	}

	upcs := readTable(t, "upcs.tsv", '\t')
	for _, r := range upcs {
		add("upcs", r["upc_as_printed"])
		for _, part := range strings.Split(r["recall"], ";") {
			add("upcs", part)
		}
	}

	var fda any
	mustJSON(t, guesttest.RealSample(t, "openfda-enforcement.json"), &fda)
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "code_info" {
					add("openfda", s)
				} else {
					walk(x)
				}
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(fda)

	var dump []map[string]string
	mustJSON(t, guesttest.RealSample(t, "hc-dump-en-2025-06.json"), &dump)
	for _, r := range dump {
		add("hcdump2025", r["Product"])
	}
	for source, file := range map[string]string{
		"hcdump2023": "hc-dump-en-2023-11-derived-7cols-16672rows.csv",
		"hcdump2024": "hc-dump-en-2024-05-derived-7cols-29648rows.csv",
	} {
		for _, r := range readTable(t, file, ',') {
			add(source, r["product_name"])
		}
	}
	for _, r := range readTable(t, "pages/stophurting-2026-08-16-ca-recalls-opendata-sample.csv", ',') {
		add("opendata2026", r["Product"])
	}
	for _, f := range realFiles(t, "hc-pages-2023-04", "scraped-*.csv") {
		for _, r := range readTable(t, f, ',') {
			add("hcpages2023", r["Product"])
		}
	}
	for _, f := range realFiles(t, "cfia-scraped", "*.csv") {
		for _, r := range readTable(t, f, ',') {
			add("cfia", r["title"])
		}
	}
	return out
}

// realFiles lists the files of a directory of real samples matching
// pattern, as names RealSample takes.
func realFiles(t *testing.T, dir, pattern string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(guesttest.RealDir(t, dir), pattern))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no %s in the real samples %s (%v)", pattern, dir, err)
	}
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Join(dir, filepath.Base(p)))
	}
	return out
}

// readTable reads a real CSV or TSV by its header's names.
func readTable(t *testing.T, name string, sep rune) []map[string]string {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(guesttest.RealSample(t, name)))
	r.Comma = sep
	r.LazyQuotes = sep == '\t'
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	var out []map[string]string
	for _, row := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			if i < len(row) {
				m[h] = row[i]
			}
		}
		out = append(out, m)
	}
	return out
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// codeLabel finds the entries of product texts that print codes, for
// the counts: a lot, DIN, model, serial or date label.
var codeLabel = regexp.MustCompile(`(?i)\b(lots?|din|models?|serial|catalog(ue)?|ref|best before|bb|exp(iry)?|batch|part numbers?|starting with|code)\b`)

// TestApplicabilityReal reads every real printed code string: none makes
// the parser panic, each keeps its text, each date it reads is a real
// day. It reports, for the code cells (pages, openFDA, the barcode
// table) and for the product texts that print a code label, each string
// counted once, how many are read fully, partly and not at all.
func TestApplicabilityReal(t *testing.T) {
	codes := realCodes(t)
	type tally struct{ full, partly, none, empty int }
	var cells, texts tally
	seen := map[string]bool{}
	all := 0
	for source, entries := range codes {
		for _, s := range entries {
			all++
			a := rappel.ParseApplicability(s)
			if a.Text != s {
				t.Errorf("%s %q: Text %q", source, s, a.Text)
			}
			checkDates(t, s, a)
			cell := source == "excerpt" || source == "maplestats" || source == "openfda" || source == "upcs"
			if seen[s] || !cell && !codeLabel.MatchString(s) || source == "upcs" && !codeLabel.MatchString(s) {
				continue
			}
			seen[s] = true
			c := &texts
			if cell {
				c = &cells
			}
			read := len(a.Lots)+len(a.LotPrefixes)+len(a.BestBefore)+len(a.Models)+len(a.Serials)+len(a.DINs) > 0 || a.AllCodes
			switch {
			case read && a.Unread == "":
				c.full++
			case read:
				c.partly++
			case a.Unread != "":
				c.none++
			default:
				c.empty++ // "None", "Not applicable", a harvest date: nothing to select by
			}
		}
	}
	if all < 30000 {
		t.Errorf("the real samples gave %d code strings; they hold over 30,000 (product texts included)", all)
	}
	t.Logf("%d real strings parsed. Code cells: %d read fully, %d partly, %d not at all, %d name nothing to select by. "+
		"Product texts printing a code label: %d fully, %d partly, %d not at all, %d nothing.",
		all, cells.full, cells.partly, cells.none, cells.empty, texts.full, texts.partly, texts.none, texts.empty)
}

// checkDates fails unless every date range of a is two real days in
// order.
func checkDates(t *testing.T, in string, a rappel.Applicability) {
	t.Helper()
	for _, r := range a.BestBefore {
		if !rappel.ValidDate(r.From) || !rappel.ValidDate(r.To) || r.From > r.To {
			t.Errorf("%q: best-before range %+v is not two days in order", in, r)
		}
	}
}

// TestApplicabilityRealExpected checks, entry by entry, the parses of the
// real code strings listed by hand in testdata/applicability-real.tsv,
// each of which must be in its source.
func TestApplicabilityRealExpected(t *testing.T) {
	codes := realCodes(t)
	f, err := os.Open(filepath.Join("testdata", "applicability-real.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	header := true
	n := 0
	for line := 1; sc.Scan(); line++ {
		if strings.HasPrefix(sc.Text(), "#") || sc.Text() == "" {
			continue
		}
		if header {
			header = false
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 10 {
			t.Fatalf("testdata/applicability-real.tsv line %d has %d columns, want 10", line, len(c))
		}
		n++
		source, text := c[0], c[1]
		if !slices.Contains(codes[source], text) {
			t.Errorf("line %d: %q is not among the real %s entries", line, text, source)
			continue
		}
		got := rappel.ParseApplicability(text)
		want := rappel.Applicability{
			Lots: list(c[2]), LotPrefixes: list(c[3]), Models: list(c[5]), Serials: list(c[6]), DINs: list(c[7]),
			AllCodes: c[8] == "yes", Text: text, Unread: c[9],
		}
		for _, r := range list(c[4]) {
			from, to, ok := strings.Cut(r, "..")
			if !ok {
				to = from
			}
			want.BestBefore = append(want.BestBefore, rappel.DateRange{From: from, To: to})
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if !bytes.Equal(g, w) {
			t.Errorf("line %d, %s %q:\n got %s\nwant %s", line, source, text, g, w)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Errorf("testdata/applicability-real.tsv lists %d real entries; it should list at least 40", n)
	}
}

// list cuts a column of the expected list at " | "; empty is nil.
func list(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, " | ")
}
